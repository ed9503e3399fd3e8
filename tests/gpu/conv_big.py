"""One large convolution layer, forward and backward, for the near-out-of-memory
check of tests/gpu/run.sh (graph section):  python3 conv_big.py torch|jax
CG_BIG_N (batch, default 32), CG_BIG_C (channels, 128), CG_BIG_HW (side, 128).
Prints free/total GPU memory before the first step, then the outcome."""
import os, sys
fw = sys.argv[1]
n, c, hw = (int(os.environ.get(k, d)) for k, d in (("CG_BIG_N", 32), ("CG_BIG_C", 128), ("CG_BIG_HW", 128)))
if fw == "torch":
    import torch
    torch.backends.cudnn.benchmark = os.environ.get("CG_BENCH", "1") == "1"
    conv = torch.nn.Conv2d(c, c, 3, padding=1).cuda()
    x = torch.randn(n, c, hw, hw, device="cuda", requires_grad=True)
    free, total = torch.cuda.mem_get_info()
    print("before: %d of %d bytes free" % (free, total), flush=True)
    try:
        y = conv(x)
        y.square().mean().backward()
        torch.cuda.synchronize()
        print("torch ok", y.shape, flush=True)
    except Exception as e:
        print("torch failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]), flush=True)
else:
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax, jax.numpy as jnp
    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, (n, c, hw, hw))
    w = jax.random.normal(key, (c, c, 3, 3)) * 0.05
    try:
        st = jax.devices()[0].memory_stats() or {}
        print("before: in use %s, limit %s" % (st.get("bytes_in_use"), st.get("bytes_limit")), flush=True)
    except Exception:
        pass
    f = jax.jit(jax.value_and_grad(lambda w, x: jnp.mean(jnp.square(jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")))))
    try:
        l, g = f(w, x)
        l.block_until_ready()
        print("jax ok %.4f" % float(l), flush=True)
    except Exception as e:
        print("jax failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]), flush=True)
