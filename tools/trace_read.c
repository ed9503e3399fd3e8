/* trace_read.c - reads convguard traces without trusting them.
 *
 * A trace may end inside a line (the process was killed while the shim wrote
 * it, or the file was copied while it grew), hold garbage (a disk error, a
 * program writing into the wrong descriptor), very long lines, bytes that are
 * not UTF-8 (paths are bytes), or come from another convguard version.  Every
 * line is judged alone: a bad one is counted and skipped, never fatal. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define HUGE_LINE (1l << 20)
#define MAX_LINE (256l << 20) /* beyond the shim's own cap (CONVGUARD_MAX_MB): skip */

/* Replaces every byte that is not part of a valid UTF-8 sequence by '?', so
 * that a line with one odd byte in a path still parses.  Returns true when it
 * changed something. */
static bool fix_utf8(unsigned char *s, size_t n)
{
    bool changed = false;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = (s[i + k] & 0xc0) == 0x80;
        if (ok && len == 2)
            ok = c >= 0xc2; /* overlong */
        if (ok && len == 3) {
            unsigned cp = (c & 0x0f) << 12 | (s[i + 1] & 0x3f) << 6 | (s[i + 2] & 0x3f);
            ok = cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff);
        }
        if (ok && len == 4) {
            unsigned cp = (c & 0x07) << 18 | (s[i + 1] & 0x3f) << 12 | (s[i + 2] & 0x3f) << 6 | (s[i + 3] & 0x3f);
            ok = cp >= 0x10000 && cp <= 0x10ffff;
        }
        if (!ok) {
            s[i++] = '?';
            changed = true;
        } else {
            i += len;
        }
    }
    return changed;
}

/* Older traces (and call_failed) carry only the integer: add the name once
 * here so every later part can show it. */
static void add_status_name(json_t *ev)
{
    json_t *st = json_object_get(ev, "status");
    if (!json_is_integer(st) || json_object_get(ev, "status_name"))
        return;
    const char *fn = jstr(ev, "fn", NULL);
    if (!fn && strcmp(jstr(ev, "ev", ""), "cudnn_handle") == 0)
        fn = "cudnnCreate";
    const char *name = status_name(fn, json_integer_value(st));
    if (name)
        json_object_set_new(ev, "status_name", json_string(name));
}

/* Load failures carry `stem` (the name up to ".so"); older traces may not. */
static void add_stem(json_t *ev)
{
    if (strcmp(jstr(ev, "ev", ""), "dlopen") != 0 || json_object_get(ev, "stem"))
        return;
    const char *name = base_name(jstr(ev, "name", NULL));
    const char *so = strstr(name, ".so");
    if (*name)
        json_object_set_new(ev, "stem", json_stringn(name, so ? (size_t)(so - name) + 3 : strlen(name)));
}

static void take_meta(struct trace *t)
{
    json_t *s = t->start;
    json_t *any = json_array_size(t->events) ? json_array_get(t->events, 0) : NULL;
    t->pid = jint(s, "pid", jint(any, "pid", -1));
    t->ppid = jint(s, "ppid", -1);
    t->forked_from = jint(s, "forked_from", -1);
    t->rank = jint(s, "rank", -1);
    t->host = jstr(s, "host", "?");
    t->wall = (double)jint(s, "wall_time", 0) + (double)jint(s, "wall_time_ns", 0) / 1e9;
    t->parent = -1;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* Numbers missing between the lowest and the highest seq: lost lines.  Lines
 * only out of order (two threads' writes crossing) lose nothing. */
static long missing_seqs(long long *seqs, size_t n)
{
    if (n < 2)
        return 0;
    qsort(seqs, n, sizeof *seqs, cmp_ll);
    long gaps = 0;
    for (size_t i = 1; i < n; i++)
        if (seqs[i] > seqs[i - 1] + 1)
            gaps += (long)(seqs[i] - seqs[i - 1] - 1);
    return gaps;
}

int trace_read_file(const char *path, struct trace *t)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    t->file = xstrdup(path);
    t->events = json_array();
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    /* seq numbers seen: lines of threads may land out of order, so gaps are
     * counted once the file is read (sorted), not line by line */
    long long *seqs = NULL;
    size_t nseq = 0, seqcap = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        bool whole = line[n - 1] == '\n';
        if (whole)
            line[--n] = 0;
        t->st.lines++;
        if (n == 0)
            continue;
        if (n > HUGE_LINE)
            t->st.huge_lines++;
        if (n > MAX_LINE) {
            t->st.bad_lines++;
            continue;
        }
        if (fix_utf8((unsigned char *)line, (size_t)n))
            t->st.fixed_utf8++;
        json_error_t err;
        json_t *ev = json_loadb(line, (size_t)n, JSON_REJECT_DUPLICATES, &err);
        if (!json_is_object(ev) || !json_is_string(json_object_get(ev, "ev"))) {
            json_decref(ev);
            if (!whole)
                t->st.last_line_cut = true;
            else
                t->st.bad_lines++;
            continue;
        }
        t->st.events++;
        if (jtrue(ev, "truncated"))
            t->st.cut_lines++;
        long long seq = jint(ev, "seq", -1);
        if (seq >= 0) {
            if (nseq == seqcap) {
                seqcap = seqcap ? seqcap * 2 : 256;
                long long *g = realloc(seqs, seqcap * sizeof *seqs);
                if (!g) {
                    fputs("convguard: out of memory\n", stderr);
                    exit(2);
                }
                seqs = g;
            }
            seqs[nseq++] = seq;
        }
        add_status_name(ev);
        add_stem(ev);
        const char *name = jstr(ev, "ev", "");
        if (!t->start && strcmp(name, "start") == 0)
            t->start = ev;
        if (strcmp(name, "exit") == 0)
            t->exit = ev;
        json_array_append_new(t->events, ev);
    }
    free(line);
    t->st.seq_gaps = missing_seqs(seqs, nseq);
    free(seqs);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        errno = EIO;
        json_decref(t->events);
        free(t->file);
        return -1;
    }
    take_meta(t);
    return 0;
}

