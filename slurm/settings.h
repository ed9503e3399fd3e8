/* settings.h - the words of the Slurm plugin (spank_convguard.c): its
 * plugstack.conf arguments, the --convguard option's value, the trace
 * folder's pattern and the task's LD_PRELOAD.  Pure functions, libc alone,
 * no Slurm header: shared by the plugin, by `convguard report --job`
 * (tools/jobdir.c) and by tests/unit/test_slurm_settings.c. */
#ifndef CG_SLURM_SETTINGS_H
#define CG_SLURM_SETTINGS_H
#include <stdbool.h>
#include <stddef.h>

#define CGS_PATH 4096
#define CGS_TIMEOUT_DEFAULT 10 /* seconds a failed step's report may take */
#define CGS_TIMEOUT_MAX 600

struct cgs_settings {
    char preload[CGS_PATH];   /* preload=: the shim a traced task preloads */
    char dir[CGS_PATH];       /* dir=: the folder pattern; "": <submit folder>/convguard-logs */
    char convguard[CGS_PATH]; /* convguard=: the command that writes a failed step's report; "": beside preload */
    bool default_on;          /* default=on: every job unless --convguard=off */
    char partitions[1024];    /* partitions=A,B: default=on for the jobs of these partitions alone; "": all */
    bool fallback;            /* fallback=on: CONVGUARD_FALLBACK=1 in traced tasks */
    bool report;              /* report=off: no report when a step fails */
    unsigned report_timeout;  /* report_timeout=SECONDS */
};

/* preload= the shim of PREFIX (CGS_PRELOAD_DEFAULT), report on, the rest off */
void cgs_defaults(struct cgs_settings *s);
/* One plugstack.conf argument, NAME=VALUE; 0, or -1 with the reason in err. */
int cgs_arg(struct cgs_settings *s, const char *arg, char *err, size_t cap);
/* convguard= when not given: bin/convguard beside preload's lib/ folder, else
 * convguard in preload's own folder (how `convguard shim-path` finds the shim) */
void cgs_command(const struct cgs_settings *s, char *out, size_t cap);

/* default=on applies to a job of PARTITION (Slurm's SLURM_JOB_PARTITION; NULL: unknown):
 * default=on, and partitions= empty or naming it */
bool cgs_default_for(const struct cgs_settings *s, const char *partition);

/* What a job asked with --convguard[=VALUE] */
enum cgs_ask { CGS_UNSET, CGS_OFF, CGS_ON, CGS_DIR };
/* VALUE: NULL, "" or "on": on; "off": off; else DIR, an absolute folder
 * pattern (the escapes of cgs_expand).  -1 with the reason in err. */
int cgs_option(const char *value, char *err, size_t cap);

/* What a pattern's escapes stand for: %u the user, %U the uid, %j the job
 * id, %n the node, %% a %. */
struct cgs_job {
    const char *user;
    unsigned long uid;
    unsigned long job;
    const char *node;
};
/* PATTERN expanded into out.  *made: where the folders to be made begin in
 * out (those from the first escape on, else the last one alone; what comes
 * before must exist).  0, or -1 with the reason in err (an unknown escape, a
 * name that is no single folder name, not absolute, too long). */
int cgs_expand(const char *pattern, const struct cgs_job *j, char *out, size_t cap, size_t *made, char *err,
               size_t ecap);
/* "<base>/<job>.<step>" in out; 0, -1 when too long */
int cgs_step_dir(char *out, size_t cap, const char *base, unsigned long job, const char *step);

/* LD_PRELOAD (NULL: unset) with SHIM appended after what is there, in out:
 * 0; 1 when SHIM is among its entries already (out is old); -1 too long. */
int cgs_preload_add(const char *old, const char *shim, char *out, size_t cap);
/* LD_PRELOAD without its entries equal to SHIM, in out: 0; 1 when there was
 * none (out is old); -1 too long. */
int cgs_preload_remove(const char *old, const char *shim, char *out, size_t cap);
/* an entry of LD_PRELOAD is a libconvguard.so, of any folder */
bool cgs_preload_has_convguard(const char *ld_preload);

#endif
