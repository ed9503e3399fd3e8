"""JAX told to keep its pool to 2% of the GPU (XLA_PYTHON_CLIENT_MEM_FRACTION=.02, a value
copied from a setup that shares the GPU) and then asked for a 4 GiB array: XLA's allocator
runs out inside its own pool while the GPU is almost empty."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("jax")
import jax.numpy as jnp  # noqa: E402

x = jnp.ones((4 << 30) // 4, jnp.float32)
x.block_until_ready()
print("sum", float(x[:16].sum()))
