/* json_scan.c - checks that a line is one JSON object, the way jansson's
 * json_loadb would judge it, and picks out the few fields the reader needs of
 * every event (ev, seq, t, pid, truncated, mem.free, workspace) without
 * building anything.  Most lines of a long trace are events no rule looks at
 * (graph_plan, successful loads); for them this is the whole cost of reading,
 * about ten times less than building the jansson object and freeing it.
 *
 * Judged as jansson does (RFC 8259, no extensions): strings without control
 * characters, escapes \" \\ \/ \b \f \n \r \t \uXXXX (no \u0000, surrogates
 * only in pairs), numbers -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? with
 * integers that fit in 64 bits and reals that do not overflow, nesting up to
 * jansson's 2048 levels, nothing but white space after the object.  Not
 * checked here: duplicate keys (jansson with JSON_REJECT_DUPLICATES refuses
 * them; the reader parses with jansson every line it keeps).  Bytes >= 0x80
 * are accepted inside strings and reported, so that the caller can repair
 * what is not UTF-8 the way it always did. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define MAX_DEPTH 2048

struct sc {
    const unsigned char *p, *e;
    struct json_scan *out;
    int skip;           /* > 0: inside a value the hash leaves out */
    unsigned long long h[2];
};

/* ---- the content hash (struct json_scan `hash`) */
static void mix(struct sc *c, unsigned long long x)
{
    c->h[0] = (c->h[0] ^ x) * 0x100000001b3ull;
    c->h[0] ^= c->h[0] >> 32;
    c->h[1] = (c->h[1] + x + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    c->h[1] ^= c->h[1] >> 29;
}

static void mix_text(struct sc *c, unsigned tag, const unsigned char *s, size_t n)
{
    if (c->skip)
        return;
    unsigned long long w;
    size_t i = 0;
    mix(c, tag);
    for (; i + 8 <= n; i += 8)
        memcpy(&w, s + i, 8), mix(c, w);
    w = 0;
    memcpy(&w, s + i, n - i);
    mix(c, w ^ (unsigned long long)n << 56);
}

static void mix_mark(struct sc *c, unsigned tag)
{
    if (!c->skip)
        mix(c, tag);
}

/* a top-level key whose value is the process's own, not what it did */
static bool own_key(const char *k, size_t n)
{
    static const char *const own[] = {"pid", "tid", "t", "ppid", "forked_from", "host", "rank", "wall_time",
                                      "wall_time_ns"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strlen(own[i]) == n && memcmp(own[i], k, n) == 0)
            return true;
    return false;
}

/* 1: a byte that ends the fast run inside a string */
static unsigned char stop[256];

static void init_stop(void)
{
    for (int c = 0; c < 256; c++)
        stop[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
}

static void ws(struct sc *c)
{
    while (c->p < c->e && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool hex4(const unsigned char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned d = p[i];
        if (d >= '0' && d <= '9')
            d -= '0';
        else if ((d | 0x20) >= 'a' && (d | 0x20) <= 'f')
            d = (d | 0x20) - 'a' + 10;
        else
            return false;
        *v = *v << 4 | d;
    }
    return true;
}

/* At '"': the string's raw bytes (between the quotes) and whether it had an escape. */
static bool string(struct sc *c, const char **s, size_t *len, bool *esc)
{
    const unsigned char *p = c->p + 1, *e = c->e;
    *esc = false;
    for (;;) {
        while (p < e && !stop[*p])
            p++;
        if (p >= e)
            return false;
        unsigned ch = *p;
        if (ch == '"')
            break;
        if (ch < 0x20)
            return false;
        if (ch >= 0x80) {
            c->out->high_bytes = true;
            p++;
            continue;
        }
        *esc = true; /* a backslash */
        if (++p >= e)
            return false;
        switch (*p) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            p++;
            break;
        case 'u': {
            unsigned v, w;
            if (e - p < 5 || !hex4(p + 1, &v) || v == 0)
                return false;
            p += 5;
            if (v >= 0xd800 && v <= 0xdbff) {
                if (e - p < 6 || p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, &w) || w < 0xdc00 || w > 0xdfff)
                    return false;
                p += 6;
            } else if (v >= 0xdc00 && v <= 0xdfff) {
                return false;
            }
            break;
        }
        default:
            return false;
        }
    }
    *s = (const char *)c->p + 1;
    *len = (size_t)(p - (c->p + 1));
    c->p = p + 1;
    return true;
}

static bool digits(struct sc *c)
{
    const unsigned char *p0 = c->p;
    while (c->p < c->e && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > p0;
}

/* The value of an integer's text [p0, end): up to 18 digits always fit;
 * longer ones as jansson sees them (strtoll).  false: out of range. */
static bool integer_of(const unsigned char *p0, const unsigned char *end, long long *iv)
{
    size_t n = (size_t)(end - p0);
    if (n < 18) {
        long long x = 0;
        for (const unsigned char *q = p0 + (*p0 == '-'); q < end; q++)
            x = x * 10 + (*q - '0');
        *iv = *p0 == '-' ? -x : x;
        return true;
    }
    char buf[32];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, p0, n);
    buf[n] = 0;
    errno = 0;
    *iv = strtoll(buf, NULL, 10);
    return errno != ERANGE;
}

/* A number; *v its value as a double, *is_int whether it has no fraction or exponent. */
static bool number(struct sc *c, double *v, long long *iv, bool *is_int)
{
    const unsigned char *p0 = c->p;
    bool exp = false;
    *is_int = true;
    if (c->p < c->e && *c->p == '-')
        c->p++;
    if (c->p < c->e && *c->p == '0')
        c->p++;
    else if (!digits(c))
        return false;
    if (c->p < c->e && *c->p == '.') {
        c->p++;
        *is_int = false;
        if (!digits(c))
            return false;
    }
    if (c->p < c->e && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        *is_int = false;
        exp = true;
        if (c->p < c->e && (*c->p == '+' || *c->p == '-'))
            c->p++;
        if (!digits(c))
            return false;
    }
    size_t n = (size_t)(c->p - p0);
    if (*is_int) {
        if (!integer_of(p0, c->p, iv))
            return false;
        *v = (double)*iv;
        return true;
    }
    if (!exp && n < 300) { /* no overflow possible: the value only when asked for */
        *v = NAN;
        return true;
    }
    char small[400], *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf)
        return false;
    memcpy(buf, p0, n);
    buf[n] = 0;
    *v = strtod(buf, NULL);
    if (buf != small)
        free(buf);
    return !isinf(*v);
}

