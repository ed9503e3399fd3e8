/* test_slurm_settings.c - the Slurm plugin's words (slurm/settings.c), with
 * no Slurm: its plugstack.conf arguments (each one, and every wrong form),
 * the --convguard value, the folder pattern's escapes (and which folders
 * the plugin makes), the step folder, the task's LD_PRELOAD (appended,
 * kept, taken back), the command found beside the shim. */
#include <stdio.h>
#include <string.h>

#include "../../slurm/settings.h"

static int failed, passed;

static void ok(int cond, const char *what, const char *got)
{
    if (cond)
        passed++;
    else
        failed++;
    printf("  %s test_slurm_settings: %s%s%s\n", cond ? "ok  " : "FAIL", what, cond ? "" : " -> ", cond ? "" : got);
}

static void args(void)
{
    struct cgs_settings s;
    char err[256] = "";
    cgs_defaults(&s);
    ok(strcmp(s.preload, "/usr/local/lib/libconvguard.so") == 0 && s.report && !s.default_on && !s.fallback &&
           s.report_timeout == CGS_TIMEOUT_DEFAULT && !s.dir[0] && !s.convguard[0],
       "defaults: the shim of /usr/local, report on, default and fallback off", s.preload);
    ok(cgs_arg(&s, "preload=/opt/cg/lib/libconvguard.so", err, sizeof err) == 0 &&
           strcmp(s.preload, "/opt/cg/lib/libconvguard.so") == 0,
       "preload=PATH", err);
    ok(cgs_arg(&s, "dir=/shared/cg/%u/%j", err, sizeof err) == 0 && strcmp(s.dir, "/shared/cg/%u/%j") == 0,
       "dir=PATTERN", err);
    ok(cgs_arg(&s, "default=on", err, sizeof err) == 0 && s.default_on, "default=on", err);
    ok(cgs_arg(&s, "fallback=yes", err, sizeof err) == 0 && s.fallback, "fallback=yes", err);
    ok(cgs_arg(&s, "partitions=gpu,a100", err, sizeof err) == 0 && strcmp(s.partitions, "gpu,a100") == 0,
       "partitions=gpu,a100", err);
    ok(cgs_arg(&s, "report=off", err, sizeof err) == 0 && !s.report, "report=off", err);
    ok(cgs_arg(&s, "report_timeout=30", err, sizeof err) == 0 && s.report_timeout == 30, "report_timeout=30", err);
    ok(cgs_arg(&s, "convguard=/opt/cg/bin/convguard", err, sizeof err) == 0 &&
           strcmp(s.convguard, "/opt/cg/bin/convguard") == 0,
       "convguard=PATH", err);
    static const struct { const char *arg, *words; } bad[] = {
        {"preload=lib/libconvguard.so", "absolute"}, {"convguard=convguard", "absolute"},
        {"dir=relative/%u", "not an absolute folder"}, {"dir=/x/%q", "unknown escape"},
        {"dir=/x/%", "% at the end"}, {"default=maybe", "on or off"},
        {"report_timeout=0", "whole seconds"}, {"report_timeout=5s", "whole seconds"},
        {"report_timeout=601", "whole seconds"}, {"report_timeout=-1", "whole seconds"},
        {"partitions=", "partition names"}, {"partitions=,", "partition names"},
        {"partitions=a b", "partition names"}, {"bogus=1", "unknown argument bogus=1"}, {"preload", "unknown argument preload"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[128];
        err[0] = 0;
        int r = cgs_arg(&s, bad[i].arg, err, sizeof err);
        snprintf(what, sizeof what, "%s refused, saying \"%s\"", bad[i].arg, bad[i].words);
        ok(r == -1 && strstr(err, bad[i].words), what, err);
    }
    ok(s.report_timeout == 30 && strcmp(s.dir, "/shared/cg/%u/%j") == 0, "a refused argument changes nothing",
       s.dir);
}

static void option(void)
{
    char err[256] = "";
    ok(cgs_option(NULL, err, sizeof err) == CGS_ON && cgs_option("", err, sizeof err) == CGS_ON &&
           cgs_option("on", err, sizeof err) == CGS_ON,
       "--convguard, --convguard=, --convguard=on: on", err);
    ok(cgs_option("off", err, sizeof err) == CGS_OFF && cgs_option("no", err, sizeof err) == CGS_OFF,
       "--convguard=off: off", err);
    ok(cgs_option("/scratch/%u/cg", err, sizeof err) == CGS_DIR, "--convguard=/scratch/%u/cg: a folder", err);
    ok(cgs_option("cg-logs", err, sizeof err) == -1 && strstr(err, "not an absolute folder"),
       "--convguard=cg-logs refused: not absolute", err);
}

static void expand(const char *pattern, const char *user, const char *want, size_t want_made, const char *words)
{
    struct cgs_job j = {user, 1000, 42, "node7"};
    char out[CGS_PATH], err[256] = "", what[256];
    size_t made = 0;
    int r = cgs_expand(pattern, &j, out, sizeof out, &made, err, sizeof err);
    if (want) {
        snprintf(what, sizeof what, "%s -> %s, made from %zu", pattern, want, want_made);
        ok(r == 0 && strcmp(out, want) == 0 && made == want_made, what, r ? err : out);
    } else {
        snprintf(what, sizeof what, "%s (user \"%s\") refused: %s", pattern, user, words);
        ok(r == -1 && strstr(err, words), what, err);
    }
}

static void patterns(void)
{
    /* made: where the folders the plugin makes begin; before it, what must exist */
    expand("/shared/cg/%u/%j", "alice", "/shared/cg/alice/42", strlen("/shared/cg"), NULL);
    expand("/shared/cg/%U", "alice", "/shared/cg/1000", strlen("/shared/cg"), NULL);
    expand("/scratch/cg-%u/%n", "alice", "/scratch/cg-alice/node7", strlen("/scratch"), NULL);
    expand("/scratch/me/cg", "alice", "/scratch/me/cg", strlen("/scratch/me"), NULL);
    expand("/scratch/me/cg/", "alice", "/scratch/me/cg", strlen("/scratch/me"), NULL);
    expand("/a/100%%/%j", "alice", "/a/100%/42", strlen("/a/100%"), NULL);
    expand("/cg", "alice", "/cg", 0, NULL);
    expand("/shared/%u", "..", NULL, 0, "the user name is no folder name");
    expand("/shared/%u", "a/b", NULL, 0, "the user name is no folder name");
    expand("/shared/%u", "", NULL, 0, "the user name is no folder name");
    expand("/shared/%x", "alice", NULL, 0, "unknown escape in the folder pattern: %x");
    char longp[CGS_PATH + 8];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = 0;
    expand(longp, "alice", NULL, 0, "too long");
    char step[CGS_PATH];
    ok(cgs_step_dir(step, sizeof step, "/shared/cg/alice", 42, "0") == 0 && strcmp(step, "/shared/cg/alice/42.0") == 0,
       "the step folder: <dir>/<job>.<step>", step);
    ok(cgs_step_dir(step, sizeof step, "/shared/cg/", 42, "batch") == 0 && strcmp(step, "/shared/cg/42.batch") == 0,
       "the batch step's folder: <dir>/<job>.batch", step);
    ok(cgs_step_dir(step, 12, "/shared/cg", 42, "0") == -1, "a step folder too long: refused", step);
}

static void preload(void)
{
    const char *shim = "/opt/cg/lib/libconvguard.so";
    char out[256];
    ok(cgs_preload_add(NULL, shim, out, sizeof out) == 0 && strcmp(out, shim) == 0, "LD_PRELOAD unset: the shim",
       out);
    ok(cgs_preload_add("", shim, out, sizeof out) == 0 && strcmp(out, shim) == 0, "LD_PRELOAD empty: the shim", out);
    ok(cgs_preload_add("/x/libkeep.so", shim, out, sizeof out) == 0 &&
           strcmp(out, "/x/libkeep.so:/opt/cg/lib/libconvguard.so") == 0,
       "an existing LD_PRELOAD kept, the shim after it", out);
    ok(cgs_preload_add("/x/a.so /opt/cg/lib/libconvguard.so", shim, out, sizeof out) == 1 &&
           strcmp(out, "/x/a.so /opt/cg/lib/libconvguard.so") == 0,
       "the shim already there (space-separated): unchanged", out);
    ok(cgs_preload_add("/opt/cg/lib/libconvguard.so.bak", shim, out, sizeof out) == 0,
       "a longer name is another entry", out);
    ok(cgs_preload_add("/x/libkeep.so", shim, out, 20) == -1, "too long for its room: refused", out);
    ok(cgs_preload_remove("/x/a.so:/opt/cg/lib/libconvguard.so:/x/b.so", shim, out, sizeof out) == 0 &&
           strcmp(out, "/x/a.so:/x/b.so") == 0,
       "taken back: the others kept, in order", out);
    ok(cgs_preload_remove("/opt/cg/lib/libconvguard.so", shim, out, sizeof out) == 0 && !out[0],
       "taken back: nothing left", out);
    ok(cgs_preload_remove("/x/a.so", shim, out, sizeof out) == 1 && strcmp(out, "/x/a.so") == 0,
       "nothing to take back: unchanged", out);
    ok(cgs_preload_has_convguard("/x/a.so:/home/me/venv/lib/libconvguard.so") &&
           cgs_preload_has_convguard("libconvguard.so") && !cgs_preload_has_convguard("/x/notlibconvguard.so") &&
           !cgs_preload_has_convguard(NULL),
       "a libconvguard.so of any folder is told apart", "");
}

static void partitions(void)
{
    struct cgs_settings s;
    char err[64];
    cgs_defaults(&s);
    ok(!cgs_default_for(&s, "gpu"), "default off: no job is traced unasked", "");
    cgs_arg(&s, "default=on", err, sizeof err);
    ok(cgs_default_for(&s, "gpu") && cgs_default_for(&s, NULL), "default=on, no partitions=: every job", "");
    cgs_arg(&s, "partitions=gpu,a100", err, sizeof err);
    ok(cgs_default_for(&s, "gpu") && cgs_default_for(&s, "a100"), "partitions=gpu,a100: their jobs", "");
    ok(!cgs_default_for(&s, "cpu") && !cgs_default_for(&s, "gp") && !cgs_default_for(&s, "gpu,a100") &&
           !cgs_default_for(&s, "") && !cgs_default_for(&s, NULL),
       "partitions=gpu,a100: no other (a prefix, the list itself, none known)", "");
}

static void command(void)
{
    struct cgs_settings s;
    char out[CGS_PATH], err[64];
    cgs_defaults(&s);
    cgs_arg(&s, "preload=/opt/cg/lib/libconvguard.so", err, sizeof err);
    cgs_command(&s, out, sizeof out);
    ok(strcmp(out, "/opt/cg/bin/convguard") == 0, "the command beside preload: <prefix>/bin/convguard", out);
    cgs_arg(&s, "preload=/opt/cg/libconvguard.so", err, sizeof err);
    cgs_command(&s, out, sizeof out);
    ok(strcmp(out, "/opt/cg/convguard") == 0, "preload not in a lib/ folder: convguard beside it", out);
    cgs_arg(&s, "convguard=/usr/bin/convguard", err, sizeof err);
    cgs_command(&s, out, sizeof out);
    ok(strcmp(out, "/usr/bin/convguard") == 0, "convguard= given: that one", out);
}

int main(void)
{
    args();
    option();
    patterns();
    preload();
    partitions();
    command();
    printf("test_slurm_settings: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
