/* jobdir.c - the folders of one Slurm job, for `convguard report --job
 * JOBID`: the step folders <JOBID>.<step> the Slurm plugin traces into
 * (slurm/spank_convguard.c, docs/slurm.md), found under the folders given,
 * else under the plugin's dir= pattern, read from plugstack.conf as Slurm
 * reads it (the file beside slurm.conf or PlugStackConfig=, its include
 * lines), %u and %U as the user running the report, %j the job, %n any
 * node. */
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../slurm/settings.h"
#include "cli.h"

#define FIND_DEPTH 3 /* below a given folder: <root>/<user>/<job>/<job>.<step> */
#define CONF_DEPTH 4 /* include lines within included files */

struct found { char **v; int n, cap; struct id_set seen; };

static void add(struct found *f, const char *p)
{
    if (f->n + 2 > f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->v = realloc(f->v, (size_t)f->cap * sizeof *f->v);
    }
    f->v[f->n++] = xstrdup(p);
    f->v[f->n] = NULL;
}

/* "<job>.<step>": step a number, batch or interactive */
static bool step_folder(const char *name, const char *job)
{
    size_t n = strlen(job);
    if (strncmp(name, job, n) != 0 || name[n] != '.' || !name[n + 1])
        return false;
    const char *s = name + n + 1;
    return strspn(s, "0123456789") == strlen(s) || strcmp(s, "batch") == 0 || strcmp(s, "interactive") == 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void walk(struct found *f, const char *dir, const char *job, int depth)
{
    struct stat st;
    const char *base = strrchr(dir, '/');
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || !id_set_add(&f->seen, st.st_dev, st.st_ino))
        return;
    if (step_folder(base ? base + 1 : dir, job)) {
        add(f, dir);
        return;
    }
    DIR *d = depth <= FIND_DEPTH ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *p = xasprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
        walk(f, p, job, depth + 1);
        free(p);
    }
    if (d)
        closedir(d);
}

/* ---- the plugin's dir= from plugstack.conf */

static char *conf_value(const char *file, const char *key)
{
    FILE *in = fopen(file, "r");
    char line[4096], *v = NULL;
    size_t k = strlen(key);
    while (in && !v && fgets(line, sizeof line, in)) {
        char *p = line + strspn(line, " \t");
        if (strncasecmp(p, key, k) == 0 && p[k] == '=') {
            p[k + 1 + strcspn(p + k + 1, " \t\r\n#")] = 0;
            v = xstrdup(p + k + 1);
        }
    }
    if (in)
        fclose(in);
    return v;
}

/* the dir= of the first spank_convguard.so line of FILE (and what it includes); 1 found */
static int plugin_dir(const char *file, char *dir, size_t cap, int depth)
{
    FILE *in = depth <= CONF_DEPTH ? fopen(file, "r") : NULL;
    char line[8192];
    int found = 0;
    while (in && !found && fgets(line, sizeof line, in)) {
        line[strcspn(line, "#\r\n")] = 0;
        char *save = NULL, *w = strtok_r(line, " \t", &save);
        if (w && strcmp(w, "include") == 0) {
            glob_t g;
            char *pat = strtok_r(NULL, " \t", &save);
            if (pat && glob(pat, 0, NULL, &g) == 0) {
                for (size_t i = 0; i < g.gl_pathc && !found; i++)
                    found = plugin_dir(g.gl_pathv[i], dir, cap, depth + 1);
                globfree(&g);
            }
            continue;
        }
        char *so = w ? strtok_r(NULL, " \t", &save) : NULL, *b = so ? strrchr(so, '/') : NULL;
        if (!so || strcmp(b ? b + 1 : so, "spank_convguard.so") != 0)
            continue;
        struct cgs_settings s;
        char err[256];
        cgs_defaults(&s);
        for (char *a; (a = strtok_r(NULL, " \t", &save));)
            cgs_arg(&s, a, err, sizeof err);
        snprintf(dir, cap, "%s", s.dir);
        found = 1;
    }
    if (in)
        fclose(in);
    return found;
}

/* the roots the configured pattern names for this job and user; 0 when there is no such line */
static int configured(struct found *f, const char *job)
{
    const char *sc = getenv("SLURM_CONF");
    char *conf = xstrdup(sc && *sc ? sc : "/etc/slurm/slurm.conf"), *ps = conf_value(conf, "PlugStackConfig");
    char *slash = strrchr(conf, '/');
    if (!ps)
        ps = slash ? xasprintf("%.*s/plugstack.conf", (int)(slash - conf), conf) : xstrdup("plugstack.conf");
    char dir[CGS_PATH] = "";
    int have = plugin_dir(ps, dir, sizeof dir, 0);
    free(conf), free(ps);
    if (!have)
        return 0;
    if (!dir[0]) { /* no dir=: the submit folder's convguard-logs; here, this one's */
        walk(f, "convguard-logs", job, 1);
        return 1;
    }
    char user[256], out[CGS_PATH], err[512];
    struct passwd *pw = getpwuid(getuid());
    snprintf(user, sizeof user, "%s", pw ? pw->pw_name : "?");
    struct cgs_job j = {user, (unsigned long)getuid(), strtoul(job, NULL, 10), "*"};
    size_t made;
    glob_t g;
    if (cgs_expand(dir, &j, out, sizeof out, &made, err, sizeof err) == 0 && glob(out, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            walk(f, g.gl_pathv[i], job, 1);
        globfree(&g);
    }
    return 1;
}

char **job_folders(const char *job, char **roots, int nroots, int *n)
{
    struct found f = {0};
    if (!*job || strspn(job, "0123456789") != strlen(job)) {
        fprintf(stderr, "convguard report: --job takes a Slurm job id (a number)\n");
        return NULL;
    }
    for (int i = 0; i < nroots; i++)
        walk(&f, roots[i], job, 0);
    int conf = nroots ? 1 : configured(&f, job);
    id_set_free(&f.seen);
    if (!f.n) {
        term_printf(stderr, "convguard report: no folder of job %s (%s.<step>) %s\n", job, job,
                    nroots ? "in the folders given"
                    : conf ? "under the Slurm plugin's dir= (plugstack.conf): give its folder"
                           : "here, and no spank_convguard.so line in plugstack.conf: give the folder");
        free(f.v);
        return NULL;
    }
    qsort(f.v, (size_t)f.n, sizeof *f.v, by_name);
    *n = f.n;
    return f.v;
}

void job_folders_free(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}
