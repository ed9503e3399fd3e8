/* trace_read.c - reads convguard traces without trusting them.
 *
 * A trace may end inside a line (the process was killed while the shim wrote
 * it, or the file was copied while it grew), hold garbage (a disk error, a
 * program writing into the wrong descriptor), very long lines, bytes that are
 * not UTF-8 (paths are bytes), or come from another convguard version.  Every
 * line is judged alone: a bad one is counted and skipped, never fatal.
 *
 * A job's traces can be gigabytes: each file is read line by line, by one of
 * a few threads, and what is kept of it is bounded (below), so memory follows
 * the number of processes, not the size of their traces; and processes alike
 * but for their own ids and times share what is kept (below), so it follows
 * the number of different ones. */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"

#define HUGE_LINE (1l << 20)
#define MAX_LINE (4l << 20) /* 256 times the shim's own line cap (16 KiB): longer is skipped, unread */

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
    const char *name = fmt_status_name(fn, json_integer_value(st));
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

/* ---- which events are kept
 *
 * The rules read events of the kinds their patterns name (rules.def: RULE and
 * FAILURE rows) and, in their match functions, the process's start, exit and
 * lib events; a match function may read every event of a kind a pattern
 * names, matched or not (the driver's messages around a failure, the names
 * cuDNN probed).  So an event is kept when its name is `start`, `exit` or
 * `lib` or is named by some pattern of the table (the rules hand each of
 * theirs to trace_keep_pattern, so this layer needs none of them); every other event is
 * counted (lines, seq gaps, the timeline's numbers) and dropped as soon as it
 * is read, without being built as JSON.  Which failed loads a later load
 * resolved (cuDNN's probes) is decided as the loads are read, so that it
 * holds when loads past the cap are dropped.  Of each kind the first KEEP_FIRST and the last KEEP_LAST are kept (a
 * process that failed a million times gets the first failures and the last
 * ones, and a count of the rest), so what is kept of a trace is bounded
 * whatever its size. */
#define KEEP_FIRST 64
#define KEEP_FIRST_LIB 1024 /* lib and dlopen: a process maps a bounded number of CUDA libraries */
#define KEEP_LAST 16
#define MAX_NAMES TRACE_KINDS

static char names[MAX_NAMES][48];
static size_t n_names;

static void add_name(const char *n, size_t len)
{
    if (len == 0 || len >= sizeof names[0])
        return;
    for (size_t i = 0; i < n_names; i++)
        if (strlen(names[i]) == len && memcmp(names[i], n, len) == 0)
            return;
    if (n_names < MAX_NAMES) {
        memcpy(names[n_names], n, len);
        names[n_names++][len] = 0;
    }
}

/* the event names of "ev[:cond,...]|ev2...", clauses joined by & (a ! before one: none of those) */
static void add_pattern_names(const char *pattern)
{
    for (const char *c = pattern; c && *c;) {
        c += *c == '!';
        add_name(c, strcspn(c, ":|&"));
        c += strcspn(c, "|&");
        c = *c ? c + 1 : NULL;
    }
}

/* start, exit and lib first: the order of `elided` in the report's JSON */
static void add_fixed_names(void)
{
    if (n_names == 0)
        add_name("start", 5), add_name("exit", 4), add_name("lib", 3);
}

void trace_keep_pattern(const char *pattern)
{
    add_fixed_names();
    add_pattern_names(pattern);
}

static int name_index(const char *n, size_t len)
{
    for (size_t i = 0; i < n_names; i++)
        if (strncmp(names[i], n, len) == 0 && names[i][len] == 0)
            return (int)i;
    return -1;
}

int trace_kind(const char *name, size_t len) { return name_index(name, len); }

/* the reader's kinds a rule's pattern can match (model.h); here, beside the
 * kinds' table, so that event.c, which the reader asks, does not ask it back */
bool pattern_kinds(const char *pattern, struct kind_set *ks)
{
    memset(ks, 0, sizeof *ks);
    for (const char *alt = pattern; alt && *alt;) {
        size_t n = strcspn(alt, ":&|");
        int k = name_index(alt, n);
        if (k < 0)
            return false;
        ks->bits[k / 64] |= 1ull << (k % 64);
        alt = strchr(alt, '|');
        alt = alt ? alt + 1 : NULL;
    }
    return true;
}

struct kept { long ord; json_t *ev; };
struct kind_state {
    int first;                  /* kept from the start */
    struct kept ring[KEEP_LAST]; /* the latest past the first ones */
    int ring_n, ring_at;
    long elided;
};
struct reading {
    struct kept *k;
    size_t nk, capk;
    struct kind_state kind[MAX_NAMES];
    json_t *pending[64];        /* failed loads no later load has resolved yet (references) */
    int npending;
    /* seq numbers seen: lines of threads may land out of order, so gaps are
     * counted once the file is read (sorted), not line by line; a file's
     * worth of numbers, freed with it */
    long long *seqs;
    size_t nseq, capseq;
    long long folded;           /* seqs the shim's `repeated` events account for: no lost lines */
};

/* how many of a kind are kept from the start */
static int kind_cap(int kind)
{
    return strcmp(names[kind], "lib") == 0 || strcmp(names[kind], "dlopen") == 0 ? KEEP_FIRST_LIB
           : strcmp(names[kind], "start") == 0                                  ? 1
                                                                                : KEEP_FIRST;
}

/* the next event of this kind is kept to the end (it goes in the trace's arena) */
static bool kept_for_good(struct reading *r, int kind) { return r->kind[kind].first < kind_cap(kind); }

static void keep(struct reading *r, int kind, long ord, json_t *ev)
{
    struct kind_state *ks = &r->kind[kind];
    int cap = kind_cap(kind);
    if (ks->first < cap) {
        ks->first++;
        if (r->nk == r->capk) {
            r->capk = r->capk ? r->capk * 2 : 64;
            r->k = realloc(r->k, r->capk * sizeof *r->k);
            if (!r->k)
                exit(2);
        }
        r->k[r->nk++] = (struct kept){ord, ev};
        return;
    }
    if (kind == name_index("start", 5)) { /* a second start line: only the first one counts */
        json_decref(ev);
        ks->elided++;
        return;
    }
    if (ks->ring_n == KEEP_LAST) {
        json_decref(ks->ring[ks->ring_at].ev);
        ks->elided++;
    } else {
        ks->ring_n++;
    }
    ks->ring[ks->ring_at] = (struct kept){ord, ev};
    ks->ring_at = (ks->ring_at + 1) % KEEP_LAST;
}

static char *stem_of(const char *name)
{
    const char *b = base_name(name), *so = strstr(b, ".so");
    return so ? xasprintf("%.*s", (int)(so - b) + 3, b) : xstrdup(b);
}

/* A failed load that a later load of the same library (same stem, or named
 * among the success's benign probes) resolved is no failure: cuDNN's probes.
 * Decided here, as the loads go by, so the successes need not be kept. */
