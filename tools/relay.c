/* relay.c - `convguard run` passes the program's stderr through and keeps its
 * last part (capture.h).
 *
 * What the program gets as fd 2 stays the same kind of thing: a terminal gets
 * a pseudo-terminal with the terminal's settings and window size, a pipe or a
 * socket a pipe, a regular file the file itself (read back at the end: no
 * copy on the way, and its order against stdout written to the same file is
 * kept).  stdin and stdout are not touched, the program stays in
 * convguard's process group, so job control and the terminal's signals
 * reach it as before.  Bytes go out as soon as they are read, never held for
 * a whole line.  Exit: when the program has exited, what is still buffered is
 * passed on; if something it started still holds its stderr (a daemon), a
 * small forwarder process keeps passing that on, uncaptured, until it closes. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "relay.h"
#include "run_signals.h"

#define CHUNK (1u << 20) /* one read; a pipe is made this large where the kernel allows */

static int sig_fd = -1;              /* write end of the self-pipe the handlers poke */
static volatile sig_atomic_t winch;  /* the terminal was resized */

static void on_chld(int sig)
{
    (void)sig;
    int e = errno;
    if (sig_fd >= 0 && write(sig_fd, "c", 1) < 0) {
        /* full: a wake-up is already pending */
    }
    errno = e;
}

static void on_winch(int sig)
{
    winch = 1;
    on_chld(sig);
}

static bool open_pty(struct relay *r)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0)
        return false;
    char *name = grantpt(m) == 0 && unlockpt(m) == 0 ? ptsname(m) : NULL;
    /* O_NOCTTY: the pty must never become anyone's controlling terminal; the
     * real terminal stays the program's, with its job control and signals */
    int s = name ? open(name, O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
    if (s < 0) {
        close(m);
        return false;
    }
    struct termios t;
    if (tcgetattr(2, &t) == 0)
        tcsetattr(s, TCSANOW, &t);
    struct winsize w;
    if (ioctl(2, TIOCGWINSZ, &w) == 0)
        ioctl(m, TIOCSWINSZ, &w);
    r->read_fd = m, r->child_fd = s;
    return true;
}

static bool open_pipe(struct relay *r)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return false;
    fcntl(p[1], F_SETPIPE_SZ, (int)CHUNK); /* best effort: fewer wake-ups */
    r->read_fd = p[0], r->child_fd = p[1];
    /* the hold pipe: tee(2) references the output's pages into it, splice(2)
     * moves them on to our stderr, and only the copy kept is read */
    if (pipe2(r->hold, O_CLOEXEC) == 0)
        fcntl(r->hold[1], F_SETPIPE_SZ, (int)CHUNK);
    else
        r->hold[0] = r->hold[1] = -1;
    return true;
}

