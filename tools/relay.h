/* relay.h - `convguard run`'s side of the stderr capture (relay.c): the
 * program's stderr passed through, its last part written beside the traces
 * for the report to read back (model/capture.h). */
#ifndef CONVGUARD_RELAY_H
#define CONVGUARD_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/capture.h"

/* ---- relay.c: the program's stderr, passed through */
enum relay_mode { RELAY_OFF, RELAY_PIPE, RELAY_PTY, RELAY_FILE };

struct relay {
    enum relay_mode mode;
    int child_fd;            /* what the program gets as fd 2 (pipe/pty), -1 */
    int read_fd;             /* pipe read end, pty master, or the stderr file reopened for reading */
    int hold[2];             /* RELAY_PIPE: a second pipe that tee(2) copies the output into, -1 */
    long long file_start;    /* RELAY_FILE: the file's size at the launch */
    char *ring;              /* the last CAPTURE_WINDOW bytes, circular */
    size_t head;             /* next write position in ring */
    unsigned long long seen; /* bytes passed through */
    bool out_broken;         /* writing to our stderr failed: passing stopped */
    bool handed_over;        /* a writer outlived the program: a forwarder passes the rest */
    const char *why_off;     /* RELAY_OFF: why ("--no-capture", "stderr is closed", ...) */
};

/* Before the fork: decides the mode from what fd 2 is. */
void relay_setup(struct relay *r, bool wanted);
/* In the child, before exec: its fd 2 becomes the pipe / pty. */
void relay_child(struct relay *r);
/* In the parent: passes the output through until the program has exited and
 * what it left buffered is drained; returns its wait status. */
struct run_signals;
/* ... g (NULL: none) decides the signals to convguard meanwhile (run_signals.h) */
int relay_wait(struct relay *r, pid_t pid, struct run_signals *g);
/* Writes <dir>/<host>-<pid>.stderr; returns its path (malloc'd) or NULL. */
char *relay_save(struct relay *r, const char *dir, pid_t child, double started, double ended, int status);
void relay_free(struct relay *r);

#endif
