/* nvversion.c - the kernel module's version in the text of
 * /proc/driver/nvidia/version, kept apart so a unit test can feed it the
 * texts real machines print. */
#include <stdbool.h>
#include <string.h>

#include "loader/loader.h"

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == 0; }

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 ..."
 * or "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...":
 * the first word after "Kernel Module" made only of digits and dots, with a
 * dot in it (not the 86 of x86_64: seen on the H200, whose driver then
 * "mismatched" itself). */
bool cg_nvidia_module_version(const char *text, char *out, size_t cap)
{
    const char *k = strstr(text, "Kernel Module");
    if (!k)
        return false;
    for (k += 13; *k; k++) {
        if (!is_space(k[-1]) || is_space(*k))
            continue;
        size_t len = strspn(k, "0123456789.");
        if (len && k[0] != '.' && memchr(k, '.', len) && is_space(k[len])) {
            if (len >= cap)
                return false;
            memcpy(out, k, len);
            out[len] = 0;
            return true;
        }
    }
    return false;
}