static double real_of(const unsigned char *p0, const unsigned char *end, double v)
{
    if (!isnan(v))
        return v;
    char buf[400];
    size_t n = (size_t)(end - p0);
    if (n >= sizeof buf)
        return 0;
    memcpy(buf, p0, n);
    buf[n] = 0;
    return strtod(buf, NULL);
}

static bool literal(struct sc *c, const char *word, size_t n)
{
    if ((size_t)(c->e - c->p) < n || memcmp(c->p, word, n) != 0)
        return false;
    c->p += n;
    return true;
}

static bool key_is(const char *k, size_t n, const char *want) { return strlen(want) == n && memcmp(k, want, n) == 0; }

enum where { NOWHERE, TOP, MEM, ENV, ALGOS, ALGO, ARGV };

/* the start line's numbers: which field of out a top-level key fills */
static long long *start_field(struct json_scan *o, const char *k, size_t n)
{
    return key_is(k, n, "ppid")          ? &o->ppid
           : key_is(k, n, "forked_from")  ? &o->forked_from
           : key_is(k, n, "rank")         ? &o->rank
           : key_is(k, n, "wall_time")    ? &o->wall_time
           : key_is(k, n, "wall_time_ns") ? &o->wall_time_ns
                                          : NULL;
}
static bool value(struct sc *c, int depth, enum where w, const char *key, size_t klen);