static void loads(struct reading *r, json_t *ev)
{
    if (jtrue(ev, "ok")) {
        char *s = stem_of(jstr(ev, "name", ""));
        json_t *probes = jget(ev, "benign_probes");
        for (int i = 0; i < r->npending;) {
            json_t *f = r->pending[i];
            /* only a file that was absent is a probe; a broken one stays a failure */
            bool same = load_failure_absent(f) && strcmp(s, jstr(f, "stem", "")) == 0;
            for (size_t k = 0; k < json_array_size(probes) && !same && load_failure_absent(f); k++)
                same = strcmp(json_string_value(json_array_get(probes, k)) ?: "", jstr(f, "name", "")) == 0;
            if (same) {
                json_object_set_new(f, RESOLVED_KEY, json_true());
                json_decref(f);
                r->pending[i] = r->pending[--r->npending];
            } else {
                i++;
            }
        }
        free(s);
    } else if (json_is_false(json_object_get(ev, "ok"))) {
        if (r->npending == 64) { /* the oldest stays unresolved */
            json_decref(r->pending[0]);
            memmove(r->pending, r->pending + 1, 63 * sizeof *r->pending);
            r->npending--;
        }
        r->pending[r->npending++] = json_incref(ev);
    }
}

/* ---- the timeline: free memory and sizes asked for, at most TL_MAX points
 * per process; when full, every other point goes and only every second one
 * after that is taken, so the points stay spread over the whole run. */
#define TL_MAX 256

static void tl_add(struct trace *t, double tt, enum tl_kind kind, long long v)
{
    if (v < 0)
        return;
    if (v > t->tl_top)
        t->tl_top = v;
    if (t->tl_seen++ % t->tl_stride)
        return;
    if (t->ntl == TL_MAX) {
        for (int i = 0; i < TL_MAX / 2; i++)
            t->tl[i] = t->tl[2 * i];
        t->ntl = TL_MAX / 2;
        t->tl_stride *= 2;
    }
    if (t->ntl == t->tl_cap) { /* grown as points come: most processes have few */
        t->tl_cap = t->tl_cap ? 2 * t->tl_cap : 8;
        t->tl = realloc(t->tl, (size_t)t->tl_cap * sizeof *t->tl);
        if (!t->tl)
            exit(2);
    }
    t->tl[t->ntl++] = (struct tl_point){(float)tt, (unsigned char)kind, v};
}

/* the size an event asks for: an allocation, a workspace, a fallback's */
static void tl_request(struct trace *t, json_t *e, const char *n, double tt)
{
    if (strcmp(n, "alloc_failed") == 0) {
        tl_add(t, tt, TL_ALLOC, jint(e, "bytes", -1));
    } else if (strcmp(n, "conv_algos") == 0) {
        long long need = -1;
        json_t *a = jget(e, "algos");
        for (size_t i = 0; i < json_array_size(a); i++) {
            long long w = jint(json_array_get(a, i), "workspace", -1);
            if (w > 0 && (need < 0 || w < need))
                need = w;
        }
        tl_add(t, tt, TL_WS, need);
    } else if (strcmp(n, "graph_plan") == 0 || strcmp(n, "conv_exec_failed") == 0 ||
               strcmp(n, "graph_exec_failed") == 0) {
        tl_add(t, tt, TL_WS, jint(e, "workspace", -1));
    } else if (strcmp(n, "fallback") == 0) {
        tl_add(t, tt, TL_FB, jint(e, "asked", -1));
    }
    if (jint(e, "mem.total", -1) > t->tl_top)
        t->tl_top = jint(e, "mem.total", -1);
}

static int cmp_kept(const void *a, const void *b)
{
    long x = ((const struct kept *)a)->ord, y = ((const struct kept *)b)->ord;
    return x < y ? -1 : x > y;
}

static void finish_reading(struct trace *t, struct reading *r)
{
    for (size_t i = 0; i < n_names; i++) {
        struct kind_state *ks = &r->kind[i];
        for (int k = 0; k < ks->ring_n; k++) {
            if (r->nk == r->capk) {
                r->capk = r->capk ? r->capk * 2 : 64;
                r->k = realloc(r->k, r->capk * sizeof *r->k);
                if (!r->k)
                    exit(2);
            }
            r->k[r->nk++] = ks->ring[(ks->ring_at + KEEP_LAST - ks->ring_n + k) % KEEP_LAST];
        }
        if (ks->elided) {
            if (!t->elided)
                t->elided = json_object();
            json_object_set_new(t->elided, names[i], json_integer(ks->elided));
            t->st.elided += ks->elided;
        }
    }
    if (r->nk > 1)
        qsort(r->k, r->nk, sizeof *r->k, cmp_kept);
    for (size_t i = 0; i < r->nk; i++) {
        json_t *ev = r->k[i].ev;
        const char *name = jstr(ev, "ev", "");
        if (!t->start && strcmp(name, "start") == 0)
            t->start = ev;
        if (strcmp(name, "exit") == 0)
            t->exit = ev;
        json_array_append_new(t->events, ev);
    }
    for (int i = 0; i < r->npending; i++)
        json_decref(r->pending[i]);
    free(r->k);
}

static void take_meta(struct trace *t, long long first_pid)
{
    json_t *s = t->start;
    t->pid = jint(s, "pid", first_pid);
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

/* a line whose keys are written with escapes: jansson reads it, and gives the
 * scan's fields; NULL if it is not JSON */
static json_t *parse_escaped(const char *line, size_t n, struct json_scan *sc)
{
    json_error_t err;
    json_t *ev = json_loadb(line, n, JSON_REJECT_DUPLICATES, &err);
    if (!ev)
        return NULL;
    sc->has_ev = json_is_string(json_object_get(ev, "ev"));
    sc->ev = jstr(ev, "ev", ""), sc->ev_len = strlen(sc->ev);
    sc->seq = jint(ev, "seq", -1), sc->has_seq = json_object_get(ev, "seq") != NULL;
    sc->t = jnum(ev, "t", 0), sc->pid = jint(ev, "pid", -1), sc->truncated = jtrue(ev, "truncated");
    sc->workspace = jint(ev, "workspace", -1), sc->mem_free = jint(ev, "mem.free", -1);
    return ev;
}

/* a line that is no event: the last one cut short by a crash, or a bad one */
static void bad_line(struct trace *t, bool whole)
{
    if (!whole)
        t->st.last_line_cut = true;
    else
        t->st.bad_lines++;
}

static void add_seq(struct reading *r, long long seq)
{
    if (r->nseq == r->capseq) {
        r->capseq = r->capseq ? r->capseq * 2 : 256;
        r->seqs = realloc(r->seqs, r->capseq * sizeof *r->seqs);
        if (!r->seqs)
            exit(2);
    }
    r->seqs[r->nseq++] = seq;
}

/* `n` bytes of `s` into `out` (cut to fit), each byte that is not [a-z0-9_]
 * (a name) or, for `words`, printable ASCII other than <>&"\ replaced by '?':
 * what reaches a page or a terminal from here is plain text */
static void copy_plain(char *out, size_t cap, const char *s, size_t n, bool words)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                  (words && c >= ' ' && c <= '~' && c != '<' && c != '>' && c != '&' && c != '"' && c != '\\');
        out[k++] = ok ? (char)c : '?';
    }
    out[k] = 0;
}

/* The last event written (the highest seq), and the shim's word on events
 * it lost: trace_gap (`lost`, `reason`: docs/trace-format.md) and
 * trace_capped, read whatever a rule keeps. */
