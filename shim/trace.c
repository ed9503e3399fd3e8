/* trace.c - the trace writer.
 *
 * One event is one JSON object on one line, built in a caller-supplied buffer
 * and written by a single write(2) to a file opened with O_APPEND, so lines
 * from threads and forked children never interleave and every event written
 * before a crash (even SIGKILL) is already in the file.  Nothing is buffered
 * in the process.  Formatting happens only here, on rare events. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cg.h"

_Atomic uint64_t cg_events_written, cg_events_dropped;
static _Atomic uint64_t seq;
static _Atomic uint64_t bytes_written;
static dev_t trace_dev;
static ino_t trace_ino;

void cg_trace_reset_seq(void) { atomic_store(&seq, 0); }

uint64_t cg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put(struct cg_ev *e, const char *s, size_t n)
{
    /* Keep room for the closing "}\n" and the truncation marker. */
    if (e->len + n + 32 > e->cap) {
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
            size_t len = (c >= 0xf0 && c < 0xf8) ? 4 : (c >= 0xe0) ? 3 : (c >= 0xc2 && c < 0xe0) ? 2 : 0;
            bool ok = len && i + len <= n;
            for (size_t k = 1; ok && k < len; k++)
                ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
            if (ok && len <= 4 && !(c >= 0xf8)) {
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

void cg_ev_begin(struct cg_ev *e, char *storage, size_t cap, const char *name)
{
    if (CG_UNLIKELY(cg.fd < 0 && cg_trace_lazy_open)) {
        void (*open_now)(void) = cg_trace_lazy_open;
        cg_trace_lazy_open = NULL;
        open_now(); /* writes the start event first */
    }
    e->buf = storage;
    e->cap = cap;
    e->len = 0;
    e->overflow = false;
    putc_(e, '{');
    cg_ev_str(e, "ev", name);
    e->seq = atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed);
    cg_ev_u64(e, "seq", e->seq);
    uint64_t dt = cg_now_ns() - cg.t0_ns;
    /* seconds since start, microsecond resolution, without floating point */
    char t[40];
    size_t n = cg_utoa(t, dt / 1000000000ull);
    t[n++] = '.';
    unsigned long long us = (dt / 1000ull) % 1000000ull;
    for (int div = 100000; div; div /= 10)
        t[n++] = (char)('0' + (us / (unsigned)div) % 10);
    t[n] = 0;
    cg_ev_raw(e, "t", t);
    cg_ev_i64(e, "pid", cg.pid);
    cg_ev_i64(e, "tid", gettid());
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

void cg_ev_i64(struct cg_ev *e, const char *k, long long v)
{
    char d[24];
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
    key(e, k);
    putc_(e, bracket);
}

void cg_ev_close(struct cg_ev *e, char bracket)
{
    /* Closing is always possible: put() keeps 32 bytes in reserve. */
    e->buf[e->len++] = bracket;
}

void cg_ev_end(struct cg_ev *e)
{
    if (e->overflow) {
        /* Drop the unfinished tail back to a safe point: cut at the last
         * complete member and mark the line truncated, still valid JSON. */
        size_t depth_fix = 0;
        int depth = 0;
        bool in_str = false;
        size_t last_safe = 1;
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
        (void)depth_fix;
        e->len = last_safe;
        const char *mark = ",\"truncated\":true";
        memcpy(e->buf + e->len, mark, strlen(mark));
        e->len += strlen(mark);
    }
    e->buf[e->len++] = '}';
    e->buf[e->len++] = '\n';
    cg_trace_write(e->buf, e->len);
}

void (*cg_trace_lazy_open)(void);

void cg_trace_write(const char *line, size_t len)
{
    int fd = cg.fd;
    if (fd < 0)
        return;
    uint64_t cap = cg_cfg.max_mb > 0 ? (uint64_t)cg_cfg.max_mb << 20 : 0;
    if (cap && atomic_load_explicit(&bytes_written, memory_order_relaxed) + len > cap) {
        atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
        return;
    }
    int saved = errno;
    /* The program may have closed our descriptor and reused its number for a
     * file of its own: never write into that.  Events are rare, so one fstat
     * each is affordable. */
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_dev != trace_dev || st.st_ino != trace_ino) {
        cg.fd = -1;
        atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
        errno = saved;
        return;
    }
    ssize_t r;
    do
        r = write(fd, line, len);
    while (r < 0 && errno == EINTR);
    if (r == (ssize_t)len) {
        atomic_fetch_add_explicit(&cg_events_written, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&bytes_written, (uint64_t)len, memory_order_relaxed);
    } else {
        static atomic_bool warned;
        atomic_fetch_add_explicit(&cg_events_dropped, 1, memory_order_relaxed);
        if (!atomic_exchange(&warned, true))
            cg_warn("cannot write the trace (disk full or file gone); events are counted, not written: ", cg.path);
    }
    errno = saved;
}

/* Creates the trace directory (one level; parents must exist unless it is the
 * default) and refuses one that is a symlink or owned by someone else. */
static bool dir_ok(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno != ENOENT || mkdir(dir, 0700) != 0) {
            cg_warn("cannot create the trace directory, tracing off: ", dir);
            return false;
        }
        return true;
    }
    if (S_ISLNK(st.st_mode)) {
        /* A link is fine only when it leads to a directory of ours. */
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0)) {
            cg_warn("trace directory is a symlink to a directory that is not ours, tracing off: ", dir);
            return false;
        }
        return true;
    }
    if (!S_ISDIR(st.st_mode)) {
        cg_warn("trace directory is not a directory, tracing off: ", dir);
        return false;
    }
    if (st.st_uid != geteuid() && !(st.st_mode & S_ISVTX)) {
        cg_warn("trace directory belongs to another user and is not sticky, tracing off: ", dir);
        return false;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        cg_warn("trace directory is not writable, tracing off: ", dir);
        return false;
    }
    return true;
}

