"""CUDA_VISIBLE_DEVICES names a GPU that does not exist (99 on a one-GPU machine): PyTorch sees
no GPU.  The report must name the variable and its value (issue 27 item 3, GPU selection)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import torch  # noqa: E402

print("cuda available:", torch.cuda.is_available(), flush=True)
x = torch.zeros(1, device="cuda")
print(x)
