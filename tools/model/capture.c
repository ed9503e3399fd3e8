/* capture.c - reading back what `convguard run` kept of a program's stderr
 * (relay.c writes it; format in docs/trace-format.md, "Captured stderr").
 *
 * Each traced process is tied to the capture of the run it belongs to (its
 * ancestry, else its host and time, else its rank), and to the stream of its
 * own rank when the output carried rank prefixes.  Of that stream only two
 * kinds of lines are ever used: lines holding a text of patterns.def (the
 * frameworks' and CUDA's own error texts; its "benign" rows, warnings that
 * read like errors, are not used) and the final exception line of the last
 * Python traceback.  They become `output` events of the process, so
 * that rules can use them as evidence beside the trace, and the report's "you
 * see" quotes them instead of a rule's template. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/capture.h"

const struct message messages[] = {
#define MESSAGE(id, kind, framework, text, title, cause, fix, confirm, source) \
    {#id, kind, framework, text, title, cause, fix, confirm, source},
#include "patterns.def"
#undef MESSAGE
};
const size_t n_messages = sizeof messages / sizeof messages[0];

#define MAX_FILE (64u << 20)  /* a capture file larger than this is not ours */
#define MAX_HEADER (1 << 16)  /* its first line, the header, is shorter */
#define MAX_QUOTE 600         /* characters of one quoted line: PyTorch's OutOfMemoryError has its numbers
                                 * up to ~450 characters in (analysis/diagnose.c reads them) */
#define MAX_OUTPUT_EVENTS 8   /* distinct quotable lines per process */
#define MAX_STATUS_LINES 256  /* a launcher's exit-status records kept per stream (one per rank) */

/* ---- rank prefixes */
size_t rank_prefix(const char *s, size_t len, char *kind, long *num)
{
    *kind = 0, *num = -1;
    if (len > 3 && s[0] == '[') {
        size_t w = 1;
        while (w < len && w < 40 && (isalpha((unsigned char)s[w]) || s[w] == '_' || s[w] == '-'))
            w++;
        size_t d = w;
        while (d < len && d - w < 7 && isdigit((unsigned char)s[d]))
            d++;
        if (d == w || d + 1 >= len || s[d] != ']' || s[d + 1] != ':')
            return 0;
        bool rank = w == 1 || (w == 5 && strncmp(s + 1, "rank", 4) == 0);
        *kind = rank ? 'r' : 'l';
        *num = strtol(s + w, NULL, 10);
        size_t p = d + 2;
        /* PyTorch's "[rank3]: " puts a space before each line it relays */
        if (w == 5 && p < len && s[p] == ' ')
            p++;
        return p;
    }
    size_t j = 0;
    while (j < len && j < 8 && s[j] == ' ')
        j++;
    size_t d = j;
    while (d < len && d - j < 7 && isdigit((unsigned char)s[d]))
        d++;
    if (d > j && d + 1 < len && s[d] == ':' && s[d + 1] == ' ') {
        *kind = 's';
        *num = strtol(s + j, NULL, 10);
        return d + 2;
    }
    return 0;
}

/* ---- capture files */
struct section {
    const char *name;  /* "tail", "rank 3", "local rank 0" */
    char kind;         /* 0 tail, 'r' global rank, 'l' local rank */
    long rank;
    size_t off, len;   /* in the data after the header */
    const char *data;  /* once read (capture_data) */
    json_t *events;    /* its output_capture + output events, worked out once */
};

struct capture {
    char *path;
    json_t *hdr;
    char *buf;
    struct section *sec;
    size_t nsec;
    const char *host;
    long long pid, child;
    double start, end;
    size_t data_at, data_len; /* where the sections begin, their total size */
};

struct captures { struct capture *c; size_t n; struct id_set seen; /* folders walked */ };

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* The header and the sections' sizes; the bytes are read only for a capture
 * some process turns out to belong to (a folder of many runs stays cheap).
 * Only a regular file is opened, never waiting (a FIFO named *.stderr), and
 * of it only the first 64 KiB are read for the header line. */
