"""cuBLAS called directly through CuPy with a leading dimension below the row count (row-major
thinking in a column-major API): CUBLAS_STATUS_INVALID_VALUE."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("cupy")
import numpy as np  # noqa: E402
import cupy as cp  # noqa: E402

try:
    from cupy_backends.cuda.libs import cublas
except ImportError:
    from cupy.cuda import cublas
m = n = k = 64
a = cp.ones((m, k), cp.float32)
b = cp.ones((k, n), cp.float32)
c = cp.zeros((m, n), cp.float32)
one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
h = cp.cuda.device.get_cublas_handle()
cublas.setPointerMode(h, cublas.CUBLAS_POINTER_MODE_HOST)
cublas.sgemm(h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, m, n, k, one.ctypes.data, a.data.ptr, 1,
             b.data.ptr, k, zero.ctypes.data, c.data.ptr, m)  # lda 1 < m
cp.cuda.runtime.deviceSynchronize()
print("sum", float(c.sum()))