/* for tests/unit/test_trace.c: take over a descriptor opened elsewhere */
void cg_trace_test_adopt(int fd);
void cg_trace_test_adopt(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0) {
        trace_dev = st.st_dev;
        trace_ino = st.st_ino;
    }
}

int cg_trace_open(void)
{
    if (!dir_ok(cg_cfg.dir))
        return -1;
    char pid[24];
    pid[cg_utoa(pid, (unsigned long long)cg.pid)] = 0;
    for (int attempt = 1; attempt < 100; attempt++) {
        char p[sizeof cg.path];
        size_t n = cg_strlcpy(p, cg_cfg.dir, sizeof p);
        if (n && p[n - 1] != '/' && n < sizeof p - 1)
            p[n++] = '/', p[n] = 0;
        n += cg_strlcpy(p + n, cg.host, sizeof p - n > 0 ? sizeof p - n : 0);
        if (cg.rank[0]) {
            n += cg_strlcpy(p + n, "-r", sizeof p - n);
            n += cg_strlcpy(p + n, cg.rank, sizeof p - n);
        }
        n += cg_strlcpy(p + n, "-", sizeof p - n);
        n += cg_strlcpy(p + n, pid, sizeof p - n);
        if (attempt > 1) {
            /* the same pid after exec, or a pid reused: a fresh file, numbered */
            char a[8];
            a[cg_utoa(a, (unsigned)attempt)] = 0;
            n += cg_strlcpy(p + n, ".", sizeof p - n);
            n += cg_strlcpy(p + n, a, sizeof p - n);
        }
        n += cg_strlcpy(p + n, ".jsonl", sizeof p - n);
        if (n >= sizeof p) {
            cg_warn("trace path too long, tracing off: ", cg_cfg.dir);
            return -1;
        }
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            /* Keep the trace away from the low descriptors a program may
             * close and reuse (0, 1, 2 and the first few). */
            if (fd < 10) {
                int hi = fcntl(fd, F_DUPFD_CLOEXEC, 100);
                if (hi >= 0) {
                    close(fd);
                    fd = hi;
                }
            }
            struct stat st;
            if (fstat(fd, &st) == 0) {
                trace_dev = st.st_dev;
                trace_ino = st.st_ino;
            }
            cg_strlcpy(cg.path, p, sizeof cg.path);
            return fd;
        }
        if (errno != EEXIST) {
            cg_warn("cannot create the trace file, tracing off: ", p);
            return -1;
        }
    }
    cg_warn("too many trace files for this pid, tracing off in ", cg_cfg.dir);
    return -1;
}
