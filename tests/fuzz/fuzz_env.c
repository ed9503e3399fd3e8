/* fuzz_env.c - libFuzzer target for the settings parser (shim/core/config.c).
 *
 * The input is split at NUL bytes into environment entries (mostly
 * CONVGUARD_* names, to reach every option); cg_config_load must never
 * crash or read out of bounds, and what it leaves must be in range: the
 * directory and the library list NUL-terminated within their arrays, MiB
 * values within their limits, the unwinder one of its four values.  Bad
 * values keep the defaults. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

extern char **environ;

static const char *const names[] = {"CONVGUARD_DIR", "CONVGUARD_QUIET", "CONVGUARD_FALLBACK",
                                    "CONVGUARD_WORKSPACE_LIMIT_MB", "CONVGUARD_RESERVE_MB", "CONVGUARD_MAX_MB",
                                    "CONVGUARD_EXTRA_LIBS", "CONVGUARD_CRASH", "CONVGUARD_UNWIND", "CONVGUARD_"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct cg_config defaults = {
        .dir = "./convguard-logs", .workspace_limit_mb = -1, .max_mb = 256, .crash = true};
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = 0;
    /* entries: a first byte < 10 picks a known name (NAME=rest), otherwise raw */
    char *env[64], *owned[64];
    int n = 0, no = 0;
    for (char *p = buf; p < buf + size && n < 63; p += strlen(p) + 1) {
        unsigned char sel = (unsigned char)p[0];
        if (sel < sizeof names / sizeof names[0] && p[0] != 0) {
            size_t len = strlen(names[sel]) + 1 + strlen(p + 1) + 1;
            char *e = malloc(len);
            strcpy(e, names[sel]);
            strcat(e, "=");
            strcat(e, p + 1);
            env[n++] = owned[no++] = e;
        } else {
            env[n++] = p;
        }
    }
    env[n] = NULL;
    char **saved = environ;
    environ = env;
    cg_cfg = defaults;
    cg_config_load();
    environ = saved;

    assert(memchr(cg_cfg.dir, 0, sizeof cg_cfg.dir));
    assert(cg_cfg.dir[0]);
    assert(memchr(cg_cfg.extra_libs, 0, sizeof cg_cfg.extra_libs));
    for (const char *c = cg_cfg.extra_libs; *c; c++)
        assert(*c != '/');
    assert(cg_cfg.workspace_limit_mb == -1 || (cg_cfg.workspace_limit_mb >= 0 && cg_cfg.workspace_limit_mb <= (16ll << 20)));
    assert(cg_cfg.reserve_mb >= 0 && cg_cfg.reserve_mb <= (16ll << 20));
    assert(cg_cfg.max_mb >= 0 && cg_cfg.max_mb <= (1ll << 20));
    assert(cg_cfg.unwind >= CG_UNWIND_AUTO && cg_cfg.unwind <= CG_UNWIND_NONE);
    for (int i = 0; i < no; i++)
        free(owned[i]);
    free(buf);
    return 0;
}
