/* trace.c - the trace writer.
 *
 * One event is one JSON object on one line, built in a caller-supplied buffer
 * and written by a single write(2) to a file opened with O_APPEND, so lines
 * from threads and forked children never interleave and every event written
 * before a crash (even SIGKILL) is already in the file.  Nothing is buffered
 * in the process.  Formatting happens only here, on rare events.
 *
 * The program may close the descriptor or reuse its number for a file of its
 * own (closerange, `exec 100>log`): every write first checks that the
 * descriptor is still the file, and when it is not, the file is opened again
 * by its path (reopen), never written through the program's descriptor. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "core/safedir.h"

_Atomic uint64_t cg_events_dropped;
static _Atomic uint64_t events_written;
_Atomic uint64_t cg_last_failure_seq; /* seq + 1 of the last failure event, 0: none yet */
void (*cg_ev_on_failure)(struct cg_ev *e);
static _Atomic uint64_t seq;
static _Atomic uint64_t bytes_written;
static atomic_bool broken;  /* a short write left a partial line: write nothing more */
static atomic_bool capped;  /* CONVGUARD_MAX_MB reached */
static dev_t trace_dev;
static ino_t trace_ino;

/* A descriptor the shim holds goes at or above this number, away from those
 * a program picks for its own (0, 1, 2, a shell's `exec 3>`...): found
 * there, after a reuse, above the reused one. */
#define FD_FLOOR 100

/* A gap: the descriptor was found closed or reused (reopen), or an event
 * could not be written for want of a free descriptor.  The next event
 * written is preceded by a trace_gap event saying why and how many were lost
 * meanwhile. */
enum { GAP_NONE, GAP_FD_CLOSED, GAP_FD_REUSED, GAP_NO_FD };
static const char *const gap_reasons[] = {NULL, "fd closed", "fd reused", "no fd free"};
static _Atomic int gap_pending;   /* a GAP_* reason, GAP_NONE: no trace_gap owed */
static _Atomic uint64_t gap_lost; /* events not written since the gap began */

/* cg.fd is read by every thread and changed by the trace's opener (a forked
 * child's first event) and by the reused-descriptor check: atomic access. */
int cg_trace_fd(void) { return __atomic_load_n(&cg.fd, __ATOMIC_ACQUIRE); }
static void set_fd(int fd) { __atomic_store_n(&cg.fd, fd, __ATOMIC_RELEASE); }

void cg_trace_after_fork(void)
{
    /* The child's file is new: its numbering, size and state start afresh. */
    atomic_store(&seq, 0);
    atomic_store(&bytes_written, 0);
    atomic_store(&broken, false);
    atomic_store(&capped, false);
    atomic_store(&events_written, 0);
    atomic_store(&cg_events_dropped, 0);
    atomic_store(&cg_last_failure_seq, 0);
    atomic_store(&gap_pending, GAP_NONE);
    atomic_store(&gap_lost, 0);
    cg_repeat_after_fork();
}

uint64_t cg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put(struct cg_ev *e, const char *s, size_t n)
{
    /* Keep room for the closing "}\n" and the truncation marker; once
     * something did not fit, nothing more goes in (a shorter piece after a
     * refused one would leave a key without its value). */
    if (e->overflow || e->len + n + 32 > e->cap) {
        e->overflow = true;
        return;
    }
    memcpy(e->buf + e->len, s, n);
    e->len += n;
}

static void putc_(struct cg_ev *e, char c) { put(e, &c, 1); }

static void put_escaped(struct cg_ev *e, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    putc_(e, '"');
    for (size_t i = 0; i < n && !e->overflow; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            put(e, esc, 2);
        } else if (c == '\n') {
            put(e, "\\n", 2);
        } else if (c == '\t') {
            put(e, "\\t", 2);
        } else if (c < 0x20 || c == 0x7f) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(e, esc, 6);
        } else if (c >= 0x80) {
            /* Bytes that are not valid UTF-8 would make the line invalid JSON:
             * pass well-formed sequences, escape the rest as \u00XX. */
            size_t len = (c >= 0xf0 && c <= 0xf4) ? 4 : (c >= 0xe0 && c < 0xf0) ? 3 : (c >= 0xc2 && c < 0xe0) ? 2 : 0;
            bool ok = len && i + len <= n;
            unsigned cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
            for (size_t k = 1; ok && k < len; k++) {
                ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
                cp = cp << 6 | ((unsigned char)s[i + k] & 0x3f);
            }
            /* no overlong forms, no surrogates, nothing past U+10FFFF */
            if (ok && len == 3)
                ok = cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff);
            if (ok && len == 4)
                ok = cp >= 0x10000 && cp <= 0x10ffff;
            if (ok) {
                put(e, s + i, len);
                i += len - 1;
            } else {
                char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                put(e, esc, 6);
            }
        } else {
            putc_(e, (char)c);
        }
    }
    putc_(e, '"');
}

