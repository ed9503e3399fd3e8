/* smoke.c - `convguard smoke`: one tiny convolution through cuDNN itself,
 * forward and both backward passes, checked against a CPU reference, with
 * the shim watching (host/conv.c).  The one-batch test the seeds recommend
 * before a long run, in a few seconds; without a GPU it stops at the first
 * failing step and prints the report of its own trace.  What it says is
 * out/smoke_text.c's. */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "host/host.h"
#include "out/out.h"

static double t_start;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* under the shim: the convolution's steps, told as they run (out/smoke_text.c) */
static int smoke_steps(const char *want)
{
    static const struct conv_report told = {smoke_step, smoke_ok, smoke_failed};
    double worst = 0;
    if (conv_run(want, &told, &worst))
        return 1;
    smoke_say_passed(worst, now() - t_start);
    return 0;
}

/* what smoke tests, said before it starts: the framework's cuDNN when there
 * is one (what the job loads), and the loader's by bare name beside it */
static const char *choose_cudnn(const char *want, char *path, size_t cap)
{
    char who[32];
    json_t *bare = probe_run(probe_lib_version, "libcudnn.so.9");
    const char *loader = jstr(bare, "file", jstr(bare, "path", NULL));
    bool framework = !want && probe_framework_cudnn(path, cap, who, sizeof who);
    smoke_say_choice(want, framework ? who : NULL, path, loader);
    if (framework)
        want = path;
    json_decref(bare);
    return want;
}

static bool preloaded(void)
{
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "libconvguard.so");
}

static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard smoke [--dir D] [--cudnn FILE]\n"
               "  a tiny convolution (forward, backward data, backward filter) through\n"
               "  cuDNN on the GPU, under the shim, each checked against the CPU; on a\n"
               "  failure, the report of its trace\n"
               "  --dir D      where the trace goes (default: a new /tmp/convguard-smoke.*)\n"
               "  --cudnn FILE the libcudnn.so.N to test (default: the one the framework\n"
               "               installed here loads, else the loader's; it says which)\n"
               "exit status: 0 it worked, 1 it failed or the trace shows a problem, 2 usage\n");
    return rc;
}

int cmd_smoke(int argc, char **argv)
{
    static const struct option longopts[] = {{"dir", required_argument, 0, 'd'}, {"cudnn", required_argument, 0, 'c'},
                                             {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *dir = NULL, *want = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:c:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'c': want = optarg; break;
        default: return c == 'h' ? usage(stdout, 0) : usage(stderr, 2);
        }
    }
    t_start = now();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (preloaded())
        return smoke_steps(want);
    /* not under the shim yet: run ourselves under it, then read our trace */
    char tmpl[] = "/tmp/convguard-smoke.XXXXXX";
    if (!dir && !(dir = mkdtemp(tmpl))) {
        perror("convguard smoke: mkdtemp");
        return 2;
    }
    mkdir(dir, 0700);
    char *abs = realpath(dir, NULL), self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!abs || n <= 0) {
        fprintf(stderr, "convguard smoke: cannot use %s\n", dir);
        return 2;
    }
    self[n] = 0;
    char chosen[PATH_MAX];
    want = choose_cudnn(want, chosen, sizeof chosen);
    char *args[] = {self, "smoke", want ? "--cudnn" : NULL, (char *)want, NULL};
    struct run_opts o = {.dir = abs, .quiet = true, .ws_mb = -1, .reserve_mb = -1};
    double started = 0;
    smoke_say_traces(abs);
    int rc = run_traced(&o, args, &started);
    if (rc != 0) {
        smoke_say_failed(now() - t_start);
        report_recent(abs, started, stdout, true);
    } else if (report_recent(abs, started, stdout, false) > 0) {
        rc = 1; /* it ran, but the trace shows a problem (a fallback, say) */
    }
    free(abs);
    return rc;
}
