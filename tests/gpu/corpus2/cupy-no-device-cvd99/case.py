"""CuPy with CUDA_VISIBLE_DEVICES naming a GPU that does not exist."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("cupy")
import cupy as cp  # noqa: E402

print(cp.zeros(4).sum())
