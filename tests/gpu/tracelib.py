"""Reading convguard trace directories, for the GPU scripts' summaries (no jq
on the GPU machine).  traces(dir) yields (file name, events) per trace file,
sorted, skipping unreadable lines and empty files."""
import glob, json, os


def traces(directory):
    for f in sorted(glob.glob(os.path.join(directory, "*.jsonl"))):
        evs = []
        for line in open(f, errors="replace"):
            try:
                evs.append(json.loads(line))
            except ValueError:
                pass
        if evs:
            yield os.path.basename(f), evs
