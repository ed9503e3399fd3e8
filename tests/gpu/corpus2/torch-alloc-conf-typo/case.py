"""A typo in PYTORCH_CUDA_ALLOC_CONF ("expandable_segment" for "expandable_segments"):
PyTorch's allocator refuses the key at the first allocation.  No patterns.def row knows the
message: the report must still say the run failed and quote the final error line (issue 27
item 1)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import torch  # noqa: E402

x = torch.zeros(1 << 20, device="cuda")
print("allocated", x.numel())
