/* test_trace.c - the trace writer: every line valid JSON, whatever the input;
 * truncation keeps it valid; numbers exact. Output is checked by test_trace.sh
 * with jq. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

struct cg_state cg = {.fd = -1};

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    cg.fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
    snprintf(cg.path, sizeof cg.path, "%s", argv[1]); /* what a lost descriptor is reopened by */
    /* cg_trace_write checks the descriptor is still the file it opened */
    cg_cfg.max_mb = 0;
    extern void cg_trace_test_adopt(int fd);
    cg_trace_test_adopt(cg.fd);
    char b[CG_EV_BUF];
    struct cg_ev e;

    cg_ev_begin(&e, b, sizeof b, "strings");
    cg_ev_str(&e, "quote", "a\"b\\c");
    cg_ev_str(&e, "ctrl", "tab\tnl\ncr\rbell\a");
    cg_ev_str(&e, "utf8", "caf\xc3\xa9 \xe6\x97\xa5");
    cg_ev_str(&e, "bad_utf8", "x\xff\xfey\xc3");
    cg_ev_str(&e, "null", NULL);
    cg_ev_end(&e);

    cg_ev_begin(&e, b, sizeof b, "numbers");
    cg_ev_i64(&e, "neg", -9223372036854775807LL - 1);
    cg_ev_u64(&e, "big", 18446744073709551615ULL);
    cg_ev_i64(&e, "zero", 0);
    cg_ev_hex(&e, "hex", 0x7f12abcdULL);
    cg_ev_bool(&e, "yes", true);
    cg_ev_end(&e);

    /* an event far larger than its buffer: cut, marked, still valid */
    char small[512];
    cg_ev_begin(&e, small, sizeof small, "huge");
    cg_ev_open(&e, "list", '[');
    for (int i = 0; i < 200; i++)
        cg_ev_str(&e, NULL, "0123456789");
    cg_ev_close(&e, ']');
    cg_ev_end(&e);

    cg_ev_begin(&e, small, sizeof small, "huge_string");
    char big[4096];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = 0;
    cg_ev_str(&e, "s", big);
    cg_ev_end(&e);

    /* the descriptor replaced behind our back: nothing may be written to
     * it; the file is opened again by its path and the event goes there,
     * after a trace_gap */
    int old = cg.fd;
    close(cg.fd);
    int other = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (other != old)
        dup2(other, old);
    cg_ev_begin(&e, b, sizeof b, "after_reuse");
    cg_ev_end(&e);
    printf("dropped=%llu reopened_above=%d\n", (unsigned long long)atomic_load(&cg_events_dropped),
           cg_trace_fd() > old && cg_trace_fd() >= 100);
    /* closed and the file removed: tracing off, the event counted */
    close(cg_trace_fd());
    unlink(argv[1]);
    cg_ev_begin(&e, b, sizeof b, "after_removal");
    cg_ev_end(&e);
    printf("dropped=%llu off=%d\n", (unsigned long long)atomic_load(&cg_events_dropped), cg_trace_fd() == -1);
    return 0;
}