static void note_gaps(struct trace *t, const char *line, size_t n, const struct json_scan *sc)
{
    if (sc->has_seq ? sc->seq >= t->st.last_seq : t->st.last_seq < 0) { /* no seq at all: the file's order */
        t->st.last_seq = sc->has_seq ? sc->seq : -1, t->st.last_t = sc->t;
        copy_plain(t->st.last_ev, sizeof t->st.last_ev, sc->ev, sc->ev_len, false);
    }
    bool gap = sc->ev_len == 9 && memcmp(sc->ev, "trace_gap", 9) == 0;
    bool capped = sc->ev_len == 12 && memcmp(sc->ev, "trace_capped", 12) == 0;
    if (!gap && !capped)
        return;
    json_error_t err;
    json_t *ev = json_loadb(line, n, 0, &err);
    if (capped) {
        t->st.capped = true, t->st.capped_mb = jint(ev, "max_mb", 0);
    } else {
        long long lost = jint(ev, "lost", -1);
        const char *why = jstr(ev, "reason", "");
        t->st.gap_events++;
        t->st.gap_lost += lost > 0 ? lost : 0;
        if (!t->st.gap_reason[0])
            copy_plain(t->st.gap_reason, sizeof t->st.gap_reason, why, strlen(why), true);
    }
    json_decref(ev);
}

/* ---- the shim's `repeated` event (docs/trace-format.md): `count` events of
 * kind `of` with the same `fields` that it counted instead of writing.  Read
 * as one event of that kind (seq and t of the first, "repeated": count, last
 * seq and t), the rest of the count counted as elided of the kind, and the
 * seqs they took are no lost lines.  NULL: not such an event. */
static json_t *unfold(struct reading *r, json_t *rep, struct json_scan *sc, long long *extra)
{
    json_t *fields = json_object_get(rep, "fields");
    const char *of = jstr(rep, "of", NULL);
    long long count = jint(rep, "count", 0);
    if (!of || !*of || strcmp(of, "repeated") == 0 || !json_is_object(fields) || count < 1)
        return NULL;
    json_t *ev = json_pack("{s:s, s:O, s:O, s:O, s:O}", "ev", of, "seq", json_object_get(rep, "first_seq"), "t",
                           json_object_get(rep, "first_t"), "pid", json_object_get(rep, "pid"), "tid",
                           json_object_get(rep, "tid"));
    if (!ev)
        return NULL;
    json_object_update_missing(ev, fields);
    json_object_set_new(ev, "repeated", json_pack("{s:I, s:O, s:O}", "count", (json_int_t)count, "last_seq",
                                                  json_object_get(rep, "last_seq"), "last_t",
                                                  json_object_get(rep, "last_t")));
    r->folded += count;
    *extra = count - 1;
    sc->ev = jstr(ev, "ev", ""), sc->ev_len = strlen(sc->ev);
    return ev;
}

/* a `repeated` line (parsed already, or not): the event it stands for, NULL if it is none */
static json_t *read_repeated(struct reading *r, const char *line, size_t n, struct json_scan *sc, json_t *parsed,
                             long long *extra)
{
    json_error_t err;
    json_t *rep = parsed ? parsed : json_loadb(line, n, JSON_REJECT_DUPLICATES, &err);
    json_t *ev = rep ? unfold(r, rep, sc, extra) : NULL;
    json_decref(rep);
    return ev;
}

/* A line of a kind a rule reads, built: one kept to the end in the trace's
 * arena, one that may be dropped again (past the first of its kind) on the
 * heap.  NULL: what jansson refuses and the scan let pass (duplicate keys). */
static json_t *build_kept(struct trace *t, struct reading *r, int kind, const char *line, size_t n)
{
    bool in_arena = kept_for_good(r, kind);
    struct arena_mark mark = arena_mark(t->arena);
    struct arena *was = in_arena ? arena_enter(t->arena) : NULL;
    json_t *ev = json_build_line(line, n);
    if (!json_is_object(ev) || !json_is_string(json_object_get(ev, "ev"))) {
        json_decref(ev);
        ev = NULL;
    } else {
        add_status_name(ev); /* here too: what they add lives with the event */
        add_stem(ev);
    }
    if (in_arena) {
        arena_enter(was);
        if (!ev)
            arena_rewind(t->arena, mark);
    }
    return ev;
}

/* One line (NUL-terminated, without its newline): counted, judged, kept or dropped. */
static void read_line(struct trace *t, struct reading *r, char *line, size_t n, bool whole, long ord,
                      long long *first_pid)
{
    struct json_scan sc;
    bool ok = json_scan_line(line, n, &sc);
    if ((sc.high_bytes || !ok) && fix_utf8((unsigned char *)line, n))
        t->st.fixed_utf8++;
    /* a key written with escapes ("\u0065v") may be one of the picked fields:
     * jansson decides, and gives them */
    json_t *ev = NULL;
    if (ok && (sc.escaped_key || sc.ev_escaped))
        ok = (ev = parse_escaped(line, n, &sc)) != NULL;
    long long extra = 0; /* of a `repeated` line: the events it stands for past the one */
    if (ok && sc.has_ev && sc.ev_len == 8 && memcmp(sc.ev, "repeated", 8) == 0)
        ok = (ev = read_repeated(r, line, n, &sc, ev, &extra)) != NULL;
    if (!ok || !sc.has_ev) {
        json_decref(ev);
        bad_line(t, whole);
        return;
    }
    int kind = name_index(sc.ev, sc.ev_len);
    if (kind >= 0 && !ev && !(ev = build_kept(t, r, kind, line, n))) {
        bad_line(t, whole);
        return;
    }
    if (ev) {
        add_status_name(ev);
        add_stem(ev);
    }
    t->st.events++;
    if (*first_pid < 0)
        *first_pid = sc.pid;
    if (sc.truncated)
        t->st.cut_lines++;
    if (sc.has_seq && sc.seq >= 0)
        add_seq(r, sc.seq);
    note_gaps(t, line, n, &sc);
    if (sc.t > t->t_last)
        t->t_last = sc.t;
    tl_add(t, sc.t, TL_FREE, sc.mem_free);
    if (sc.mem_total > t->tl_top)
        t->tl_top = sc.mem_total;
    if (!ev) { /* an event no rule looks at */
        if (sc.ev_len == 10 && memcmp(sc.ev, "graph_plan", 10) == 0)
            tl_add(t, sc.t, TL_WS, sc.workspace);
        return;
    }
    const char *name = jstr(ev, "ev", "");
    tl_request(t, ev, name, sc.t);
    if (strcmp(name, "dlopen") == 0)
        loads(r, ev);
    if (kind >= 0)
        keep(r, kind, ord, ev), r->kind[kind].elided += extra;
    else
        json_decref(ev);
}

/* ---- lines, bounded: read in chunks, a line gathered up to MAX_LINE and
 * the rest of a longer one skipped (counted), NUL bytes left out and counted
 * (a file the machine's crash cut holds blocks of them, with no newline: one
 * 1 GiB "line" read whole took 1 GiB), so what a file costs is a chunk and a
 * line whatever it holds. */
#define CHUNK (1 << 16)

