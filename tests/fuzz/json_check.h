/* json_check.h - a strict JSON validator for the fuzz targets: one value,
 * RFC 8259 grammar, strings valid UTF-8 (no surrogates, no overlongs), no
 * raw control characters.  Returns 1 when [s, s+n) is exactly one object. */
#ifndef CG_JSON_CHECK_H
#define CG_JSON_CHECK_H
#include <stddef.h>

struct jc {
    const unsigned char *p, *end;
    int depth;
};

static int jc_value(struct jc *c);

static void jc_ws(struct jc *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int jc_lit(struct jc *c, const char *w)
{
    for (; *w; w++, c->p++)
        if (c->p >= c->end || *c->p != (unsigned char)*w)
            return 0;
    return 1;
}

static int jc_utf8(struct jc *c)
{
    unsigned b = *c->p, cp, len;
    if (b < 0xc2 || b > 0xf4)
        return 0;
    len = b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    cp = b & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
    if (c->end - c->p < (long)len)
        return 0;
    for (unsigned k = 1; k < len; k++) {
        if ((c->p[k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (c->p[k] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    c->p += len;
    return 1;
}

static int jc_string(struct jc *c)
{
    if (c->p >= c->end || *c->p != '"')
        return 0;
    c->p++;
    while (c->p < c->end) {
        unsigned ch = *c->p;
        if (ch == '"') {
            c->p++;
            return 1;
        }
        if (ch < 0x20)
            return 0;
        if (ch == '\\') {
            c->p++;
            if (c->p >= c->end)
                return 0;
            ch = *c->p++;
            if (ch == 'u') {
                for (int k = 0; k < 4; k++, c->p++)
                    if (c->p >= c->end || !((*c->p >= '0' && *c->p <= '9') || (*c->p >= 'a' && *c->p <= 'f') ||
                                            (*c->p >= 'A' && *c->p <= 'F')))
                        return 0;
            } else if (!(ch == '"' || ch == '\\' || ch == '/' || ch == 'b' || ch == 'f' || ch == 'n' || ch == 'r' ||
                         ch == 't')) {
                return 0;
            }
        } else if (ch >= 0x80) {
            if (!jc_utf8(c))
                return 0;
        } else {
            c->p++;
        }
    }
    return 0;
}

static int jc_number(struct jc *c)
{
    const unsigned char *s = c->p;
    if (c->p < c->end && *c->p == '-')
        c->p++;
    if (c->p >= c->end)
        return 0;
    if (*c->p == '0')
        c->p++;
    else if (*c->p >= '1' && *c->p <= '9')
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
            c->p++;
    else
        return 0;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
            c->p++;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
            c->p++;
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
            c->p++;
    }
    return c->p > s;
}

static int jc_container(struct jc *c, unsigned char open, unsigned char close)
{
    if (++c->depth > 512)
        return 0;
    c->p++; /* open */
    (void)open;
    jc_ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        c->depth--;
        return 1;
    }
    for (;;) {
        jc_ws(c);
        if (close == '}') {
            if (!jc_string(c))
                return 0;
            jc_ws(c);
            if (c->p >= c->end || *c->p++ != ':')
                return 0;
            jc_ws(c);
        }
        if (!jc_value(c))
            return 0;
        jc_ws(c);
        if (c->p >= c->end)
            return 0;
        if (*c->p == ',') {
            c->p++;
            continue;
        }
        if (*c->p == close) {
            c->p++;
            c->depth--;
            return 1;
        }
        return 0;
    }
}

static int jc_value(struct jc *c)
{
    if (c->p >= c->end)
        return 0;
    switch (*c->p) {
    case '{': return jc_container(c, '{', '}');
    case '[': return jc_container(c, '[', ']');
    case '"': return jc_string(c);
    case 't': return jc_lit(c, "true");
    case 'f': return jc_lit(c, "false");
    case 'n': return jc_lit(c, "null");
    default: return jc_number(c);
    }
}

static int json_is_one_object(const char *s, size_t n)
{
    struct jc c = {(const unsigned char *)s, (const unsigned char *)s + n, 0};
    if (n == 0 || s[0] != '{' || !jc_value(&c))
        return 0;
    return c.p == c.end;
}
#endif