/* A regular file is read back at the end from its size at the launch on. */
static bool open_file(struct relay *r, const struct stat *st)
{
    int fd = open("/proc/self/fd/2", O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat again;
    if (fd < 0)
        return false;
    if (fstat(fd, &again) != 0 || again.st_dev != st->st_dev || again.st_ino != st->st_ino) {
        close(fd);
        return false;
    }
    r->read_fd = fd;
    r->file_start = (long long)st->st_size;
    return true;
}

void relay_setup(struct relay *r, bool wanted)
{
    memset(r, 0, sizeof *r);
    r->child_fd = r->read_fd = -1;
    r->hold[0] = r->hold[1] = -1;
    r->mode = RELAY_OFF;
    int fl = fcntl(2, F_GETFL);
    struct stat st;
    if (!wanted)
        r->why_off = "--no-capture";
    else if (fl < 0 || fstat(2, &st) != 0)
        r->why_off = "stderr is closed";
    else if ((fl & O_ACCMODE) == O_RDONLY)
        r->why_off = "stderr is not writable";
    else if (!(r->ring = malloc(CAPTURE_WINDOW)))
        r->why_off = "out of memory";
    if (r->why_off)
        return;
    if (isatty(2) && open_pty(r))
        r->mode = RELAY_PTY;
    else if (S_ISREG(st.st_mode) && open_file(r, &st))
        r->mode = RELAY_FILE;
    else if (open_pipe(r))
        r->mode = RELAY_PIPE;
    else
        r->why_off = "no pipe";
}

void relay_child(struct relay *r)
{
    if ((r->mode == RELAY_PIPE || r->mode == RELAY_PTY) && r->child_fd != 2)
        dup2(r->child_fd, 2); /* dup2 clears close-on-exec on fd 2 only */
}

/* ---- passing bytes on */
static void ring_add(struct relay *r, const char *p, size_t n)
{
    r->seen += n;
    if (n > CAPTURE_WINDOW) { /* only the last part can stay */
        p += n - CAPTURE_WINDOW;
        n = CAPTURE_WINDOW;
    }
    size_t first = CAPTURE_WINDOW - r->head < n ? CAPTURE_WINDOW - r->head : n;
    memcpy(r->ring + r->head, p, first);
    memcpy(r->ring, p + first, n - first);
    r->head = (r->head + n) % CAPTURE_WINDOW;
}

/* Writes all of it to our stderr.  false: the reader is gone (EPIPE) or the
 * terminal hung up (EIO), which the program must then meet itself. */
static bool write_out(const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(2, p, n);
        if (k > 0) {
            p += k, n -= (size_t)k;
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else if (k < 0 && errno == EAGAIN) {
            struct pollfd pf = {2, POLLOUT, 0};
            poll(&pf, 1, 1000);
        } else {
            /* EPIPE / EIO: stop, so that the program's next write fails as it would
             * have; anything else (a full disk): drop these bytes, go on */
            return !(k < 0 && (errno == EPIPE || errno == EIO));
        }
    }
    return true;
}

/* The pty's output processing turns each "\n" into "\r\n" (ONLCR, copied from
 * the terminal, which does the same again): one "\r" before each "\n" is the
 * pty's and is taken out, so the terminal gets what the program wrote.  With
 * other output processing (OCRNL, ONLRET, tab expansion) nothing is undone. */
static bool onlcr_only(int master)
{
    struct termios t;
    if (tcgetattr(master, &t) != 0 || !(t.c_oflag & OPOST) || !(t.c_oflag & ONLCR))
        return false;
    tcflag_t other = OCRNL | ONLRET | ONOCR;
#ifdef OLCUC
    other |= OLCUC;
#endif
#ifdef TABDLY
    if ((t.c_oflag & TABDLY) == TAB3)
        return false;
#endif
    return !(t.c_oflag & other);
}

struct pty_state {
    bool held_cr;     /* a "\r" at the end of the last read: is the next byte its "\n"? */
    bool onlcr;       /* onlcr_only(), asked again every 100 ms (a program may change it) */
    double asked_at;
};

static double mono_ms(void);

/* onlcr_only() costs an ioctl: asked once per 100 ms, not once per read */
static bool onlcr_now(int master, struct pty_state *ps)
{
    double t = mono_ms();
    if (ps->asked_at == 0 || t - ps->asked_at > 100) {
        ps->onlcr = onlcr_only(master);
        ps->asked_at = t;
    }
    return ps->onlcr;
}

static size_t undo_onlcr(char *buf, size_t n, struct pty_state *ps, char *out)
{
    size_t o = 0;
    if (ps->held_cr) {
        ps->held_cr = false;
        if (n == 0 || buf[0] != '\n')
            out[o++] = '\r';
    }
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\r') {
            if (i + 1 == n) {
                ps->held_cr = true; /* is the next byte its "\n"? */
                break;
            }
            if (buf[i + 1] == '\n')
                continue;
        }
        out[o++] = buf[i];
    }
    return o;
}

static void drop_hold(struct relay *r)
{
    if (r->hold[0] >= 0)
        close(r->hold[0]), close(r->hold[1]);
    r->hold[0] = r->hold[1] = -1;
}

/* Moves the first n bytes of the program's pipe to our stderr: splice(2),
 * where our stderr takes it (a pipe, a socket, /dev/null), else a read and a
 * write.  false: our stderr is gone (EPIPE). */