struct lines {
    int fd, err;
    off_t pos;         /* of the next chunk */
    bool maybe_hole;   /* at the start, or the last chunk ended in NUL bytes */
    char *buf;
    size_t at, len;    /* what is left of the chunk */
    char *line;        /* the line gathered, NUL-terminated, without its NULs */
    size_t n, cap;
    bool over;         /* longer than MAX_LINE: the rest of it is skipped */
    long long nuls;
};

/* past a run of NUL bytes, 8 at a time where aligned */
static const char *skip_nuls(const char *p, const char *end)
{
    while (p < end && ((uintptr_t)p & 7) && !*p)
        p++;
    uint64_t w;
    while (end - p >= 8 && (memcpy(&w, p, 8), w == 0))
        p += 8;
    while (p < end && !*p)
        p++;
    return p;
}

static void gather(struct lines *l, const char *p, const char *end)
{
    while (p < end) {
        const char *z = memchr(p, 0, (size_t)(end - p)), *stop = z ? z : end;
        size_t len = (size_t)(stop - p);
        if (l->over || l->n + len > (size_t)MAX_LINE) {
            l->over = true;
        } else if (len) {
            if (l->n + len + 1 > l->cap) {
                size_t c = l->cap ? l->cap : 4096;
                while (c < l->n + len + 1)
                    c *= 2;
                l->line = realloc(l->line, c);
                if (!l->line)
                    exit(2);
                l->cap = c;
            }
            memcpy(l->line + l->n, p, len);
            l->n += len;
        }
        p = stop;
        if (z) {
            p = skip_nuls(z, end);
            l->nuls += p - z;
        }
    }
}

/* The next chunk: its size, 0 at the end, -1 on an error.  A hole of a
 * sparse file (NUL bytes that take no disk) is stepped over, not read. */
static ssize_t next_chunk(struct lines *l)
{
    if (l->maybe_hole) {
        off_t data = lseek(l->fd, l->pos, SEEK_DATA);
        struct stat st;
        if (data < 0 && errno == ENXIO && fstat(l->fd, &st) == 0 && st.st_size > l->pos)
            data = st.st_size; /* a hole to the end */
        if (data > l->pos)
            l->nuls += data - l->pos, l->pos = data;
    }
    ssize_t got;
    do
        got = pread(l->fd, l->buf, CHUNK, l->pos);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        l->err = errno;
    if (got > 0)
        l->pos += got, l->maybe_hole = l->buf[got - 1] == 0;
    return got;
}

/* The next line: 1 (l->line, l->n; *whole: it ended in a newline), 0 at the
 * end, -1 on a read error.  A line over MAX_LINE comes back with l->over. */
static int next_line(struct lines *l, bool *whole)
{
    if (l->cap > 4 * HUGE_LINE && l->n < HUGE_LINE) { /* one huge line does not keep its buffer */
        free(l->line);
        l->line = NULL, l->cap = 0;
    }
    l->n = 0, l->over = false;
    bool any = false;
    for (;;) {
        if (l->at == l->len) {
            ssize_t got = next_chunk(l);
            if (got < 0 || (got == 0 && !any))
                return got < 0 ? -1 : 0;
            if (got == 0) { /* the last line, without its newline */
                *whole = false;
                break;
            }
            l->at = 0, l->len = (size_t)got;
        }
        any = true;
        const char *p = l->buf + l->at, *end = l->buf + l->len;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        gather(l, p, nl ? nl : end);
        l->at = nl ? (size_t)(nl + 1 - l->buf) : l->len;
        if (nl) {
            *whole = true;
            break;
        }
    }
    if (l->line)
        l->line[l->n] = 0;
    return 1;
}

/* every line of the file judged; returns the pid of the first event (-1) */
static long long read_lines(struct trace *t, struct reading *r, struct lines *l)
{
    long long first_pid = -1;
    long ord = 0;
    bool whole;
    while (next_line(l, &whole) > 0) {
        t->st.lines++;
        if (l->over) {
            t->st.long_lines++;
            continue;
        }
        if (l->n == 0)
            continue;
        if (l->n > HUGE_LINE)
            t->st.huge_lines++;
        read_line(t, r, l->line, l->n, whole, ord++, &first_pid);
    }
    t->st.nul_bytes = l->nuls;
    return first_pid;
}

/* T emptied for PATH's process and L opened on its file (regular files only):
 * what reading it whole and glancing at it both start from; -1 with errno */
static int trace_open(const char *path, struct trace *t, struct lines *l)
{
    memset(t, 0, sizeof *t);
    t->tl_stride = 1;
    t->st.last_seq = -1;
    struct stat st;
    *l = (struct lines){.fd = open_regular(path, &st), .maybe_hole = true};
    if (l->fd < 0)
        return -1;
    l->buf = malloc(CHUNK);
    if (!l->buf)
        exit(2);
    t->file = xstrdup(path);
    return 0;
}

int trace_read_file(const char *path, struct trace *t)
{
    assert(n_names > 3 && "the rules name the events they read (rules_keep_events) first");
    struct lines l;
    if (trace_open(path, t, &l) != 0)
        return -1;
    struct reading *r = calloc(1, sizeof *r);
    if (!r)
        exit(2);
    t->events = json_array();
    t->arena = arena_new();
    long long first_pid = read_lines(t, r, &l);
    close(l.fd);
    free(l.buf);
    free(l.line);
    t->st.seq_gaps = missing_seqs(r->seqs, r->nseq) - r->folded;
    if (t->st.seq_gaps < 0)
        t->st.seq_gaps = 0;
    free(r->seqs);
    finish_reading(t, r);
    free(r);
    if (l.err) {
        trace_free(t);
        errno = l.err;
        return -1;
    }
    take_meta(t, first_pid);
    return 0;
}

static void share_drop(struct trace_share *sh)
{
    if (sh && --sh->refs == 0) {
        arena_free(sh->arena);
        free(sh->base_t);
        free(sh);
    }
}

void trace_free(struct trace *t)
{
    json_decref(t->events); /* before the arena: what lives in it is theirs */
    if (t->share)
        share_drop(t->share);
    else
        arena_free(t->arena);
    free(t->tl);
    json_decref(t->elided);
    free(t->file);
    free(t->own_t);
    free(t->host_own);
    memset(t, 0, sizeof *t);
}

/* ---- alike processes read as one (model.h, struct trace `share`)
 *
 * A job's ranks run one program: their traces differ in the process's own
 * ids and times and often in nothing else.  Each file is first glanced at
 * (glance_file, below): scanned, not built, its key made of the content
 * hashes of the lines it would keep (every field but the top-level pid,
 * tid, t, ppid, forked_from, host, rank and start time, a nested pid that is
 * the process's own, env.RANK: util/json_scan.c) and of its read counts.  A
 * file whose key a file of the batch read whole has shares that one's
 * events and arena and is never built; the others are read whole, and the
 * first of each key is the one later ones find.  What a process keeps of
 * its own is its struct (ids, read counts, end time, timeline) and the `t`
 * of its kept events, by seq, when they differ from the shared ones'.  A
 * job of 100,000 alike processes then holds one copy of their events. */
struct key { uint64_t a, b; };