static int capture_read(const char *path, struct capture *c)
{
    memset(c, 0, sizeof *c);
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0)
        return -1;
    char *line = NULL;
    ssize_t got = -1, hl = -1;
    if (st.st_size > 0 && st.st_size <= (off_t)MAX_FILE && (line = malloc(MAX_HEADER)))
        got = pread(fd, line, MAX_HEADER, 0);
    close(fd);
    const char *nl = got > 1 ? memchr(line, '\n', (size_t)got) : NULL;
    if (nl)
        hl = nl + 1 - line;
    json_error_t err;
    c->hdr = hl > 1 ? json_loadb(line, (size_t)hl - 1, 0, &err) : NULL;
    free(line);
    if (!json_is_object(c->hdr) || jint(c->hdr, "convguard_capture", 0) != 1) {
        json_decref(c->hdr);
        return -1;
    }
    c->path = xstrdup(path);
    c->host = jstr(c->hdr, "host", "?");
    c->pid = jint(c->hdr, "pid", -1);
    c->child = jint(c->hdr, "child", -1);
    c->start = jnum(c->hdr, "start", 0);
    c->end = jnum(c->hdr, "end", 0);
    c->data_at = (size_t)hl;
    size_t left = (size_t)st.st_size - (size_t)hl, off = 0;
    json_t *secs = jget(c->hdr, "sections");
    c->sec = calloc(json_array_size(secs) + 1, sizeof *c->sec);
    for (size_t i = 0; i < json_array_size(secs); i++) {
        json_t *j = json_array_get(secs, i);
        long long len = jint(j, "bytes", -1);
        if (len < 0 || (unsigned long long)len > left - off)
            break; /* cut short: keep what is whole */
        struct section *s = &c->sec[c->nsec++];
        s->name = jstr(j, "name", "?");
        s->rank = (long)jint(j, "rank", -1);
        s->kind = strcmp(s->name, "tail") == 0 ? 0 : strncmp(s->name, "local rank", 10) == 0 ? 'l' : 'r';
        s->off = off;
        s->len = (size_t)len;
        off += (size_t)len;
    }
    c->data_len = off;
    return 0;
}

static bool pread_all(int fd, char *buf, size_t n, off_t at)
{
    while (n) {
        ssize_t got = pread(fd, buf, n, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        buf += got, n -= (size_t)got, at += got;
    }
    return true;
}

/* The sections' bytes; false when the file changed under us. */
static bool capture_data(struct capture *c)
{
    if (c->buf)
        return true;
    struct stat st;
    int fd = open_regular(c->path, &st);
    c->buf = malloc(c->data_len + 1);
    bool ok = fd >= 0 && c->buf && pread_all(fd, c->buf, c->data_len, (off_t)c->data_at);
    if (fd >= 0)
        close(fd);
    if (!ok) {
        free(c->buf);
        c->buf = NULL;
        c->nsec = 0;
        return false;
    }
    for (size_t k = 0; k < c->nsec; k++)
        c->sec[k].data = c->buf + c->sec[k].off;
    return true;
}

static void captures_add(struct captures *cs, const char *path)
{
    char *real = realpath(path, NULL);
    for (size_t i = 0; real && i < cs->n; i++)
        if (strcmp(cs->c[i].path, real) == 0) {
            free(real);
            return;
        }
    struct capture c;
    if (real && capture_read(real, &c) == 0) {
        cs->c = realloc(cs->c, (cs->n + 1) * sizeof *cs->c);
        cs->c[cs->n++] = c;
    }
    free(real);
}

/* each folder once, whatever links lead to it (`latest -> .`) */
static void captures_in_dir(struct captures *cs, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct stat ds;
    if (d && (fstat(dirfd(d), &ds) != 0 || !id_set_add(&cs->seen, ds.st_dev, ds.st_ino))) {
        closedir(d);
        return;
    }
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        /* the folder says which entries are plain files: no stat for a trace (100,000 of them) */
        if (e->d_type == DT_REG && !ends_with(e->d_name, ".stderr"))
            continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode) && depth < 4)
            captures_in_dir(cs, p, depth + 1);
        else if (ends_with(e->d_name, ".stderr") && stat(p, &st) == 0 && S_ISREG(st.st_mode))
            captures_add(cs, p);
        free(p);
    }
    if (d)
        closedir(d);
}