static bool object(struct sc *c, int depth, enum where w)
{
    if (depth > MAX_DEPTH)
        return false;
    c->p++; /* '{' */
    mix_mark(c, '{');
    ws(c);
    if (c->p < c->e && *c->p == '}') {
        c->p++;
        mix_mark(c, '}');
        return true;
    }
    for (;;) {
        const char *k;
        size_t kl;
        bool esc;
        if (c->p >= c->e || *c->p != '"' || !string(c, &k, &kl, &esc))
            return false;
        if (esc && w == TOP)
            c->out->escaped_key = true;
        ws(c);
        if (c->p >= c->e || *c->p != ':')
            return false;
        c->p++;
        ws(c);
        /* the hash leaves out the process's own ids and times; a nested pid
         * only when it is the process's own (a holder of GPU memory that is itself) */
        bool own = (w == TOP && own_key(k, kl)) || (w == ENV && key_is(k, kl, "RANK"));
        bool nested_pid = !own && w != TOP && key_is(k, kl, "pid") && c->out->pid >= 0 && c->p < c->e &&
                          (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'));
        const unsigned char *v0 = c->p;
        c->skip += own || nested_pid;
        if (!own && !nested_pid)
            mix_text(c, 'k', (const unsigned char *)k, kl);
        if (!value(c, depth, esc ? NOWHERE : w, k, kl))
            return false;
        c->skip -= own || nested_pid;
        if (nested_pid) {
            long long v;
            if (!integer_of(v0, c->p, &v) || v != c->out->pid || memchr(v0, '.', (size_t)(c->p - v0)) ||
                memchr(v0, 'e', (size_t)(c->p - v0)) || memchr(v0, 'E', (size_t)(c->p - v0))) {
                mix_text(c, 'k', (const unsigned char *)k, kl);
                mix_text(c, 'n', v0, (size_t)(c->p - v0));
            }
        }
        ws(c);
        if (c->p < c->e && *c->p == ',') {
            c->p++;
            ws(c);
            continue;
        }
        if (c->p < c->e && *c->p == '}') {
            c->p++;
            mix_mark(c, '}');
            return true;
        }
        return false;
    }
}

static bool array(struct sc *c, int depth, enum where w)
{
    if (depth > MAX_DEPTH)
        return false;
    c->p++; /* '[' */
    mix_mark(c, '[');
    ws(c);
    if (c->p < c->e && *c->p == ']') {
        c->p++;
        mix_mark(c, ']');
        return true;
    }
    for (;;) {
        if (w == ARGV)
            c->out->argv_n++;
        if (!value(c, depth, w == ALGOS ? ALGOS : NOWHERE, NULL, 0))
            return false;
        ws(c);
        if (c->p < c->e && *c->p == ',') {
            c->p++;
            ws(c);
            continue;
        }
        if (c->p < c->e && *c->p == ']') {
            c->p++;
            mix_mark(c, ']');
            return true;
        }
        return false;
    }
}

/* A value; `w` and `key` say where it sits, so the wanted fields are kept. */
/* a start line's field of a type take_meta reads in its own way (jint parses a
 * number written as a string): the glance leaves that line to jansson */
static void odd_type(struct json_scan *o, const char *key, size_t klen, unsigned char ch)
{
    bool number = ch == '-' || (ch >= '0' && ch <= '9');
    if ((start_field(o, key, klen) && !number && ch != 'n') || (key_is(key, klen, "host") && ch != '"' && ch != 'n'))
        o->start_odd = true;
}

/* the picks among numbers: [p0, end) at `key` of `w` */
static void pick_number(struct json_scan *o, enum where w, const char *key, size_t klen, const unsigned char *p0,
                        const unsigned char *end, double v, long long iv, bool is_int)
{
    long long n = is_int ? iv : (long long)real_of(p0, end, v);
    if (w == ALGO && key_is(key, klen, "workspace") && n > 0 && (o->algos_ws < 0 || n < o->algos_ws))
        o->algos_ws = n;
    if (w == MEM) {
        if (key_is(key, klen, "free"))
            o->mem_free = n;
        else if (key_is(key, klen, "total"))
            o->mem_total = n;
    }
    if (w != TOP)
        return;
    long long *sf = start_field(o, key, klen);
    if (sf)
        *sf = n;
    else if (key_is(key, klen, "bytes"))
        o->bytes = n;
    else if (key_is(key, klen, "asked"))
        o->asked = n;
    else if (key_is(key, klen, "seq"))
        o->seq = n, o->has_seq = true;
    else if (key_is(key, klen, "t"))
        o->t = is_int ? (double)iv : real_of(p0, end, v);
    else if (key_is(key, klen, "pid"))
        o->pid = n;
    else if (key_is(key, klen, "workspace"))
        o->workspace = n;
}

/* A value; `w` and `key` say where it sits, so the wanted fields are kept. */
static bool value(struct sc *c, int depth, enum where w, const char *key, size_t klen)
{
    struct json_scan *o = c->out;
    if (c->p >= c->e)
        return false;
    if (w == TOP)
        odd_type(o, key, klen, *c->p);
    switch (*c->p) {
    case '{': {
        enum where in = w == TOP && key_is(key, klen, "mem")   ? MEM
                        : w == TOP && key_is(key, klen, "env") ? ENV
                        : w == ALGOS && !key                   ? ALGO
                                                               : NOWHERE;
        return object(c, depth + 1, in);
    }
    case '[':
        if (w == TOP && key_is(key, klen, "argv"))
            o->argv_n = 0;
        return array(c, depth + 1,
                     w == TOP && key_is(key, klen, "algos")  ? ALGOS
                     : w == TOP && key_is(key, klen, "argv") ? ARGV
                                                             : NOWHERE);
    case '"': {
        const char *s;
        size_t n;
        bool esc;
        const unsigned char *p0 = c->p;
        if (!string(c, &s, &n, &esc))
            return false;
        mix_text(c, 's', p0, (size_t)(c->p - p0));
        if (w == TOP && key_is(key, klen, "host"))
            o->host = s, o->host_len = n, o->host_escaped = esc;
        if (w == TOP && key_is(key, klen, "ev"))
            o->ev = s, o->ev_len = n, o->ev_escaped = esc, o->has_ev = true;
        return true;
    }
    case 't':
        mix_mark(c, 'T');
        if (w == TOP && key_is(key, klen, "truncated"))
            o->truncated = true;
        return literal(c, "true", 4);
    case 'f':
        mix_mark(c, 'F');
        return literal(c, "false", 5);
    case 'n':
        mix_mark(c, 'N');
        return literal(c, "null", 4);
    default: {
        const unsigned char *p0 = c->p;
        double v;
        long long iv = 0;
        bool is_int;
        if (!number(c, &v, &iv, &is_int))
            return false;
        mix_text(c, 'n', p0, (size_t)(c->p - p0));
        pick_number(o, w, key, klen, p0, c->p, v, iv, is_int);
        return true;
    }
    }
}

static bool scan_line(const char *line, size_t n, struct json_scan *out, bool hash)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_stop);
    memset(out, 0, sizeof *out);
    out->seq = out->pid = out->mem_free = out->mem_total = out->workspace = out->bytes = out->asked = -1;
    out->algos_ws = out->ppid = out->forked_from = out->rank = out->wall_time = out->wall_time_ns = -1;
    out->argv_n = -1;
    struct sc c = {(const unsigned char *)line, (const unsigned char *)line + n, out, hash ? 0 : 1,
                   {0x84222325cbf29ce4ull, 0x2545f4914f6cdd1dull}};
    ws(&c);
    bool ok = c.p < c.e && *c.p == '{' && object(&c, 1, TOP);
    out->hash[0] = c.h[0], out->hash[1] = c.h[1];
    if (!ok)
        return false;
    ws(&c);
    return c.p == c.e;
}

