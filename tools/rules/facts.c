/* facts.c - what the match functions of rules.def read off a process and
 * write into a finding's facts, shared by the rules/ files. */
#include "rules/match.h"

bool is_ev(json_t *e, const char *name) { return strcmp(jstr(e, "ev", ""), name) == 0; }

bool alloc_oom_status(json_t *ev)
{
    /* 2 is cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY alike */
    return jint(ev, "status", -1) == 2;
}

long event_index(struct trace *t, json_t *ev)
{
    for (size_t i = 0; i < json_array_size(t->events); i++)
        if (json_array_get(t->events, i) == ev)
            return (long)i;
    return -1;
}

json_t *lib_event(struct trace *t, const char *path)
{
    for (size_t i = 0; path && i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "lib") && strcmp(jstr(e, "path", ""), path) == 0)
            return e;
    }
    return NULL;
}

void set_str(json_t *vars, const char *k, const char *v) { json_object_set_new(vars, k, json_string(v ? v : "")); }
void set_own(json_t *vars, const char *k, char *v) { set_str(vars, k, v); free(v); }

/* {prog}: the process's command line, its first 60 or so characters ("process N" without one) */
void set_prog(json_t *vars, const struct trace *t)
{
    json_t *argv = jget(t->start, "argv");
    struct sbuf b = {0};
    for (size_t i = 0; i < json_array_size(argv) && b.len < 60; i++)
        sb_printf(&b, "%s%s", i ? " " : "", json_string_value(json_array_get(argv, i)) ?: "?");
    set_own(vars, "prog", b.len ? sb_take(&b) : xasprintf("process %lld", t->pid));
    free(b.s);
}
void set_int(json_t *vars, const char *k, long long v) { json_object_set_new(vars, k, json_integer(v)); }

bool dir_in_path_list(const char *dir, const char *list)
{
    size_t n = strlen(dir);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ':');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        while (len > 1 && p[len - 1] == '/')
            len--;
        if (len == n && strncmp(p, dir, n) == 0)
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

/* A file in a system folder came from the distribution's package manager: removing the other copy
 * means removing that package. */
bool system_lib_dir(const char *dir)
{
    static const char *const sys[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu",
                                      "/lib64", "/usr/lib/aarch64-linux-gnu"};
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
        if (strcmp(dir, sys[i]) == 0)
            return true;
    return false;
}

const char *llp_of(struct trace *t) { return jstr(t->start, "env.LD_LIBRARY_PATH", NULL); }

/* The CUDA major version the process uses, for package names like
 * nvidia-cudnn-cu12: from cudart, else from what cuDNN was built for. */
long long cuda_major(struct trace *t)
{
    long long built = -1;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (strcmp(jstr(e, "ev", ""), "lib") != 0)
            continue;
        if (strcmp(jstr(e, "family", ""), "cudart") == 0 && jint(e, "version", 0) > 0)
            return jint(e, "version", 0) / 1000;
        if (built < 0 && jint(e, "cuda_built_for", 0) > 0)
            built = jint(e, "cuda_built_for", 0) / 1000;
    }
    return built > 0 ? built : 12;
}

/* "process 4242 (python3) holds 70.0 GiB" for every other holder, largest first */
char *holders_text(json_t *ev, long long own_pid, long long *top_pid)
{
    json_t *h = jget(ev, "holders");
    struct sbuf b = {0};
    bool used[64] = {0};
    size_t n = json_array_size(h) < 64 ? json_array_size(h) : 64;
    *top_pid = -1;
    for (int k = 0; k < 3; k++) {
        long best = -1;
        for (size_t i = 0; i < n; i++) {
            json_t *x = json_array_get(h, i);
            if (used[i] || jint(x, "pid", -1) == own_pid)
                continue;
            if (best < 0 || jint(x, "bytes", 0) > jint(json_array_get(h, (size_t)best), "bytes", 0))
                best = (long)i;
        }
        if (best < 0)
            break;
        used[best] = true;
        json_t *x = json_array_get(h, (size_t)best);
        char sz[32];
        if (*top_pid < 0)
            *top_pid = jint(x, "pid", -1);
        sb_printf(&b, "%sprocess %lld (%s) holds %s", b.len ? ", " : "", jint(x, "pid", -1), jstr(x, "name", "?"),
                  fmt_size(jint(x, "bytes", -1), sz, sizeof sz));
    }
    return sb_take(&b);
}