static void mix(struct key *k, uint64_t x)
{
    k->a = (k->a ^ x) * 0x100000001b3ull;
    k->a ^= k->a >> 32;
    k->b = (k->b + x + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    k->b ^= k->b >> 29;
}

struct twin_slot { struct key k; struct trace *t; };
struct twins {
    pthread_mutex_t lock;
    struct twin_slot *slot;
    size_t cap, n;
};

/* the trace of an earlier batch member with this key, or t (now the one others find) */
static struct trace *twins_find_or_add(struct twins *tw, struct key k, struct trace *t)
{
    if (2 * (tw->n + 1) > tw->cap) {
        size_t cap = tw->cap ? 2 * tw->cap : 256;
        struct twin_slot *s = calloc(cap, sizeof *s);
        if (!s)
            exit(2);
        for (size_t i = 0; i < tw->cap; i++)
            if (tw->slot[i].t)
                for (size_t j = tw->slot[i].k.a & (cap - 1);; j = (j + 1) & (cap - 1))
                    if (!s[j].t) {
                        s[j] = tw->slot[i];
                        break;
                    }
        free(tw->slot);
        tw->slot = s, tw->cap = cap;
    }
    for (size_t j = k.a & (tw->cap - 1);; j = (j + 1) & (tw->cap - 1)) {
        if (!tw->slot[j].t) {
            tw->slot[j] = (struct twin_slot){k, t};
            tw->n++;
            return t;
        }
        if (tw->slot[j].k.a == k.a && tw->slot[j].k.b == k.b)
            return tw->slot[j].t;
    }
}

static int cmp_seq_t(const void *x, const void *y)
{
    long long a = ((const struct seq_t *)x)->seq, b = ((const struct seq_t *)y)->seq;
    return a < b ? -1 : a > b;
}

/* the times of t's events, by seq (*n of them) */
static struct seq_t *times_of(const struct trace *t, size_t *n)
{
    size_t m = json_array_size(t->events);
    struct seq_t *v = malloc((m ? m : 1) * sizeof *v);
    if (!v)
        exit(2);
    *n = 0;
    for (size_t i = 0; i < m; i++) {
        json_t *e = json_array_get(t->events, i);
        if (json_is_integer(json_object_get(e, "seq")))
            v[(*n)++] = (struct seq_t){jint(e, "seq", -1), jnum(e, "t", 0)};
    }
    if (*n > 1)
        qsort(v, *n, sizeof *v, cmp_seq_t);
    return v;
}

/* ex's events shared from now on, one more time (under the batch's lock: the
 * references are taken there too, jansson's check of a count is no atomic read) */
static struct trace_share *share_of(struct trace *ex, json_t **events, json_t **elided)
{
    if (!ex->share) {
        ex->share = calloc(1, sizeof *ex->share);
        if (!ex->share)
            exit(2);
        ex->share->refs = 1, ex->share->arena = ex->arena, ex->share->pid = ex->pid;
        ex->share->base_t = times_of(ex, &ex->share->n_base_t);
        ex->arena = NULL;
    }
    ex->share->refs++;
    *events = json_incref(ex->events);
    if (elided)
        *elided = json_incref(ex->elided);
    return ex->share;
}

/* a process whose times are those of the shared events keeps none of its own */
static void drop_same_times(struct trace *t)
{
    const struct trace_share *sh = t->share;
    if (t->own_t && t->n_own_t == sh->n_base_t && memcmp(t->own_t, sh->base_t, t->n_own_t * sizeof *t->own_t) == 0) {
        free(t->own_t);
        t->own_t = NULL, t->n_own_t = 0;
    }
}

/* t, read whole, alike to ex: its events dropped, ex's shared */
static void become_twin(struct trace *t, struct trace *ex, struct trace_share *sh, json_t *events)
{
    t->own_t = times_of(t, &t->n_own_t);
    t->host_own = xstrdup(t->host); /* it pointed into its own start event */
    t->host = t->host_own;
    json_decref(t->events);
    arena_free(t->arena);
    t->arena = NULL;
    t->events = events;
    t->start = ex->start, t->exit = ex->exit;
    t->share = sh; /* its timeline stays its own: its times */
    drop_same_times(t);
}

/* a trace that can stand for others: a command line (a text made of the pid
 * stands in for a missing one) and events */
static bool can_share(const struct trace *t)
{
    return t->start && json_array_size(json_object_get(t->start, "argv")) > 0 && json_array_size(t->events) > 0;
}

/* t, read whole, with key k (its glance's): the one others find, or alike to an earlier one */
static void join_twins(struct twins *tw, struct trace *t, struct key k)
{
    if (!can_share(t))
        return;
    pthread_mutex_lock(&tw->lock);
    struct trace *ex = twins_find_or_add(tw, k, t);
    json_t *events = NULL;
    struct trace_share *sh = ex != t ? share_of(ex, &events, NULL) : NULL;
    pthread_mutex_unlock(&tw->lock);
    if (sh) /* ex is read whole and no longer changes */
        become_twin(t, ex, sh, events);
}

/* ---- a first look at a file, without building its events
 *
 * The lines are scanned (util/json_scan.c) as read_line would judge them,
 * and the kept ones simulated (the first of each kind, the last KEEP_LAST
 * past them); their content hashes, in file order, and the read stats make
 * the file's key.  The trace gets what is its own: its ids from the start
 * line, its end time, its timeline, the t of its kept events.  When an
 * earlier file of the batch has the key, the events are that one's and
 * never built again: an alike rank costs a scan.  0: a key in *k; -1: no
 * key (an escaped key, a `repeated` line, no command line: read it whole),
 * or the file could not be read. */
struct seen_line { long ord; unsigned long long h[2]; long long seq; double t; bool has_seq; };
struct seen_kind { int first; struct seen_line ring[KEEP_LAST]; int ring_n, ring_at; long elided; };
struct seen {
    struct seen_line *k;
    size_t nk, capk;
    struct seen_kind kind[MAX_NAMES];
};

static void seen_add(struct seen *g, struct seen_line x)
{
    if (g->nk == g->capk) {
        g->capk = g->capk ? 2 * g->capk : 64;
        g->k = realloc(g->k, g->capk * sizeof *g->k);
        if (!g->k)
            exit(2);
    }
    g->k[g->nk++] = x;
}

static void seen_keep(struct seen *g, int kind, struct seen_line x)
{
    struct seen_kind *ks = &g->kind[kind];
    if (ks->first < kind_cap(kind)) {
        ks->first++;
        seen_add(g, x);
    } else if (kind == name_index("start", 5)) {
        ks->elided++;
    } else {
        if (ks->ring_n == KEEP_LAST)
            ks->elided++;
        else
            ks->ring_n++;
        ks->ring[ks->ring_at] = x;
        ks->ring_at = (ks->ring_at + 1) % KEEP_LAST;
    }
}

static int cmp_seen(const void *a, const void *b)
{
    long x = ((const struct seen_line *)a)->ord, y = ((const struct seen_line *)b)->ord;
    return x < y ? -1 : x > y;
}

/* one line, as read_line judges it; false: the file gets no key */
/* what take_meta reads of a start line, from the scan's picks */
struct glance_start { bool seen; long long pid, ppid, forked_from, rank, wall, wall_ns; long argv_n; char *host; };

static bool glance_line(struct trace *t, struct seen *g, char *line, size_t n, bool whole, long ord,
                        long long *first_pid, struct glance_start *start)
{
    struct json_scan sc;
    bool ok = json_scan_line_hash(line, n, &sc);
    if ((sc.high_bytes || !ok) && fix_utf8((unsigned char *)line, n))
        t->st.fixed_utf8++;
    if (ok && (sc.escaped_key || sc.ev_escaped))
        return false;
    if (ok && sc.has_ev && sc.ev_len == 8 && memcmp(sc.ev, "repeated", 8) == 0)
        return false;
    if (!ok || !sc.has_ev) {
        bad_line(t, whole);
        return true;
    }
    int kind = name_index(sc.ev, sc.ev_len);
    t->st.events++;
    if (*first_pid < 0)
        *first_pid = sc.pid;
    if (sc.truncated)
        t->st.cut_lines++;
    if (sc.has_seq ? sc.seq >= t->st.last_seq : t->st.last_seq < 0) /* note_gaps: the last event written */
        t->st.last_seq = sc.has_seq ? sc.seq : -1, t->st.last_t = sc.t;
    if (sc.t > t->t_last)
        t->t_last = sc.t;
    tl_add(t, sc.t, TL_FREE, sc.mem_free);
    if (sc.mem_total > t->tl_top)
        t->tl_top = sc.mem_total;
    bool is = false;
#define EV(name) (sc.ev_len == sizeof name - 1 && memcmp(sc.ev, name, sizeof name - 1) == 0)
    if (kind < 0) {
        if (EV("graph_plan"))
            tl_add(t, sc.t, TL_WS, sc.workspace);
        return true;
    }
    /* tl_request, from the scan's picks */
    if ((is = EV("alloc_failed")))
        tl_add(t, sc.t, TL_ALLOC, sc.bytes);
    else if ((is = EV("conv_algos")))
        tl_add(t, sc.t, TL_WS, sc.algos_ws);
    else if ((is = EV("graph_plan") || EV("conv_exec_failed") || EV("graph_exec_failed")))
        tl_add(t, sc.t, TL_WS, sc.workspace);
    else if ((is = EV("fallback")))
        tl_add(t, sc.t, TL_FB, sc.asked);
    if (!start->seen && EV("start")) {
        if (sc.start_odd || sc.host_escaped)
            return false; /* take_meta would read it otherwise: read the file whole */
        *start = (struct glance_start){true, sc.pid, sc.ppid, sc.forked_from, sc.rank, sc.wall_time,
                                       sc.wall_time_ns, sc.argv_n,
                                       sc.host ? xasprintf("%.*s", (int)sc.host_len, sc.host) : xstrdup("?")};
    }
#undef EV
    seen_keep(g, kind, (struct seen_line){ord, {sc.hash[0], sc.hash[1]}, sc.seq, sc.t, sc.has_seq});
    return true;
}

/* the key of what a glance saw: its read counts and the kept lines' hashes
 * in file order; the times of those lines are t's own */
static void glance_key(struct trace *t, struct seen *g, struct key *k)
{
    if (g->nk > 1)
        qsort(g->k, g->nk, sizeof *g->k, cmp_seen);
    *k = (struct key){0x84222325cbf29ce4ull, 0x2545f4914f6cdd1dull};
    const struct read_stats *rs = &t->st;
    const long long nums[] = {rs->lines, rs->events, rs->bad_lines, rs->huge_lines, rs->cut_lines,
                              rs->fixed_utf8, rs->last_line_cut, rs->long_lines, rs->nul_bytes, rs->last_seq,
                              (long long)g->nk};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        mix(k, (uint64_t)nums[i]);
    for (size_t i = 0; i < n_names; i++)
        mix(k, (uint64_t)g->kind[i].elided);
    t->own_t = malloc((g->nk ? g->nk : 1) * sizeof *t->own_t);
    if (!t->own_t)
        exit(2);
    for (size_t i = 0; i < g->nk; i++) {
        mix(k, g->k[i].h[0]), mix(k, g->k[i].h[1]);
        if (g->k[i].has_seq)
            t->own_t[t->n_own_t++] = (struct seq_t){g->k[i].seq, g->k[i].t};
    }
    if (t->n_own_t > 1)
        qsort(t->own_t, t->n_own_t, sizeof *t->own_t, cmp_seq_t);
}

static int glance_file(const char *path, struct trace *t, struct key *k)
{
    struct lines l;
    if (trace_open(path, t, &l) != 0)
        return -1;
    struct seen *g = calloc(1, sizeof *g);
    if (!g)
        exit(2);
    struct glance_start start = {0};
    long long first_pid = -1;
    long ord = 0;
    bool whole, keyed = true;
    while (keyed && next_line(&l, &whole) > 0) {
        t->st.lines++;
        if (l.over) {
            t->st.long_lines++;
            continue;
        }
        if (l.n == 0)
            continue;
        if (l.n > HUGE_LINE)
            t->st.huge_lines++;
        keyed = glance_line(t, g, l.line, l.n, whole, ord++, &first_pid, &start);
    }
    t->st.nul_bytes = l.nuls;
    close(l.fd);
    free(l.buf);
    free(l.line);
    for (size_t i = 0; keyed && i < n_names; i++) {
        struct seen_kind *ks = &g->kind[i];
        for (int r = 0; r < ks->ring_n; r++)
            seen_add(g, ks->ring[(ks->ring_at + KEEP_LAST - ks->ring_n + r) % KEEP_LAST]);
    }
    keyed = keyed && !l.err && t->st.events > 0 && start.seen && start.argv_n > 0;
    if (keyed) {
        glance_key(t, g, k);
        /* take_meta's reading of the start line */
        t->pid = start.pid >= 0 ? start.pid : first_pid;
        t->ppid = start.ppid, t->forked_from = start.forked_from, t->rank = start.rank;
        t->wall = (double)(start.wall > 0 ? start.wall : 0) + (double)(start.wall_ns > 0 ? start.wall_ns : 0) / 1e9;
        t->parent = -1;
        t->host_own = start.host, start.host = NULL;
        t->host = t->host_own;
    }
    free(start.host);
    free(g->k);
    free(g);
    if (l.err) {
        errno = l.err;
        return -1;
    }
    return keyed ? 0 : 1;
}

/* t, glanced at with key k: alike to a trace of the batch read whole, whose
 * events it then shares (true); false: none has the key yet */
static bool twin_from_glance(struct twins *tw, struct trace *t, struct key k)
{
    pthread_mutex_lock(&tw->lock);
    struct trace *ex = NULL;
    for (size_t j = tw->cap ? k.a & (tw->cap - 1) : 0; tw->cap && tw->slot[j].t; j = (j + 1) & (tw->cap - 1))
        if (tw->slot[j].k.a == k.a && tw->slot[j].k.b == k.b) {
            ex = tw->slot[j].t;
            break;
        }
    json_t *events = NULL, *elided = NULL;
    struct trace_share *sh = ex ? share_of(ex, &events, &elided) : NULL;
    pthread_mutex_unlock(&tw->lock);
    if (!sh)
        return false;
    /* ex is read whole and no longer changes; what t's own glance gave stays its own */
    double last_t = t->st.last_t;
    t->st = ex->st;
    t->st.last_t = last_t;
    t->events = events;
    t->start = ex->start, t->exit = ex->exit;
    t->elided = elided;
    t->share = sh;
    drop_same_times(t);
    return true;
}

double trace_event_t(const struct trace *t, json_t *e)
{
    if (!t->own_t || !json_is_integer(json_object_get(e, "seq")))
        return jnum(e, "t", 0);
    long long seq = jint(e, "seq", -1);
    size_t lo = 0, hi = t->n_own_t;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (t->own_t[m].seq < seq)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < t->n_own_t && t->own_t[lo].seq == seq ? t->own_t[lo].t : jnum(e, "t", 0);
}

void trace_unshare(struct trace *t)
{
    if (!t->share)
        return;
    json_t *mine = json_deep_copy(t->events);
    if (!mine)
        exit(2);
    for (size_t i = 0; i < json_array_size(mine); i++) {
        json_t *e = json_array_get(mine, i), *was = json_array_get(t->events, i);
        if (json_object_get(e, "t"))
            json_object_set_new(e, "t", json_real(trace_event_t(t, was)));
        if (was == t->start)
            t->start = e;
        if (was == t->exit)
            t->exit = e;
    }
    json_decref(t->events);
    t->events = mine;
    share_drop(t->share);
    t->share = NULL;
    free(t->own_t);
    t->own_t = NULL, t->n_own_t = 0;
    t->fw_known = false;
}

static void add_unreadable(struct trace_set *s, const char *path, const char *why)
{
    if (!s->unreadable)
        s->unreadable = json_array();
    json_array_append_new(s->unreadable, json_pack("{s:o, s:s}", "path", json_text(path), "error", why));
}

static void append(struct trace_set *s, struct trace *t)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->t = realloc(s->t, s->cap * sizeof *s->t);
        if (!s->t)
            exit(2);
    }
    s->t[s->n++] = *t;
}

