"""clients_fidelity.py - one small GPU computation by another real client of
CUDA (the routes a shim must not disturb), for tests/gpu/run.sh clients:
    cupy    CuPy 14: its own loading of cudart/cuBLAS/cuDNN wheels, a matmul and cupy.cudnn's conv where present
    triton  Triton 3.6: libcuda by dlopen, a JIT-compiled vector add
    numba   numba-cuda: the driver through ctypes (cuGetProcAddress), a JIT kernel
Usage: python clients_fidelity.py CLIENT MAPS_OUT
Prints a line with the result's checksum (identical with and without the shim),
then writes the shared objects mapped at the end to MAPS_OUT (one path a line, sorted)."""
import sys


def cupy_run():
    import cupy as cp
    a = cp.arange(256 * 256, dtype=cp.float32).reshape(256, 256) / 65536
    s = float((a @ a).sum())
    out = "cupy %s matmul sum %.6f" % (cp.__version__, s)
    try:
        from cupyx import cudnn  # noqa: F401
        import cupy.cuda.cudnn as ccd
        out += "; cudnn %d" % ccd.getVersion()
    except Exception as e:  # cuDNN is optional in CuPy
        out += "; cudnn not used (%s)" % type(e).__name__
    return out


def triton_run():
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(o_ptr + i, tl.load(x_ptr + i, mask=m) + tl.load(y_ptr + i, mask=m), mask=m)

    n = 1 << 16
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    y = torch.ones(n, device="cuda", dtype=torch.float32)
    o = torch.empty_like(x)
    add[(n // 1024,)](x, y, o, n, BLOCK=1024)
    return "triton %s add sum %.1f" % (triton.__version__, float(o.sum()))


def numba_run():
    import numpy as np
    from numba import cuda

    @cuda.jit
    def scale(a, k):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= k

    a = cuda.to_device(np.arange(4096, dtype=np.float32))
    scale[16, 256](a, 2.0)
    return "numba-cuda scale sum %.1f" % float(a.copy_to_host().sum())


def main(client, maps_out):
    try:
        print("RESULT " + {"cupy": cupy_run, "triton": triton_run, "numba": numba_run}[client](), flush=True)
    except Exception as e:  # the client itself broken here (a version clash): the same with and without the shim
        print("RESULT %s failed: %s: %s" % (client, type(e).__name__, str(e).splitlines()[0][:200] if str(e) else ""), flush=True)
    # the shim's own file is the one object it may add
    libs = sorted({l.split()[-1] for l in open("/proc/self/maps")
                   if ".so" in l.split()[-1] and not l.split()[-1].endswith("/libconvguard.so")})
    with open(maps_out, "w") as f:
        f.write("\n".join(libs) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