static void captures_free_items(struct captures *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        for (size_t k = 0; k < cs->c[i].nsec; k++)
            json_decref(cs->c[i].sec[k].events);
        free(cs->c[i].path), free(cs->c[i].buf), free(cs->c[i].sec);
        json_decref(cs->c[i].hdr);
    }
}

static void captures_free(struct captures *cs)
{
    captures_free_items(cs);
    free(cs->c);
    id_set_free(&cs->seen);
}

/* ---- which capture, which stream */
static bool in_window(struct capture *c, double wall)
{
    return wall <= 0 || (wall >= c->start - 2 && (c->end <= 0 || wall <= c->end + 2));
}

/* The run a process belongs to: its oldest traced ancestor is the program
 * `convguard run` started (or its parent is). */
static struct capture *capture_of(struct trace_set *s, size_t ti, struct captures *cs)
{
    struct trace *t = &s->t[ti];
    size_t root = ti;
    for (int k = 0; k < 64 && s->t[root].parent >= 0; k++)
        root = (size_t)s->t[root].parent;
    struct trace *r = &s->t[root];
    struct capture *only = NULL;
    int window = 0;
    for (size_t i = 0; i < cs->n; i++) {
        struct capture *c = &cs->c[i];
        if (strcmp(c->host, t->host) != 0 || !in_window(c, t->wall))
            continue;
        if (r->pid == c->child || r->ppid == c->child || (c->pid > 0 && r->ppid == c->pid))
            return c;
        window++, only = c;
    }
    if (window == 1)
        return only; /* a daemon or an untraced step between: the only run on this host then */
    /* another host: a launcher here relayed this rank's prefixed lines */
    for (size_t i = 0; i < cs->n && t->rank >= 0; i++)
        for (size_t k = 0; k < cs->c[i].nsec; k++)
            if (cs->c[i].sec[k].kind == 'r' && cs->c[i].sec[k].rank == t->rank && in_window(&cs->c[i], t->wall))
                return &cs->c[i];
    return NULL;
}

static struct section *stream_of(struct trace *t, struct capture *c)
{
    long local = -1;
    const char *lr = jstr(t->start, "env.LOCAL_RANK", NULL);
    if (lr && *lr && strspn(lr, "0123456789") == strlen(lr))
        local = strtol(lr, NULL, 10);
    for (size_t k = 0; k < c->nsec; k++)
        if (c->sec[k].kind == 'r' && t->rank >= 0 && c->sec[k].rank == t->rank)
            return &c->sec[k];
    for (size_t k = 0; k < c->nsec; k++)
        if (c->sec[k].kind == 'l' && local >= 0 && c->sec[k].rank == local)
            return &c->sec[k];
    return c->nsec ? &c->sec[0] : NULL;
}

/* ---- lines */
struct line { char *raw; };  /* prefix and colours taken off, valid UTF-8 */

/* UTF-8 as jansson needs it, without controls (C0, DEL, C1): anything else
 * becomes '?'; ANSI escapes go. */
static char *clean(const char *p, size_t n)
{
    struct sbuf b = {0};
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)p[i];
        if (c == 0x1b) { /* ESC [ ... final byte, or ESC + one */
            i++;
            if (i < n && p[i] == '[') {
                i++;
                while (i < n && !((unsigned char)p[i] >= 0x40 && (unsigned char)p[i] <= 0x7e))
                    i++;
            }
            i++;
            continue;
        }
        size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        bool ok = k > 0 && i + k <= n && !(k == 2 && c < 0xc2);
        for (size_t j = 1; ok && j < k; j++)
            ok = ((unsigned char)p[i + j] & 0xc0) == 0x80;
        if (ok && k == 1 && ((c < 0x20 && c != '\t') || c == 0x7f))
            ok = false;
        if (ok && k == 2 && c == 0xc2 && (unsigned char)p[i + 1] < 0xa0)
            ok = false; /* C1 controls: U+009B is a CSI to some terminals (found by fuzz_capture) */
        if (ok)
            sb_addn(&b, p + i, k);
        else
            sb_add(&b, "?");
        i += ok ? k : 1;
    }
    return sb_take(&b);
}

