/* util.h - the lowest layer of the convguard command (tools/README.md): what
 * any part may use and that knows nothing of traces, rules or reports. */
#ifndef CONVGUARD_UTIL_H
#define CONVGUARD_UTIL_H

#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include <sys/stat.h>

/* ---- util.c: JSON accessors (every one tolerates NULL and wrong types) */
json_t *jget(json_t *obj, const char *dotted_path);
const char *jstr(json_t *obj, const char *path, const char *dflt);
long long jint(json_t *obj, const char *path, long long dflt);
double jnum(json_t *obj, const char *path, double dflt);
bool jtrue(json_t *obj, const char *path);
bool jhas(json_t *obj, const char *path); /* present and not null/false */

/* ---- util.c: names, sizes and versions as people write them */
const char *fmt_status_name(const char *fn, long long status); /* the library's own name: "CUDNN_STATUS_..." */
char *fmt_size(long long bytes, char *buf, size_t n);      /* "1.5 GiB" */
char *fmt_cudnn_ver(long long v, char *buf, size_t n);     /* 91900 -> "9.19.0" */
char *fmt_cuda_ver(long long v, char *buf, size_t n);      /* 13000 -> "13.0" */
const char *base_name(const char *path);
char *dir_name(const char *path, char *buf, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- util.c: a growing string */
struct sbuf { char *s; size_t len, cap; };
void sb_addn(struct sbuf *b, const char *s, size_t n);
void sb_add(struct sbuf *b, const char *s);
void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sb_take(struct sbuf *b); /* never NULL */

/* ---- util.c: host names in natural order ("node2" before "node10") */
int natural_cmp(const char *a, const char *b);

/* ---- files.c: only regular files opened, never blocking (a FIFO); each
 * folder or file taken once, by its (device, inode) */
const char *file_kind(mode_t mode);              /* "a FIFO (named pipe)", ... */
int open_regular(const char *path, struct stat *st); /* fd, or -1 (EINVAL: not a regular file) */
struct file_id { dev_t dev; ino_t ino; bool used; };
struct id_set { struct file_id *slot; size_t n, cap; };
bool id_set_add(struct id_set *s, dev_t dev, ino_t ino); /* false: it was there */
void id_set_free(struct id_set *s);
char *file_read_all(const char *path, size_t *len, size_t max); /* a file read whole (/proc too); NULL: errno */

/* ---- json_scan.c: is this line one JSON object (as jansson judges it), and
 * its top-level ev, seq, t, pid, truncated, workspace and mem.free/total */
struct json_scan {
    const char *ev;                  /* into the line; not NUL-terminated */
    size_t ev_len;
    bool has_ev, ev_escaped, has_seq, truncated;
    bool high_bytes;                 /* bytes >= 0x80 inside strings */
    bool escaped_key;                /* a top-level key with an escape: the picks may miss it */
    long long seq, pid, workspace, mem_free, mem_total; /* -1: absent */
    long long bytes, asked;          /* top-level integers, -1: absent */
    long long algos_ws;              /* the smallest positive `workspace` of the objects in `algos`, -1 */
    /* what a start line says of the process (model/trace_read.c take_meta), -1 / NULL: absent or
     * null; start_odd: one of them is of a type the picks do not read (a string for a number) */
    long long ppid, forked_from, rank, wall_time, wall_time_ns;
    const char *host;                /* into the line, host_len bytes, as written (host_escaped: with escapes) */
    size_t host_len;
    bool host_escaped, start_odd;
    long argv_n;                     /* elements of the top-level `argv` array, -1: none */
    double t;
    /* the line's content but for the writing process's own ids and times
     * (top-level pid, tid, t, ppid, forked_from, host, rank, wall_time,
     * wall_time_ns; a nested pid equal to the top-level one; env.RANK): two
     * lines alike but for those hash the same (model/trace_read.c, alike
     * processes) */
    unsigned long long hash[2];
};
bool json_scan_line(const char *line, size_t n, struct json_scan *out);
bool json_scan_line_hash(const char *line, size_t n, struct json_scan *out); /* and out->hash */
/* a line json_scan_line accepted, as json_loadb(JSON_REJECT_DUPLICATES) builds it (faster); NULL for
 * duplicate keys or bytes that are not UTF-8 */
json_t *json_build_line(const char *line, size_t n);

/* ---- term.c: what a trace (or /proc, or a folder) says, made safe to show
 * (docs/robustness.md "Output").  Terminals: C0 controls (newline and tab
 * too), DEL, C1 controls and bytes that are not UTF-8 shown as \n \t \r
 * \xNN \uNNNN; every text output prints values through these. */
size_t utf8_seq(const unsigned char *s, size_t n, unsigned *cp); /* 0: not valid UTF-8 there */
void sb_add_term(struct sbuf *b, const char *s, size_t n);
char *term_text(const char *s); /* an escaped copy, never NULL */
/* printf whose every %s argument is escaped (the format itself is ours: its \n are the layout) */
int term_printf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int term_vprintf(FILE *out, const char *fmt, va_list ap);
/* the columns to fill: $COLUMNS, else the terminal's, else 80 (at least 40) */
int term_width(FILE *out);
void term_wrap(FILE *out, int width, const char *head, const char *text, int indent);
void term_wrapf(FILE *out, int indent, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* a path for display: "//" and "/./" dropped, "x/.." taken back by name */
char *path_tidy(const char *p);
/* a JSON string of s; bytes that are not UTF-8 become U+FFFD (json_string would give NULL) */
json_t *json_text(const char *s);

#endif
