"""CuPy arrays of 8 GiB kept until the GPU is full: CuPy's OutOfMemoryError, "Out of memory
allocating ... (allocated so far: ...)"."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("cupy")
import cupy as cp  # noqa: E402

kept = []
while True:
    kept.append(cp.empty(8 << 30, cp.uint8))
    print("held GiB", 8 * len(kept), flush=True)