static struct line *split_lines(const char *d, size_t n, size_t *nl)
{
    struct line *v = NULL;
    size_t k = 0, cap = 0;
    for (size_t off = 0; off < n;) {
        size_t len = 0;
        while (off + len < n && d[off + len] != '\n' && d[off + len] != '\r')
            len++;
        char kind;
        long num;
        size_t pre = rank_prefix(d + off, len, &kind, &num);
        if (len > pre) {
            if (k == cap)
                v = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof *v);
            v[k++].raw = clean(d + off + pre, len - pre > 4096 ? 4096 : len - pre);
        }
        off += len + 1;
    }
    *nl = k;
    return v;
}

/* glog's "E0000 00:00:1796166831.068002   11218 " and TensorFlow's older
 * "2023-01-07 08:24:25.870501: E " carry nothing the user searches for. */
static const char *skip_stamp(const char *s)
{
    const char *p = s;
    size_t n = strnlen(p, 11); /* the stamps' fixed parts are read below only where they are there */
    if (n >= 6 && strchr("IWEF", p[0]) && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[4]) && p[5] == ' ') {
        p += 6;
        while (*p && (isdigit((unsigned char)*p) || *p == ':' || *p == '.'))
            p++;
        while (*p == ' ')
            p++;
        while (isdigit((unsigned char)*p))
            p++;
        return *p == ' ' ? p + 1 : s;
    }
    if (n >= 11 && isdigit((unsigned char)p[0]) && p[4] == '-' && p[7] == '-' && p[10] == ' ') {
        const char *c = strstr(p, ": ");
        if (c && c - p < 32 && strchr("IWEF", c[2]) && c[3] == ' ')
            return c + 4;
    }
    return s;
}

static char *quote_text(const char *raw)
{
    const char *p = skip_stamp(raw);
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strlen(p);
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (n > MAX_QUOTE) {
        size_t cut = MAX_QUOTE;
        while (cut > 0 && ((unsigned char)p[cut] & 0xc0) == 0x80)
            cut--;
        return xasprintf("%.*s...", (int)cut, p);
    }
    return xasprintf("%.*s", (int)n, p);
}

/* Case is ignored by comparing lower-case copies with strstr, which is much
 * faster than strcasestr (a 256 KiB tail: 28 ms -> a few).  A row's text is
 * kept as its `*`-separated parts, each found after the one before. */
static bool holds_parts(const char *line, const char *parts)
{
    const char *at = line;
    for (const char *p = parts; *p; p += strlen(p) + 1) {
        const char *hit = strstr(at, p);
        if (!hit)
            return false;
        at = hit + strlen(p);
    }
    return true;
}

static char *lower_parts(const char *text)
{
    char *l = xstrdup(text), *w = l;
    for (const char *c = text; *c; c++)
        *w++ = *c == '*' ? 0 : (char)tolower((unsigned char)*c);
    char *r = realloc(l, strlen(text) + 2); /* a second NUL ends the parts */
    r[strlen(text)] = r[strlen(text) + 1] = 0;
    return r;
}

const struct message *message_of_line(const char *line)
{
    static char **lower;
    if (!lower) {
        lower = calloc(n_messages, sizeof *lower);
        for (size_t i = 0; i < n_messages; i++)
            lower[i] = lower_parts(messages[i].text);
    }
    char buf[4200];
    size_t n = 0;
    for (; line[n] && n < sizeof buf - 1; n++)
        buf[n] = (char)tolower((unsigned char)line[n]);
    buf[n] = 0;
    for (size_t i = 0; i < n_messages; i++)
        if (holds_parts(buf, lower[i]))
            return &messages[i];
    return NULL;
}

