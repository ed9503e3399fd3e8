"""A numba-cuda kernel launched with 2048 threads per block (the GPU allows 1024): the launch
fails with CUDA_ERROR_INVALID_VALUE, which names no limit; the report must say which one
(issue 27 item 3: the kernel's limits against the device's)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("numba", "numpy")
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402


@cuda.jit
def scale(a, k):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= k


a = cuda.to_device(np.arange(1 << 16, dtype=np.float32))
scale[32, 2048](a, 2.0)
cuda.synchronize()
print("sum", float(a.copy_to_host().sum()))
