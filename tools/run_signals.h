/* run_signals.h - `convguard run`'s signals (run_signals.c): each signal meant
 * for the program reaches it once, convguard never dies of its own output,
 * and it ends as the program ended. */
#ifndef CONVGUARD_RUN_SIGNALS_H
#define CONVGUARD_RUN_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#define RUNSIG_N 7 /* SIGHUP SIGINT SIGQUIT SIGTERM SIGUSR1 SIGUSR2 SIGCONT */

struct run_signals {
    int ev[2];        /* the event pipe: the handler's and the sentinel's records */
    pid_t sentinel;   /* the process that tells a group's signal from convguard's own, 0 */
    pid_t child;      /* the program, 0 once it is reaped */
    unsigned nq;      /* records waiting for their match, in q */
    struct runsig_rec {
        int sig, pid;
        bool mine;    /* convguard's (else the sentinel's) */
        double at;    /* when it was read, ms */
    } q[64];
    bool fwd_saved;
    struct sigaction saved[RUNSIG_N];
};

/* Before anything is printed: SIGPIPE ignored for good (a reader that went
 * away fails a write, never ends convguard); the program gets it back as it was. */
void runsig_ignore_sigpipe(void);
/* In the program's child, before exec: SIGPIPE as convguard found it. */
void runsig_child(void);
/* Before the program's fork, with the signals of runsig_mask() blocked: the
 * event pipe and the sentinel (its command line shown as `cg-signals ARGV`). */
void runsig_start(struct run_signals *g, char **argv);
void runsig_mask(sigset_t *set);
/* After the fork: the handlers in place (the caller then unblocks). */
void runsig_attach(struct run_signals *g, pid_t child);
/* The fd to poll; readable when a record waits. */
int runsig_fd(const struct run_signals *g);
/* Reads the records, passes on to the program each signal that reached
 * convguard and not the sentinel; alive: the program is not reaped yet.
 * Returns the ms until it must be called again, -1 when nothing waits. */
int runsig_step(struct run_signals *g, bool alive);
/* The program has ended with status st: the sentinel goes, and from now on a
 * SIGHUP/INT/QUIT/TERM ends convguard at once the way the program ended
 * (keep_status), or the handlers are as they were (!keep_status: smoke). */
void runsig_stop(struct run_signals *g, int st, bool keep_status);
/* Ends convguard as the program ended: exit status N, or death by the same
 * signal (no core of convguard's own).  Async-signal-safe. */
_Noreturn void runsig_end_as(int st);

#endif
