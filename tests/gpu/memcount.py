"""memcount.py - does the shim count a framework's GPU memory once, at the driver?

  python3 memcount.py torch   PyTorch: a conv step, a few tensors, then a 300 GiB
                              tensor that must fail; prints what PyTorch says it holds
  python3 memcount.py jax     JAX: a conv step; XLA preallocates its pool with cuMemAlloc

Prints one line "memcount FW key=value ..." with the framework's own figures;
tests/gpu/run.sh memcount compares them with the trace's exit event.
"""
import sys

fw = sys.argv[1] if len(sys.argv) > 1 else "torch"
if fw == "torch":
    import torch
    x = torch.randn(64, 64, 56, 56, device="cuda")
    conv = torch.nn.Conv2d(64, 64, 3, padding=1).cuda()
    conv(x).sum().backward()
    keep = [torch.empty(n << 20, dtype=torch.uint8, device="cuda") for n in (3, 5, 40, 100)]
    torch.cuda.synchronize()
    oom = "no"
    try:
        torch.empty(300 << 30, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError:
        oom = "yes"
    reserved = torch.cuda.memory_reserved()
    stats = torch.cuda.memory_stats()
    print("memcount torch reserved=%d segments_allocated=%d segments_freed=%d oom=%s" % (
        reserved, stats.get("num_device_alloc", -1), stats.get("num_device_free", -1), oom))
else:
    import jax
    import jax.numpy as jnp
    x = jnp.ones((64, 64, 56, 56), jnp.float32)
    w = jnp.ones((64, 64, 3, 3), jnp.float32)
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")
    y.block_until_ready()
    st = jax.devices()[0].memory_stats() or {}
    print("memcount jax pool=%d in_use=%d" % (st.get("pool_bytes", st.get("bytes_reserved", -1)),
                                              st.get("bytes_in_use", -1)))
