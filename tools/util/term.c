/* term.c - strings from traces, /proc and directory listings made safe to
 * show (docs/robustness.md, "Output").  A trace is written by the traced
 * program, or planted by whoever can write its folder: its strings must not
 * reach a terminal as control sequences (clear the screen, retitle the
 * window, forge a line) nor JSON as bytes that are not UTF-8.
 *
 * On a terminal every C0 control (newline and tab included: inside a value a
 * newline would forge a line), DEL, every C1 control (U+0080..U+009F, which
 * terminals read as CSI, OSC, ... when written as UTF-8 and as single bytes)
 * and every byte that is not part of valid UTF-8 is shown escaped: \n \t \r,
 * \xNN, \uNNNN.  Everything else, other scripts included, is shown as is. */
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <stdio.h>

#include "util/util.h"

/* The length of the valid UTF-8 sequence at s (at most n bytes) and its code
 * point, or 0: a stray continuation byte, an overlong form, a surrogate,
 * past U+10FFFF, cut short.  The same judgement as jansson's and the
 * trace reader's (model/trace_read.c fix_utf8). */
size_t utf8_seq(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0];
    size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : (c & 0xf0) == 0xe0 ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    unsigned v = len == 1 ? c : c & (0x7fu >> len);
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[k] & 0x3fu);
    }
    if ((len == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (len == 4 && (v < 0x10000 || v > 0x10ffff)))
        return 0;
    *cp = v;
    return len;
}

/* how the character at s shows on a terminal: NULL when as it is */
static const char *term_code(const unsigned char *s, size_t n, size_t *len, char *buf, size_t cap)
{
    unsigned cp = 0;
    *len = utf8_seq(s, n, &cp);
    if (*len == 0) {
        *len = 1;
        snprintf(buf, cap, "\\x%02x", s[0]);
    } else if (cp == '\n' || cp == '\t' || cp == '\r') {
        snprintf(buf, cap, "\\%c", cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r');
    } else if (cp < 0x20 || cp == 0x7f) {
        snprintf(buf, cap, "\\x%02x", cp);
    } else if (cp >= 0x80 && cp <= 0x9f) {
        snprintf(buf, cap, "\\u%04x", cp);
    } else {
        return NULL;
    }
    return buf;
}

void sb_add_term(struct sbuf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0;
    while (i < n) {
        char buf[8];
        size_t len;
        const char *code = term_code(u + i, n - i, &len, buf, sizeof buf);
        if (code) {
            sb_addn(b, s + run, i - run);
            sb_add(b, code);
            run = i + len;
        }
        i += len;
    }
    sb_addn(b, s + run, n - run);
}

char *term_text(const char *s)
{
    struct sbuf b = {0};
    sb_add_term(&b, s ? s : "", s ? strlen(s) : 0);
    return sb_take(&b);
}

/* One conversion of a printf format (fmt just past its '%'): copied into
 * spec with '*' widths and precisions resolved; returns the conversion
 * character, *len its length modifier.  A precision on %s is left out of
 * spec and returned in *prec (it counts bytes of the value, before escaping). */
static char parse_spec(const char **fmt, va_list *ap, char *spec, size_t cap, char *len, int *prec)
{
    const char *f = *fmt;
    size_t k = 0;
    spec[k++] = '%';
    while (*f && strchr("-+ #0", *f) && k < cap - 24)
        spec[k++] = *f++;
    if (*f == '*')
        k += (size_t)snprintf(spec + k, cap - k, "%d", va_arg(*ap, int)), f++;
    while (isdigit((unsigned char)*f) && k < cap - 24)
        spec[k++] = *f++;
    *prec = -1;
    if (*f == '.') {
        f++;
        if (*f == '*')
            *prec = va_arg(*ap, int), f++;
        else
            for (*prec = 0; isdigit((unsigned char)*f); f++)
                *prec = *prec * 10 + (*f - '0');
    }
    size_t m = 0;
    while (*f && strchr("hlzjtL", *f) && m < 2)
        len[m++] = *f++;
    len[m] = 0;
    char conv = *f ? *f++ : '%';
    if (*prec >= 0 && conv != 's')
        k += (size_t)snprintf(spec + k, cap - k, ".%d", *prec);
    snprintf(spec + k, cap - k, "%s%c", len, conv);
    *fmt = f;
    return conv;
}

/* the argument of one conversion, printed by spec; %s escaped */
static int put_arg(FILE *out, const char *spec, char conv, const char *len, int prec, va_list *ap)
{
    bool sgn = conv == 'd' || conv == 'i';
#define PUT(T) fprintf(out, spec, va_arg(*ap, T))
    switch (conv) {
    case 's': {
        const char *s = va_arg(*ap, const char *);
        struct sbuf b = {0};
        sb_add_term(&b, s ? s : "(null)", s ? (prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s)) : 6);
        int n = fprintf(out, spec, b.s ? b.s : "");
        free(b.s);
        return n;
    }
    case '%': return fputc('%', out) == EOF ? -1 : 1;
    case 'c': return PUT(int);
    case 'p': return PUT(void *);
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
        return *len == 'L' ? PUT(long double) : PUT(double);
    }
    if (!strchr("diuxXo", conv))
        abort(); /* %n and unknown conversions: never in a format of ours */
    if (!strcmp(len, "ll"))
        return sgn ? PUT(long long) : PUT(unsigned long long);
    if (!strcmp(len, "l"))
        return sgn ? PUT(long) : PUT(unsigned long);
    if (!strcmp(len, "z"))
        return PUT(size_t);
    if (!strcmp(len, "j"))
        return sgn ? PUT(intmax_t) : PUT(uintmax_t);
    if (!strcmp(len, "t"))
        return PUT(ptrdiff_t);
    return sgn ? PUT(int) : PUT(unsigned);
#undef PUT
}

