"""A Triton kernel that stores without a mask at an offset far past its buffer (a wrong offset
argument): the GPU faults; PyTorch's next synchronisation raises "an illegal memory access was
encountered"."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("triton", "torch")
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def fill(o, start, BLOCK: tl.constexpr):
    i = start + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o + i, 1.0)


o = torch.zeros(1024, device="cuda")
fill[(1,)](o, 1 << 36, BLOCK=1024)  # the offset should have been 0
torch.cuda.synchronize()
print("sum", float(o.sum()))