static bool splice_out(struct relay *r, size_t n, char *tmp)
{
    bool can_splice = true;
    while (n) {
        ssize_t k = can_splice ? splice(r->read_fd, NULL, 2, NULL, n, SPLICE_F_MOVE) : -1;
        if (k > 0) {
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EAGAIN && can_splice) {
            struct pollfd pf = {2, POLLOUT, 0};
            poll(&pf, 1, 1000);
            continue;
        }
        if (k < 0 && errno == EPIPE)
            return false;
        /* splice refused (EINVAL: this stderr takes no splice) or failed otherwise:
         * the rest through memory, as any program's write */
        can_splice = false;
        ssize_t m = read(r->read_fd, tmp, n < CHUNK / 8 ? n : CHUNK / 8);
        if (m < 0 && errno == EINTR)
            continue;
        if (m <= 0)
            return true;
        if (!write_out(tmp, (size_t)m))
            return false;
        n -= (size_t)m;
    }
    return true;
}

/* pump's pipe with a hold pipe: the output teed into it, spliced out, the
 * copy read into the ring.  TEE_MORE / TEE_END: pump's answer; TEE_READ: no
 * tee here (any more), read instead. */
enum tee_result { TEE_MORE, TEE_END, TEE_READ };

static enum tee_result pump_tee(struct relay *r, char *tmp)
{
    ssize_t n = tee(r->read_fd, r->hold[1], CHUNK, SPLICE_F_NONBLOCK);
    if (n > 0) {
        if (!splice_out(r, (size_t)n, tmp))
            r->out_broken = true;
        /* the kept copy: exactly those n bytes wait in the hold pipe */
        for (size_t left = (size_t)n; left;) {
            size_t room = CAPTURE_WINDOW - r->head < left ? CAPTURE_WINDOW - r->head : left;
            ssize_t k = read(r->hold[0], r->ring + r->head, room);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            left -= (size_t)k;
            r->seen += (unsigned long long)k;
            r->head = (r->head + (size_t)k) % CAPTURE_WINDOW;
        }
        return r->out_broken ? TEE_END : TEE_MORE;
    }
    if (n < 0 && errno == EINVAL)
        drop_hold(r); /* no tee here: read and write from now on */
    else if (n < 0 && errno == EAGAIN) {
        /* nothing to tee (or the hold pipe is full: it never stays so); is it the end? */
        struct pollfd pf = {r->read_fd, POLLIN, 0};
        if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLHUP) && !(pf.revents & POLLIN))
            return TEE_END;
        return TEE_MORE;
    } else if (n == 0) {
        return TEE_END; /* every writer closed the pipe */
    } else if (n < 0 && errno != EINTR) {
        drop_hold(r);
    }
    return r->hold[0] >= 0 ? TEE_MORE : TEE_READ;
}

/* One read.  false: end of the program's output, or passing stopped. */
static bool pump(struct relay *r, struct pty_state *ps, char *tmp)
{
    ssize_t n;
    if (r->mode == RELAY_PIPE && r->hold[0] >= 0 && !r->out_broken) {
        enum tee_result t = pump_tee(r, tmp);
        if (t != TEE_READ)
            return t == TEE_MORE;
    }
    if (r->mode == RELAY_PIPE) {
        /* read straight into the ring and write from there: no copy */
        size_t room = CAPTURE_WINDOW - r->head < CHUNK ? CAPTURE_WINDOW - r->head : CHUNK;
        n = read(r->read_fd, r->ring + r->head, room);
        if (n > 0) {
            if (!r->out_broken && !write_out(r->ring + r->head, (size_t)n))
                r->out_broken = true;
            r->seen += (unsigned long long)n;
            r->head = (r->head + (size_t)n) % CAPTURE_WINDOW;
        }
    } else {
        n = read(r->read_fd, tmp, CHUNK / 16);
        if (n > 0) {
            char *out = tmp + CHUNK / 16;
            size_t o = onlcr_now(r->read_fd, ps) ? undo_onlcr(tmp, (size_t)n, ps, out)
                                               : (memcpy(out, tmp, (size_t)n), (size_t)n);
            if (!r->out_broken && !write_out(out, o))
                r->out_broken = true;
            ring_add(r, out, o);
        }
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n <= 0) { /* 0: every writer closed the pipe; EIO: the pty's last slave closed */
        if (ps->held_cr && !r->out_broken) {
            write_out("\r", 1);
            ring_add(r, "\r", 1);
        }
        ps->held_cr = false;
        return false;
    }
    return !r->out_broken;
}

