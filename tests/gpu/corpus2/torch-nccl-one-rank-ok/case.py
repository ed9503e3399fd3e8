"""A one-rank NCCL process group and an all_reduce that work (NCCL may probe kernels and
transports on the way and go on): exit 0, and nothing NCCL recovered from may be an error."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import socket  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
torch.cuda.set_device(0)
dist.init_process_group("nccl", rank=0, world_size=1)
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print("all_reduce ok", float(x[0]), flush=True)
dist.destroy_process_group()
