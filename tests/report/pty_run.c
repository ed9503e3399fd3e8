/* pty_run.c - a terminal for the tests: runs CMD as the session leader of a
 * new pseudo-terminal (its controlling terminal, stdin, stdout and stderr),
 * as a terminal emulator or `script` would, and records every byte the
 * terminal received.
 *
 *   pty_run [-s ROWSxCOLS] [-r ROWSxCOLS@MS] [-i MS] [-z MS] [-t FILE] -o OUT -- CMD [ARG...]
 *     -s   the window size at the start (default 24x80)
 *     -r   resize the window after MS milliseconds (SIGWINCH to the foreground group)
 *     -i   type Ctrl-C after MS milliseconds (SIGINT from the terminal)
 *     -z   type Ctrl-Z after MS milliseconds (SIGTSTP to the foreground process group:
 *          for job control, run a shell with `set -m` as CMD)
 *     -t   write the milliseconds from the start to CMD's exit into FILE
 *     -T   give up after this many seconds (default 20): CMD's process group is killed
 *   Exit status: CMD's (128+signal when it was killed).  It waits until every
 *   process holding the terminal has closed it (or -T). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int parse_size(const char *s, struct winsize *w)
{
    unsigned r, c;
    if (sscanf(s, "%ux%u", &r, &c) != 2)
        return -1;
    w->ws_row = (unsigned short)r, w->ws_col = (unsigned short)c;
    return 0;
}

int main(int argc, char **argv)
{
    struct winsize w0 = {24, 80, 0, 0}, w1 = {0, 0, 0, 0};
    double resize_at = -1, intr_at = -1, susp_at = -1;
    const char *out = NULL, *tfile = NULL;
    double limit_ms = 20000;
    int c;
    while ((c = getopt(argc, argv, "+s:r:i:z:o:t:T:")) != -1) {
        switch (c) {
        case 's': if (parse_size(optarg, &w0)) return 2; break;
        case 'r':
            if (parse_size(optarg, &w1) || !strchr(optarg, '@'))
                return 2;
            resize_at = atof(strchr(optarg, '@') + 1);
            break;
        case 'i': intr_at = atof(optarg); break;
        case 'z': susp_at = atof(optarg); break;
        case 'o': out = optarg; break;
        case 't': tfile = optarg; break;
        case 'T': limit_ms = atof(optarg) * 1000; break;
        default: return 2;
        }
    }
    if (!out || optind >= argc) {
        fprintf(stderr, "usage: pty_run [-s RxC] [-r RxC@MS] [-i MS] [-t FILE] -o OUT -- CMD...\n");
        return 2;
    }
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) || unlockpt(m)) {
        perror("pty_run: posix_openpt");
        return 2;
    }
    char *name = ptsname(m);
    ioctl(m, TIOCSWINSZ, &w0);
    FILE *o = fopen(out, "wb");
    if (!o) {
        perror(out);
        return 2;
    }
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        int s = open(name, O_RDWR); /* the first terminal a session leader opens is its own */
        if (s < 0)
            _exit(126);
        ioctl(s, TIOCSCTTY, 0);
        dup2(s, 0), dup2(s, 1), dup2(s, 2);
        if (s > 2)
            close(s);
        close(m);
        execvp(argv[optind], argv + optind);
        _exit(127);
    }
    int st = 0;
    bool exited = false;
    char buf[65536];
    for (;;) {
        double t = now_ms() - t0;
        if (resize_at >= 0 && t >= resize_at) {
            ioctl(m, TIOCSWINSZ, &w1);
            resize_at = -1;
        }
        if (intr_at >= 0 && t >= intr_at) {
            if (write(m, "\003", 1) != 1)
                perror("pty_run: write");
            intr_at = -1;
        }
        if (susp_at >= 0 && t >= susp_at) {
            if (write(m, "\032", 1) != 1)
                perror("pty_run: write");
            susp_at = -1;
        }
        int ws;
        if (!exited && waitpid(pid, &ws, WNOHANG) == pid) {
            st = ws;
            exited = true;
            if (tfile) {
                FILE *f = fopen(tfile, "w");
                if (f)
                    fprintf(f, "%.0f\n", t), fclose(f);
            }
        }
        if (t > limit_ms) { /* nobody would read the terminal any more: its writers would block */
            kill(-pid, SIGKILL);
            break;
        }
        struct pollfd pf = {m, POLLIN, 0};
        if (poll(&pf, 1, 20) <= 0)
            continue;
        ssize_t n = read(m, buf, sizeof buf);
        if (n > 0) {
            fwrite(buf, 1, (size_t)n, o);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (exited) /* EIO: no process holds the terminal any more */
            break;
        usleep(10000);
    }
    fclose(o);
    if (!exited)
        waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