/* Something the program started still holds its stderr: a process of its own
 * passes that output on until the last holder closes it (nothing is captured
 * any more), so convguard can report and exit now and the holder does not
 * die of SIGPIPE. */
static void hand_over(struct relay *r, struct pty_state *ps)
{
    pid_t f = fork();
    if (f == 0) {
        setsid(); /* out of the terminal's job control: it outlives the job */
        prctl(PR_SET_NAME, "convguard-fwd", 0, 0, 0);
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGCHLD, SIGWINCH};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);
        char *buf = malloc(CHUNK / 8);
        bool pty = r->mode == RELAY_PTY;
        for (;;) {
            ssize_t n = buf ? read(r->read_fd, buf, CHUNK / 16) : -1;
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            size_t o = pty && onlcr_now(r->read_fd, ps) ? undo_onlcr(buf, (size_t)n, ps, buf + CHUNK / 16)
                                                      : (memcpy(buf + CHUNK / 16, buf, (size_t)n), (size_t)n);
            if (!write_out(buf + CHUNK / 16, o))
                break;
        }
        _exit(0);
    }
    if (f > 0)
        r->handed_over = true;
    close(r->read_fd);
    r->read_fd = -1;
}

#define SMALL_READ (64u << 10)

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL); /* a signal cuts it short: fine */
}

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void read_file_back(struct relay *r)
{
    struct stat st;
    if (fstat(r->read_fd, &st) != 0)
        return;
    long long end = (long long)st.st_size, from = r->file_start <= end ? r->file_start : 0;
    long long take = end - from > (long long)CAPTURE_WINDOW ? (long long)CAPTURE_WINDOW : end - from;
    ssize_t n = take > 0 ? pread(r->read_fd, r->ring, (size_t)take, (off_t)(end - take)) : 0;
    if (n > 0) {
        r->head = (size_t)n % CAPTURE_WINDOW;
        r->seen = (unsigned long long)(end - from); /* the kept bytes are the last of these */
        if (r->seen < (unsigned long long)n)
            r->seen = (unsigned long long)n;
    }
}

/* While passing on: SIGCHLD and SIGWINCH wake the loop through a pipe; SIGPIPE ignored */
struct relay_signals {
    int sp[2];
    struct sigaction old_chld, old_winch, old_pipe;
};

static void signals_on(struct relay_signals *rs)
{
    if (pipe2(rs->sp, O_CLOEXEC | O_NONBLOCK) != 0)
        rs->sp[0] = rs->sp[1] = -1;
    sig_fd = rs->sp[1];
    struct sigaction sa = {0};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sa.sa_handler = on_chld;
    sigaction(SIGCHLD, &sa, &rs->old_chld);
    sa.sa_handler = on_winch;
    sigaction(SIGWINCH, &sa, &rs->old_winch);
    sa.sa_handler = SIG_IGN; /* a closed reader shows as EPIPE in write_out */
    sigaction(SIGPIPE, &sa, &rs->old_pipe);
}

static void signals_off(struct relay_signals *rs)
{
    sigaction(SIGCHLD, &rs->old_chld, NULL);
    sigaction(SIGWINCH, &rs->old_winch, NULL);
    sigaction(SIGPIPE, &rs->old_pipe, NULL);
    sig_fd = -1;
    if (rs->sp[0] >= 0)
        close(rs->sp[0]), close(rs->sp[1]);
}

/* the terminal was resized: the program's pty takes the new size */
static void pass_winch(struct relay *r)
{
    if (winch && r->mode == RELAY_PTY && r->read_fd >= 0) {
        winch = 0;
        struct winsize w;
        if (ioctl(2, TIOCGWINSZ, &w) == 0)
            ioctl(r->read_fd, TIOCSWINSZ, &w);
    }
}