static void key(struct cg_ev *e, const char *k)
{
    char last = e->len ? e->buf[e->len - 1] : 0;
    if (last != '{' && last != '[')
        putc_(e, ',');
    if (k) {
        put_escaped(e, k, strlen(k));
        putc_(e, ':');
    }
}

/* A forked child opens its file at its first event (shim.c).  Exactly one
 * thread opens it and writes `start` (seq 0); the others wait for that, so
 * no event is numbered before `start`.  The opener's own events (the start
 * event, or a crash inside the open) do not wait for themselves. */
enum { LAZY_NONE, LAZY_PENDING, LAZY_OPENING };
static _Atomic int lazy_state;
static void (*lazy_fn)(void);
static __thread bool lazy_opener;

void cg_trace_open_lazily(void (*open_fn)(void))
{
    lazy_fn = open_fn;
    atomic_store(&lazy_state, open_fn ? LAZY_PENDING : LAZY_NONE);
}

bool cg_trace_lazy_pending(void) { return atomic_load(&lazy_state) != LAZY_NONE; }

static void lazy_open_now(void)
{
    if (lazy_opener)
        return;
    int expected = LAZY_PENDING;
    if (atomic_compare_exchange_strong(&lazy_state, &expected, LAZY_OPENING)) {
        lazy_opener = true;
        lazy_fn(); /* opens the file and writes the start event */
        lazy_opener = false;
        atomic_store(&lazy_state, LAZY_NONE);
        return;
    }
    /* Not forever: had the opener been interrupted by a handler of the
     * program that never returned, this event may come before `start`. */
    uint64_t give_up = cg_now_ns() + 2000000000ull;
    while (atomic_load(&lazy_state) == LAZY_OPENING && cg_now_ns() < give_up)
        sched_yield();
}

void cg_ev_begin(struct cg_ev *e, char *storage, size_t cap, const char *name)
{
    if (CG_UNLIKELY(atomic_load_explicit(&lazy_state, memory_order_acquire) != LAZY_NONE))
        lazy_open_now();
    e->buf = storage;
    e->cap = cap;
    e->len = 0;
    e->depth = 0;
    e->seq = 0;
    /* Below CG_EV_MIN there is no room for a valid line: build nothing. */
    e->overflow = cap < CG_EV_MIN;
    e->name = name;
    e->body_at = 0;
    e->t_ns = 0;
    size_t nl = name ? strlen(name) : 0;
    e->failure = nl > 7 && strcmp(name + nl - 7, "_failed") == 0;
    e->final = name && (strcmp(name, "exit") == 0 || strcmp(name, "crash") == 0 ||
                        strcmp(name, "trace_capped") == 0);
    if (e->overflow)
        return;
    putc_(e, '{');
    cg_ev_str(e, "ev", name);
    e->seq = atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed);
    cg_ev_u64(e, "seq", e->seq);
    e->t_ns = cg_now_ns() - cg.t0_ns;
    char t[32];
    cg_fmt_t(t, e->t_ns);
    cg_ev_raw(e, "t", t);
    cg_ev_i64(e, "pid", cg.pid);
    cg_ev_i64(e, "tid", cg_gettid());
    e->body_at = e->len;
}

/* seconds since start, microsecond resolution, without floating point */
size_t cg_fmt_t(char *t, uint64_t dt)
{
    size_t n = cg_utoa(t, dt / 1000000000ull);
    t[n++] = '.';
    unsigned long long us = (dt / 1000ull) % 1000000ull;
    for (int div = 100000; div; div /= 10)
        t[n++] = (char)('0' + (us / (unsigned)div) % 10);
    t[n] = 0;
    return n;
}

void cg_ev_strn(struct cg_ev *e, const char *k, const char *val, size_t n)
{
    key(e, k);
    if (!val)
        put(e, "null", 4);
    else
        put_escaped(e, val, n);
}

