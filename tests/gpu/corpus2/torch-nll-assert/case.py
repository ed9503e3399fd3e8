"""Class labels numbered 1..10 for a model with 10 outputs (0..9): the loss kernel's assert
`t >= 0 && t < n_classes` fails on the GPU."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import torch  # noqa: E402

logits = torch.randn(8, 10, device="cuda", requires_grad=True)
labels = torch.arange(1, 9, device="cuda")
labels[-1] = 10  # one label equal to the number of classes
loss = torch.nn.functional.cross_entropy(logits, labels)
loss.backward()
print("loss", float(loss))