/* The program's output is ready: pass it on (and keep it); the end of it
 * closes the read side; after the exit, a writer that goes on is handed over. */
static void take_output(struct relay *r, struct pty_state *ps, char *tmp, bool exited, double exited_at,
                        double *quiet_since)
{
    unsigned long long before = r->seen;
    if (!pump(r, ps, tmp)) {
        close(r->read_fd);
        r->read_fd = -1;
    } else if (exited && mono_ms() - exited_at > 1000) {
        hand_over(r, ps); /* it keeps writing: do not wait for it */
    }
    *quiet_since = mono_ms();
    /* A little came: let more gather before the next read.  A program
     * that writes line by line would otherwise wake this loop once per
     * line (measured: 100-byte lines ran 2.6x slower); 1 ms later is
     * nothing a person sees, and the pipe buffers a MiB meanwhile (a pty
     * buffers little: there the program would wait). */
    if (r->mode == RELAY_PIPE && r->seen - before < SMALL_READ && !exited)
        nap_ms(1);
}

/* poll, with the signal records' deadline; their records read and decided */
static int poll_signals(struct pollfd *pf, int n, int timeout, struct run_signals *g, bool alive)
{
    pf[n] = (struct pollfd){g ? runsig_fd(g) : -1, POLLIN, 0};
    int due = g && g->nq ? runsig_step(g, alive) : -1; /* only while one waits: no syscall per read */
    if (due >= 0 && (timeout < 0 || due < timeout))
        timeout = due;
    int k = poll(pf, (nfds_t)n + 1, timeout);
    if (g && k > 0 && pf[n].revents)
        runsig_step(g, alive);
    return k;
}

/* the program reaped (its status in *st) or gone */
static bool reaped(pid_t pid, int *st)
{
    pid_t w = waitpid(pid, st, WNOHANG);
    return w == pid || (w < 0 && errno == ECHILD);
}

static void drain(int fd)
{
    char b[64];
    while (fd >= 0 && read(fd, b, sizeof b) > 0)
        ;
}

/* nothing to pass on (no capture, or a file read back at the end): wait, and
 * decide the signals meanwhile */
static int wait_only(pid_t pid, struct relay_signals *rs, struct run_signals *g)
{
    int st = 0;
    while (!reaped(pid, &st)) {
        struct pollfd pf[2] = {{rs->sp[0], POLLIN, 0}};
        poll_signals(pf, 1, rs->sp[0] < 0 ? 100 : -1, g, true);
        drain(rs->sp[0]);
    }
    return st;
}

static int pass_through(struct relay *r, pid_t pid, struct relay_signals *rs, struct run_signals *g)
{
    static char tmp[CHUNK / 8]; /* pty reads and what is left of them after the \r\n undo */
    struct pty_state ps = {false, false, 0};
    bool exited = false;
    double quiet_since = 0, exited_at = 0;
    int st = 0;
    for (;;) {
        if (!exited && reaped(pid, &st)) {
            exited = true;
            exited_at = quiet_since = mono_ms();
        }
        if (exited && r->read_fd < 0)
            break;
        struct pollfd pf[3] = {{rs->sp[0], POLLIN, 0}, {r->read_fd, POLLIN, 0}};
        /* after the exit: 50 ms without output means whoever holds the pipe is
         * not the program; its output is passed on by the forwarder */
        int k = poll_signals(pf, r->read_fd >= 0 ? 2 : 1, exited ? 50 : (rs->sp[0] < 0 ? 100 : -1), exited ? NULL : g,
                             true);
        if (k < 0 && errno != EINTR)
            break;
        if (k > 0 && (pf[0].revents & POLLIN))
            drain(rs->sp[0]);
        pass_winch(r);
        if (k > 0 && r->read_fd >= 0 && pf[1].revents) {
            take_output(r, &ps, tmp, exited, exited_at, &quiet_since);
            continue;
        }
        if (exited && r->read_fd >= 0 && mono_ms() - quiet_since >= 50)
            hand_over(r, &ps);
    }
    return st;
}