/* ---- many files at once: each read by one of a few threads, in any order,
 * put in the set in the order given */
struct batch {
    char **paths;
    struct trace *out;
    int *err;
    size_t n;
    atomic_size_t next;
    struct twins twins;
    bool alike; /* alike processes read as one: CONVGUARD_REPORT_SHARE=0 reads each whole (a check) */
    atomic_size_t glances, found;
};

static void *reader(void *arg)
{
    struct batch *b = arg;
    size_t i;
    while ((i = atomic_fetch_add(&b->next, 1)) < b->n) {
        struct trace *t = &b->out[i];
        struct key k = {0}; /* set by a glance that returns 0 */
        /* a glance that finds no alike file costs a scan more: once most of
         * them have found none, the rest are read whole at once */
        size_t looks = atomic_load(&b->glances), found = atomic_load(&b->found);
        bool look = b->alike && (looks < 64 || found * 8 >= looks);
        int g = look ? glance_file(b->paths[i], t, &k) : 1;
        if (look)
            atomic_fetch_add(&b->glances, 1);
        if (g == 0 && twin_from_glance(&b->twins, t, k)) {
            atomic_fetch_add(&b->found, 1);
            continue;
        }
        if (g >= 0)
            trace_free(t);
        errno = 0;
        if (trace_read_file(b->paths[i], t) != 0)
            b->err[i] = errno ? errno : EIO;
        else if (t->st.events && g == 0)
            join_twins(&b->twins, t, k);
    }
    return NULL;
}