const struct message *message_by_id(const char *id)
{
    for (size_t i = 0; id && i < n_messages; i++)
        if (strcmp(messages[i].id, id) == 0)
            return &messages[i];
    return NULL;
}

/* A line of a known error text; a benign row's line (a warning that reads
 * like an error and is none) is no error text: it is never quoted. */
static const struct message *pattern_of(const char *line)
{
    const struct message *m = message_of_line(line);
    return m && strcmp(m->kind, "benign") == 0 ? NULL : m;
}

/* The exception line of the last traceback: the first line after "Traceback
 * (most recent call last):" that is not indented.  torchrun's own
 * ChildFailedError only says a worker failed: then the one before it. */
static long exception_line(struct line *v, size_t n, long *traceback)
{
    long found = -1;
    *traceback = -1;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(v[i].raw, "Traceback (most recent call last):", 34) != 0)
            continue;
        for (size_t j = i + 1; j < n && j < i + 4000; j++) {
            const char *l = v[j].raw;
            if (!*l || l[0] == ' ' || l[0] == '\t')
                continue;
            if (strncmp(l, "Traceback (", 11) == 0)
                break;
            if (!strstr(l, "ChildFailedError") || found < 0)
                found = (long)j, *traceback = (long)i;
            break;
        }
    }
    return found;
}

/* The exception a wrapper carries in its message: PyTorch's DataLoader re-raises a worker's exception
 * in the main process as "RuntimeError: Caught RuntimeError in DataLoader worker process 0." and puts
 * the worker's own traceback in the message ("Original Traceback (most recent call last):" on the
 * next line, its frames, then the worker's exception line).  What the process died of is that inner
 * exception: the embedded traceback's exception line (nested wrappers: the innermost).  The header
 * must follow the exception line within its message (the next 3 lines) and be followed by a frame
 * ("  File ..."): a launcher's summary with rank-prefixed tracebacks after it is no message.  ex when
 * its message holds no traceback. */
static long wrapped_exception(struct line *v, size_t n, long ex)
{
    static const char header[] = "Traceback (most recent call last):";
    for (int depth = 0; depth < 8; depth++) {
        long inner = -1;
        for (size_t i = (size_t)ex + 1; i < n && i <= (size_t)ex + 3 && inner < 0; i++) {
            const char *l = v[i].raw, *h = strstr(l, header);
            if (strncmp(l, "Traceback (", 11) == 0)
                break; /* another report of Python's own, not this message */
            if (!h || h[sizeof header - 1] || l[0] == ' ' || l[0] == '\t' || i + 1 >= n ||
                strncmp(v[i + 1].raw, "  File \"", 8) != 0)
                continue;
            for (size_t j = i + 1; j < n && j < i + 4000; j++)
                if (*v[j].raw && v[j].raw[0] != ' ' && v[j].raw[0] != '\t') {
                    inner = strncmp(v[j].raw, "Traceback (", 11) == 0 ? -1 : (long)j;
                    break;
                }
            if (inner < 0)
                break;
        }
        if (inner < 0)
            return ex;
        ex = inner;
    }
    return ex;
}

/* The function of a traceback's first frame ("  File \"x.py\", line 3, in f": f), into buf; "" when
 * the line after the header is no frame. */
static const char *first_frame(struct line *v, size_t n, long tb, char *buf, size_t len)
{
    buf[0] = 0;
    if (tb < 0 || (size_t)tb + 1 >= n)
        return buf;
    const char *l = v[tb + 1].raw, *in = strstr(l, "\", line ");
    if (strncmp(l, "  File \"", 8) != 0 || !in || !(in = strstr(in, ", in ")))
        return buf;
    snprintf(buf, len, "%s", in + 5);
    buf[strcspn(buf, " \t\r")] = 0;
    return buf;
}

