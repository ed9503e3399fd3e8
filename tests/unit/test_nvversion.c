/* test_nvversion.c - cg_nvidia_module_version on the texts that real
 * machines' /proc/driver/nvidia/version hold (the H200's open module names
 * x86_64 before its version). */
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"

static int failed;

static void expect(const char *text, const char *want)
{
    char got[32] = "";
    bool ok = cg_nvidia_module_version(text, got, sizeof got);
    bool right = want ? ok && strcmp(got, want) == 0 : !ok;
    printf("  %s test_nvversion: %.60s... -> %s\n", right ? "ok  " : "FAIL", text, ok ? got : "(none)");
    failed += !right;
}

int main(void)
{
    expect("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16-I1-N08-12-3)  Thu Nov 13 05:05:23 UTC 2025\nGCC version:  gcc version 11.4.0\n", "580.159.04");
    expect("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n", "535.129.03");
    expect("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build\n", "570.86.15");
    expect("NVRM version: NVIDIA UNIX Kernel Module for x86_64 86 \n", NULL);
    expect("no module here 1.2.3\n", NULL);
    char small[4];
    printf("  %s test_nvversion: a version longer than the buffer is refused\n",
           !cg_nvidia_module_version("Kernel Module 580.159.04 x", small, sizeof small) ? "ok  " : "FAIL");
    return failed ? 1 : 0;
}
