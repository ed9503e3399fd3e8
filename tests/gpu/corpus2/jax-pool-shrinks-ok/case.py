"""Another process holds all but 40 GiB of the GPU; JAX's default preallocation (75%) does not
fit, XLA's allocator retries smaller sizes and takes what is there, and the small computation
works (exit 0).  A pool that shrank and worked is a note at most (issue 27: "called an error")."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("jax", "torch")
hog = lib.start_hog(40 << 10, 120)
try:
    import jax.numpy as jnp
    x = jnp.ones((2048, 2048))
    print("sum", float((x @ x).sum()), flush=True)
finally:
    lib.stop(hog)
