"""A training loop that keeps every step's activations (a list that grows; the classic leak of
keeping losses with their graphs): PyTorch itself fills the GPU and then fails."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import torch  # noqa: E402

kept = []
for step in range(1000):
    act = torch.empty(8 << 30, dtype=torch.uint8, device="cuda")  # 8 GiB of activations per step
    kept.append(act)
    print("step", step, "held GiB", len(kept) * 8, flush=True)
