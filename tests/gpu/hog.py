"""Holds all but LEAVE_MB of the GPU's free memory until killed (or SECONDS pass):
   python3 tests/gpu/hog.py LEAVE_MB [SECONDS]
Prints one 'hog: ...' line once it holds the memory.  (A stand-in for the
memory hog of examples/ in branch res, until that is merged.)"""
import sys, time
import torch
leave = int(sys.argv[1]) << 20
secs = int(sys.argv[2]) if len(sys.argv) > 2 else 900
held = []
free, total = torch.cuda.mem_get_info()
chunk = 1 << 30
while free > leave + (64 << 20):
    n = min(chunk, free - leave)
    try:
        held.append(torch.empty(n, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError:
        chunk //= 2
        if chunk < (16 << 20):
            break
    free, total = torch.cuda.mem_get_info()
print("hog: holding %d bytes; %d of %d bytes free" % (sum(t.numel() for t in held), free, total), flush=True)
time.sleep(secs)
