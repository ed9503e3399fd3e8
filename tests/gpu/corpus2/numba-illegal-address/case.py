"""A numba-cuda kernel that writes far past its array (numba does not check bounds): the driver
reports CUDA_ERROR_ILLEGAL_ADDRESS at the next call."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("numba", "numpy")
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402


@cuda.jit
def poke(a, far):
    i = cuda.grid(1)
    a[i + far] = 1.0


a = cuda.device_array(256, np.float32)
poke[1, 256](a, 1 << 36)
cuda.synchronize()
print("sum", float(a.copy_to_host().sum()))
