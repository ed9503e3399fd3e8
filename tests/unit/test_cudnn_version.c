/* test_cudnn_version.c - THE cuDNN version encoder (shim/cudnn_version.h),
 * the one the shim's loader, inspect, doctor's file reader and the rules
 * share: the texts file names, wheels and probes carry. */
#include <stdio.h>

#include "cudnn_version.h"

static int failed;

static void expect(const char *text, long long want)
{
    long long got = cg_cudnn_version_parse(text);
    printf("  %s test_cudnn_version: \"%s\" -> %lld (want %lld)\n", got == want ? "ok  " : "FAIL", text ? text : "(null)",
           got, want);
    failed += got != want;
}

static void expect_of(long long major, long long minor, long long patch, long long want)
{
    long long got = cg_cudnn_version_of(major, minor, patch);
    printf("  %s test_cudnn_version: %lld.%lld.%lld -> %lld (want %lld)\n", got == want ? "ok  " : "FAIL", major, minor,
           patch, got, want);
    failed += got != want;
}

int main(void)
{
    expect("9.19", 91900);          /* major.minor: libcudnn_cnn.so.9.19, cuDNN's own second probe */
    expect("9.19.0", 91900);        /* libcudnn.so.9.19.0 */
    expect("9.19.0.56", 91900);     /* nvidia_cudnn_cu13-9.19.0.56.dist-info: the build number not read */
    expect("9.19.0.56.dist-info", 91900);
    expect("8.9.7", 8907);          /* cuDNN 8 numbering: major*1000 */
    expect("8.9.7.29", 8907);
    expect("7.6.5", 7605);
    expect("9.0.0", 90000);
    expect("9", -1);                /* a major alone (libcudnn.so.9) names no version */
    expect("9.", -1);
    expect("", -1);
    expect(NULL, -1);
    expect("garbage", -1);
    expect("x9.19", -1);
    expect("6.0.21", -1);           /* before cuDNN 7: not this numbering */
    expect("9.100.0", -1);          /* a part past 99 would run into the next */
    expect("9.19.100", -1);
    expect("123.1.0", -1);
    expect("99999999999999999999.1", -1); /* no overflow */
    expect_of(9, 19, 0, 91900);     /* the data bytes of a part: patch, minor, major */
    expect_of(8, 9, 7, 8907);
    expect_of(9, 19, 100, -1);
    expect_of(5, 1, 0, -1);
    return failed ? 1 : 0;
}
