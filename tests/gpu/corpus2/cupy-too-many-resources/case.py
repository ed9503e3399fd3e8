"""A CuPy RawKernel that keeps 128 floats per thread in registers, launched with 1024 threads
per block: its registers times 1024 exceed the 65536 of a block, and the launch fails with "too
many resources requested for launch"."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("cupy")
import cupy as cp  # noqa: E402

heavy = cp.RawKernel(r'''
extern "C" __global__ void heavy(const float *in, float *out, int n) {
    float a[128];
#pragma unroll
    for (int i = 0; i < 128; i++) a[i] = in[(threadIdx.x + i) % n];
    for (int k = 0; k < n; k++) {
#pragma unroll
        for (int i = 0; i < 128; i++) a[i] = a[i] * a[(i + 1) & 127] + in[k];
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; i++) s += a[i];
    out[threadIdx.x] = s;
}
''', "heavy")
n = 1024
x = cp.random.rand(n, dtype=cp.float32)
out = cp.zeros(n, cp.float32)
regs, most = heavy.num_regs, heavy.max_threads_per_block
print("kernel: %d registers per thread, at most %d threads per block" % (regs, most), flush=True)
if regs * 1024 <= 65536:
    lib.skip("the compiler kept the kernel at %d registers: 1024 threads fit" % regs)
heavy((1,), (1024,), (x, out, cp.int32(n)))
cp.cuda.runtime.deviceSynchronize()
print("sum", float(out.sum()))
