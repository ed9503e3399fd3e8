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
    fprintf(o, "usage: convguard COMMAND [OPTIONS] [ARGS]\n"
               "  why cuDNN failed: trace a job, read the traces, check the machine\n"
               "commands:\n"
               "  run [--fallback] [--dir D] [--workspace-limit MB] [--reserve MB]\n"
               "      [--quiet] [--no-capture] -- CMD...\n"
               "                  CMD under the shim; the report when it fails\n"
               "  report [--json] [--html FILE] [--all] [--all-runs] [-v] [PATH...]\n"
               "                  the cause and the fix, from traces (files, folders;\n"
               "                  many processes, ranks, hosts)\n"
               "  doctor [--json] every cuDNN / CUDA runtime / driver copy here, a verdict\n"
               "  smoke [--dir D] [--cudnn FILE]\n"
               "                  a tiny convolution through cuDNN, checked against the CPU\n"
               "  inspect [--json] [--html FILE] PID...\n"
               "                  the CUDA libraries of running processes, read from outside\n"
               "  kernel install [--user|--sys-prefix|--prefix DIR] [--name N]\n"
               "         [--display-name T] [--fallback] [--dir D] | kernel uninstall [NAME]\n"
               "                  a Jupyter kernel with the shim preloaded\n"
               "  shim-path       the libconvguard.so run preloads (LD_PRELOAD=$(...))\n"
               "  step-report --step JOB.STEP [--task ...] DIR\n"
               "                  a failed Slurm step's report, for the Slurm plugin\n"
               "  version, -V     the version\n"
               "  help [COMMAND]  this text, or COMMAND's (as COMMAND --help)\n"
               "See convguard(1): man convguard.\n");
    return rc;
}

static int shim_path_usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard shim-path\n"
               "  prints the libconvguard.so that `convguard run` preloads, for launchers\n"
               "  that set LD_PRELOAD themselves: LD_PRELOAD=$(convguard shim-path)\n"
               "  found next to this program or in ../lib; CONVGUARD_SHIM=FILE overrides\n"
               "exit status: 0 found, 1 not found, 2 usage\n");
    return rc;
}

/* The path alone on stdout: LD_PRELOAD=$(convguard shim-path) */
static int cmd_shim_path(int argc, char **argv)
{
    if (argc > 1)
        return strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ? shim_path_usage(stdout, 0)
                                                                            : shim_path_usage(stderr, 2);
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

static int dispatch(int argc, char **argv);

/* `convguard help run`: run's own help */
static int cmd_help(int argc, char **argv)
{
    if (argc < 2)
        return usage(stdout, 0);
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "version") == 0)
        return usage(stdout, 0);
    char *args[] = {argv[0], argv[1], "--help", NULL};
    return dispatch(3, args);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr, 2);
    return dispatch(argc, argv);
}

static int dispatch(int argc, char **argv)
{
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
    if (strcmp(c, "step-report") == 0)
        return cmd_step_report(argc - 1, argv + 1);
    if (strcmp(c, "shim-path") == 0)
        return cmd_shim_path(argc - 1, argv + 1);
    if (strcmp(c, "version") == 0 || strcmp(c, "--version") == 0 || strcmp(c, "-V") == 0) {
        printf("convguard %s\n", CONVGUARD_VERSION);
        return 0;
    }
    if (strcmp(c, "help") == 0)
        return cmd_help(argc - 1, argv + 1);
    if (strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0)
        return usage(stdout, 0);
    fprintf(stderr, "convguard: unknown command '%s'\n", c);
    return usage(stderr, 2);
}
