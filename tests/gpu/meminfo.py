"""Free and total GPU memory as the CUDA driver reports them in a process that has started a framework
without preallocation:  python3 tests/gpu/meminfo.py jax|torch|bare  ->  'free <bytes> total <bytes>'.
The fallback section sizes XLA_PYTHON_CLIENT_MEM_FRACTION from it, so that JAX's preallocation leaves a
chosen number of MiB (what a user who sets the fraction to 'almost all' gets)."""
import ctypes, os, sys
fw = sys.argv[1] if len(sys.argv) > 1 else "bare"
if fw == "jax":
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    import jax
    jax.devices()
    import jax.numpy as jnp
    jnp.zeros(1).block_until_ready()
elif fw == "torch":
    import torch
    torch.zeros(1, device="cuda")
cu = ctypes.CDLL("libcuda.so.1")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
free, total = ctypes.c_size_t(), ctypes.c_size_t()
ok = (cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0 and
      cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0 and cu.cuCtxSetCurrent(ctx) == 0 and
      cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) == 0)
if not ok:
    print("failed"); sys.exit(1)
print("free %d total %d" % (free.value, total.value))
