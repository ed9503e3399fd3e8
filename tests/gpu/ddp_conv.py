"""A small DistributedDataParallel conv training run for torchrun (one process
per GPU); each rank writes its own convguard trace (RANK in the file name)."""
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
rank = dist.get_rank()
local = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10)).cuda()
ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
x = torch.randn(16, 3, 64, 64, device="cuda")
t = torch.randint(0, 10, (16,), device="cuda")
for _ in range(5):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(ddp(x), t).backward()
    opt.step()
torch.cuda.synchronize()
print("rank %d of %d ok, loss %.4f" % (rank, dist.get_world_size(), torch.nn.functional.cross_entropy(ddp(x), t).item()))
dist.destroy_process_group()
