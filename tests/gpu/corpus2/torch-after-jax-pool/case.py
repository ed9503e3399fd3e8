"""JAX and PyTorch in one process: JAX starts first and preallocates 75% of the GPU for its
pool, then PyTorch asks for 40 GiB.  PyTorch's message says "this process has ... GiB memory
in use" and that almost none of it is PyTorch's (issue 27: the report must name JAX's pool and
not offer TensorFlow's knob)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch", "jax")
import jax.numpy as jnp  # noqa: E402

jnp.ones(16).block_until_ready()  # JAX's backend starts and preallocates its pool
import torch  # noqa: E402

x = torch.empty(40 << 30, dtype=torch.uint8, device="cuda")
print("allocated", x.numel())
