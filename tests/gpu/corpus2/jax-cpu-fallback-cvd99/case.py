"""CUDA_VISIBLE_DEVICES=99 and no JAX_PLATFORMS: JAX falls back to the CPU with a warning and
the program "works" (exit 0), slowly.  The report must say it ran on the CPU (issue 27 item 5:
a silent CPU run), as a warning, not an error."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("jax")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

x = jnp.ones((512, 512))
print("devices", jax.devices(), "sum", float((x @ x).sum()), flush=True)
