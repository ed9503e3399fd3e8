/* flag_lib.c - the libraries of dlflags.c, by -D:
 *   FLAG_LAZY   a function calls cgtest_nowhere(), defined nowhere, never called
 *   FLAG_DEEP   ask() returns who(): its own (2) under RTLD_DEEPBIND, else the program's (1)
 *   FLAG_COUNT  bump() counts its calls: state that survives only while loaded */
#ifdef FLAG_LAZY
int cgtest_nowhere(void);
int never_called(void) { return cgtest_nowhere(); }
#endif
#ifdef FLAG_DEEP
int who(void) { return 2; }
int ask(void) { return who(); }
#endif
#ifdef FLAG_COUNT
static int n;
int bump(void) { return ++n; }
#endif
