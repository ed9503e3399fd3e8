# t_cluster.sh - README's "On a cluster" lines, with the launchers played by
# the shell: every rank traces into one shared folder (files named
# <host>-r<rank>-<pid>.jsonl from SLURM_PROCID / OMPI_COMM_WORLD_RANK / RANK),
# and one `convguard report` over the folder names the rank that failed.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
[ -x "$CG" ] && [ -x "$CLIENTS/client_probe" ] && [ -x "$CLIENTS/client_tflike" ] || skip_all "CLI or clients not built"
LIBS=$DOUBLES/cudnn9:$DOUBLES/cudart:$DOUBLES/cuda:$DOUBLES/nvml
host=$(hostname | tr -c 'A-Za-z0-9._\n-' '_')
# a rank whose GPU another process fills: cuDNN cannot get its workspace
sleep 60 &
HOLDER=$!
trap 'kill $HOLDER 2>/dev/null; rm -rf "$WORK"' EXIT
rank_env() { # rank -> its extra environment (rank 2 is the sick one)
    [ "$1" = 2 ] && echo CGTEST_GPU_TOTAL_MB=1024 CGTEST_GPU_HELD_MB=1020 CGTEST_HOLDER_PID=$HOLDER
}
rank_prog() { [ "$1" = 2 ] && echo "$CLIENTS/client_tflike" || echo "$CLIENTS/client_probe"; }

# the shared folder exists (README: only the job's folder is made, never its parents)
mkdir -p "$WORK/shared"
# srun: each task runs `convguard run --quiet`, CONVGUARD_DIR on the shared folder
S=$WORK/shared/slurm-4711
for r in 0 1 2 3; do
    env $(rank_env $r) CONVGUARD_DIR=$S SLURM_PROCID=$r LD_LIBRARY_PATH=$LIBS \
        "$CG" run --quiet -- "$(rank_prog $r)" >/dev/null 2>&1 &
done
wait %2 %3 %4 %5 2>/dev/null
check "srun: one trace per task, named <host>-r<rank>-<pid>.jsonl" \
    bash -c "ls '$S' | grep -cE '^$host-r[0-3]-[0-9]+\.jsonl\$' | grep -qx 4"
"$CG" report "$S" >"$WORK/slurm.out" 2>&1
check "srun: convguard report over the folder: exit 1 (a problem), one line per rank" \
    bash -c "[ $? = 1 ] && [ \$(grep -cE '^ *rank [0-3] \($host:[0-9]+\)' '$WORK/slurm.out') = 4 ]"
check "srun: the problem names rank 2 alone" \
    bash -c "grep -E '^\[resource\]' '$WORK/slurm.out' | grep -q 'rank 2 ' && ! grep -E '^\[' '$WORK/slurm.out' | grep -qE 'rank [013] '"

# mpirun: the launcher passes the variables (-x); the shim by LD_PRELOAD=$(convguard shim-path)
M=$WORK/shared/mpi-run1
shim=$("$CG" shim-path)
for r in 0 1; do
    CONVGUARD_DIR=$M CONVGUARD_QUIET=1 OMPI_COMM_WORLD_RANK=$r LD_PRELOAD=$shim LD_LIBRARY_PATH=$LIBS \
        "$CLIENTS/client_probe" >/dev/null 2>&1
done
check "mpirun (LD_PRELOAD=\$(convguard shim-path)): traces r0 and r1" \
    bash -c "ls '$M' | grep -cE '^$host-r[01]-[0-9]+\.jsonl\$' | grep -qx 2"
"$CG" report "$M" >"$WORK/mpi.out" 2>&1
check "mpirun: report exit 0, no problem, 2 processes" bash -c "[ $? = 0 ] && grep -q '2 processes' '$WORK/mpi.out'"

# torchrun: one `convguard run` around the launcher; its workers (RANK=0,1) inherit the shim
T=$WORK/shared/torch-job
"$CG" run --quiet --dir "$T" -- sh -c \
    "RANK=0 LD_LIBRARY_PATH=$LIBS $CLIENTS/client_probe >/dev/null & RANK=1 LD_LIBRARY_PATH=$LIBS $CLIENTS/client_probe >/dev/null & wait" \
    >/dev/null 2>&1
check "torchrun: both workers traced, by rank (the launcher loads no CUDA library: no trace; run keeps its stderr beside them)" \
    bash -c "ls '$T' | grep -cE '^$host-r[01]-[0-9]+\.jsonl\$' | grep -qx 2 && [ \$(ls '$T' | grep -c '\.jsonl\$') = 2 ]"
"$CG" report "$T" >"$WORK/torch.out" 2>&1
check "torchrun: report exit 0 over launcher and workers" test $? = 0

# one report over every job's folder (sub-directories are read)
"$CG" report --json "$WORK/shared" >"$WORK/all.json" 2>/dev/null
check "report over the shared root: the 8 processes of the three jobs" jq -e '(.processes | length) == 8' "$WORK/all.json"
finish
