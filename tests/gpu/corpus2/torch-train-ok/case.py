"""A short convolution training that works, printing what real programs print on the way: a
UserWarning of PyTorch's (copy-constructing a tensor), autocast, cuDNN's benchmark mode.  The
report must say no problem found."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import torch  # noqa: E402

torch.backends.cudnn.benchmark = True
model = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.AdaptiveAvgPool2d(1),
                            torch.nn.Flatten(), torch.nn.Linear(32, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 3, 64, 64, device="cuda")
y = torch.tensor(torch.randint(0, 10, (32,), device="cuda"))  # UserWarning: use clone().detach()
for step in range(5):
    opt.zero_grad()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print("step", step, "loss %.4f" % float(loss), flush=True)