bool json_scan_line(const char *line, size_t n, struct json_scan *out) { return scan_line(line, n, out, false); }
bool json_scan_line_hash(const char *line, size_t n, struct json_scan *out) { return scan_line(line, n, out, true); }

/* ---- a line the scan accepted, built as jansson values
 *
 * What json_loadb(line, n, JSON_REJECT_DUPLICATES) gives, without its
 * lexer: the scan has judged the line already (JSON, depth, numbers in
 * range, escapes, no \u0000), so this only builds.  NULL for duplicate keys
 * (the scan lets them pass), for bytes that are not UTF-8 (the caller
 * repairs them first), and when out of memory. */
struct bd { const unsigned char *p, *e; char *tmp; size_t cap; };

static json_t *build_value(struct bd *b);

/* jansson takes only UTF-8: the reader repairs a line before (fix_utf8), so this only guards */
static bool utf8_seq_ok(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t l = u[i] < 0x80 ? 1 : utf8_seq(u + i, n - i, &cp);
        if (!l)
            return false;
        i += l;
    }
    return true;
}

static void bd_ws(struct bd *b)
{
    while (b->p < b->e && (*b->p == ' ' || *b->p == '\t' || *b->p == '\n' || *b->p == '\r'))
        b->p++;
}

static bool bd_room(struct bd *b, size_t n)
{
    if (n <= b->cap)
        return true;
    size_t c = b->cap ? b->cap : 256;
    while (c < n)
        c *= 2;
    char *t = realloc(b->tmp, c);
    if (!t)
        return false;
    b->tmp = t, b->cap = c;
    return true;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80)
        return o[0] = (char)cp, 1;
    if (cp < 0x800)
        return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3f)), 2;
    if (cp < 0x10000)
        return o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 0x3f)), o[2] = (char)(0x80 | (cp & 0x3f)), 3;
    o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f)), o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* at '"': the string's text, unescaped (*s into the line or b->tmp), *n its length */