/* Python reports an exception nothing caught from the outermost frame down: its traceback starts at
 * the program's top (`<module>`: a script, `-c`, an entry point; runpy's `_run_module_as_main` for
 * `-m`) or at a thread's or a multiprocessing child's bootstrap.  A traceback that starts in any
 * other function was printed by the code that caught it there (`logger.exception`, a logger whose
 * record has no level prefix, `traceback.print_exc()`): JAX's discover_pjrt_plugins logs its CUDA
 * plugin's failure so and runs on the CPU.  The frame is returned in buf; false for an entry frame
 * or none. */
static bool caught_below_top(struct line *v, size_t n, long tb, char *buf, size_t len)
{
    static const char *const entry[] = {"<module>", "_run_module_as_main", "_run_code", "_bootstrap",
                                        "_bootstrap_inner"};
    const char *f = first_frame(v, n, tb, buf, len);
    if (!*f)
        return false;
    for (size_t i = 0; i < sizeof entry / sizeof entry[0]; i++)
        if (strcmp(f, entry[i]) == 0)
            return false;
    return true;
}

/* A traceback a logger wrote (`logger.exception`, `exc_info=True`: the record's line, then the
 * traceback) or Python's "Exception ignored in": an exception caught, the program went on (JAX logs
 * "ERROR:...:jax._src.xla_bridge:...: Jax plugin configuration error: ..." so and falls back to the
 * CPU).  Python's own report of an uncaught exception starts at "Traceback" with nothing of its own
 * before it; multiprocessing's dead child prints "Process Process-1:" first.  The line before the
 * first traceback of a chain ("During handling of the above exception...") is the one read. */
static bool logged_before(struct line *v, long tb)
{
    static const char *const levels[] = {"CRITICAL:", "ERROR:", "WARNING:", "WARN:", "INFO:", "DEBUG:"};
    for (int hops = 0; tb > 0 && hops < 16; hops++) {
        long k = tb - 1;
        while (k >= 0 && !*v[k].raw)
            k--;
        if (k < 0)
            return false;
        const char *l = v[k].raw;
        if (strncmp(l, "During handling of the above exception", 39) == 0 ||
            strncmp(l, "The above exception was the direct cause", 40) == 0) {
            long prev = k - 1; /* the traceback before it */
            while (prev >= 0 && strncmp(v[prev].raw, "Traceback (most recent call last):", 34) != 0)
                prev--;
            tb = prev;
            continue;
        }
        if (strncmp(l, "Exception ignored in", 20) == 0)
            return true;
        for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
            if (strncmp(l, levels[i], strlen(levels[i])) == 0)
                return true;
        /* absl / glog: "E1207 10:11:12.345678  1234 file.cc:12] ..." */
        return strlen(l) > 6 && strchr("EWF", l[0]) && skip_stamp(l) != l;
    }
    return false;
}

/* ---- output events */

/* a launcher's records of its children's exit statuses (torchrun's "exitcode  : 1 (pid: 4057)"):
 * facts for the outcome, never quoted, apart from the quotable lines' budget */
static json_t *status_lines(struct line *v, size_t n)
{
    json_t *statuses = json_array();
    for (size_t i = 0; i < n && json_array_size(statuses) < MAX_STATUS_LINES; i++) {
        const struct message *p = pattern_of(v[i].raw);
        if (p && strcmp(p->kind, "status") == 0) {
            char *q = quote_text(v[i].raw);
            json_array_append_new(statuses, json_string(q));
            free(q);
        }
    }
    return statuses;
}

/* the final exception of a stream: its line, the wrapper whose message carried it, whether it was caught */
struct final_exception {
    long ex, wrapper;
    bool logged;
    char caught_in[128]; /* the function of the traceback's first frame, when that says it was caught */
};

static void find_final_exception(struct line *v, size_t n, struct final_exception *fx)
{
    long tb;
    memset(fx, 0, sizeof *fx);
    fx->wrapper = exception_line(v, n, &tb);
    fx->ex = fx->wrapper >= 0 ? wrapped_exception(v, n, fx->wrapper) : -1;
    if (fx->ex == fx->wrapper)
        fx->wrapper = -1;
    fx->logged = fx->ex >= 0 &&
                 (logged_before(v, tb) || caught_below_top(v, n, tb, fx->caught_in, sizeof fx->caught_in));
}

