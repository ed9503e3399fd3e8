/* config.c - CONVGUARD_* settings, read once at load through one table.
 *
 * Bad values never stop the program: each gets one warning on stderr and the
 * default.  Values are read from `environ` directly (as mimalloc does) so this
 * works even when called before libc has finished starting up. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cg.h"

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

/* "0" or empty: off, "1": on; anything else keeps the default, warned. */
static void parse_flag(const char *name, const char *s, bool *out)
{
    if (!*s || strcmp(s, "0") == 0)
        *out = false;
    else if (strcmp(s, "1") == 0)
        *out = true;
    else
        cg_warn(name, "=<value> is not 0 or 1; using the default");
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
} options[] = {
    {"CONVGUARD_DIR", OPT_DIR, cg_cfg.dir, 0},
    {"CONVGUARD_QUIET", OPT_FLAG, &cg_cfg.quiet, 0},
    {"CONVGUARD_FALLBACK", OPT_FLAG, &cg_cfg.fallback, 0},
    {"CONVGUARD_WORKSPACE_LIMIT_MB", OPT_MB, &cg_cfg.workspace_limit_mb, CG_MAX_MB},
    {"CONVGUARD_RESERVE_MB", OPT_MB, &cg_cfg.reserve_mb, CG_MAX_MB},
    {"CONVGUARD_MAX_MB", OPT_MB, &cg_cfg.max_mb, 1ll << 20},
    {"CONVGUARD_EXTRA_LIBS", OPT_LIST, cg_cfg.extra_libs, 0},
    {"CONVGUARD_CRASH", OPT_FLAG, &cg_cfg.crash, 0},
    {"CONVGUARD_UNWIND", OPT_UNWIND, &cg_cfg.unwind, 0},
    {"CONVGUARD_REPEATS", OPT_COUNT, &cg_cfg.repeats, 1ll << 20},
};
#define NOPTIONS (sizeof options / sizeof options[0])
/* read by the CLI and the examples, not by the shim: not typos */
static const char *const others[] = {"CONVGUARD_SHIM", "CONVGUARD_BIN", "CONVGUARD_DEMO_DOUBLES"};

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
                cg_warn(o->name, " is not a whole number of MiB in range; ignored");
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
                cg_warn(o->name, " is not auto, libunwind, glibc or none; using auto");
            break;
        }
        case OPT_LIST:
            /* comma-separated name prefixes such as libcufft,libnccl */
            if (strlen(v) >= sizeof cg_cfg.extra_libs)
                cg_warn(o->name, " is too long; ignored");
            else if (!list_ok(v))
                cg_warn(o->name, " holds characters other than name prefixes and commas; ignored");
            else
                cg_strlcpy(o->dst, v, sizeof cg_cfg.extra_libs);
            break;
        }
    }
}
