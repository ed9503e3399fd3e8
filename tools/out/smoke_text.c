/* smoke_text.c - what `convguard smoke` says on stdout: which cuDNN it tests,
 * each step of its convolution as it starts ("[3] describe ...") and ends
 * (" ok", or " FAILED" and why), and how the run ended.  A step's line is
 * flushed before the step runs: a step that hangs shows which one. */
#include "out/out.h"

static int step_no;

void smoke_step(const char *what)
{
    printf("[%d] %-44s", ++step_no, what);
    fflush(stdout);
}

void smoke_ok(const char *detail) { printf(" ok%s%s\n", *detail ? "  " : "", detail); }

void smoke_failed(const char *why) { printf(" FAILED\n    %s\n", why); }

void smoke_say_passed(double worst, double seconds)
{
    printf("smoke: ok: cuDNN forward, backward data and backward filter match the CPU (max relative error %.1e) in %.2f s\n",
           worst, seconds);
}

/* want: --cudnn's; else who (a framework) loads path, or NULL: the loader's
 * (loader: what a program loading libcudnn.so.9 by name gets, NULL none) */
void smoke_say_choice(const char *want, const char *who, const char *path, const char *loader)
{
    if (want) {
        printf("convguard smoke: testing %s (--cudnn)\n", want);
    } else if (who) {
        printf("convguard smoke: testing the cuDNN %s here loads: %s\n", who, path);
        if (loader)
            printf("  (a program loading libcudnn.so.9 by name gets %s; `--cudnn libcudnn.so.9` tests that)\n",
                   loader);
    } else {
        printf("convguard smoke: testing the cuDNN a program loading libcudnn.so.9 by name gets: %s\n",
               loader ? loader : "none (not found)");
        printf("  (no PyTorch, TensorFlow or JAX with a cuDNN of its own in this python3)\n");
    }
}

void smoke_say_traces(const char *dir) { printf("convguard smoke: traces in %s\n", dir); }

void smoke_say_failed(double seconds) { printf("smoke: FAILED in %.2f s; what the trace says:\n", seconds); }