void cg_ev_str(struct cg_ev *e, const char *k, const char *val)
{
    cg_ev_strn(e, k, val, val ? strlen(val) : 0);
}

void cg_ev_u64(struct cg_ev *e, const char *k, unsigned long long v)
{
    char d[24];
    key(e, k);
    put(e, d, cg_utoa(d, v));
}

void cg_ev_shm(struct cg_ev *e, bool small_only)
{
    struct statfs sf;
    if (statfs("/dev/shm", &sf) != 0 || sf.f_blocks == 0)
        return;
    unsigned long long total = (unsigned long long)sf.f_blocks * (unsigned long long)sf.f_bsize;
    if (small_only && total >= CG_SHM_SMALL)
        return;
    cg_ev_open(e, "shm", '{');
    cg_ev_u64(e, "total", total);
    cg_ev_u64(e, "free", (unsigned long long)sf.f_bavail * (unsigned long long)sf.f_bsize);
    cg_ev_close(e, '}');
}

void cg_ev_i64(struct cg_ev *e, const char *k, long long v)
{
    char d[24];
    if (v != 0 && e->depth == 0 && k && strcmp(k, "status") == 0)
        e->failure = true; /* a call that returned an error */
    key(e, k);
    if (v < 0) {
        putc_(e, '-');
        put(e, d, cg_utoa(d, (unsigned long long)-(v + 1) + 1));
    } else {
        put(e, d, cg_utoa(d, (unsigned long long)v));
    }
}

void cg_ev_bool(struct cg_ev *e, const char *k, bool v)
{
    if (!v && e->depth == 0 && k && strcmp(k, "ok") == 0)
        e->failure = true; /* "ok": false */
    key(e, k);
    put(e, v ? "true" : "false", v ? 4 : 5);
}

void cg_ev_hex(struct cg_ev *e, const char *k, unsigned long long v)
{
    static const char hex[] = "0123456789abcdef";
    char d[20];
    size_t n = 0;
    d[n++] = '"';
    d[n++] = '0';
    d[n++] = 'x';
    int shift = 60;
    while (shift > 0 && ((v >> shift) & 15) == 0)
        shift -= 4;
    for (; shift >= 0; shift -= 4)
        d[n++] = hex[(v >> shift) & 15];
    d[n++] = '"';
    key(e, k);
    put(e, d, n);
}

void cg_ev_raw(struct cg_ev *e, const char *k, const char *json)
{
    key(e, k);
    put(e, json, strlen(json));
}

void cg_ev_open(struct cg_ev *e, const char *k, char bracket)
{
    e->depth++;
    key(e, k);
    putc_(e, bracket);
}

void cg_ev_close(struct cg_ev *e, char bracket)
{
    e->depth--;
    /* After an overflow cg_ev_end cuts the line back to a complete member,
     * so closing is moot; otherwise put() left 32 bytes in reserve, and a
     * close only spends them while it has something to close. */
    if (e->overflow)
        return;
    if (e->len + 8 > e->cap) {
        e->overflow = true;
        return;
    }
    e->buf[e->len++] = bracket;
}

void cg_ev_status(struct cg_ev *e, long long status, const char *status_name)
{
    cg_ev_i64(e, "status", status);
    cg_ev_str(e, "status_name", status_name);
}

static void write_capped_event(void);

/* The line's end: after an overflow cut back to a complete member and
 * marked, then "}\n". */
static void ev_seal(struct cg_ev *e)
{
    if (e->overflow) {
        /* Drop the unfinished tail back to a safe point: cut at the last
         * complete member and mark the line truncated, still valid JSON. */
        int depth = 0;
        bool in_str = false;
        size_t last_safe = 0;
        for (size_t i = 0; i < e->len; i++) {
            char c = e->buf[i];
            if (in_str) {
                if (c == '\\')
                    i++;
                else if (c == '"')
                    in_str = false;
                continue;
            }
            if (c == '"')
                in_str = true;
            else if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']')
                depth--;
            else if (c == ',' && depth == 1)
                last_safe = i;
        }
        static const char mark[] = ",\"truncated\":true";
        if (last_safe) {
            e->len = last_safe;
            memcpy(e->buf + e->len, mark, sizeof mark - 1);
            e->len += sizeof mark - 1;
        } else { /* not even the name fitted */
            e->len = 1;
            memcpy(e->buf + e->len, mark + 1, sizeof mark - 2);
            e->len += sizeof mark - 2;
        }
    }
    e->buf[e->len++] = '}';
    e->buf[e->len++] = '\n';
}

