"""A small PyTorch CNN training loop to run under convguard.

    build/convguard run -- python3 examples/train_torch.py [--steps N] [--benchmark] [--legacy]

--legacy sets TORCH_CUDNN_V8_API_DISABLED=1 (the legacy cudnnGet/Find algorithm API) before torch loads.
Falls back to the CPU when no GPU is visible, which is exactly the "GPU never used" case convguard reports.
"""
import argparse, os, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--benchmark", action="store_true")
ap.add_argument("--legacy", action="store_true")
args = ap.parse_args()
if args.legacy:
    os.environ["TORCH_CUDNN_V8_API_DISABLED"] = "1"
import torch

dev = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cudnn.benchmark = args.benchmark
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.ReLU(),
    torch.nn.Conv2d(64, 128, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(128, 128, 3, padding=1), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(128, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(args.batch, 3, 64, 64, device=dev)
y = torch.randint(0, 10, (args.batch,), device=dev)
t0 = time.time()
for step in range(args.steps):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
if dev == "cuda":
    torch.cuda.synchronize()
dt = time.time() - t0
print(f"device={dev} steps={args.steps} loss={loss.item():.4f} ms/step={1000 * dt / args.steps:.2f}")
