"""A small conv training step in PyTorch; writes the mapped shared objects
(minus libconvguard) to argv[1] so runs with and without the shim compare."""
import os, sys, time
import torch
bench = os.environ.get("CG_BENCH", "0") == "1"
torch.backends.cudnn.benchmark = bench
steps = int(os.environ.get("CG_STEPS", "3"))
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
    torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 3, 64, 64, device="cuda")
t = torch.randint(0, 10, (16,), device="cuda")
for _ in range(steps):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), t)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(), "loss %.4f" % loss.item())
maps = sorted({l.split()[-1] for l in open("/proc/self/maps")
               if ".so" in l and "libconvguard" not in l and l.split()[-1].startswith("/")})
if len(sys.argv) > 1:
    open(sys.argv[1], "w").write("\n".join(maps) + "\n")
