/* doctor.c - `convguard doctor`: every cuDNN, CUDA runtime and driver copy on
 * this machine, the version each reports about itself, which copy a program
 * gets today, the GPUs, and a verdict.  No GPU needed.
 *
 * The copies are found and asked by host/copies.c (libraries are only ever
 * loaded in a forked child: host/probe.c), judged by analysis/machine.c and
 * shown by out/doctor_text.c (--json: the result itself). */
#include <getopt.h>
#include <stdlib.h>

#include "cli.h"
#include "host/host.h"
#include "analysis/analysis.h"
#include "out/out.h"

static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard doctor [--json]\n"
               "  every cuDNN, CUDA runtime and driver copy on this machine (the loader's\n"
               "  search path, LD_LIBRARY_PATH, the Python environments' wheels), the one\n"
               "  each framework here would load, the driver and the GPUs (NVML), and a verdict\n"
               "  --json      the same as JSON on stdout\n"
               "exit status: 0 no problem found, 1 problems found, 2 usage\n");
    return rc;
}

int cmd_doctor(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    bool as_json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+jh", longopts, NULL)) != -1) {
        if (c == 'j')
            as_json = true;
        else
            return c == 'h' ? usage(stdout, 0) : usage(stderr, 2);
    }
    json_t *dirs = copies_dirs();
    json_t *r = json_object();
    json_t *copies = copies_scan(dirs);
    json_object_set_new(r, "searched", json_array());
    const char *key;
    json_t *d;
    json_object_foreach(dirs, key, d)
        json_array_append_new(json_object_get(r, "searched"), json_pack("{s:s, s:O}", "dir", key, "sources",
                                                                        json_object_get(d, "sources")));
    json_object_set_new(r, "copies", copies);
    json_object_set_new(r, "picks", copies_picks(copies));
    json_object_set_new(r, "nvml", probe_run(probe_nvml, NULL));
    json_object_set_new(r, "env", json_pack("{s:o, s:o}", "LD_LIBRARY_PATH",
                                            getenv("LD_LIBRARY_PATH") ? json_string(getenv("LD_LIBRARY_PATH")) : json_null(),
                                            "CUDA_VISIBLE_DEVICES",
                                            getenv("CUDA_VISIBLE_DEVICES") ? json_string(getenv("CUDA_VISIBLE_DEVICES"))
                                                                           : json_null()));
    json_object_set_new(r, "problems", machine_verdict(r, getenv("CUDA_VISIBLE_DEVICES")));
    int rc = json_array_size(json_object_get(r, "problems")) ? 1 : 0;
    if (as_json) {
        json_dumpf(r, stdout, JSON_INDENT(2));
        printf("\n");
    } else {
        doctor_print(r);
    }
    json_decref(r);
    json_decref(dirs);
    return rc;
}
