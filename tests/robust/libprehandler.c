/* libprehandler.c - a library whose constructor installs a SIGSEGV handler
 * before the shim's (preloaded after it: LD_PRELOAD=shim:this).  The handler
 * says so, restores the default action and returns: the fault repeats and
 * kills the process.  Tests that the shim hands the signal on to it. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void handler(int sig, siginfo_t *si, void *uc)
{
    (void)si, (void)uc;
    /* the mask it runs with must be the kernel's: the interrupted code's
     * (nothing blocked here) plus the signal itself */
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    const char *msg = sigismember(&now, SIGUSR1) || !sigismember(&now, SIGSEGV)
                          ? "earlier handler ran, mask NOT as the kernel makes it\n"
                          : "earlier handler ran, mask as the kernel makes it\n";
    ssize_t r = write(2, msg, strlen(msg));
    (void)r;
    signal(sig, SIG_DFL);
}

__attribute__((constructor)) static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
}
