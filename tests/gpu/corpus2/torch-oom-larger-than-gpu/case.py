"""One request larger than the whole GPU: an attention score tensor of a batch of 64, 32 heads
and 8192 tokens in fp16 (256 GiB).  No setting can make it fit; a smaller batch or sequence can."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import torch  # noqa: E402

scores = torch.empty(64, 32, 8192, 8192, dtype=torch.float16, device="cuda")
print("allocated", scores.numel())