static void add_unreadable(struct trace_set *s, const char *path, const char *why)
{
    if (!s->unreadable)
        s->unreadable = json_array();
    json_array_append_new(s->unreadable, json_pack("{s:s, s:s}", "path", path, "error", why));
}

static int add_file(struct trace_set *s, const char *path)
{
    struct trace t;
    if (trace_read_file(path, &t) != 0) {
        add_unreadable(s, path, strerror(errno));
        return -1;
    }
    if (t.st.events == 0) {
        add_unreadable(s, path, "no convguard events in it");
        json_decref(t.events);
        free(t.file);
        return -1;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->t = realloc(s->t, s->cap * sizeof *s->t);
        if (!s->t)
            exit(2);
    }
    s->t[s->n++] = t;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* Directories: every *.jsonl, and sub-directories (one per host, say) a few
 * levels down.  Returns the number of files that could not be read. */
static int add_dir(struct trace_set *s, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) {
        add_unreadable(s, dir, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (n) /* qsort(NULL, 0) is undefined (found by make check-sanitize) */
        qsort(names, n, sizeof *names, cmp_str);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char *p = xasprintf("%s/%s", dir, names[i]);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode) && depth < 4)
            bad += add_dir(s, p, depth + 1);
        else if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && ends_with(names[i], ".jsonl"))
            bad += add_file(s, p) != 0;
        free(p);
        free(names[i]);
    }
    free(names);
    return bad;
}

int trace_set_add(struct trace_set *s, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        add_unreadable(s, path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return add_dir(s, path, 0) ? -1 : 0;
    return add_file(s, path);
}

static int cmp_trace(const void *pa, const void *pb)
{
    const struct trace *a = pa, *b = pb;
    long long ra = a->rank < 0 ? 1ll << 40 : a->rank, rb = b->rank < 0 ? 1ll << 40 : b->rank;
    if (ra != rb)
        return ra < rb ? -1 : 1;
    int h = strcmp(a->host, b->host);
    if (h)
        return h;
    if (a->wall != b->wall)
        return a->wall < b->wall ? -1 : 1;
    return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* The parent of a trace: the earlier image of the same pid (it exec'd), else
 * the process it was forked from, else its parent pid, on the same host. */
static int find_parent(struct trace_set *s, size_t i)
{
    struct trace *t = &s->t[i];
    int best = -1;
    for (size_t j = 0; j < s->n; j++) {
        struct trace *u = &s->t[j];
        if (j == i || strcmp(u->host, t->host) != 0 || u->pid != t->pid || u->wall > t->wall)
            continue;
        if (u->wall == t->wall && j > i)
            continue;
        if (best < 0 || u->wall >= s->t[best].wall)
            best = (int)j;
    }
    if (best >= 0)
        return best;
    long long want = t->forked_from >= 0 ? t->forked_from : t->ppid;
    for (size_t j = 0; j < s->n && want >= 0; j++) {
        struct trace *u = &s->t[j];
        if (j != i && u->pid == want && strcmp(u->host, t->host) == 0 && u->wall <= t->wall &&
            (best < 0 || u->wall >= s->t[best].wall))
            best = (int)j;
    }
    return best;
}

void trace_set_link(struct trace_set *s)
{
    if (s->n > 1)
        qsort(s->t, s->n, sizeof *s->t, cmp_trace);
    for (size_t i = 0; i < s->n; i++)
        s->t[i].parent = find_parent(s, i);
}

void trace_set_keep_since(struct trace_set *s, double since)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->t[i].wall >= since) {
            s->t[k++] = s->t[i];
        } else {
            json_decref(s->t[i].events);
            free(s->t[i].file);
        }
    }
    s->n = k;
}

void trace_set_free(struct trace_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        json_decref(s->t[i].events);
        free(s->t[i].file);
    }
    free(s->t);
    json_decref(s->unreadable);
    memset(s, 0, sizeof *s);
}
