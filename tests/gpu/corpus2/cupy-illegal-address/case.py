"""A CuPy RawKernel that writes far past its buffer (a wrong stride): the GPU faults and the
next synchronisation raises cudaErrorIllegalAddress."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("cupy")
import cupy as cp  # noqa: E402

poke = cp.RawKernel(r'''
extern "C" __global__ void poke(float *p, long long far) { p[threadIdx.x + far] = 1.0f; }
''', "poke")
a = cp.zeros(256, cp.float32)
poke((1,), (256,), (a, cp.int64(1 << 36)))
cp.cuda.runtime.deviceSynchronize()
print("sum", float(a.sum()))
