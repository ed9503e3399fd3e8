/* convguard.c - the command: run a program under the shim, read its traces,
 * check the machine, or run a tiny convolution. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef CONVGUARD_VERSION
#define CONVGUARD_VERSION "?"
#endif

static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard COMMAND [ARGS]\n"
               "  run [--fallback] [--dir D] [--workspace-limit MB] [--reserve MB] [--quiet] -- CMD...\n"
               "                  run CMD under the shim; report when it fails\n"
               "  report [--json] [--html FILE] [-v] PATH...\n"
               "                  read traces (files, directories; many processes, ranks, hosts)\n"
               "  doctor [--json] every cuDNN / CUDA runtime / driver copy on this machine, and a verdict\n"
               "  inspect [--json] [--html FILE] PID\n"
               "                  the CUDA libraries a running process mapped, read from outside\n"
               "  kernel install [--user|--sys-prefix|--prefix DIR] [--name N] [--display-name T] [--fallback]\n"
               "         [--dir D] | kernel uninstall [NAME]\n"
               "                  a Jupyter kernel with the shim preloaded (needs Python with ipykernel)\n"
               "  smoke [--dir D] a tiny convolution through cuDNN, checked against the CPU\n"
               "  shim-path       the libconvguard.so that run preloads, for launchers that set LD_PRELOAD\n"
               "  version\n"
               "See convguard(1): man convguard.\n");
    return rc;
}

/* The path alone on stdout: LD_PRELOAD=$(convguard shim-path) */
static int cmd_shim_path(void)
{
    char *shim = find_shim();
    if (!shim) {
        fprintf(stderr, "convguard: libconvguard.so is neither next to this program nor in ../lib "
                        "(set CONVGUARD_SHIM=/path/to/libconvguard.so)\n");
        return 1;
    }
    printf("%s\n", shim);
    free(shim);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr, 2);
    const char *c = argv[1];
    if (strcmp(c, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(c, "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(c, "doctor") == 0)
        return cmd_doctor(argc - 1, argv + 1);
    if (strcmp(c, "inspect") == 0)
        return cmd_inspect(argc - 1, argv + 1);
    if (strcmp(c, "kernel") == 0)
        return cmd_kernel(argc - 1, argv + 1);
    if (strcmp(c, "smoke") == 0)
        return cmd_smoke(argc - 1, argv + 1);
    if (strcmp(c, "shim-path") == 0)
        return cmd_shim_path();
    if (strcmp(c, "version") == 0 || strcmp(c, "--version") == 0) {
        printf("convguard %s\n", CONVGUARD_VERSION);
        return 0;
    }
    if (strcmp(c, "help") == 0 || strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0)
        return usage(stdout, 0);
    fprintf(stderr, "convguard: unknown command '%s'\n", c);
    return usage(stderr, 2);
}
