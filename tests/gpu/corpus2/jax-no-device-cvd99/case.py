"""JAX required to use CUDA (JAX_PLATFORMS=cuda) with CUDA_VISIBLE_DEVICES naming a GPU that
does not exist: the CUDA backend cannot start."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("jax")
import jax.numpy as jnp  # noqa: E402

print(jnp.ones(3).sum())
