"""JAX preallocating 99.9% of the GPU, then an eigendecomposition: cuSOLVER needs memory outside
JAX's pool for its handle and may fail ("cuSolver internal error", jax-ml/jax#17217).  When it
does not fail here, the case is skipped as not reproduced."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("jax")
import jax.numpy as jnp  # noqa: E402

a = jnp.eye(512) + 0.01
w, v = jnp.linalg.eigh(a @ a.T)
w.block_until_ready()
print("eigh ok", float(w[0]))
