"""A model moved to the GPU and a batch that was not."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import torch  # noqa: E402

model = torch.nn.Linear(16, 4).cuda()
batch = torch.randn(8, 16)  # never moved with .to(device)
print(model(batch).sum())
