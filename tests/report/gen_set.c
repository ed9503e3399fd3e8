/* gen_set.c - a job's worth of trace files made from one trace, fast: the
 * sets of bench/report_scale.sh and of the memory limits in
 * tests/report/t_report_memory.sh (10,000 and 100,000 processes, 2 GB),
 * where a Python loop per line would take most of CI's time.
 *
 *   gen_set OUT --template FILE [--procs N] [--hosts H] [--size BYTES] [--pad KIND,KIND]
 *           [--jitter S] [--vary]
 *
 * Each process gets the template with its pid (and tid, and a holder's pid
 * that was the process's own), host, rank and start time rewritten; with
 * --size, the lines of the --pad kinds are repeated (in their order, after
 * the last of them) until the file is about BYTES long, and the seq numbers
 * after them shifted, so that each file reads as one longer run of the same
 * program (a process that failed the same way many times, or planned many
 * graphs).  Hosts are node0..node{H-1}, ranks spread over them in order;
 * start times 3 ms apart.  --jitter S moves every `t` of rank r by
 * (r % 97) * S seconds (ranks out of step); --vary adds r * 4096 to every
 * `free` (memory readings that differ per GPU: no two ranks alike).  Files are OUT/node<h>-r<r>-<pid>.jsonl, each
 * written with one write.  Prints "N files, B bytes". */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct buf { char *s; size_t n, cap; };

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 1 << 16;
        while (c < b->n + n + 1)
            c *= 2;
        b->s = realloc(b->s, c);
        if (!b->s) {
            perror("gen_set");
            exit(2);
        }
        b->cap = c;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
}

static void put_ll(struct buf *b, long long v)
{
    char t[32];
    put(b, t, (size_t)snprintf(t, sizeof t, "%lld", v));
}

struct line { char *s; size_t n; char ev[48]; bool pad; bool start; };

/* what one process's copy changes */
struct subst {
    long long old_pid, new_pid, rank;
    long long seq_at, shift; /* a seq above seq_at moves up by shift */
    long long wall, wall_ns;
    char host[32];
    double dt;          /* added to every `t` (--jitter: ranks do not run in step) */
    long long dfree;    /* added to every `free` (--vary: each GPU has its own free memory) */
};

static bool key_at(const char *p, const char *end, const char *key, size_t *klen)
{
    size_t n = strlen(key);
    if ((size_t)(end - p) < n + 3 || p[0] != '"' || memcmp(p + 1, key, n) != 0 || p[n + 1] != '"' || p[n + 2] != ':')
        return false;
    *klen = n + 3;
    return true;
}

/* one template line into `b`, its fields rewritten for this process (a seq
 * of -1: the line's own, moved by the shift; else that number) */
static void emit(struct buf *b, const struct line *l, const struct subst *x, long long seq)
{
    const char *p = l->s, *end = l->s + l->n;
    while (p < end) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        if (!q) {
            put(b, p, (size_t)(end - p));
            break;
        }
        put(b, p, (size_t)(q - p));
        p = q;
        size_t k;
        int which = key_at(p, end, "pid", &k) || key_at(p, end, "tid", &k) ? 1
                    : key_at(p, end, "seq", &k) || key_at(p, end, "last_failure", &k) ? 2
                    : l->start && key_at(p, end, "rank", &k) ? 3
                    : l->start && key_at(p, end, "wall_time", &k) ? 4
                    : l->start && key_at(p, end, "wall_time_ns", &k) ? 5
                    : l->start && key_at(p, end, "host", &k) ? 6
                    : x->dt != 0 && key_at(p, end, "t", &k) ? 7
                    : x->dfree != 0 && key_at(p, end, "free", &k) ? 8 : 0;
        if (!which) {
            put(b, p, 1);
            p++;
            continue;
        }
        put(b, p, k);
        p += k;
        const char *v = p;
        if (which == 6) { /* a string */
            const char *e = v < end && *v == '"' ? memchr(v + 1, '"', (size_t)(end - v - 1)) : NULL;
            if (!e)
                continue;
            put(b, "\"", 1), put(b, x->host, strlen(x->host)), put(b, "\"", 1);
            p = e + 1;
            continue;
        }
        if (which == 7) { /* a number with a fraction */
            char *e;
            double d = strtod(v, &e);
            if (e > v) {
                char tb[32];
                put(b, tb, (size_t)snprintf(tb, sizeof tb, "%.6f", d + x->dt));
                p = e;
            }
            continue;
        }
        char *e;
        long long n = strtoll(v, &e, 10);
        bool num = e > v && (e == end || *e == ',' || *e == '}' || *e == ']');
        if (which == 3) { /* a number or null */
            if (num || (end - v >= 4 && memcmp(v, "null", 4) == 0)) {
                put_ll(b, x->rank);
                p = num ? e : v + 4;
            }
            continue;
        }
        if (!num)
            continue;
        p = e;
        if (which == 1)
            put_ll(b, n == x->old_pid ? x->new_pid : n);
        else if (which == 2)
            put_ll(b, seq >= 0 && k == 6 ? seq : n > x->seq_at ? n + x->shift : n);
        else if (which == 8)
            put_ll(b, n + x->dfree);
        else if (which == 4)
            put_ll(b, x->wall);
        else
            put_ll(b, x->wall_ns);
    }
    put(b, "\n", 1);
}

