"""Two ranks started by torchrun on a machine with one GPU, neither calling
torch.cuda.set_device(LOCAL_RANK): both use cuda:0 and NCCL refuses the communicator
("Duplicate GPU detected")."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import datetime  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=60))
x = torch.ones(1 << 20, device="cuda")  # every rank on the default device 0
dist.all_reduce(x)
torch.cuda.synchronize()
print("rank", dist.get_rank(), "sum", float(x[0]), flush=True)
dist.destroy_process_group()
