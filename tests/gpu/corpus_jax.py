"""A large jitted convolution in JAX, forward and backward, for the corpus
(issue 14): under memory pressure XLA's autotuning of cuDNN's convolution
engines asks for scratch that does not fit.  Shape from CG_JAX_SHAPE
(N,C,H,W,K,R,S, default 32,256,128,128,256,3,3), bf16."""
import os, sys
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", os.environ.get("CG_JAX_PREALLOCATE", "false"))
import jax, jax.numpy as jnp
n, c, h, w_, k, r, s = (int(v) for v in os.environ.get("CG_JAX_SHAPE", "32,256,128,128,256,3,3").split(","))
key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (n, c, h, w_), dtype=jnp.bfloat16)
w = (jax.random.normal(key, (k, c, r, s)) * 0.05).astype(jnp.bfloat16)
def loss(w, x):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")
    return jnp.mean(jnp.square(y.astype(jnp.float32)))
step = jax.jit(jax.value_and_grad(loss))
try:
    l, g = step(w, x)
    l.block_until_ready()
    print("jax", jax.__version__, "ok, loss %.4f" % float(l))
except Exception as e:  # the words JAX prints, for the corpus
    print("jax", jax.__version__, "FAILED:", type(e).__name__, str(e).splitlines()[0][:300])
    sys.exit(1)