static bool bd_string(struct bd *b, const char **s, size_t *n)
{
    const unsigned char *p = b->p + 1, *q = p;
    while (q < b->e && *q != '"' && *q != '\\')
        q++;
    if (q < b->e && *q == '"') { /* no escape: the bytes as they are */
        *s = (const char *)p, *n = (size_t)(q - p);
        b->p = q + 1;
        return true;
    }
    if (!bd_room(b, (size_t)(b->e - p) + 1))
        return false;
    char *o = b->tmp;
    while (p < b->e && *p != '"') {
        if (*p != '\\') {
            *o++ = (char)*p++;
            continue;
        }
        p++;
        switch (*p++) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned v, w;
            hex4(p, &v);
            p += 4;
            if (v >= 0xd800 && v <= 0xdbff) { /* the scan saw its pair */
                hex4(p + 2, &w);
                p += 6;
                v = 0x10000 + ((v - 0xd800) << 10) + (w - 0xdc00);
            }
            o += put_utf8(o, v);
            break;
        }
        default: *o++ = (char)p[-1]; /* " \ / */
        }
    }
    *s = b->tmp, *n = (size_t)(o - b->tmp);
    b->p = p + 1;
    return true;
}

static json_t *bd_number(struct bd *b)
{
    const unsigned char *p0 = b->p;
    bool real = false;
    while (b->p < b->e && ((*b->p >= '0' && *b->p <= '9') || *b->p == '-' || *b->p == '+' || *b->p == '.' ||
                           *b->p == 'e' || *b->p == 'E')) {
        real |= *b->p == '.' || *b->p == 'e' || *b->p == 'E';
        b->p++;
    }
    if (!real) {
        long long v;
        return integer_of(p0, b->p, &v) ? json_integer(v) : NULL;
    }
    char small[64], *buf = (size_t)(b->p - p0) < sizeof small ? small : malloc((size_t)(b->p - p0) + 1);
    if (!buf)
        return NULL;
    memcpy(buf, p0, (size_t)(b->p - p0));
    buf[b->p - p0] = 0;
    json_t *r = json_real(strtod(buf, NULL));
    if (buf != small)
        free(buf);
    return r;
}

static json_t *build_object(struct bd *b)
{
    json_t *o = json_object();
    b->p++;
    bd_ws(b);
    if (*b->p == '}') {
        b->p++;
        return o;
    }
    for (;;) {
        const char *k;
        size_t kl;
        if (!o || !bd_string(b, &k, &kl))
            return json_decref(o), NULL;
        char kbuf[128], *key = kl < sizeof kbuf ? kbuf : malloc(kl + 1);
        if (!key)
            return json_decref(o), NULL;
        memcpy(key, k, kl); /* b->tmp is used again by the value */
        key[kl] = 0;
        bd_ws(b);
        b->p++; /* ':' */
        bd_ws(b);
        json_t *v = NULL;
        bool ok = !json_object_getn(o, key, kl) && utf8_seq_ok(key, kl) && (v = build_value(b)) &&
                  json_object_setn_new_nocheck(o, key, kl, v) == 0;
        if (key != kbuf)
            free(key);
        if (!ok)
            return json_decref(o), NULL;
        bd_ws(b);
        if (*b->p++ == '}')
            return o;
        bd_ws(b); /* after ',' */
    }
}

static json_t *build_array(struct bd *b)
{
    json_t *a = json_array();
    b->p++;
    bd_ws(b);
    if (*b->p == ']') {
        b->p++;
        return a;
    }
    for (;;) {
        json_t *v = a ? build_value(b) : NULL;
        if (!v || json_array_append_new(a, v) != 0)
            return json_decref(a), NULL;
        bd_ws(b);
        if (*b->p++ == ']')
            return a;
        bd_ws(b);
    }
}

static json_t *build_value(struct bd *b)
{
    switch (*b->p) {
    case '{': return build_object(b);
    case '[': return build_array(b);
    case '"': {
        const char *s;
        size_t n;
        if (!bd_string(b, &s, &n) || !utf8_seq_ok(s, n))
            return NULL;
        return json_stringn_nocheck(s, n);
    }
    case 't': b->p += 4; return json_true();
    case 'f': b->p += 5; return json_false();
    case 'n': b->p += 4; return json_null();
    default: return bd_number(b);
    }
}

json_t *json_build_line(const char *line, size_t n)
{
    struct bd b = {(const unsigned char *)line, (const unsigned char *)line + n, NULL, 0};
    bd_ws(&b);
    json_t *v = b.p < b.e && *b.p == '{' ? build_object(&b) : NULL;
    free(b.tmp);
    return v;
}
