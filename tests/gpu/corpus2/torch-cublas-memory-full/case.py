"""Memory taken outside PyTorch's allocator in the same process (what a CUDA extension or a
second library does; here cudaMalloc through ctypes on the cudart PyTorch loaded), then the first
matrix product: cuBLAS cannot get memory for its handle or workspace."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import ctypes  # noqa: E402
import torch  # noqa: E402

a = torch.randn(256, 256, device="cuda")
b = torch.randn(256, 256, device="cuda")
cudart_path = next((l.split()[-1] for l in open("/proc/self/maps") if "libcudart.so" in l), None)
if not cudart_path:
    lib.skip("PyTorch here maps no libcudart (statically linked?)")
cudart = ctypes.CDLL(cudart_path)
held, chunk = 0, 1 << 30
while chunk >= (1 << 20):
    p = ctypes.c_void_p()
    if cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(chunk)) == 0:
        held += chunk  # kept: never freed, as an extension's buffers
    else:
        chunk //= 2
cudart.cudaGetLastError()  # the failed cudaMalloc calls leave their status: cleared
print("held outside PyTorch: %d MiB" % (held >> 20), flush=True)
c = a @ b
torch.cuda.synchronize()
print("sum", float(c.sum()))
