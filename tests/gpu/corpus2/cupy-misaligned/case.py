"""A CuPy RawKernel that stores a double at an odd byte offset (a char buffer cast to double*):
"misaligned address"."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("cupy")
import cupy as cp  # noqa: E402

store = cp.RawKernel(r'''
extern "C" __global__ void store(char *p) { *(double *)(p + 1 + 8 * threadIdx.x) = 1.0; }
''', "store")
buf = cp.zeros(4096, cp.uint8)
store((1,), (32,), (buf,))
cp.cuda.runtime.deviceSynchronize()
print("sum", int(buf.sum()))
