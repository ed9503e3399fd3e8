"""A checkpoint saved from the GPU is loaded by a process that has no GPU (CUDA_VISIBLE_DEVICES
empty, as on a CPU-only node): torch.load restores the tensors onto cuda:0 and refuses."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import torch  # noqa: E402

ckpt = os.path.join(tempfile.mkdtemp(prefix="cg2-ckpt-"), "model.pt")
torch.save({"w": torch.randn(4, 4, device="cuda")}, ckpt)
load = "import sys, torch; sd = torch.load(sys.argv[1]); print(sd['w'].device)"
r = subprocess.run([sys.executable, "-c", load, ckpt], env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
os.unlink(ckpt)
sys.exit(r.returncode)
