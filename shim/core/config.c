/* config.c - CONVGUARD_* settings, read once at load through one table.
 *
 * Bad values never stop the program: each gets one warning on stderr and the
 * default.  Values are read from `environ` directly (as mimalloc does) so this
 * works even when called before libc has finished starting up.
 *
 * One warning per run, not per process: a process whose parent was started
 * with the shim and the same NAME=value (a Pool worker, a torchrun worker, a
 * shell's command) leaves the warning to that parent, which had it at its own
 * start.  Only a process with a warning to give looks: one read of
 * /proc/<ppid>/environ (never of maps: a framework's parent maps thousands of
 * files), and the environment the program sees is left as it is. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

extern char **environ;

struct cg_config cg_cfg = {
    .dir = "./convguard-logs",
    .workspace_limit_mb = -1,
    .max_mb = 256,
    .crash = true,
    .repeats = 8,
};

const char *cg_getenv(const char *name)
{
    size_t n = strlen(name);
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* Parses a whole non-negative decimal within [0, max]; false on anything else. */
static bool parse_mb(const char *s, long long max, long long *out)
{
    if (!s || !*s)
        return false;
    long long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
        if (v > max)
            return false;
    }
    *out = v;
    return true;
}

/* The parent's environment (as it was at its exec) holds `entry` and a
 * LD_PRELOAD naming the shim: it read the same setting and warned. */
static bool parent_warned(const char *entry)
{
    char path[48], buf[4096], cur[4096];
    size_t n = cg_strlcpy(path, "/proc/", sizeof path);
    n = cg_append_u(path, sizeof path, n, (unsigned long long)getppid());
    cg_append(path, sizeof path, n, "/environ");
    int saved = errno, fd = open(path, O_RDONLY | O_CLOEXEC);
    bool same = false, shim = false;
    size_t len = 0;
    ssize_t r;
    while (fd >= 0 && (r = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] && len < sizeof cur - 1) {
                cur[len++] = buf[i];
                continue;
            }
            if (buf[i])
                continue; /* longer than cur: its head is what is compared */
            cur[len] = 0;
            same |= strcmp(cur, entry) == 0;
            shim |= strncmp(cur, "LD_PRELOAD=", 11) == 0 && strstr(cur, "libconvguard") != NULL;
            len = 0;
        }
    }
    if (fd >= 0)
        close(fd);
    errno = saved;
    return same && shim;
}

/* "convguard: warning: NAME=VALUE is ...": the value as given (cg_warn makes
 * it safe to print), once per run */
static void warn_value(const char *name, const char *v, const char *why)
{
    char entry[160];
    size_t n = cg_strlcpy(entry, name, sizeof entry);
    n = cg_append(entry, sizeof entry, n, "=");
    n = cg_append(entry, sizeof entry, n, v);
    bool cut = strlen(v) > 96;
    if (cut)
        entry[strlen(name) + 1 + 96] = 0;
    if (!cut && parent_warned(entry))
        return;
    if (cut)
        cg_strlcpy(entry + strlen(entry), "...", 4);
    cg_warn(entry, why);
}

/* ASCII, whatever the locale (this runs before the program set one) */
static bool same_word(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a >= 'A' && *a <= 'Z' ? *a + 32 : *a) != *b)
            return false;
    return *a == *b;
}

/* the usual spellings of a switch: 1/0, yes/no, true/false, on/off (any case) */
static int flag_value(const char *s)
{
    static const char *const on[] = {"1", "yes", "true", "on"}, *const off[] = {"0", "no", "false", "off", ""};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (same_word(s, off[i]))
            return 0;
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++)
        if (same_word(s, on[i]))
            return 1;
    return -1;
}

/* a switch; anything else keeps the default, warned */
static void parse_flag(const char *name, const char *s, bool *out)
{
    int v = flag_value(s);
    if (v >= 0)
        *out = v == 1;
    else
        warn_value(name, s, *out ? " is not 1/0, yes/no, true/false or on/off; using the default (1)"
                                 : " is not 1/0, yes/no, true/false or on/off; using the default (0)");
}

/* CONVGUARD_EXTRA_LIBS: comma-separated file-name prefixes, each made of
 * [A-Za-z0-9._+-] (a prefix, never a path). */
static bool list_ok(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
              *s == '_' || *s == '-' || *s == '+' || *s == ','))
            return false;
    return true;
}

/* 16 TiB in MiB: more memory than any GPU has, small enough not to overflow
 * when turned into bytes. */
#define CG_MAX_MB (16ll << 20)

