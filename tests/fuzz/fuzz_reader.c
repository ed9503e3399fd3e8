/* fuzz_reader.c - libFuzzer target for the CLI's trace reader and analysis
 * (tools/model/, tools/rules/, tools/analysis/, tools/out/json.c): the input is one trace
 * file; it is read, linked, analysed and turned into the JSON report.  It
 * must never crash, hang or read out of bounds, whatever the bytes. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "out/out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("x.jsonl", 0);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return 0;
    struct trace_set s = {0};
    rules_keep_events();
    trace_set_add(&s, path);
    trace_set_link(&s);
    struct analysis *a = analyse(&s);
    json_t *j = analysis_json(a);
    char *text = json_dumps(j, JSON_COMPACT);
    free(text);
    json_decref(j);
    analysis_free(a);
    trace_set_free(&s);
    return 0;
}
