/* fuzz_html.c - libFuzzer target for what the report shows of a trace
 * (tools/out/html.c, text.c, json.c; docs/robustness.md "Output"): the input
 * is one trace file; it is read, analysed and written as the HTML page, the
 * text report and the JSON report.  Besides never crashing, it aborts when
 *   - the page has a '<' that does not open or close one of the report's own
 *     elements, an attribute not of the report's own set (on* among them),
 *     or bytes that are not UTF-8;
 *   - the text has a C0 control other than newline, DEL, a C1 control (as
 *     UTF-8) or bytes that are not UTF-8;
 *   - the JSON is not one valid UTF-8 object (json_check.h). */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "json_check.h"
#include "out/out.h"

/* the elements and attributes html.c writes */
static const char *const tags[] = {"!DOCTYPE", "html", "head", "meta", "title", "style", "body", "h1", "h2", "p",
                                   "b", "span", "small", "div", "dl", "dt", "dd", "ul", "li", "table", "tr", "th",
                                   "td", "br", "details", "summary", "svg", "polyline", "rect", "line", "path",
                                   "circle", "text", "figure", "figcaption", "code", "polygon", NULL};
static const char *const attrs[] = {"charset", "http-equiv", "content", "class", "xmlns", "width", "height",
                                    "viewBox", "points", "x", "y", "x1", "y1", "x2", "y2", "d", "cx", "cy", "r",
                                    "text-anchor", "data-bytes", NULL};

static int in(const char *const *set, const char *s, size_t n)
{
    for (; *set; set++)
        if (strlen(*set) == n && memcmp(*set, s, n) == 0)
            return 1;
    return 0;
}

static size_t name_len(const char *s, const char *end)
{
    size_t n = 0;
    while (s + n < end && (s[n] == '!' || s[n] == '-' || (s[n] >= 'a' && s[n] <= 'z') ||
                           (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9')))
        n++;
    return n;
}

/* one tag at p ('<'): ours, with our attributes, each value quoted and holding
 * no '<', '>' or '"'; returns the byte after its '>' */
static const char *our_tag(const char *p, const char *end)
{
    p++;
    if (p < end && *p == '/')
        p++;
    size_t n = name_len(p, end);
    if (!in(tags, p, n))
        abort();
    p += n;
    if (n == 8 && memcmp(p - 8, "!DOCTYPE", 8) == 0)
        p += strspn(p, " html");
    for (;;) {
        while (p < end && *p == ' ')
            p++;
        if (p < end && *p == '/')
            p++;
        if (p >= end)
            abort();
        if (*p == '>')
            return p + 1;
        n = name_len(p, end);
        if (!in(attrs, p, n) || end - p < (long)n + 2 || p[n] != '=' || p[n + 1] != '"')
            abort();
        p += n + 2;
        while (p < end && *p != '"')
            if (*p++ == '<' || p[-1] == '>')
                abort();
        if (p++ >= end)
            abort();
    }
}

static void utf8_only(const char *s, size_t n)
{
    struct jc c = {(const unsigned char *)s, (const unsigned char *)s + n, 0};
    while (c.p < c.end)
        if (*c.p < 0x80)
            c.p++;
        else if (!jc_utf8(&c))
            abort();
}

static void check_page(const char *s, size_t n)
{
    utf8_only(s, n);
    const char *end = s + n;
    for (const char *p = s; p < end;) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (!lt)
            break;
        p = our_tag(lt, end);
    }
}

static void check_text(const char *s, size_t n)
{
    utf8_only(s, n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\n') || c == 0x7f)
            abort();
        if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f)
            abort();
    }
}

static char *read_fd(int fd, size_t *n)
{
    off_t len = lseek(fd, 0, SEEK_END);
    char *b = malloc(len > 0 ? (size_t)len : 1);
    *n = len > 0 && pread(fd, b, (size_t)len, 0) == len ? (size_t)len : 0;
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1, page_fd = -1;
    static char path[64], page[64];
    if (fd < 0) {
        fd = memfd_create("x.jsonl", 0);
        page_fd = memfd_create("page.html", 0);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        snprintf(page, sizeof page, "/proc/self/fd/%d", page_fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size || ftruncate(page_fd, 0) != 0)
        return 0;
    struct trace_set s = {0};
    rules_keep_events();
    trace_set_add(&s, path);
    trace_set_link(&s);
    struct analysis *a = analyse(&s);
    size_t n;
    if (write_html(a, page) == 0) {
        char *html = read_fd(page_fd, &n);
        check_page(html, n);
        free(html);
    }
    char *text = NULL;
    FILE *o = open_memstream(&text, &n);
    print_text(a, o, true, true);
    fclose(o);
    check_text(text, n);
    free(text);
    json_t *j = analysis_json(a);
    char *js = json_dumps(j, JSON_COMPACT);
    if (!js || !json_is_one_object(js, strlen(js)))
        abort();
    free(js);
    json_decref(j);
    analysis_free(a);
    trace_set_free(&s);
    return 0;
}
