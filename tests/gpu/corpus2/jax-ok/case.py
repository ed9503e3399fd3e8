"""A jitted JAX convolution and matmul that work: no problem found."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("jax")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


@jax.jit
def step(x, w):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")
    return jnp.mean(y * y) + jnp.sum(x[0, 0] @ x[0, 0].T)


x = jnp.ones((8, 32, 64, 64), jnp.float32)
w = jnp.ones((32, 32, 3, 3), jnp.float32) * 0.01
print("loss", float(step(x, w)), flush=True)
