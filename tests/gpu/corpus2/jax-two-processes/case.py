"""Real-world row 13: two JAX processes on one GPU.  The first preallocates 75% of the GPU (the
default) and waits; the second's pool then gets only what is left, and its 40 GiB array does not
fit.  The first ends normally when the second is done."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("jax")
import subprocess  # noqa: E402

if sys.argv[1:] == ["holder"]:
    import jax.numpy as jnp
    jnp.ones(16).block_until_ready()
    print("holding", flush=True)
    sys.stdin.read()  # until the other process closes the pipe
    sys.exit(0)

holder = subprocess.Popen([sys.executable, os.path.abspath(__file__), "holder"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
print("first process (pid %d): %s" % (holder.pid, holder.stdout.readline().strip()), flush=True)
try:
    import jax.numpy as jnp
    x = jnp.ones((40 << 30) // 4, jnp.float32)
    x.block_until_ready()
    print("sum", float(x[:16].sum()))
finally:
    holder.stdin.close()
    holder.wait()
