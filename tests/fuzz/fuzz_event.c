/* fuzz_event.c - libFuzzer target for the trace builder (shim/core/trace.c).
 *
 * The input is a program for the builder: a buffer size, an event name, then
 * operations (strings of any bytes, numbers, booleans, hex, nested arrays and
 * objects, closes in any order).  Whatever it does, the line written must be
 * exactly one valid JSON object (strict: UTF-8, no raw control bytes) ending
 * in a newline, no byte may be written past the buffer (guard bytes, and
 * ASan), and cg_ev_end must write at most one line. */
#include <assert.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core.h"
#include "json_check.h"

struct cg_state cg = {.fd = -1};
void cg_trace_test_adopt(int fd);

struct in {
    const uint8_t *p;
    size_t n;
};
static int take(struct in *in)
{
    if (!in->n)
        return -1;
    in->n--;
    return *in->p++;
}
static size_t take_str(struct in *in, char *out, size_t cap)
{
    int len = take(in);
    size_t k = 0;
    if (len < 0)
        return 0;
    while (k < (size_t)len && k + 1 < cap && in->n) {
        out[k++] = (char)*in->p++;
        in->n--;
    }
    out[k] = 0;
    return k;
}
static unsigned long long take_u64(struct in *in)
{
    unsigned long long v = 0;
    for (int i = 0; i < 8; i++) {
        int b = take(in);
        v = v << 8 | (unsigned)(b < 0 ? 0 : b);
    }
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0) {
        fd = memfd_create("trace", 0);
        cg.fd = fd;
        cg_trace_test_adopt(fd);
        cg_cfg.max_mb = 0;
        cg_cfg.repeats = 0; /* one event per input, each written: no folding of repeats (repeat.c) */
    }
    ftruncate(fd, 0);
    lseek(fd, 0, SEEK_SET);
    struct in in = {data, size};
    int sz = take(&in);
    size_t cap = sz < 0 ? 64 : 16 + (size_t)sz * 24; /* 16 .. 6136, below and above CG_EV_MIN */
    enum { GUARD = 64 };
    char *mem = malloc(cap + GUARD);
    memset(mem + cap, 0x5a, GUARD);
    char name[300], key[300], val[300];
    take_str(&in, name, sizeof name);
    struct cg_ev e;
    cg_ev_begin(&e, mem, cap, name);
    int depth = 0;
    char stack[64];
    for (int op; (op = take(&in)) >= 0;) {
        bool in_array = depth > 0 && stack[depth - 1] == ']';
        const char *k = NULL;
        if (!in_array) {
            take_str(&in, key, sizeof key);
            k = key;
        }
        switch (op % 9) {
        case 0: {
            size_t n = take_str(&in, val, sizeof val);
            cg_ev_strn(&e, k, val, n); /* any bytes, NULs included */
            break;
        }
        case 1: take_str(&in, val, sizeof val); cg_ev_str(&e, k, op & 16 ? NULL : val); break;
        case 2: cg_ev_i64(&e, k, (long long)take_u64(&in)); break;
        case 3: cg_ev_u64(&e, k, take_u64(&in)); break;
        case 4: cg_ev_hex(&e, k, take_u64(&in)); break;
        case 5: cg_ev_bool(&e, k, op & 16); break;
        case 6:
            if (depth < 64) {
                stack[depth++] = op & 16 ? ']' : '}';
                cg_ev_open(&e, k, op & 16 ? '[' : '{');
            }
            break;
        case 7:
            if (depth > 0)
                cg_ev_close(&e, stack[--depth]);
            break;
        case 8: cg_ev_raw(&e, k, (op & 16) ? "null" : "12.5"); break; /* raw takes only valid JSON */
        }
    }
    while (depth > 0)
        cg_ev_close(&e, stack[--depth]);
    cg_ev_end(&e);
    for (int i = 0; i < GUARD; i++)
        assert(mem[cap + i] == 0x5a);
    free(mem);

    off_t len = lseek(fd, 0, SEEK_END);
    if (cap < CG_EV_MIN) {
        assert(len == 0);
        return 0;
    }
    assert(len > 1 && (size_t)len <= cap);
    char *line = malloc((size_t)len);
    assert(pread(fd, line, (size_t)len, 0) == len);
    assert(line[len - 1] == '\n');
    assert(memchr(line, '\n', (size_t)len - 1) == NULL);
    assert(json_is_one_object(line, (size_t)len - 1));
    free(line);
    return 0;
}
