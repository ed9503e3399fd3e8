/* fuzz_scan.c - libFuzzer target for tools/util/json_scan.c, checked against
 * jansson: the scan must judge a line as json_loadb does (one JSON object or
 * not) and pick the same `ev` and `seq`, and json_build_line must build what
 * json_loadb builds.  Known and accepted differences,
 * skipped here: duplicate keys (the reader parses every line it keeps with
 * JSON_REJECT_DUPLICATES), bytes that are not UTF-8 (the reader repairs them
 * first) and NUL bytes (jansson skips one after a number, elsewhere it ends
 * the input). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memchr(data, 0, size))
        return 0;
    struct json_scan sc;
    bool ok = json_scan_line((const char *)data, size, &sc);
    json_error_t err;
    json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &err);
    if (!j) {
        json_t *d = json_loadb((const char *)data, size, 0, &err);
        if (d) { /* duplicate keys */
            json_decref(d);
            return 0;
        }
    }
    if (ok != json_is_object(j) && !sc.high_bytes)
        abort();
    if (ok && json_is_object(j) && !sc.escaped_key) {
        json_t *ev = json_object_get(j, "ev"), *seq = json_object_get(j, "seq");
        if (json_is_string(ev) != sc.has_ev)
            abort();
        if (sc.has_ev && !sc.ev_escaped && !sc.high_bytes &&
            (strlen(json_string_value(ev)) != sc.ev_len || memcmp(json_string_value(ev), sc.ev, sc.ev_len) != 0))
            abort();
        if (json_is_integer(seq) && json_integer_value(seq) != sc.seq)
            abort();
        /* the picks a glance reads instead of building the start line (model/trace_read.c) */
        struct { const char *key; long long pick; } ints[] = {
            {"ppid", sc.ppid}, {"forked_from", sc.forked_from}, {"rank", sc.rank}, {"wall_time", sc.wall_time},
            {"wall_time_ns", sc.wall_time_ns}, {"bytes", sc.bytes}, {"asked", sc.asked}, {"pid", sc.pid}};
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
            json_t *v = json_object_get(j, ints[i].key);
            if (json_is_integer(v) && json_integer_value(v) != ints[i].pick)
                abort();
            if ((!v || json_is_null(v)) && ints[i].pick != -1)
                abort();
        }
        json_t *host = json_object_get(j, "host"), *argv = json_object_get(j, "argv");
        if (json_is_string(host) && !sc.host_escaped && !sc.high_bytes &&
            (json_string_length(host) != sc.host_len || memcmp(json_string_value(host), sc.host, sc.host_len) != 0))
            abort();
        if (json_is_array(argv) != (sc.argv_n >= 0) || (json_is_array(argv) && json_array_size(argv) != (size_t)sc.argv_n))
            abort();
    }
    /* the reader builds the lines it keeps with json_build_line: what jansson builds */
    if (ok && !sc.high_bytes) {
        json_t *b = json_build_line((const char *)data, size);
        if (!b != !j || (b && !json_equal(b, j)))
            abort();
        json_decref(b);
    }
    json_decref(j);
    return 0;
}
