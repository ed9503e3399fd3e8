"""CUDA initialised in the parent, then workers forked (multiprocessing's default on Linux) that
use the GPU: each worker raises "Cannot re-initialize CUDA in forked subprocess"; the parent
does not look at their exit status and exits 0 (issue 27: a forked child's failure while the
parent exited 0 was not seen at all)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import multiprocessing as mp  # noqa: E402
import torch  # noqa: E402


def work(i):
    t = torch.ones(4, device="cuda") * i
    print("worker", i, float(t.sum()), flush=True)


if __name__ == "__main__":
    torch.ones(1, device="cuda")  # CUDA is initialised in the parent
    ctx = mp.get_context("fork")
    ps = [ctx.Process(target=work, args=(i,)) for i in range(2)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    print("parent done", flush=True)
