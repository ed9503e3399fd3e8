/* fuzz_capture.c - libFuzzer target for the stderr capture: the relay's
 * writer (tools/relay.c: relay_save, its rank split and tail cut) and the
 * report's reader (tools/model/capture.c: the header, the sections, the line
 * scan, the rank prefixes, the quoted lines), then the analysis, the text
 * report and the JSON report of a process that failed.
 *
 * The first byte picks what the rest is:
 *   even: what a program wrote on stderr.  relay_save writes it as a capture
 *         file; it must be read back (the process gets its output_capture
 *         event, with the byte count written).
 *   odd:  a capture file itself (header line and sections), whatever its
 *         bytes: read as the report would find it beside the traces.
 * Either way it must never crash, hang or read out of bounds, and no text the
 * program wrote reaches the report as a control character: every `output`
 * event's text and the text report are free of bytes below 0x20 but tab and
 * newline (the report's own line breaks), of DEL and of C1 controls. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "out/out.h"
#include "relay.h"

#define CHILD 4242

static char dir[64] = "/tmp/cg-fuzz-capture.XXXXXX";
static char host[64] = "host";
static char trace_path[160], file_path[160];

/* the host name as relay.c and the shim sanitise it */
static void set_host(void)
{
    struct utsname u;
    if (uname(&u) != 0 || !u.nodename[0])
        return;
    snprintf(host, sizeof host, "%s", u.nodename);
    for (char *p = host; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '_' || *p == '-'))
            *p = '_';
}

/* one process that failed cudnnCreate, started by `convguard run` (pid CHILD - 1) */
static void write_trace(const char *h)
{
    FILE *f = fopen(trace_path, "w");
    if (!f)
        abort();
    fprintf(f,
            "{\"ev\":\"start\",\"seq\":0,\"t\":0.01,\"pid\":%d,\"tid\":%d,\"convguard\":\"0.1.0\",\"ppid\":%d,"
            "\"exe\":\"/usr/bin/python3\",\"argv\":[\"python3\",\"train.py\"],\"cwd\":\"/w\",\"host\":\"%s\","
            "\"rank\":null,\"uid\":0,\"wall_time\":1005,\"wall_time_ns\":0,\"env\":{},"
            "\"settings\":{\"fallback\":false,\"workspace_limit_mb\":-1,\"reserve_mb\":0}}\n"
            "{\"ev\":\"cudnn_handle\",\"seq\":1,\"t\":0.09,\"pid\":%d,\"tid\":%d,\"fn\":\"cudnnCreate\","
            "\"status\":4000,\"status_name\":\"CUDNN_STATUS_INTERNAL_ERROR\",\"ok\":false}\n"
            "{\"ev\":\"exit\",\"seq\":2,\"t\":0.1,\"pid\":%d,\"tid\":%d,\"libs\":0,\"failures\":1,"
            "\"load_failures_unresolved\":0,\"calls\":{},\"fails\":{},\"dlopen_repeats\":0,\"events_dropped\":0}\n",
            CHILD, CHILD, CHILD - 1, h, CHILD, CHILD, CHILD, CHILD);
    fclose(f);
}

static void setup(void)
{
    if (!mkdtemp(dir))
        abort();
    set_host();
    snprintf(trace_path, sizeof trace_path, "%s/%s-%d.jsonl", dir, host, CHILD);
    snprintf(file_path, sizeof file_path, "%s/fuzz-%d.stderr", dir, CHILD);
}

static void no_control(const char *s, size_t n, bool newline_ok)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool c1 = c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] < 0xa0; /* U+0080..U+009F */
        if ((c < 0x20 && c != '\t' && !(newline_ok && c == '\n')) || c == 0x7f || c1) {
            size_t from = i > 60 ? i - 60 : 0;
            fprintf(stderr, "control byte 0x%02x at %zu after: %.*s\n", c, i, (int)(i - from), s + from);
            abort();
        }
    }
}

/* relay_save's view of a program that wrote these bytes through a pipe */
static char *relay_write(const uint8_t *data, size_t size)
{
    static char *ring;
    if (!ring && !(ring = malloc(CAPTURE_WINDOW)))
        abort();
    if (size > CAPTURE_WINDOW)
        size = CAPTURE_WINDOW;
    memcpy(ring, data, size);
    struct relay r = {.mode = RELAY_PIPE, .child_fd = -1, .read_fd = -1, .hold = {-1, -1}, .ring = ring,
                      .head = size % CAPTURE_WINDOW, .seen = size};
    return relay_save(&r, dir, CHILD, 1000.0, 1010.0, 256);
}

static void read_back(bool written, size_t bytes)
{
    struct trace_set s = {0};
    char *paths[] = {dir};
    rules_keep_events();
    trace_set_add(&s, trace_path);
    trace_set_link(&s);
    capture_attach(&s, paths, 1, 0);
    if (s.n != 1)
        abort();
    json_t *m = capture_marker(&s.t[0]);
    if (written && (!m || jint(m, "bytes", -1) != (long long)bytes))
        abort(); /* what the relay wrote is read back */
    for (size_t i = 0; i < json_array_size(s.t[0].events); i++) {
        json_t *e = json_array_get(s.t[0].events, i);
        if (strcmp(jstr(e, "ev", ""), "output") == 0)
            no_control(jstr(e, "text", ""), strlen(jstr(e, "text", "")), false);
    }
    free(capture_symptom(&s.t[0]));
    struct analysis *a = analyse(&s);
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    if (!f)
        abort();
    print_text(a, f, true, true);
    fclose(f);
    no_control(text, tlen, true);
    free(text);
    json_t *j = analysis_json(a);
    free(json_dumps(j, JSON_COMPACT));
    json_decref(j);
    analysis_free(a);
    trace_set_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!trace_path[0])
        setup();
    if (size < 1)
        return 0;
    bool relay = (data[0] & 1) == 0;
    data++, size--;
    char *written = NULL;
    if (relay) {
        write_trace(host);
        written = relay_write(data, size);
        if (!written)
            abort(); /* the folder is ours and writable: the capture must be saved */
    } else {
        write_trace("fuzz");
        FILE *f = fopen(file_path, "w");
        if (!f || fwrite(data, 1, size, f) != size)
            abort();
        fclose(f);
    }
    read_back(relay, size);
    if (written)
        unlink(written);
    free(written);
    unlink(file_path);
    unlink(trace_path);
    return 0;
}
