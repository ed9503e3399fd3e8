/* test_fallback.c - the fallback policy's pure functions. */
#include <stdio.h>
#include <string.h>

#include "fallback/fallback.h"

struct cg_state cg = {.fd = -1};
static int bad;
#define EXPECT(c)                                                                                              \
    do {                                                                                                       \
        if (!(c)) {                                                                                            \
            printf("FAIL line %d: %s\n", __LINE__, #c);                                                        \
            bad++;                                                                                             \
        }                                                                                                      \
    } while (0)
#define MIB (1024ull * 1024ull)

int main(void)
{
    /* the limit */
    cg_cfg.workspace_limit_mb = -1;
    EXPECT(cg_fallback_limit(false, 0) == SIZE_MAX);
    EXPECT(cg_fallback_limit(true, 300 * MIB) == 236 * MIB);       /* margin 64 MiB */
    EXPECT(cg_fallback_limit(true, 32 * MIB) == 0);                /* less than the margin */
    EXPECT(cg_fallback_limit(true, 1600 * MIB) == 1500 * MIB);     /* margin 1/16 */
    cg_cfg.workspace_limit_mb = 128;
    EXPECT(cg_fallback_limit(true, 4096 * MIB) == 128 * MIB);      /* the setting wins */
    EXPECT(cg_fallback_limit(false, 0) == 128 * MIB);

    /* ordering: cuDNN's order kept among those that fit, and among the rest */
    cudnnConvolutionFwdAlgoPerf_t p[4] = {
        {.algo = 7, .status = 0, .memory = 512 * MIB}, {.algo = 1, .status = 0, .memory = 64 * MIB},
        {.algo = 2, .status = 4004, .memory = 0}, {.algo = 0, .status = 0, .memory = 0}};
    int moved = cg_fallback_order_algos(p, 4, 100 * MIB);
    EXPECT(p[0].algo == 1 && p[1].algo == 0 && p[2].algo == 7 && p[3].algo == 2);
    EXPECT(moved == 4);
    EXPECT(cg_fallback_order_algos(p, 4, 100 * MIB) == 0); /* already in order: untouched */
    EXPECT(!cg_fallback_all_unusable(p, 4, 100 * MIB));
    cudnnConvolutionFwdAlgoPerf_t q[2] = {{.algo = 7, .status = 0, .memory = 512 * MIB},
                                          {.algo = 2, .status = 4004, .memory = 0}};
    EXPECT(cg_fallback_all_unusable(q, 2, 100 * MIB));
    EXPECT(cg_fallback_order_algos(q, 1, 0) == 0);

    /* reserve */
    cg_cfg.reserve_mb = 256;
    EXPECT(cg_fallback_reserved_free(1024 * MIB) == 768 * MIB);
    EXPECT(cg_fallback_reserved_free(100 * MIB) == 0);

    /* statuses that mean "no memory", by numbering */
    EXPECT(cg_fallback_mem_status(CG_SLOT_CUDNN9, 4003) && cg_fallback_mem_status(CG_SLOT_CUDNN9, 4004));
    EXPECT(!cg_fallback_mem_status(CG_SLOT_CUDNN9, 4000) && !cg_fallback_mem_status(CG_SLOT_CUDNN9, 2));
    EXPECT(cg_fallback_mem_status(CG_SLOT_CUDNN8, 2) && !cg_fallback_mem_status(CG_SLOT_CUDNN8, 4004));
    EXPECT(cg_fallback_bad_param(CG_SLOT_CUDNN9, 2000) && cg_fallback_bad_param(CG_SLOT_CUDNN9, 2010));
    EXPECT(!cg_fallback_bad_param(CG_SLOT_CUDNN9, 3000) && cg_fallback_bad_param(CG_SLOT_CUDNN8, 3));
    cudnnConvolutionFwdAlgoPerf_t m[2] = {{.algo = 2, .status = 4004}, {.algo = 1, .status = 4003}};
    EXPECT(cg_fallback_all_failed_for_memory(m, 2, CG_SLOT_CUDNN9));
    m[1].status = 0;
    EXPECT(!cg_fallback_all_failed_for_memory(m, 2, CG_SLOT_CUDNN9));
    EXPECT(!cg_fallback_all_failed_for_memory(m, 0, CG_SLOT_CUDNN9));

    /* the reserve acts only with CONVGUARD_FALLBACK=1; one event, every query counted */
    size_t fr = 1024 * MIB, tot = 2048 * MIB;
    atomic_store(&cg.traced, true);
    cg_cfg.fallback = false;
    cg_fallback_reserve_report("cudaMemGetInfo", &fr, &tot);
    EXPECT(fr == 1024 * MIB && tot == 2048 * MIB && cg_fallback_reserve_reports() == 0);
    cg_cfg.fallback = true;
    uint64_t before = cg_fallback_count();
    cg_fallback_reserve_report("cudaMemGetInfo", &fr, &tot);
    EXPECT(fr == 768 * MIB && tot == 1792 * MIB && cg_fallback_reserve_reports() == 1 && cg_fallback_count() == before + 1);
    fr = 100 * MIB;
    cg_fallback_reserve_report("cuMemGetInfo_v2", &fr, NULL);
    EXPECT(fr == 0 && cg_fallback_reserve_reports() == 2 && cg_fallback_count() == before + 1);
    printf("test_fallback: %s\n", bad ? "FAILED" : "ok");
    return bad != 0;
}
