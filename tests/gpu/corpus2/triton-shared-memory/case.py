"""A Triton matmul configured for a larger GPU: 128x128x128 fp16 tiles with 5 pipeline stages
need about 320 KiB of shared memory per block; an H100/H200 block may have 227 KiB.  Triton
refuses at launch: "out of resource: shared memory, Required: ..., Hardware limit: ..."."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("triton", "torch")
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


M = N = K = 1024
a = torch.randn(M, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, N, device="cuda", dtype=torch.float16)
c = torch.empty(M, N, device="cuda", dtype=torch.float16)
matmul[(M // 128, N // 128)](a, b, c, M, N, K, BM=128, BN=128, BK=128, num_stages=5, num_warps=8)
torch.cuda.synchronize()
print("max error", float((c.float() - a.float() @ b.float()).abs().max()))