static void mark_exception(json_t *e, long line, const struct final_exception *fx)
{
    if (e && line == fx->ex && fx->logged)
        json_object_set_new(e, "logged", json_true());
    if (e && line == fx->ex && fx->logged && *fx->caught_in) /* the function that caught it: the cause says so */
        json_object_set_new(e, "caught_in", json_string(fx->caught_in));
    if (e && line == fx->wrapper) /* its message carries the exception after it (wrapped_exception) */
        json_object_set_new(e, "wrapper", json_true());
}

static json_t *section_events(struct capture *c, struct section *sec)
{
    if (sec->events)
        return sec->events;
    size_t n = 0;
    struct line *v = split_lines(sec->data, sec->len, &n);
    struct final_exception fx;
    find_final_exception(v, n, &fx);
    long ex = fx.ex, wrapper = fx.wrapper;
    long keep[MAX_OUTPUT_EVENTS];
    const struct message *kp[MAX_OUTPUT_EVENTS];
    char *kq[MAX_OUTPUT_EVENTS];
    size_t nk = 0;
    /* the last distinct quotable lines, newest first */
    for (long i = (long)n - 1; i >= 0 && nk < MAX_OUTPUT_EVENTS; i--) {
        const struct message *p = pattern_of(v[i].raw);
        if (p && strcmp(p->kind, "status") == 0)
            p = NULL;
        if (i != ex && i != wrapper && !p)
            continue;
        char *q = quote_text(v[i].raw);
        bool dup = false;
        for (size_t k = 0; k < nk && !dup; k++)
            dup = strcmp(kq[k], q) == 0;
        if (dup && i != ex) {
            free(q);
            continue;
        }
        keep[nk] = i, kp[nk] = p, kq[nk++] = q;
    }
    json_t *evs = json_array();
    json_t *mk = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:b, s:I}", "ev", "output_capture", "file", c->path,
                           "stream", sec->name, "mode", jstr(c->hdr, "mode", "?"), "bytes",
                           (json_int_t)jint(c->hdr, "bytes", -1), "lines", (json_int_t)n, "exception", ex >= 0,
                           "child", (json_int_t)c->child);
    /* the program's exit status as `convguard run` got it (128+signal when killed): the outcome of the
     * process it started (analysis/outcome.c) */
    json_t *st = jget(c->hdr, "status");
    if (mk && json_is_integer(st))
        json_object_set(mk, "status", st);
    json_t *statuses = status_lines(v, n);
    if (mk && json_array_size(statuses))
        json_object_set(mk, "status_lines", statuses);
    json_decref(statuses);
    json_array_append_new(evs, mk);
    for (size_t k = nk; k-- > 0;) {
        const struct message *p = kp[k];
        json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:b}", "ev", "output", "pattern",
                              p ? p->id : "exception", "kind", p ? p->kind : "exception", "framework",
                              p ? p->framework : "Python", "text", kq[k], "line", (json_int_t)keep[k], "stream",
                              sec->name, "exception", keep[k] == ex);
        free(kq[k]);
        mark_exception(e, keep[k], &fx);
        json_array_append_new(evs, e); /* NULL: nothing appended */
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].raw);
    free(v);
    return sec->events = evs;
}

/* A rank's stream: its marker also names the tail's exception line, which
 * no rank reads (the launcher's own, or a process without rank prefixes):
 * `run_exception`, for the run's outcome (analysis/outcome.c). */
static void tail_exception(struct capture *c, struct section *sec, json_t *marker)
{
    if (sec == &c->sec[0] || c->sec[0].kind != 0 || json_object_get(marker, "run_exception"))
        return;
    json_t *tail = section_events(c, &c->sec[0]);
    for (size_t i = 0; i < json_array_size(tail); i++)
        if (jtrue(json_array_get(tail, i), "exception"))
            json_object_set(marker, "run_exception", json_array_get(tail, i));
    json_t *sl = jget(json_array_get(tail, 0), "status_lines"); /* the launcher's, about the ranks */
    if (sl)
        json_object_set(marker, "run_status_lines", sl);
}

