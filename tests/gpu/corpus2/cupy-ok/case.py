"""A CuPy matmul and a RawKernel that work: no problem found."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("cupy")
import cupy as cp  # noqa: E402

add = cp.RawKernel(r'''
extern "C" __global__ void add(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}
''', "add")
n = 1 << 16
x = cp.arange(n, dtype=cp.float32)
y = cp.ones(n, cp.float32)
add((n // 256,), (256,), (x, y, cp.int32(n)))
a = cp.ones((512, 512), cp.float32)
print("sum", float(y.sum()), float((a @ a).sum()), flush=True)
