"""A program that probes the largest batch that fits: the first tries fail with
torch.OutOfMemoryError, which it catches, and a smaller one works; exit 0.  A failure the
program recovered from is context, never the headline, and never an error (issue 27 item 2)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import torch  # noqa: E402

for gib in (1024, 512, 256, 128, 64, 32):
    try:
        x = torch.empty(gib << 30, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError:
        print("batch of %d GiB does not fit, trying half" % gib, flush=True)
        torch.cuda.empty_cache()
        continue
    x[: 1 << 20].fill_(1)
    print("batch of %d GiB fits; sum of the first MiB %d" % (gib, int(x[: 1 << 20].sum())), flush=True)
    break