static int threads_wanted(size_t files)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = CPU_COUNT(&set);
    const char *env = getenv("CONVGUARD_REPORT_THREADS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end || v < 1 || v > 64) {
            static bool warned;
            if (!warned)
                fprintf(stderr, "convguard: CONVGUARD_REPORT_THREADS=%s is not a number of threads from 1 to 64; "
                                "using %ld\n", env, n < 8 ? n : 8);
            warned = true;
        } else {
            n = v;
        }
    } else if (n > 8) {
        n = 8;
    }
    if (n < 1)
        n = 1;
    return (size_t)n > files ? (int)files : (int)n;
}

/* why a file gave no event: empty, NUL bytes only (a crash of the machine:
 * the file system kept the file's length, not the lines), or no JSON */
static char *no_events_text(const struct read_stats *st)
{
    char sz[32];
    if (st->nul_bytes)
        return xasprintf("no convguard events in it: %s of NUL bytes%s (a file cut by a crash: the machine went "
                         "down before its lines reached the disk)",
                         fmt_size(st->nul_bytes, sz, sizeof sz), st->lines > 1 ? " and lines that are no event" : "");
    if (st->lines == 0)
        return xstrdup("no convguard events in it (an empty file)");
    if (st->long_lines == st->lines)
        return xstrdup("no convguard events in it (no line shorter than 4 MiB)");
    return xstrdup("no convguard events in it (no line is a JSON event)");
}

static int read_files(struct trace_set *s, char **paths, size_t n)
{
    if (n == 0)
        return 0;
    assert(n_names > 3 && "the rules name the events they read (rules_keep_events) first");
    json_object_seed(0); /* before any thread builds an object */
    const char *alike = getenv("CONVGUARD_REPORT_SHARE");
    struct batch b = {paths, calloc(n, sizeof *b.out), calloc(n, sizeof *b.err), n, 0,
                      {.lock = PTHREAD_MUTEX_INITIALIZER}, !alike || strcmp(alike, "0") != 0, 0, 0};
    if (!b.out || !b.err)
        exit(2);
    int nt = threads_wanted(n), started = 0;
    pthread_t th[64];
    for (int i = 1; i < nt; i++)
        if (pthread_create(&th[started], NULL, reader, &b) == 0)
            started++;
    reader(&b);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    int bad = 0;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (b.err[i]) {
            add_unreadable(s, paths[i], b.err[i] == EINVAL ? "not a regular file: not read" : strerror(b.err[i]));
            bad++;
        } else if (b.out[i].st.events == 0) {
            char *why = no_events_text(&b.out[i].st);
            add_unreadable(s, paths[i], why);
            free(why);
            trace_free(&b.out[i]);
            bad++;
        } else {
            b.out[kept++] = b.out[i];
        }
    }
    if (s->n == 0 && kept) { /* the set is this batch: its array, not a copy (100,000 processes held two) */
        free(s->t);
        s->t = realloc(b.out, kept * sizeof *b.out);
        if (!s->t)
            exit(2);
        s->n = s->cap = kept;
        b.out = NULL;
    }
    for (size_t i = 0; b.out && i < kept; i++)
        append(s, &b.out[i]);
    free(b.out);
    free(b.err);
    free(b.twins.slot);
    return bad;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

struct paths { char **p; size_t n, cap; };

static void paths_add(struct paths *l, char *p)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->p = realloc(l->p, l->cap * sizeof *l->p);
        if (!l->p)
            exit(2);
    }
    l->p[l->n++] = p;
}

/* Directories: every *.jsonl, and sub-directories (one per host, say) a few
 * levels down, in name order, each folder and file once (by device and
 * inode: a `latest -> .` link, or twelve of them, add nothing); entries that
 * are links come after the others, so a file is named by its real folder
 * where it has one.  Returns the number of folders that could not be read. */
