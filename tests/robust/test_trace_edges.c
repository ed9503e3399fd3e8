/* test_trace_edges.c - the trace builder at its edges (tests/unit/
 * test_trace_edges.sh): buffers too small for any line, a name that does not
 * fit, closes after an overflow, guard bytes after the buffer, the failure
 * marking that crash.last_failure reads, the size cap.  Lines go to argv[1]. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

struct cg_state cg = {.fd = -1};
void cg_trace_test_adopt(int fd);

static int guard_ok(const char *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (g[i] != 0x5a)
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    cg.fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
    cg_trace_test_adopt(cg.fd);
    cg_cfg.max_mb = 0;
    struct cg_ev e;
    struct {
        char buf[CG_EV_MIN];
        char guard[64];
    } s;

    /* too small for any line: nothing written, counted as dropped */
    memset(&s, 0x5a, sizeof s);
    cg_ev_begin(&e, s.buf, CG_EV_MIN - 1, "tiny");
    cg_ev_str(&e, "k", "v");
    cg_ev_end(&e);
    printf("tiny dropped=%llu guard=%d\n", (unsigned long long)atomic_load(&cg_events_dropped), guard_ok(s.guard, 64));

    /* the name alone overflows: {"truncated":true} */
    memset(&s, 0x5a, sizeof s);
    char longname[200];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    cg_ev_begin(&e, s.buf, sizeof s.buf, longname);
    cg_ev_end(&e);
    printf("longname guard=%d\n", guard_ok(s.guard, 64));

    /* 1000 opens and closes after an overflow never write past the buffer */
    memset(&s, 0x5a, sizeof s);
    cg_ev_begin(&e, s.buf, sizeof s.buf, "nested");
    for (int i = 0; i < 1000; i++) {
        cg_ev_open(&e, "k", i % 2 ? '[' : '{');
        cg_ev_str(&e, i % 2 ? NULL : "x", "0123456789");
    }
    for (int i = 999; i >= 0; i--)
        cg_ev_close(&e, i % 2 ? ']' : '}');
    cg_ev_end(&e);
    printf("nested guard=%d\n", guard_ok(s.guard, 64));

    /* failure marking: a *_failed name, a top-level "ok": false or non-zero
     * "status"; a nested status is not a failure */
    char b[1024];
    const char *names[] = {"call_failed", "cudnn_handle", "dlopen", "conv_algos", "lib"};
    for (int i = 0; i < 5; i++) {
        cg_ev_begin(&e, b, sizeof b, names[i]);
        if (i == 1)
            cg_ev_i64(&e, "status", 1001);
        if (i == 2)
            cg_ev_bool(&e, "ok", false);
        if (i == 3) {
            cg_ev_i64(&e, "status", 0);
            cg_ev_open(&e, "algos", '[');
            cg_ev_open(&e, NULL, '{');
            cg_ev_i64(&e, "status", 3);
            cg_ev_close(&e, '}');
            cg_ev_close(&e, ']');
        }
        cg_ev_end(&e);
        printf("%s last_failure=%lld\n", names[i], (long long)atomic_load(&cg_last_failure_seq) - 1);
    }

    /* UTF-8: well-formed kept; surrogates, overlong forms and code points
     * past U+10FFFF escaped byte by byte */
    cg_ev_begin(&e, b, sizeof b, "utf8");
    cg_ev_str(&e, "ok", "\xf0\x9f\x98\x80");
    cg_ev_str(&e, "surrogate", "\xed\xa0\x80");
    cg_ev_str(&e, "overlong", "\xe0\x80\xaf");
    cg_ev_str(&e, "too_big", "\xf4\x90\x80\x80");
    cg_ev_str(&e, "f7", "\xf7\x94\x94\x94");
    cg_ev_end(&e);

    /* the cap: 1 MiB; 3000 lines of ~500 bytes, then exit past it */
    cg_cfg.max_mb = 1;
    cg_cfg.repeats = 0; /* every filler written: the cap is what is tested (repeat folding: t_repeat.sh) */
    char pad[400];
    memset(pad, 'p', sizeof pad - 1);
    pad[sizeof pad - 1] = 0;
    for (int i = 0; i < 3000; i++) {
        cg_ev_begin(&e, b, sizeof b, "filler");
        cg_ev_str(&e, "pad", pad);
        cg_ev_end(&e);
    }
    cg_ev_begin(&e, b, sizeof b, "exit");
    cg_ev_end(&e);
    printf("capped dropped=%llu\n", (unsigned long long)atomic_load(&cg_events_dropped));
    return 0;
}
