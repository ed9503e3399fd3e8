/* stderr_probe.c - a program whose stderr `convguard run` relays, for
 * tests/report/t_capture_run.sh and bench/capture.sh.  Facts go to stdout.
 *
 *   tty           what fd 0/1/2 are: isatty, kind, fd 2's window size and termios
 *   winch         fd 2's window size, then again after the next SIGWINCH
 *   bytes FILE    FILE to stderr in pieces of 1, 3, 4096, 7, 65536, 100000 bytes
 *   spew N [K]    N bytes of text lines to stderr, K bytes per write (default 65536)
 *   close         closes its stderr, then exits 3 after 0.3 s
 *   daemon        a child that leaves the session keeps stderr and writes to it
 *                 2 s later; the program itself exits 0 at once
 *   kill SIG      dies of signal SIG
 *   trap          waits (5 s at most) for SIGINT/SIGTERM, counts them, exits 5
 *   count SIG     the same for signal number SIG (written "got N" on stdout), exits 5;
 *                 its pid on stdout first
 * PROBE_DLOPEN=FILE: dlopen()s FILE first (a stand-in libcudart.so.13), so that the
 * shim writes a trace file and `convguard run` keeps the capture beside it. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static void say_err(const char *s)
{
    if (write(2, s, strlen(s)) < 0) {
        /* nothing to do: stderr is what is being tested */
    }
}

static const char *kind(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return "closed";
    return S_ISCHR(st.st_mode) ? (isatty(fd) ? "tty" : "chr") : S_ISFIFO(st.st_mode) ? "fifo"
           : S_ISREG(st.st_mode) ? "file" : S_ISSOCK(st.st_mode) ? "socket" : "other";
}

static void size_line(void)
{
    struct winsize w;
    if (ioctl(2, TIOCGWINSZ, &w) == 0)
        printf("size %ux%u\n", w.ws_row, w.ws_col);
    else
        printf("size none\n");
    fflush(stdout);
}

static volatile sig_atomic_t got_int, got_term, got_winch, got_count;
static void on_count(int s)
{
    (void)s;
    got_count++;
}
static void on_sig(int s)
{
    if (s == SIGINT)
        got_int++;
    else if (s == SIGTERM)
        got_term++;
    else
        got_winch++;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (getenv("PROBE_DLOPEN") && !dlopen(getenv("PROBE_DLOPEN"), RTLD_NOW))
        fprintf(stderr, "stderr_probe: %s\n", dlerror());
    if (!strcmp(mode, "tty")) {
        for (int fd = 0; fd < 3; fd++)
            printf("fd%d %s isatty=%d\n", fd, kind(fd), isatty(fd));
        size_line();
        struct termios t;
        if (tcgetattr(2, &t) == 0)
            printf("termios i=%x o=%x c=%x l=%x speed=%u cc=%d,%d,%d,%d\n", (unsigned)t.c_iflag,
                   (unsigned)t.c_oflag, (unsigned)t.c_cflag, (unsigned)t.c_lflag, (unsigned)cfgetospeed(&t),
                   t.c_cc[VINTR], t.c_cc[VERASE], t.c_cc[VEOF], t.c_cc[VSUSP]);
        else
            printf("termios none\n");
        int fl = fcntl(2, F_GETFL);
        printf("fd2 flags %s\n", fl < 0 ? "closed" : (fl & O_ACCMODE) == O_RDONLY ? "r" : (fl & O_ACCMODE) == O_WRONLY ? "w" : "rw");
        return 0;
    }
    if (!strcmp(mode, "winch")) {
        signal(SIGWINCH, on_sig);
        size_line();
        for (int i = 0; i < 500 && !got_winch; i++)
            sleep_ms(10);
        sleep_ms(200); /* convguard resizes its pty when it gets the same signal */
        size_line();
        return got_winch ? 0 : 1;
    }
    if (!strcmp(mode, "bytes") && argc > 2) {
        FILE *f = fopen(argv[2], "rb");
        if (!f)
            return 2;
        static const size_t pieces[] = {1, 3, 4096, 7, 65536, 100000};
        char *buf = malloc(100000);
        size_t n, k = 0;
        while ((n = fread(buf, 1, pieces[k % 6], f)) > 0) {
            for (size_t off = 0; off < n;) {
                ssize_t w = write(2, buf + off, n - off);
                if (w <= 0)
                    return 3;
                off += (size_t)w;
            }
            if (k++ % 3 == 0)
                sleep_ms(1); /* let some pieces arrive on their own */
        }
        return 0;
    }
    if (!strcmp(mode, "spew") && argc > 2) {
        long long total = atoll(argv[2]);
        size_t chunk = argc > 3 ? (size_t)atol(argv[3]) : 65536;
        char *buf = malloc(chunk);
        for (size_t i = 0; i < chunk; i++)
            buf[i] = (i % 100 == 99) ? '\n' : (char)('a' + i % 26);
        for (long long done = 0; done < total;) {
            size_t n = total - done < (long long)chunk ? (size_t)(total - done) : chunk;
            ssize_t w = write(2, buf, n);
            if (w <= 0)
                return 3;
            done += w;
        }
        return 0;
    }
    if (!strcmp(mode, "close")) {
        say_err("closing stderr\n");
        close(2);
        sleep_ms(300);
        printf("closed\n");
        return 3;
    }
    if (!strcmp(mode, "daemon")) {
        pid_t p = fork();
        if (p == 0) {
            setsid();
            close(0), close(1);
            sleep_ms(2000);
            say_err("late line\n");
            _exit(0);
        }
        say_err("parent line\n");
        return 0;
    }
    if (!strcmp(mode, "kill") && argc > 2) {
        int s = atoi(argv[2]);
        say_err("dying\n");
        signal(s, SIG_DFL);
        raise(s);
        return 1;
    }
    if (!strcmp(mode, "trap")) {
        signal(SIGINT, on_sig);
        signal(SIGTERM, on_sig);
        printf("ready\n");
        fflush(stdout);
        for (int i = 0; i < 500 && !got_int && !got_term; i++)
            sleep_ms(10);
        sleep_ms(300); /* a second copy of the signal would arrive now */
        char b[64];
        snprintf(b, sizeof b, "got SIGINT x%d SIGTERM x%d\n", (int)got_int, (int)got_term);
        say_err(b);
        return 5;
    }
    if (!strcmp(mode, "count") && argc > 2) {
        struct sigaction sa = {0};
        sa.sa_handler = on_count; /* no SA_RESTART, no mask: each copy counts */
        sigaction(atoi(argv[2]), &sa, NULL);
        printf("pid %d\nready\n", (int)getpid());
        fflush(stdout);
        for (int i = 0; i < 500 && !got_count; i++)
            sleep_ms(10);
        sleep_ms(400); /* a second copy would arrive now */
        printf("got %d\n", (int)got_count);
        return 5;
    }
    fprintf(stderr, "usage: stderr_probe tty|winch|bytes FILE|spew N [K]|close|daemon|kill SIG|trap|count SIG\n");
    return 2;
}