static int list_dir(struct trace_set *s, const char *dir, int depth, struct paths *out)
{
    DIR *d = opendir(dir);
    struct stat st;
    if (!d || fstat(dirfd(d), &st) != 0) {
        add_unreadable(s, dir, strerror(errno));
        if (d)
            closedir(d);
        return 1;
    }
    if (!id_set_add(&s->seen, st.st_dev, st.st_ino)) {
        closedir(d);
        return 0;
    }
    struct paths names = {0};
    struct dirent *e;
    /* each name with its type from the folder (DT_*), after a NUL: one stat
     * per trace file, none for the other files */
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            size_t len = strlen(e->d_name);
            char *n = malloc(len + 2);
            if (!n)
                exit(2);
            memcpy(n, e->d_name, len + 1);
            n[len + 1] = (char)e->d_type;
            paths_add(&names, n);
        }
    if (names.n) /* qsort(NULL, 0) is undefined (found by make check-sanitize) */
        qsort(names.p, names.n, sizeof *names.p, cmp_str);
    int bad = 0, fd = dirfd(d);
    for (int links = 0; links < 2; links++)
        for (size_t i = 0; i < names.n; i++) {
            const char *name = names.p[i];
            unsigned char type = (unsigned char)name[strlen(name) + 1];
            bool jsonl = ends_with(name, ".jsonl");
            if ((type == DT_REG && !jsonl) || (type != DT_UNKNOWN && (type == DT_LNK) != links) ||
                (type != DT_UNKNOWN && type != DT_LNK && type != DT_REG && type != DT_DIR))
                continue;
            bool ok = type == DT_LNK || type == DT_UNKNOWN
                          ? fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (S_ISLNK(st.st_mode) != 0) == links &&
                                fstatat(fd, name, &st, 0) == 0
                          : fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
            if (ok && S_ISDIR(st.st_mode) && depth < 4) {
                char *p = xasprintf("%s/%s", dir, name);
                bad += list_dir(s, p, depth + 1, out);
                free(p);
            } else if (ok && S_ISREG(st.st_mode) && jsonl && id_set_add(&s->seen, st.st_dev, st.st_ino)) {
                paths_add(out, xasprintf("%s/%s", dir, name));
            }
        }
    closedir(d);
    for (size_t i = 0; i < names.n; i++)
        free(names.p[i]);
    free(names.p);
    return bad;
}

int trace_set_add(struct trace_set *s, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        add_unreadable(s, path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) { /* never opened: a FIFO would wait for a writer */
        char *why = xasprintf("%s, not a trace file: not read", file_kind(st.st_mode));
        add_unreadable(s, path, why);
        free(why);
        return -1;
    }
    struct paths l = {0};
    int bad = 0;
    if (S_ISDIR(st.st_mode))
        bad = list_dir(s, path, 0, &l);
    else if (id_set_add(&s->seen, st.st_dev, st.st_ino))
        paths_add(&l, xstrdup(path));
    bad += read_files(s, l.p, l.n);
    for (size_t i = 0; i < l.n; i++)
        free(l.p[i]);
    free(l.p);
    return bad ? -1 : 0;
}

/* rank, then host (node2 before node10), start time, pid */
static int cmp_trace(const void *pa, const void *pb)
{
    const struct trace *a = pa, *b = pb;
    long long ra = a->rank < 0 ? 1ll << 40 : a->rank, rb = b->rank < 0 ? 1ll << 40 : b->rank;
    if (ra != rb)
        return ra < rb ? -1 : 1;
    int h = natural_cmp(a->host, b->host);
    if (h)
        return h;
    if (a->wall != b->wall)
        return a->wall < b->wall ? -1 : 1;
    return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* The set's traces by (host, pid), in set order within one: finds the
 * traces of one pid on one host without a pass over the whole set. */
static struct trace_set *by_pid_set;
static int cmp_by_pid(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    const struct trace *x = &by_pid_set->t[a], *y = &by_pid_set->t[b];
    int h = strcmp(x->host, y->host);
    if (h)
        return h;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* [*lo, *hi) of `idx`: the traces of `pid` on `host` */
static void pid_range(struct trace_set *s, const size_t *idx, const char *host, long long pid, size_t *lo,
                      size_t *hi)
{
    size_t a = 0, b = s->n;
    while (a < b) {
        size_t m = (a + b) / 2;
        const struct trace *u = &s->t[idx[m]];
        int h = strcmp(u->host, host);
        if (h < 0 || (h == 0 && u->pid < pid))
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    while (a < s->n && s->t[idx[a]].pid == pid && strcmp(s->t[idx[a]].host, host) == 0)
        a++;
    *hi = a;
}

/* The parent of a trace: the earlier image of the same pid (it exec'd), else
 * the process it was forked from, else its parent pid, on the same host. */
static int find_parent(struct trace_set *s, const size_t *idx, size_t i)
{
    struct trace *t = &s->t[i];
    int best = -1;
    size_t lo, hi;
    pid_range(s, idx, t->host, t->pid, &lo, &hi);
    for (size_t k = lo; k < hi; k++) {
        size_t j = idx[k];
        struct trace *u = &s->t[j];
        if (j == i || u->wall > t->wall)
            continue;
        if (u->wall == t->wall && j > i)
            continue;
        if (best < 0 || u->wall >= s->t[best].wall)
            best = (int)j;
    }
    if (best >= 0)
        return best;
    long long want = t->forked_from >= 0 ? t->forked_from : t->ppid;
    if (want < 0)
        return -1;
    pid_range(s, idx, t->host, want, &lo, &hi);
    for (size_t k = lo; k < hi; k++) {
        size_t j = idx[k];
        struct trace *u = &s->t[j];
        if (j != i && u->wall <= t->wall && (best < 0 || u->wall >= s->t[best].wall))
            best = (int)j;
    }
    return best;
}

/* The same pid in a later file of the same host is the program it exec'd:
 * this image ended by exec, not by a kill. */
static bool replaced_by_exec(struct trace_set *s, const size_t *idx, size_t i)
{
    struct trace *t = &s->t[i];
    size_t lo, hi;
    pid_range(s, idx, t->host, t->pid, &lo, &hi);
    for (size_t k = lo; k < hi; k++) {
        struct trace *o = &s->t[idx[k]];
        if (idx[k] != i && o->start && t->start && o->wall >= t->wall)
            return true;
    }
    return false;
}

void trace_set_link(struct trace_set *s)
{
    s->never_used_known = false; /* a memo of the rules about the set as it was */
    if (s->n > 1)
        qsort(s->t, s->n, sizeof *s->t, cmp_trace);
    size_t *idx = malloc((s->n ? s->n : 1) * sizeof *idx);
    if (!idx)
        exit(2);
    for (size_t i = 0; i < s->n; i++)
        idx[i] = i;
    by_pid_set = s;
    if (s->n > 1)
        qsort(idx, s->n, sizeof *idx, cmp_by_pid);
    for (size_t i = 0; i < s->n; i++) {
        s->t[i].parent = find_parent(s, idx, i);
        s->t[i].execd = !s->t[i].exit && replaced_by_exec(s, idx, i);
    }
    free(idx);
}

void trace_set_keep_since(struct trace_set *s, double since)
{
    s->never_used_known = false;
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->t[i].wall >= since) {
            s->t[k++] = s->t[i];
        } else {
            trace_free(&s->t[i]);
        }
    }
    s->n = k;
}

void trace_set_free(struct trace_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        trace_free(&s->t[i]);
    free(s->t);
    json_decref(s->unreadable);
    id_set_free(&s->seen);
    memset(s, 0, sizeof *s);
}
