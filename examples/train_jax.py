"""A small JAX CNN training step (jitted) to run under convguard.

    build/convguard run -- python3 examples/train_jax.py [--steps N] [--no-preallocate]

JAX preallocates 75% of GPU memory by default (XLA_PYTHON_CLIENT_PREALLOCATE); --no-preallocate turns that off.
"""
import argparse, os, time

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--no-preallocate", action="store_true")
args = ap.parse_args()
if args.no_preallocate:
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
import jax, jax.numpy as jnp

key = jax.random.PRNGKey(0)
k1, k2, k3 = jax.random.split(key, 3)
params = {"w1": jax.random.normal(k1, (64, 3, 3, 3)) * 0.1,
          "w2": jax.random.normal(k2, (128, 64, 3, 3)) * 0.05,
          "out": jax.random.normal(k3, (128, 10)) * 0.05}
x = jax.random.normal(key, (args.batch, 3, 64, 64))
y = jax.random.randint(key, (args.batch,), 0, 10)

def forward(p, x):
    h = jax.nn.relu(jax.lax.conv_general_dilated(x, p["w1"], (1, 1), "SAME"))
    h = jax.nn.relu(jax.lax.conv_general_dilated(h, p["w2"], (1, 1), "SAME"))
    return h.mean(axis=(2, 3)) @ p["out"]

def loss_fn(p, x, y):
    logits = forward(p, x)
    return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(y.shape[0]), y])

@jax.jit
def step(p, x, y):
    l, g = jax.value_and_grad(loss_fn)(p, x, y)
    return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), l

t0 = time.time()
for _ in range(args.steps):
    params, l = step(params, x, y)
l.block_until_ready()
dt = time.time() - t0
print(f"device={jax.devices()[0].platform} steps={args.steps} loss={float(l):.4f} ms/step={1000 * dt / args.steps:.2f}")
