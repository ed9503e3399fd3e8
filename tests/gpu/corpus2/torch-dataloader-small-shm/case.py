"""DataLoader workers hand 128 MiB batches to the main process through /dev/shm, which is 16 MiB
here (a private mount namespace: what a container gets without --shm-size or --ipc=host): a worker
dies of a bus error or cannot write its shared-memory file.  Needs root for the namespace."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

if sys.argv[1:] != ["inside"]:
    import shutil
    import subprocess
    if os.geteuid() != 0 or not shutil.which("unshare"):
        lib.skip("a private /dev/shm needs root and unshare(1)")
    if subprocess.run(["unshare", "-m", "--propagation", "private", "true"], env=lib.untraced_env()).returncode:
        lib.skip("unshare -m is refused here (no CAP_SYS_ADMIN)")
    lib.need("torch")
    os.execvp("unshare", ["unshare", "-m", "--propagation", "private", "sh", "-c",
                          'mount -t tmpfs -o size=16m cg2shm /dev/shm && exec "$@"', "sh",
                          sys.executable, os.path.abspath(__file__), "inside"])

import torch  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402


class Frames(Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, i):
        return torch.full((8 << 20,), float(i))  # 32 MiB a sample


if __name__ == "__main__":
    loader = DataLoader(Frames(), batch_size=4, num_workers=2)
    for step, batch in enumerate(loader):
        print("step", step, float(batch.cuda().mean()), flush=True)