int relay_wait(struct relay *r, pid_t pid, struct run_signals *g)
{
    struct relay_signals rs;
    signals_on(&rs);
    bool relaying = r->mode == RELAY_PIPE || r->mode == RELAY_PTY;
    if (relaying) {
        close(r->child_fd);
        r->child_fd = -1;
    }
    int st = relaying ? pass_through(r, pid, &rs, g) : wait_only(pid, &rs, g);
    if (r->mode == RELAY_FILE)
        read_file_back(r);
    signals_off(&rs);
    return st;
}

/* ---- the capture file */
static void host_name(char *h, size_t n)
{
    struct utsname u;
    const char *src = uname(&u) == 0 && u.nodename[0] ? u.nodename : "host";
    size_t len = strnlen(src, n - 1);
    memcpy(h, src, len); /* cut as the shim cuts it (shim/shim.c) */
    h[len] = 0;
    for (char *p = h; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '_' || *p == '-'))
            *p = '_';
}

/* The kept bytes in order, oldest first. */
static char *ring_linear(struct relay *r, size_t *len)
{
    size_t n = r->seen < CAPTURE_WINDOW ? (size_t)r->seen : CAPTURE_WINDOW;
    char *b = malloc(n ? n : 1);
    if (!b)
        return NULL;
    if (r->seen < CAPTURE_WINDOW || r->mode == RELAY_FILE) {
        memcpy(b, r->ring, n);
    } else {
        memcpy(b, r->ring + r->head, CAPTURE_WINDOW - r->head);
        memcpy(b + CAPTURE_WINDOW - r->head, r->ring, r->head);
    }
    *len = n;
    return b;
}

struct rank_sec {
    char kind;
    long num;
    struct sbuf text;
    size_t last; /* offset of its last line in the window */
    long lines;
};

/* The prefixed lines of the window, per rank.  srun's `N: ` counts only when
 * most lines carry it (the prefix alone is too plain to trust). */
static struct rank_sec *split_ranks(const char *b, size_t n, size_t *nsec)
{
    struct rank_sec *sec = NULL;
    size_t ns = 0;
    long lines = 0, srun_lines = 0;
    for (size_t off = 0; off < n;) {
        const char *nl = memchr(b + off, '\n', n - off);
        size_t len = nl ? (size_t)(nl - (b + off)) + 1 : n - off;
        char kind;
        long num;
        lines++;
        if (rank_prefix(b + off, len, &kind, &num)) {
            srun_lines += kind == 's';
            size_t i = 0;
            while (i < ns && !(sec[i].kind == kind && sec[i].num == num))
                i++;
            if (i == ns) {
                sec = realloc(sec, (ns + 1) * sizeof *sec);
                memset(&sec[ns], 0, sizeof *sec);
                sec[ns].kind = kind, sec[ns].num = num;
                ns++;
            }
            sb_addn(&sec[i].text, b + off, len);
            sec[i].last = off;
            sec[i].lines++;
        }
        off += len;
    }
    bool srun = srun_lines * 2 > lines;
    size_t k = 0;
    for (size_t i = 0; i < ns; i++) {
        if (sec[i].kind == 's' && !srun) {
            free(sec[i].text.s);
            continue;
        }
        sec[k++] = sec[i];
    }
    ns = k;
    /* too many: the ranks that wrote last */
    while (ns > CAPTURE_MAX_RANKS) {
        size_t old = 0;
        for (size_t i = 1; i < ns; i++)
            if (sec[i].last < sec[old].last)
                old = i;
        free(sec[old].text.s);
        sec[old] = sec[--ns];
    }
    *nsec = ns;
    return sec;
}

/* The last `max` bytes of s, from a line start when one is within reach. */
static const char *last_part(const char *s, size_t len, size_t max, size_t *out)
{
    if (len <= max) {
        *out = len;
        return s;
    }
    const char *p = s + len - max, *nl = memchr(p, '\n', max);
    if (nl && (size_t)(nl - p) < max / 4)
        p = nl + 1;
    *out = (size_t)(s + len - p);
    return p;
}

