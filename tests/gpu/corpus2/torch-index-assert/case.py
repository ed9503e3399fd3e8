"""An index one past the end of an embedding table on the GPU (a token id not below the
vocabulary size, as after adding tokens to a tokenizer): PyTorch's indexing kernel asserts and
the next call that synchronises raises 'device-side assert triggered'."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

lib.need("torch")
import torch  # noqa: E402

table = torch.randn(1000, 64, device="cuda")
tokens = torch.tensor([1, 5, 999, 1000], device="cuda")  # 1000 is not below the 1000 rows
rows = table[tokens]
print("sum", float(rows.sum()))