int term_vprintf(FILE *out, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int total = 0;
    while (*fmt) {
        size_t lit = strcspn(fmt, "%");
        total += (int)fwrite(fmt, 1, lit, out);
        fmt += lit;
        if (!*fmt)
            break;
        fmt++;
        char spec[64], len[3];
        int prec;
        char conv = parse_spec(&fmt, &aq, spec, sizeof spec, len, &prec);
        int n = put_arg(out, spec, conv, len, prec, &aq);
        total += n > 0 ? n : 0;
    }
    va_end(aq);
    return total;
}

int term_printf(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = term_vprintf(out, fmt, ap);
    va_end(ap);
    return n;
}

/* ---- JSON: jansson takes only valid UTF-8 (json_string gives NULL for
 * anything else, and a NULL member drops its whole object); names from a
 * directory listing, /proc or a command line need not be */
json_t *json_text(const char *s)
{
    json_t *j = json_string(s ? s : "");
    if (j)
        return j;
    struct sbuf b = {0};
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t len = utf8_seq(u + i, n - i, &cp);
        if (len)
            sb_addn(&b, s + i, len);
        else
            sb_add(&b, "\xef\xbf\xbd"); /* U+FFFD */
        i += len ? len : 1;
    }
    j = json_string(b.s ? b.s : "");
    free(b.s);
    return j;
}

/* ---- width: as git's term_columns: $COLUMNS, else the terminal's
 * (TIOCGWINSZ on the stream written), else 80; never under 40 (a hanging
 * indent needs room) */
int term_width(FILE *out)
{
    const char *c = getenv("COLUMNS");
    char *end;
    long v = c && *c ? strtol(c, &end, 10) : 0;
    if (c && *c && !*end && v > 0)
        return v < 40 ? 40 : v > 1000 ? 1000 : (int)v;
    struct winsize ws;
    if (out && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col < 40 ? 40 : ws.ws_col;
    return 80;
}

/* `head` then `text` (escaped), wrapped at `width` at spaces, later lines
 * indented by `indent`; a word longer than a line stays whole */
void term_wrap(FILE *out, int width, const char *head, const char *text, int indent)
{
    char *safe = term_text(text);
    int col = fprintf(out, "%s", head);
    for (const char *q = safe; *q;) {
        size_t gap = strspn(q, " "); /* the spaces as written (alignment), unless the line breaks there */
        size_t w = strcspn(q + gap, " ");
        if (!w)
            break;
        if (col > indent && col + (int)gap + (int)w > width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else {
            col += fprintf(out, "%.*s", (int)gap, q);
        }
        col += fprintf(out, "%.*s", (int)w, q + gap);
        q += gap + w;
    }
    fputc('\n', out);
    free(safe);
}

/* one line made of fmt (no newline in it), wrapped at the terminal's width,
 * continued under `indent` spaces */
void term_wrapf(FILE *out, int indent, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    int lead = (int)strspn(s, " ");
    char head[64];
    snprintf(head, sizeof head, "%.*s", lead < 63 ? lead : 63, s);
    term_wrap(out, term_width(out), head, s + lead, indent);
    free(s);
}

/* a path as it is meant, for display: "dir//file" -> "dir/file", "/./"
 * dropped, "a/b/../c" -> "a/c" (by name: the trace may come from another
 * machine, whose links are not ours); a URL ("x://") left alone */
char *path_tidy(const char *p)
{
    if (strstr(p, "://"))
        return xstrdup(p);
    size_t n = strlen(p), len = 0, depth = 0; /* depth: names kept that a ".." may take back */
    char *out = malloc(n + 2);
    if (!out)
        exit(2);
    bool abs = p[0] == '/';
    if (abs)
        out[len++] = '/';
    for (const char *q = p; *q;) {
        while (*q == '/')
            q++;
        size_t w = strcspn(q, "/");
        if (!w)
            break;
        bool dot = w == 1 && q[0] == '.', dotdot = w == 2 && q[0] == '.' && q[1] == '.';
        if (dotdot && depth) { /* back over the last name and its '/' */
            while (len > (abs ? 1u : 0u) && out[len - 1] == '/')
                len--;
            while (len > (abs ? 1u : 0u) && out[len - 1] != '/')
                len--;
            depth--;
        } else if (!(dot && (len || q[w]))) { /* "./x" -> "x", a lone "." stays */
            if (len && out[len - 1] != '/')
                out[len++] = '/';
            memcpy(out + len, q, w);
            len += w;
            depth += !dotdot && !(abs && dotdot);
            if (abs && dotdot) /* "/.." is "/" */
                len -= 2;
        }
        q += w;
    }
    while (len > (abs ? 1u : 0u) && out[len - 1] == '/')
        len--;
    if (!len)
        out[len++] = '.';
    out[len] = 0;
    return out;
}
