/* check_cudefs.c - shim/cudefs.h agrees with the real headers on every value
 * and layout the shim relies on. */
#include <stdio.h>
extern const long long cudefs_ours[], cudefs_real[];
extern const char *const cudefs_names[];
extern const size_t cudefs_count;
int main(void)
{
    int bad = 0;
    for (size_t i = 0; i < cudefs_count; i++)
        if (cudefs_ours[i] != cudefs_real[i]) {
            printf("MISMATCH %s: ours %lld, real %lld\n", cudefs_names[i], cudefs_ours[i], cudefs_real[i]);
            bad++;
        }
    printf("%zu values checked, %d mismatches\n", cudefs_count, bad);
    return bad != 0;
}