void cg_ev_end(struct cg_ev *e)
{
    if (e->cap < CG_EV_MIN) {
        atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
        return;
    }
    if (CG_UNLIKELY(e->failure)) {
        void (*on_failure)(struct cg_ev *) = __atomic_load_n(&cg_ev_on_failure, __ATOMIC_ACQUIRE);
        if (on_failure)
            on_failure(e); /* drvlog.c: the driver's words about this failure, written just before it */
    }
    ev_seal(e);
    if (e->failure)
        atomic_store_explicit(&cg_last_failure_seq, e->seq + 1, memory_order_relaxed);
    /* the same event again: counted (repeat.c); else what was counted
     * goes out first, so a `repeated` line precedes what came after it */
    if (cg_repeat_fold(e))
        return;
    cg_repeat_flush();
    if (!e->final && cg_cfg.max_mb > 0 &&
        atomic_load_explicit(&bytes_written, memory_order_relaxed) + e->len > (uint64_t)cg_cfg.max_mb << 20) {
        /* Past the cap: counted, not written.  The first time, one line says
         * so; `exit` and `crash` are still written (they are bounded). */
        atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
        if (cg_trace_fd() != -1 && !atomic_exchange(&capped, true))
            write_capped_event();
        return;
    }
    cg_trace_write(e->buf, e->len);
}

static void write_capped_event(void)
{
    char b[256];
    struct cg_ev e;
    int saved = errno;
    cg_ev_begin(&e, b, sizeof b, "trace_capped");
    cg_ev_i64(&e, "max_mb", cg_cfg.max_mb);
    cg_ev_end(&e);
    char mb[24];
    mb[cg_utoa(mb, (unsigned long long)cg_cfg.max_mb)] = 0;
    cg_warn("the trace reached CONVGUARD_MAX_MB; further events are counted, not written; MiB: ", mb);
    errno = saved;
}

/* One write of a whole line to fd, counted. */
static void write_line(int fd, const char *line, size_t len)
{
    ssize_t r;
    do
        r = write(fd, line, len);
    while (r < 0 && errno == EINTR);
    if (r == (ssize_t)len) {
        atomic_fetch_add_explicit(&events_written, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&bytes_written, (uint64_t)len, memory_order_relaxed);
        return;
    }
    static atomic_bool warned;
    atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
    /* Nothing written (ENOSPC, EDQUOT, EIO): later events may fit again.
     * Part of the line written (a disk filling up mid-line): any later
     * line would be glued to that fragment, so write nothing more; the
     * fragment stays the file's last, newline-less line, which readers
     * ignore. */
    if (r >= 0)
        atomic_store(&broken, true);
    if (!atomic_exchange(&warned, true))
        cg_warn("cannot write the trace (disk full or file gone); events are counted, not written: ", cg.path);
}

/* The trace_gap event owed, if one is, written to fd before the next line.
 * Exactly one writer takes it (the exchange). */
static void write_gap_owed(int fd)
{
    if (CG_LIKELY(atomic_load_explicit(&gap_pending, memory_order_relaxed) == GAP_NONE))
        return;
    int why = atomic_exchange(&gap_pending, GAP_NONE);
    if (why == GAP_NONE)
        return;
    char b[256];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "trace_gap");
    cg_ev_u64(&e, "lost", atomic_exchange(&gap_lost, 0));
    cg_ev_str(&e, "reason", gap_reasons[why]);
    ev_seal(&e);
    write_line(fd, e.buf, e.len);
}

/* The trace file opened again by its path (cg.path): O_APPEND so lines stay
 * whole, O_NOFOLLOW and no O_CREAT so that nothing planted in its place is
 * written to or made, O_NONBLOCK so that a FIFO there cannot hang us; kept
 * only when it is the very file noted at creation.  Only system calls that
 * are async-signal-safe: a crash handler may be the one that reopens. */
enum { REOPEN_LATER = -1, REOPEN_NEVER = -2 };
static int open_by_path(void)
{
    if (!cg.path[0])
        return REOPEN_NEVER;
    int fd;
    do
        fd = open(cg.path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) /* no descriptor free (or no memory) may pass; a file gone will not come back */
        return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? REOPEN_LATER : REOPEN_NEVER;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != trace_dev || st.st_ino != trace_ino) {
        close(fd);
        return REOPEN_NEVER;
    }
    return fd;
}

