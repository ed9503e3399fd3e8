"""Failures that end in the framework's own exception, for the capture section of tests/gpu/run.sh
(`convguard run` must quote these words):  python3 tests/gpu/capture_fail.py CASE
  torch_oom       a tensor larger than the GPU: torch.OutOfMemoryError
  torch_conv      a convolution step (run it under a memory hog: cuDNN's words, or PyTorch's OOM)
  jax_oom         an array larger than JAX's pool: RESOURCE_EXHAUSTED
  jax_conv        a convolution (run it with XLA_PYTHON_CLIENT_MEM_FRACTION=.999: the pool leaves cuDNN
                  and the GPU code no room)
The exception is not caught: Python prints the traceback on stderr."""
import sys
case = sys.argv[1]
if case.startswith("torch"):
    import torch
    if case == "torch_oom":
        torch.empty(1 << 44, dtype=torch.uint8, device="cuda")
    else:
        torch.backends.cudnn.benchmark = True
        x = torch.randn(64, 256, 56, 56, device="cuda")
        conv = torch.nn.Conv2d(256, 256, 3, padding=1).cuda()
        conv(x).square().sum().backward()
        torch.cuda.synchronize()
else:
    import jax, jax.numpy as jnp
    if case == "jax_oom":
        jnp.ones((1 << 44,), jnp.uint8).block_until_ready()
    else:
        x = jnp.ones((64, 256, 56, 56), jnp.float32)
        w = jnp.ones((256, 256, 3, 3), jnp.float32)
        jax.lax.conv(x, w, (1, 1), "SAME").block_until_ready()
print("no failure")
