"""A convolution training step for the fallback section of tests/gpu/run.sh:
   python3 tests/gpu/fb_conv.py torch|jax
CG_FB_N/C/HW (batch, channels, side; default 64, 256, 56), CG_FB_STEPS (default 20), CG_BENCH (torch
cudnn.benchmark, default 1).  Inputs are seeded; TF32 is off, so algorithms agree to float32 rounding.
Prints 'free ...', then 'result <sum of y> <sum of |dW|>' and 'steps_per_s <x>' (steps after the
first), or 'failed: <error>' with exit status 1.

CG_FB_POOL_LEAVE_MB=L (torch): before the first convolution the program takes a memory pool the way
TensorFlow's allocator and vLLM's KV cache do: it asks how much is free (torch.cuda.mem_get_info(), i.e.
cudaMemGetInfo) and allocates all of it but L MiB.  Its own tensors come from a block it allocated and
released before (PyTorch keeps it cached), so what is left to cuDNN itself (its handle, its kernels, a
workspace PyTorch cannot serve from the cache) is L MiB."""
import os, sys, time
fw = sys.argv[1]
n, c, hw = (int(os.environ.get(k, d)) for k, d in (("CG_FB_N", 64), ("CG_FB_C", 256), ("CG_FB_HW", 56)))
steps = int(os.environ.get("CG_FB_STEPS", 20))
import numpy as np
rng = np.random.default_rng(0)
xh = rng.standard_normal((n, c, hw, hw), dtype=np.float32)
wh = (rng.standard_normal((c, c, 3, 3), dtype=np.float32) * 0.05).astype(np.float32)
try:
    if fw == "torch":
        import torch
        torch.backends.cudnn.benchmark = os.environ.get("CG_BENCH", "1") == "1"
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        x = torch.from_numpy(xh).cuda()
        w = torch.from_numpy(wh).cuda().requires_grad_(True)
        free, total = torch.cuda.mem_get_info()
        print("free %d of %d bytes" % (free, total), flush=True)
        leave = os.environ.get("CG_FB_POOL_LEAVE_MB")
        if leave is not None:
            # room for the step's own tensors (y, its square, the gradients: 6x y, plus 256 MiB), allocated
            # and released: it stays in PyTorch's cache and serves them without asking the driver
            cached = torch.empty(6 * n * c * hw * hw * 4 + (256 << 20), dtype=torch.uint8, device="cuda")
            del cached
            free, total = torch.cuda.mem_get_info()
            pool = torch.empty(max(0, free - (int(leave) << 20)), dtype=torch.uint8, device="cuda")
            print("pool %d bytes of %d free (total %d), leaving %s MiB" % (pool.numel(), free, total, leave),
                  flush=True)
        def step():
            y = torch.nn.functional.conv2d(x, w, padding=1)
            (gw,) = torch.autograd.grad(y.square().mean(), [w])
            return y, gw
        y, gw = step(); torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps - 1):
            y, gw = step()
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        r = (float(y.double().sum()), float(gw.double().abs().sum()))
    else:
        import jax, jax.numpy as jnp
        jax.config.update("jax_default_matmul_precision", "highest")
        x = jnp.asarray(xh); w = jnp.asarray(wh)
        st = jax.devices()[0].memory_stats() or {}
        print("free: jax bytes_limit %s, in use %s" % (st.get("bytes_limit"), st.get("bytes_in_use")), flush=True)
        def conv(w):
            return jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                                precision=jax.lax.Precision.HIGHEST)
        @jax.jit
        def step(w):
            y, vjp = jax.vjp(conv, w)
            (gw,) = vjp(2.0 * y / y.size)
            return y, gw
        y, gw = step(w); jax.block_until_ready(gw)
        t0 = time.perf_counter()
        for _ in range(steps - 1):
            y, gw = step(w)
        jax.block_until_ready(gw)
        dt = time.perf_counter() - t0
        r = (float(jnp.sum(y.astype(jnp.float32))), float(jnp.sum(jnp.abs(gw))))
    print("result %.9e %.9e" % r, flush=True)
    print("steps_per_s %.3f" % ((steps - 1) / dt if dt > 0 else float("nan")), flush=True)
except Exception as e:  # the framework's own error text, first line
    print("failed: %s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:300]), flush=True)
    sys.exit(1)
