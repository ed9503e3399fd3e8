"""A CuPy RawKernel that stops itself with __trap() (what a failed check in hand-written device
code does): "unspecified launch failure"."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("cupy")
import cupy as cp  # noqa: E402

check = cp.RawKernel(r'''
extern "C" __global__ void check(const int *idx, int n) { if (idx[threadIdx.x] >= n) __trap(); }
''', "check")
idx = cp.arange(64, dtype=cp.int32)
check((1,), (64,), (idx, cp.int32(32)))
cp.cuda.runtime.deviceSynchronize()
print("checked")