/* The file was removed or replaced while no descriptor was held: tracing
 * ends, said once. */
static void trace_gone(void)
{
    int expected = CG_FD_BY_PATH;
    atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
    if (__atomic_compare_exchange_n(&cg.fd, &expected, -1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        cg_warn("the trace file was closed by the program and is gone or replaced, tracing off: ", cg.path);
}

/* fd moved to the lowest free number >= floor (fd itself closed), or
 * CG_FD_BY_PATH when there is none (RLIMIT_NOFILE <= floor): then the shim
 * holds no descriptor and the program keeps every one its limit allows. */
static int hold_high(int fd, int floor)
{
    if (fd >= floor)
        return fd;
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, floor);
    close(fd);
    return hi >= 0 ? hi : CG_FD_BY_PATH;
}

/* No descriptor held: this one event opens the file, writes, closes. */
static void write_by_path(const char *line, size_t len)
{
    int fd = open_by_path();
    if (fd == REOPEN_NEVER) {
        trace_gone();
        return;
    }
    if (fd == REOPEN_LATER) {
        int none = GAP_NONE;
        atomic_compare_exchange_strong(&gap_pending, &none, GAP_NO_FD);
        atomic_fetch_add_explicit(&gap_lost, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
        return;
    }
    write_gap_owed(fd);
    write_line(fd, line, len);
    close(fd);
}

/* The thread that swapped the lost descriptor `old` for CG_FD_BY_PATH (one
 * thread: a compare-and-swap; the others meanwhile write by path, never
 * wait) opens the file again and holds the new descriptor above `old`. */
static void reopen(int old, int why)
{
    int none = GAP_NONE;
    atomic_compare_exchange_strong(&gap_pending, &none, why);
    int fd = open_by_path();
    if (fd == REOPEN_NEVER) {
        trace_gone(); /* this event counted: the caller's next round finds tracing off */
        return;
    }
    if (fd == REOPEN_LATER)
        return; /* by path, event by event, until a descriptor is free */
    fd = hold_high(fd, old + 1 > FD_FLOOR ? old + 1 : FD_FLOOR);
    int expected = CG_FD_BY_PATH;
    if (fd != CG_FD_BY_PATH &&
        !__atomic_compare_exchange_n(&cg.fd, &expected, fd, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        close(fd); /* tracing went off meanwhile */
}

/* Is fd still the trace file?  GAP_NONE, or why not. */
static int fd_changed(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return GAP_FD_CLOSED;
    return st.st_dev != trace_dev || st.st_ino != trace_ino ? GAP_FD_REUSED : GAP_NONE;
}

void cg_trace_write(const char *line, size_t len)
{
    if (cg_trace_fd() == -1)
        return;
    if (atomic_load_explicit(&broken, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
        return;
    }
    int saved = errno;
    /* Events are rare, so one fstat each is affordable.  A round that finds
     * the descriptor lost changes cg.fd (reopen, or another thread's): the
     * next round writes through what it is now. */
    for (int round = 0;; round++) {
        int fd = cg_trace_fd();
        if (fd == -1)
            break;
        if (fd == CG_FD_BY_PATH) {
            write_by_path(line, len);
            break;
        }
        int why = fd_changed(fd);
        if (why == GAP_NONE) {
            write_gap_owed(fd);
            write_line(fd, line, len);
            break;
        }
        if (round == 3) { /* lost again and again: this one event is given up */
            atomic_fetch_add_explicit(&gap_lost, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
            break;
        }
        int expected = fd;
        if (__atomic_compare_exchange_n(&cg.fd, &expected, CG_FD_BY_PATH, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            reopen(fd, why);
    }
    errno = saved;
}

/* The trace folder's descriptor, made (0700) when it is missing: the rule is
 * safedir.c's, the same `convguard run` applies before it launches.  What was
 * checked is what the file is created in (no window to swap a folder for a
 * symlink).  Refused once, refused for good in this process and its forked
 * children: one warning, at the first event, never one per child. */
static atomic_bool dir_refused;

bool cg_trace_refused(void) { return atomic_load(&dir_refused); }

static int dir_open(const char *dir)
{
    /* static: the first event may be a crash on a small alternate stack;
     * one thread at a time opens the file (the lazy open) */
    static struct cg_safedir sd;
    static char why[1400];
    if (atomic_load(&dir_refused))
        return -1;
    int dfd = cg_safedir_open(dir, 1, &sd);
    if (dfd >= 0)
        return dfd;
    atomic_store(&dir_refused, true);
    cg_safedir_explain(&sd, dir, why, sizeof why);
    cg_warn("trace folder refused, tracing off: ", why);
    return -1;
}

/* the file's identity, which set_fd's check compares (a descriptor the
 * program closed and reused is no longer the trace) */
static void note_identity(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0) {
        trace_dev = st.st_dev;
        trace_ino = st.st_ino;
    }
}

/* for tests/unit/test_trace.c: take over a descriptor opened elsewhere */
void cg_trace_test_adopt(int fd);
void cg_trace_test_adopt(int fd) { note_identity(fd); }

/* A file one per parent and key (cg_trace_name_once): its parent's pid and the key, made once. */
static unsigned long long once_pid;
static char once_key[80];

void cg_trace_name_once(long long parent, const char *key)
{
    once_pid = (unsigned long long)parent;
    cg_strlcpy(once_key, key, sizeof once_key);
}

/* The one place the trace file's name is made: <host>[-r<rank>]-<pid>[.<attempt>].jsonl,
 * attempt 1 without its number; or <host>[-r<rank>]-<parent>.<key>.jsonl, once
 * (cg_trace_name_once).  host and rank are sanitised (shim.c), the key is the
 * caller's [a-z0-9-], so the name never holds a '/'.  Returns its length (>= cap: cut). */
static size_t trace_name(char *out, size_t cap, int attempt)
{
    size_t n = cg_strlcpy(out, cg.host, cap);
    if (cg.rank[0]) {
        n = cg_append(out, cap, n, "-r");
        n = cg_append(out, cap, n, cg.rank);
    }
    n = cg_append(out, cap, n, "-");
    if (once_key[0]) {
        n = cg_append_u(out, cap, n, once_pid);
        n = cg_append(out, cap, n, ".");
        n = cg_append(out, cap, n, once_key);
        return cg_append(out, cap, n, ".jsonl");
    }
    n = cg_append_u(out, cap, n, (unsigned long long)cg.pid);
    if (attempt > 1) {
        /* the same pid after exec, or a pid reused: a fresh file, numbered */
        n = cg_append(out, cap, n, ".");
        n = cg_append_u(out, cap, n, (unsigned)attempt);
    }
    return cg_append(out, cap, n, ".jsonl");
}

/* CONVGUARD_DIR, a '/', name; returns the length (>= cap: cut). */
static size_t trace_path(char *out, size_t cap, const char *name)
{
    size_t n = cg_strlcpy(out, cg_cfg.dir, cap);
    if (n && n < cap - 1 && out[n - 1] != '/')
        out[n++] = '/', out[n] = 0;
    return cg_append(out, cap, n, name);
}

/* The new file: mode 0600 exactly (O_CREAT's mode is cut by the umask,
 * never more); its identity noted.  (cg_trace_open then moves its descriptor
 * away from the low ones a program may close and reuse: hold_high.) */
static int trace_settle(int fd)
{
    fchmod(fd, 0600);
    note_identity(fd);
    return fd;
}

int cg_trace_open(void)
{
    int dfd = dir_open(cg_cfg.dir);
    if (dfd < 0)
        return -1;
    int fd = -1;
    for (int attempt = 1; attempt < 100 && fd < 0; attempt++) {
        /* static: the first event that opens the file may be a crash on a
         * small alternate stack; one thread at a time opens (lazy open) */
        static char p[sizeof cg.path], name[256];
        if (trace_name(name, sizeof name, attempt) >= sizeof name || trace_path(p, sizeof p, name) >= sizeof p) {
            cg_warn("trace path too long, tracing off: ", cg_cfg.dir);
            break;
        }
        fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            fd = trace_settle(fd);
            cg_strlcpy(cg.path, p, sizeof cg.path);
        } else if (errno != EEXIST) {
            cg_warn("cannot create the trace file, tracing off: ", p);
            break;
        } else if (once_key[0]) {
            break; /* a sibling made it: it says what this one would */
        } else if (attempt == 99) {
            cg_warn("too many trace files for this pid, tracing off in ", cg_cfg.dir);
        }
    }
    close(dfd);
    if (fd >= 0)
        fd = hold_high(fd, FD_FLOOR);
    set_fd(fd);
    return fd == -1 ? -1 : 0;
}
