#!/usr/bin/env bash
# bench/slurm.sh - the time the Slurm plugin (slurm/spank_convguard.c) adds
# to a step, on the one-node cluster of tests/slurm/cluster.sh: REPS steps
# (default 40) `srun -n1 PROGRAM` per variant in one allocation (salloc
# --no-shell: no job scheduling in what is timed), interleaved (one of each
# in turn, so that drift of the machine falls on all alike), wall time of srun:
#   none        no plugin in plugstack.conf
#   installed   the plugin there, the job does not ask (what every job of a
#               cluster that installs it pays)
#   traced      srun --convguard, a program that loads no CUDA library (the
#               folder made, the environment set, the shim loaded, no trace)
# and for a step that fails (PROGRAM the job client: cudnnCreate fails):
#   failed      without the plugin
#   failed+cg   srun --convguard: the traces, the report, the headline
# Prints mean ± sd per variant and each one's difference from its base
# (± the standard error of that difference).  Root only.
# Usage: make bench-slurm  (or bench/slurm.sh after make all doubles slurm build/slurm/job_client)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
[ "$(id -u)" = 0 ] || { echo "bench/slurm.sh: needs root (it starts slurmctld and slurmd)"; exit 2; }
[ -e "$B/slurm/spank_convguard.so" ] && [ -x "$B/slurm/job_client" ] ||
    { echo "run: make all doubles slurm build/slurm/job_client"; exit 2; }
REPS=${REPS:-40}
CL=$(mktemp -d /tmp/cg-bench-slurm.XXXXXX)
source "$ROOT/tests/slurm/cluster.sh"
trap 'cluster_stop; rm -rf "$CL"' EXIT
mkdir -m 1777 "$CL/cg"
PLUG="required $B/slurm/spank_convguard.so preload=$B/libconvguard.so convguard=$B/convguard dir=$CL/cg/%u"
cluster_start "" || { echo "the cluster did not come up"; cluster_log; exit 1; }
cd "$CL" || exit 1
export LD_LIBRARY_PATH=$B/doubles/cudnn9:$B/doubles/cudart:$B/doubles/cuda
now() { date +%s%N; }
# variant: one srun, its wall time in ns appended to $CL/<variant>
one() {
    local v=$1 t0 t1
    case $v in
    none | failed) cluster_plugstack "" ;;
    *) cluster_plugstack "$PLUG" ;;
    esac
    t0=$(now)
    case $v in
    none | installed) srun -Q --jobid="$JOB" -n1 /bin/true ;;
    traced) srun -Q --jobid="$JOB" -n1 --convguard /bin/true ;;
    failed) CGTEST_CUDNN_CREATE_STATUS=4000 srun -Q --jobid="$JOB" -n1 "$B/slurm/job_client" cudnn ;;
    failed+cg) CGTEST_CUDNN_CREATE_STATUS=4000 srun -Q --jobid="$JOB" -n1 --convguard "$B/slurm/job_client" cudnn ;;
    esac >/dev/null 2>&1
    t1=$(now)
    echo $((t1 - t0)) >>"$CL/$v"
}
JOB=$(salloc -n1 --no-shell 2>&1 | grep -o 'Granted job allocation [0-9]*' | grep -o '[0-9]*$')
[ -n "$JOB" ] || { echo "no allocation"; exit 1; }
variants="none installed traced failed failed+cg"
for v in $variants; do one "$v"; rm -f "$CL/$v"; done # warm: the first run of each pays the loading
for i in $(seq "$REPS"); do
    for v in $variants; do one "$v"; done
done
scancel "$JOB"
echo "srun -n1: $REPS steps of one allocation each, interleaved; $(nproc) CPUs, $(uname -r)"
python3 - "$CL" <<'EOF'
import statistics as st, sys, math
d = sys.argv[1]
def ms(v): return [int(x) / 1e6 for x in open(f"{d}/{v}")]
base = {"none": None, "installed": "none", "traced": "none", "failed": None, "failed+cg": "failed"}
print(f"{'variant':<11} {'mean ± sd (ms)':>18} {'median':>8}   {'added to a step':>24}")
for v, b in base.items():
    x = ms(v)
    line = f"{v:<11} {st.mean(x):9.2f} ± {st.stdev(x):6.2f} {st.median(x):8.2f}"
    if b:
        y = ms(b)
        se = math.sqrt(st.variance(x) / len(x) + st.variance(y) / len(y))
        line += f"   {st.mean(x) - st.mean(y):+8.2f} ± {se:5.2f} vs {b}"
    print(line)
EOF