static long long field_ll(const char *s, size_t n, const char *key, long long dflt)
{
    char k[64];
    int kl = snprintf(k, sizeof k, "\"%s\":", key);
    for (const char *p = s; p + kl <= s + n; p++)
        if (memcmp(p, k, (size_t)kl) == 0)
            return strtoll(p + kl, NULL, 10);
    return dflt;
}

static void usage(void)
{
    fprintf(stderr, "usage: gen_set OUT --template FILE [--procs N] [--hosts H] [--size BYTES] [--pad KIND,...] "
                    "[--jitter S] [--vary]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *tpl = NULL, *pad = "";
    double jitter = 0;
    bool vary = false;
    long long procs = 1000, hosts = 126, size = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--template") == 0 && i + 1 < argc)
            tpl = argv[++i];
        else if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc)
            procs = atoll(argv[++i]);
        else if (strcmp(argv[i], "--hosts") == 0 && i + 1 < argc)
            hosts = atoll(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = atoll(argv[++i]);
        else if (strcmp(argv[i], "--pad") == 0 && i + 1 < argc)
            pad = argv[++i];
        else if (strcmp(argv[i], "--jitter") == 0 && i + 1 < argc)
            jitter = atof(argv[++i]);
        else if (strcmp(argv[i], "--vary") == 0)
            vary = true;
        else if (argv[i][0] != '-' && !out)
            out = argv[i];
        else
            usage();
    }
    if (!out || !tpl || procs < 1 || hosts < 1)
        usage();
    if (hosts > procs)
        hosts = procs;
    FILE *f = fopen(tpl, "r");
    if (!f) {
        perror(tpl);
        return 2;
    }
    struct line *ls = NULL;
    size_t nl = 0, capl = 0, tsize = 0, psize = 0;
    char *s = NULL;
    size_t cap = 0;
    ssize_t got;
    long long seq_at = -1, old_pid = -1, wall = 1790000000, wall_ns = 0;
    long last_pad = -1;
    while ((got = getline(&s, &cap, f)) > 0) {
        while (got > 0 && (s[got - 1] == '\n' || s[got - 1] == '\r'))
            got--;
        if (got == 0)
            continue;
        if (nl == capl) {
            capl = capl ? capl * 2 : 256;
            ls = realloc(ls, capl * sizeof *ls);
            if (!ls)
                return 2;
        }
        struct line *l = &ls[nl];
        memset(l, 0, sizeof *l);
        l->s = strndup(s, (size_t)got), l->n = (size_t)got;
        const char *e = strstr(l->s, "\"ev\":\"");
        if (e) {
            e += 6;
            size_t k = strcspn(e, "\"");
            snprintf(l->ev, sizeof l->ev, "%.*s", (int)(k < sizeof l->ev ? k : sizeof l->ev - 1), e);
        }
        l->start = strcmp(l->ev, "start") == 0;
        if (l->start && old_pid < 0) {
            old_pid = field_ll(l->s, l->n, "pid", -1);
            wall = field_ll(l->s, l->n, "wall_time", wall);
            wall_ns = field_ll(l->s, l->n, "wall_time_ns", 0);
        }
        /* a kind named in --pad (a comma-separated list) */
        for (const char *c = pad; *l->ev && *c;) {
            size_t k = strcspn(c, ",");
            if (k == strlen(l->ev) && strncmp(c, l->ev, k) == 0)
                l->pad = true;
            c += k + (c[k] == ',');
        }
        if (l->pad) {
            last_pad = (long)nl;
            seq_at = field_ll(l->s, l->n, "seq", seq_at);
            psize += l->n + 1;
        }
        tsize += l->n + 1;
        nl++;
    }
    fclose(f);
    free(s);
    if (!nl) {
        fprintf(stderr, "gen_set: %s: no lines\n", tpl);
        return 2;
    }
    long long reps = size > (long long)tsize && psize ? (size - (long long)tsize + (long long)psize / 2) / (long long)psize : 0;
    long long npad = 0;
    for (size_t i = 0; i < nl; i++)
        npad += ls[i].pad;
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        perror(out);
        return 2;
    }
    struct buf b = {0};
    long long bytes = 0;
    for (long long r = 0; r < procs; r++) {
        struct subst x = {.old_pid = old_pid, .new_pid = 10000 + r, .rank = r, .seq_at = seq_at,
                          .shift = reps * npad};
        long long h = r * hosts / procs;
        long long ns = wall_ns + r * 3000000;
        x.wall = wall + ns / 1000000000, x.wall_ns = ns % 1000000000;
        snprintf(x.host, sizeof x.host, "node%lld", h);
        x.dt = jitter * (double)(r % 97);
        x.dfree = vary ? r * 4096 : 0;
        b.n = 0;
        for (size_t i = 0; i < nl; i++) {
            emit(&b, &ls[i], &x, -1);
            if ((long)i == last_pad)
                for (long long k = 0, q = seq_at + 1; k < reps; k++)
                    for (size_t j = 0; j < nl; j++)
                        if (ls[j].pad)
                            emit(&b, &ls[j], &x, q++);
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/node%lld-r%lld-%lld.jsonl", out, h, r, x.new_pid);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, b.s, b.n) != (ssize_t)b.n || close(fd) != 0) {
            perror(path);
            return 2;
        }
        bytes += (long long)b.n;
    }
    printf("%lld files, %lld bytes\n", procs, bytes);
    return 0;
}