static void attach_one(struct trace *t, struct capture *c, struct section *sec)
{
    json_t *evs = section_events(c, sec);
    tail_exception(c, sec, json_array_get(evs, 0));
    trace_unshare(t); /* its output is its own: the events of alike processes are not changed */
    for (size_t i = 0; i < json_array_size(evs); i++)
        json_array_append(t->events, json_array_get(evs, i)); /* shared: nobody changes events */
}

void capture_attach(struct trace_set *s, char **paths, int npaths, double since)
{
    struct captures cs = {0};
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            captures_in_dir(&cs, paths[i], 0);
        } else if (ends_with(paths[i], ".stderr")) {
            captures_add(&cs, paths[i]);
        } else {
            char d[4096];
            captures_in_dir(&cs, dir_name(paths[i], d, sizeof d), 4);
        }
    }
    size_t keep = 0; /* an older run's capture in the same folder is not this run's */
    for (size_t i = 0; i < cs.n; i++) {
        if (since > 0 && cs.c[i].start < since - 1) {
            struct captures one = {.c = &cs.c[i], .n = 1};
            captures_free_items(&one);
        } else {
            cs.c[keep++] = cs.c[i];
        }
    }
    cs.n = keep;
    for (size_t ti = 0; ti < s->n && cs.n; ti++) {
        struct capture *c = capture_of(s, ti, &cs);
        struct section *sec = c && capture_data(c) ? stream_of(&s->t[ti], c) : NULL;
        if (sec && json_is_array(s->t[ti].events))
            attach_one(&s->t[ti], c, sec);
    }
    captures_free(&cs);
}

/* ---- what the report shows */
json_t *capture_marker(struct trace *t)
{
    for (size_t i = json_array_size(t->events); i-- > 0;)
        if (strcmp(jstr(json_array_get(t->events, i), "ev", ""), "output_capture") == 0)
            return json_array_get(t->events, i);
    return NULL;
}

json_t *capture_quoted(struct trace *t)
{
    json_t *out = json_array(), *all = json_array();
    json_t *ex = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (strcmp(jstr(e, "ev", ""), "output") != 0)
            continue;
        json_array_append(all, e);
        if (jtrue(e, "exception"))
            ex = e;
    }
    size_t n = json_array_size(all);
    bool *pick = calloc(n + 1, sizeof *pick);
    int took = 0;
    for (int pass = 0; pass < 2 && took == 0; pass++) /* pass 1: the known texts all came after it */
        for (size_t i = n; i-- > 0 && took < 3;) {
            json_t *e = json_array_get(all, i);
            if (e == ex || (pass == 0 && ex && jint(e, "line", 0) > jint(ex, "line", 0)))
                continue;
            pick[i] = true, took++;
        }
    for (size_t i = 0; i < n; i++)
        if (pick[i] || json_array_get(all, i) == ex)
            json_array_append(out, json_array_get(all, i));
    free(pick);
    json_decref(all);
    return out;
}

char *capture_symptom(struct trace *t)
{
    json_t *m = capture_marker(t);
    if (!m || strcmp(jstr(m, "mode", ""), "none") == 0) /* none: an exit status alone (the Slurm plugin's) */
        return NULL;
    json_t *q = capture_quoted(t);
    struct sbuf b = {0};
    for (size_t i = 0; i < json_array_size(q); i++)
        sb_printf(&b, "%s\"%s\"", i ? "; " : "", jstr(json_array_get(q, i), "text", ""));
    if (!b.len)
        sb_printf(&b, "no error text of a framework or of CUDA on stderr (%lld bytes were captured)",
                  jint(m, "bytes", 0));
    const char *stream = jstr(m, "stream", "tail");
    if (strcmp(stream, "tail") != 0 && json_array_size(q))
        sb_printf(&b, " (%s)", stream);
    json_decref(q);
    return sb_take(&b);
}
