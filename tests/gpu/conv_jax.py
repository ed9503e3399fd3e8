"""A jitted conv training step in JAX; writes the mapped shared objects
(minus libconvguard) to argv[1]."""
import os, sys
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", os.environ.get("CG_JAX_PREALLOCATE", "true"))
import jax, jax.numpy as jnp
steps = int(os.environ.get("CG_STEPS", "3"))
key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (16, 3, 64, 64))
w = jax.random.normal(key, (32, 3, 3, 3)) * 0.1
def loss(w, x):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")
    return jnp.mean(jnp.square(y))
step = jax.jit(jax.value_and_grad(loss))
for _ in range(steps):
    l, g = step(w, x)
    w = w - 0.01 * g
l.block_until_ready()
print("jax", jax.__version__, jax.devices()[0].platform, "loss %.4f" % float(l))
maps = sorted({l.split()[-1] for l in open("/proc/self/maps")
               if ".so" in l and "libconvguard" not in l and l.split()[-1].startswith("/")})
if len(sys.argv) > 1:
    open(sys.argv[1], "w").write("\n".join(maps) + "\n")