static bool write_all_fd(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k, n -= (size_t)k;
    }
    return true;
}

static const char *mode_name(enum relay_mode m)
{
    return m == RELAY_PTY ? "pty" : m == RELAY_PIPE ? "pipe" : m == RELAY_FILE ? "file" : "off";
}

/* a new file HOST-CHILD.stderr in DIR (HOST-CHILD.K.stderr if taken); its fd, -1 */
static int create_capture(const char *dir, const char *host, pid_t child, char **path)
{
    int fd = -1;
    for (int k = 1; k < 100 && fd < 0; k++) {
        free(*path);
        *path = k == 1 ? xasprintf("%s/%s-%d.stderr", dir, host, (int)child)
                       : xasprintf("%s/%s-%d.%d.stderr", dir, host, (int)child, k);
        fd = open(*path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    return fd;
}

char *relay_save(struct relay *r, const char *dir, pid_t child, double started, double ended, int status)
{
    if (r->mode == RELAY_OFF || !r->ring)
        return NULL;
    size_t wl = 0;
    char *win = ring_linear(r, &wl);
    if (!win)
        return NULL;
    size_t ns = 0;
    struct rank_sec *sec = split_ranks(win, wl, &ns);
    size_t tl;
    const char *tail = last_part(win, wl, CAPTURE_TAIL, &tl);
    json_t *sections = json_array();
    json_array_append_new(sections, json_pack("{s:s, s:I, s:b}", "name", "tail", "bytes", (json_int_t)tl, "cut",
                                              r->seen > tl));
    const char **text = calloc(ns + 1, sizeof *text);
    size_t *tlen = calloc(ns + 1, sizeof *tlen);
    for (size_t i = 0; i < ns; i++) {
        text[i] = last_part(sec[i].text.s, sec[i].text.len, CAPTURE_RANK_TAIL, &tlen[i]);
        char name[48];
        snprintf(name, sizeof name, "%s %ld", sec[i].kind == 'l' ? "local rank" : "rank", sec[i].num);
        json_array_append_new(sections, json_pack("{s:s, s:s, s:I, s:I, s:I, s:b}", "name", name, "prefix",
                                                  sec[i].kind == 's' ? "srun" : "torchrun", "rank",
                                                  (json_int_t)sec[i].num, "bytes", (json_int_t)tlen[i], "lines",
                                                  (json_int_t)sec[i].lines, "cut", tlen[i] < sec[i].text.len));
    }
    char host[64];
    host_name(host, sizeof host);
    json_t *hdr = json_pack("{s:i, s:s, s:I, s:I, s:f, s:f, s:s, s:I, s:i, s:b, s:b, s:o}", "convguard_capture", 1,
                            "host", host, "pid", (json_int_t)getpid(), "child", (json_int_t)child, "start", started,
                            "end", ended, "mode", mode_name(r->mode), "bytes", (json_int_t)r->seen, "status", status,
                            "passing_stopped", r->out_broken, "handed_over", r->handed_over, "sections", sections);
    char *head = json_dumps(hdr, JSON_COMPACT);
    json_decref(hdr);
    char *path = NULL;
    int fd = create_capture(dir, host, child, &path);
    bool ok = fd >= 0 && head && write_all_fd(fd, head, strlen(head)) && write_all_fd(fd, "\n", 1) &&
              write_all_fd(fd, tail, tl);
    for (size_t i = 0; ok && i < ns; i++)
        ok = write_all_fd(fd, text[i], tlen[i]);
    if (fd >= 0)
        close(fd);
    if (!ok && fd >= 0)
        unlink(path);
    if (!ok) {
        free(path);
        path = NULL;
    }
    for (size_t i = 0; i < ns; i++)
        free(sec[i].text.s);
    free(sec), free(text), free(tlen), free(head), free(win);
    return path;
}

void relay_free(struct relay *r)
{
    drop_hold(r);
    if (r->read_fd >= 0)
        close(r->read_fd);
    if (r->child_fd >= 0)
        close(r->child_fd);
    free(r->ring);
    r->ring = NULL;
    r->read_fd = r->child_fd = -1;
}
