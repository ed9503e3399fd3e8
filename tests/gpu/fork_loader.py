"""fork_loader.py - PyTorch training with a DataLoader that forks its workers
(num_workers=4, the fork start method, persistent_workers=False: new workers
at every epoch) while a side thread runs cuDNN convolutions on the GPU, as
issue 21 asks: a worker forked while another thread is inside the shim must
never hang.  Run by tests/gpu/run.sh fork, with and without the shim; the
losses must be the same (deterministic cuDNN, a fixed seed).

Prints one line per epoch ("epoch N loss X"), then "side_convs=N" (> 0: the
side thread really ran during the epochs) and "done"."""
import os
import sys
import threading
import time

import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset

EPOCHS = int(os.environ.get("CG_EPOCHS", "30"))


class Squares(Dataset):
    """Small images made in the worker (CPU only: workers never touch CUDA)."""

    def __len__(self):
        return 64

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(3, 16, 16, generator=g)
        return x, torch.tensor(float(x.mean() > 0.5))


def main():
    mp.set_start_method("fork", force=True)
    torch.manual_seed(0)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 1)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    stop = threading.Event()
    side = {"n": 0}

    def side_convs():  # another thread inside cuDNN (and the shim) while workers fork
        w = torch.randn(16, 16, 3, 3, device=dev)
        x = torch.randn(8, 16, 32, 32, device=dev)
        while not stop.is_set():
            torch.nn.functional.conv2d(x, w, padding=1)
            torch.cuda.synchronize()
            side["n"] += 1

    t = threading.Thread(target=side_convs, daemon=True)
    t.start()
    loader = DataLoader(Squares(), batch_size=16, shuffle=False, num_workers=4, persistent_workers=False,
                        timeout=60)
    t0 = time.time()
    for epoch in range(EPOCHS):
        total = 0.0
        for x, y in loader:
            x, y = x.to(dev), y.to(dev)
            opt.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(1), y)
            loss.backward()
            opt.step()
            total += loss.item()
        print("epoch %d loss %.6f" % (epoch, total), flush=True)
    stop.set()
    t.join()
    print("side_convs>0: %s" % (side["n"] > 0))
    print("seconds %.1f" % (time.time() - t0), file=sys.stderr)
    print("done")


if __name__ == "__main__":
    main()