enum opt_kind { OPT_DIR, OPT_FLAG, OPT_MB, OPT_COUNT, OPT_LIST, OPT_UNWIND };
static const struct option {
    const char *name;
    enum opt_kind kind;
    void *dst;
    long long max;
    const char *bad; /* OPT_MB: what the warning says of a bad value: the range and the default */
} options[] = {
    {"CONVGUARD_DIR", OPT_DIR, cg_cfg.dir, 0, NULL},
    {"CONVGUARD_QUIET", OPT_FLAG, &cg_cfg.quiet, 0, NULL},
    {"CONVGUARD_FALLBACK", OPT_FLAG, &cg_cfg.fallback, 0, NULL},
    {"CONVGUARD_WORKSPACE_LIMIT_MB", OPT_MB, &cg_cfg.workspace_limit_mb, CG_MAX_MB,
     " is not a whole number of MiB from 0 to 16777216; ignored (the default: no limit)"},
    {"CONVGUARD_RESERVE_MB", OPT_MB, &cg_cfg.reserve_mb, CG_MAX_MB,
     " is not a whole number of MiB from 0 to 16777216; using the default (0)"},
    {"CONVGUARD_MAX_MB", OPT_MB, &cg_cfg.max_mb, 1ll << 20,
     " is not a whole number of MiB from 0 to 1048576; using the default (256)"},
    {"CONVGUARD_EXTRA_LIBS", OPT_LIST, cg_cfg.extra_libs, 0, NULL},
    {"CONVGUARD_CRASH", OPT_FLAG, &cg_cfg.crash, 0, NULL},
    {"CONVGUARD_UNWIND", OPT_UNWIND, &cg_cfg.unwind, 0, NULL},
    {"CONVGUARD_REPEATS", OPT_COUNT, &cg_cfg.repeats, 1ll << 20,
     " is not a whole number from 0 to 1048576; using the default (8)"},
};
#define NOPTIONS (sizeof options / sizeof options[0])
/* read by the CLI and the examples, not by the shim: not typos */
static const char *const others[] = {"CONVGUARD_SHIM", "CONVGUARD_BIN", "CONVGUARD_DEMO_DOUBLES",
                                      "CONVGUARD_REPORT_THREADS", "CONVGUARD_REPORT_SHARE"};

/* A CONVGUARD_* name that is no setting is most likely a typo: say so. */
static void warn_unknown(void)
{
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "CONVGUARD_", 10) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
        bool known = false;
        for (size_t i = 0; i < NOPTIONS && !known; i++)
            known = strlen(options[i].name) == n && strncmp(options[i].name, *e, n) == 0;
        for (size_t i = 0; i < sizeof others / sizeof others[0] && !known; i++)
            known = strlen(others[i]) == n && strncmp(others[i], *e, n) == 0;
        if (!known) {
            char name[64];
            size_t k = n < sizeof name - 1 ? n : sizeof name - 1;
            memcpy(name, *e, k);
            name[k] = 0;
            /* the name is shown escaped by nothing: keep it printable */
            for (size_t j = 0; j < k; j++)
                if ((unsigned char)name[j] < 0x20 || (unsigned char)name[j] >= 0x7f)
                    name[j] = '?';
            if (!parent_warned(*e))
                cg_warn(name, " is not a convguard setting; ignored");
        }
    }
}

void cg_config_load(void)
{
    warn_unknown();
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &options[i];
        const char *v = cg_getenv(o->name);
        if (!v)
            continue;
        switch (o->kind) {
        case OPT_DIR:
            if (!*v)
                cg_warn(o->name, " is empty; using ./convguard-logs");
            else if (strlen(v) >= sizeof cg_cfg.dir - 64)
                cg_warn(o->name, " is too long; using ./convguard-logs");
            else
                cg_strlcpy(o->dst, v, sizeof cg_cfg.dir);
            break;
        case OPT_FLAG:
            parse_flag(o->name, v, o->dst);
            break;
        case OPT_MB: {
            long long mb;
            if (parse_mb(v, o->max, &mb))
                *(long long *)o->dst = mb;
            else
                warn_value(o->name, v, o->bad);
            break;
        }
        case OPT_COUNT: {
            long long n;
            if (parse_mb(v, o->max, &n))
                *(long long *)o->dst = n;
            else
                cg_warn(o->name, " is not a whole number in range; ignored");
            break;
        }
        case OPT_UNWIND: {
            static const char *const names[] = {"auto", "libunwind", "glibc", "none"};
            size_t k = 0;
            while (k < 4 && strcmp(v, names[k]) != 0)
                k++;
            if (k < 4)
                *(int *)o->dst = (int)k;
            else
                warn_value(o->name, v, " is not auto, libunwind, glibc or none; using the default (auto)");
            break;
        }
        case OPT_LIST:
            /* comma-separated name prefixes such as libcufft,libnccl */
            if (strlen(v) >= sizeof cg_cfg.extra_libs)
                warn_value(o->name, v, " is too long; ignored (the default: none)");
            else if (!list_ok(v))
                warn_value(o->name, v, " holds characters other than name prefixes and commas; ignored");
            else
                cg_strlcpy(o->dst, v, sizeof cg_cfg.extra_libs);
            break;
        }
    }
}
