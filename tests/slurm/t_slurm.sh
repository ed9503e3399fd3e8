# t_slurm.sh - the Slurm plugin (slurm/spank_convguard.c) on a real one-node
# cluster (tests/slurm/cluster.sh: munged, slurmctld, slurmd of Debian's
# packages, started and stopped here by pid), with an installation of our
# own that every user can read (lib/libconvguard.so, bin/convguard, the test
# doubles, the job client tests/slurm/job_client.c):
#   srun --convguard=DIR -n2, a client whose cudnnCreate fails: traces per
#     rank, the step's report beside them, its headline on the job's stderr;
#   without the flag: the task's environment as without the plugin, no file;
#   default=on and --convguard=off; sbatch --convguard with inner sruns;
#   salloc; srun --mpi=pmi2; an existing LD_PRELOAD kept; exit codes, a signal's death and a
#   SIGTERM through scancel --signal as without the plugin; a folder the
#   job's user cannot write: the job runs, one line says why; the report
#   made as the job's user (nobody), never root; report --job; report=off,
#   fallback=on; a report that hangs (report_timeout=), a convguard= that is
#   not there; a wrong plugstack.conf line and a wrong --convguard value.
# Root only (slurmd runs jobs as their users).  `make test-slurm` runs it.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/slurm/cluster.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (SlurmUser=root, jobs as other users)"
for c in munged slurmctld slurmd srun sbatch salloc scancel squeue; do
    command -v $c >/dev/null || skip_all "no $c (apt-get install slurmctld slurmd slurm-client munge libslurm-dev)"
done
PLUGIN=$BUILD_DIR/slurm/spank_convguard.so
if [ ! -e "$PLUGIN" ] || [ ! -x "$BUILD_DIR/slurm/job_client" ] || [ ! -x "$BUILD_DIR/convguard" ]; then
    fail "Slurm is installed but the plugin is not built (make slurm $BUILD_DIR/slurm/job_client)"
    finish
    exit 1
fi
chmod 0755 "$WORK"
# the installation, as an admin would make it: lib/ and bin/ of one prefix
I=$WORK/inst
mkdir -p "$I/lib" "$I/bin" "$I/libs"
cp "$SHIM_SO" "$I/lib/libconvguard.so"
cp "$PLUGIN" "$I/lib/spank_convguard.so"
cp "$BUILD_DIR/convguard" "$BUILD_DIR/slurm/job_client" "$I/bin/"
cp -r "$DOUBLES/cudnn9" "$DOUBLES/cudart" "$DOUBLES/cuda" "$I/libs/"
echo 'int cg_keep_me;' | ${CC:-cc} -shared -fPIC -x c - -o "$I/lib/libkeep.so"
chmod -R a+rX "$I"
C=$I/bin/job_client
export LD_LIBRARY_PATH=$I/libs/cudnn9:$I/libs/cudart:$I/libs/cuda
host=$(hostname | tr -c 'A-Za-z0-9._\n-' '_')
# the shared trace folder an admin makes once: root's, sticky, like /tmp
mkdir -m 1777 "$WORK/cg"
mkdir -m 0755 "$WORK/rootonly"
PLUG="required $I/lib/spank_convguard.so preload=$I/lib/libconvguard.so dir=$WORK/cg/%u"
NONE=""
CL=$WORK/cluster
mkdir "$CL"
trap 'cluster_stop; rm -rf "$WORK"' EXIT
if ! cluster_start "$PLUG"; then
    fail "the one-node cluster did not come up"
    cluster_log
    finish
    exit 1
fi
cd "$WORK" || exit 1
as_nobody=(--uid=nobody --gid=nogroup)
# srun --uid (root asking for another user): Slurm 22.05's srun can drop to that user before the
# allocation's answer is read, and the answer's munge credential is then refused ("Munge decode
# failed: Unauthorized credential for client UID=0", then "Job credential revoked"): seen once
# in CI on a loaded machine, a step that never started.  That is Slurm's, not the plugin's: such
# a step (and only such a one, told by those words) is asked for once more.
srun_nobody() { # OUT ERR ARGS...: srun as nobody, stdout to OUT, stderr to ERR; srun's status
    local out=$1 err=$2 rc try
    shift 2
    for try in 1 2; do
        srun -Q "${as_nobody[@]}" "$@" >"$out" 2>"$err"
        rc=$?
        grep -q 'Munge decode failed: Unauthorized credential' "$err" || break
        echo "  (srun --uid: Slurm refused its own allocation's credential; asked once more)"
    done
    return $rc
}

# the one step folder under DIR (a job id of its own per check)
step_of() { local d; d=$(ls -d "$1"/*.${2:-0} 2>/dev/null); [ "$(echo "$d" | grep -c .)" = 1 ] && echo "$d"; }
# the job id of a step folder
job_of() { basename "$1" | cut -d. -f1; }
# what a task's environment is, less what differs between any two jobs
env_of() { grep -vE '^SLURM_(JOBID|JOB_ID|SRUN_COMM_PORT|STEP_LAUNCHER_PORT|TASK_PID)=' "$1" | sort; }

# ---- srun --convguard=DIR -n2, cudnnCreate fails in both ranks
export CGTEST_CUDNN_CREATE_STATUS=4000
cluster_plugstack "$NONE"
srun -Q -n2 "$C" cudnn >"$WORK/ref1.out" 2>"$WORK/ref1.err"
ref_rc=$?
cluster_plugstack "$PLUG"
D1=$WORK/t1
srun -Q -n2 --convguard="$D1" "$C" cudnn >"$WORK/t1.out" 2>"$WORK/t1.err"
rc=$?
S1=$(step_of "$D1")
J1=$(job_of "$S1")
cat "$WORK/t1.err"
check "srun --convguard: exit status as without the plugin ($ref_rc)" test "$rc" = "$ref_rc" -a "$rc" = 1
check "srun --convguard: the program's own output unchanged" \
    bash -c "diff <(sort '$WORK/ref1.out') <(sort '$WORK/t1.out') && grep -c 'Could not create cudnn handle' '$WORK/t1.err' | grep -qx 2"
check "srun --convguard: one step folder DIR/<job>.0, one trace per rank (<host>-r<rank>-<pid>.jsonl)" \
    bash -c "[ -n '$S1' ] && ls '$S1' | grep -cE '^$host-r[01]-[0-9]+\.jsonl\$' | grep -qx 2 && ls '$S1' | grep -q '^$host-r0-' && ls '$S1' | grep -q '^$host-r1-'"
check "srun --convguard: the step's report is written beside the traces (0600, the job's user's)" \
    bash -c "[ \"\$(stat -c '%a %U' '$S1/report.txt')\" = '600 root' ]"
check "srun --convguard: the report starts from how each task ended (exit 1, from Slurm) and names the cause" \
    bash -c "grep -q 'ranks 0-1 on $host failed (exit 1)' '$S1/report.txt' && grep -q '^\[library\] cuDNN could not create its handle' '$S1/report.txt'"
check "srun --convguard: the headline on the job's stderr: the step, the cause, the ranks" \
    grep -qE "^convguard: step $J1\.0 failed \(ranks 0-1 on $host: exit 1\): \[library\] cuDNN could not create its handle\$" "$WORK/t1.err"
check "srun --convguard: its second line: where the report is, and the whole job's command" \
    grep -qxF "convguard: the report: $S1/report.txt; the whole job: convguard report --job $J1" "$WORK/t1.err"
check "srun --convguard: two lines of convguard, no summary line per process" \
    bash -c "[ \$(grep -c '^convguard' '$WORK/t1.err') = 2 ]"
"$I/bin/convguard" report --job "$J1" "$D1" >"$WORK/t1.job" 2>&1
check "report --job JOBID DIR: exit 1, both ranks, the cause" \
    bash -c "[ $? = 1 ] && grep -q 'cuDNN could not create its handle' '$WORK/t1.job' && grep -qE '^rank 1 \($host:' '$WORK/t1.job'"

# ---- without the flag: nothing set, nothing written, nothing said
cluster_plugstack "$NONE"
srun -Q -n2 env >"$WORK/env.none" 2>&1
cluster_plugstack "$PLUG"
srun -Q -n2 env >"$WORK/env.plug" 2>&1
check "no flag: each task's environment exactly as without the plugin" \
    bash -c "diff <(env_of '$WORK/env.none') <(env_of '$WORK/env.plug') && [ \$(grep -c '^PATH=' '$WORK/env.plug') = 2 ]"
srun -Q -n2 "$C" cudnn >"$WORK/t2.out" 2>"$WORK/t2.err"
rc=$?
check "no flag: a failing job: the same exit status, not a word of convguard, no folder under dir=" \
    bash -c "[ $rc = 1 ] && ! grep -q '^convguard' '$WORK/t2.err' && [ -z \"\$(ls -A '$WORK/cg')\" ]"

# ---- default=on: every job, unless --convguard=off
cluster_plugstack "$PLUG default=on"
srun -Q -n1 "$C" env >"$WORK/t3.out" 2>&1
check "default=on: a job without the flag is traced (LD_PRELOAD, CONVGUARD_DIR=<dir>/<job>.<step>)" \
    bash -c "grep -qxF '0: LD_PRELOAD=$I/lib/libconvguard.so' '$WORK/t3.out' && grep -qxE '0: CONVGUARD_DIR=$WORK/cg/root/[0-9]+\.0' '$WORK/t3.out'"
srun -Q -n1 --convguard=off "$C" env >"$WORK/t3off.out" 2>&1
check "default=on, --convguard=off: untouched" \
    bash -c "grep -qx '0: LD_PRELOAD=unset' '$WORK/t3off.out' && grep -qx '0: CONVGUARD_DIR=unset' '$WORK/t3off.out'"
cluster_plugstack "$PLUG default=on partitions=gpu,cg"
srun -Q -n1 "$C" env >"$WORK/t3p.out" 2>&1
cluster_plugstack "$PLUG default=on partitions=gpu"
srun -Q -n1 "$C" env >"$WORK/t3q.out" 2>&1
check "default=on partitions=gpu,cg: a job of partition cg traced; partitions=gpu: not" \
    bash -c "grep -qxF '0: LD_PRELOAD=$I/lib/libconvguard.so' '$WORK/t3p.out' && grep -qx '0: LD_PRELOAD=unset' '$WORK/t3q.out'"
cluster_plugstack "$PLUG default=on"
LD_PRELOAD=$I/lib/libconvguard.so CONVGUARD_DIR=$WORK/mine srun -Q -n1 "$C" env >"$WORK/t3own.out" 2>&1
check "default=on, a job that traces itself (README \"On a cluster\"): its own folder kept" \
    grep -qxF "0: CONVGUARD_DIR=$WORK/mine" "$WORK/t3own.out"

# ---- sbatch --convguard: the batch script's sruns are traced, each step in its folder
cluster_plugstack "$NONE"
sbatch -Q --wait -n2 -o "$WORK/ref4.out" --wrap "srun -Q -n1 $C exit 0; srun -Q -n2 $C cudnn" >/dev/null 2>&1
ref_rc=$?
cluster_plugstack "$PLUG"
D4=$WORK/t4
sbatch -Q --wait -n2 --convguard="$D4" -o "$WORK/t4.out" --wrap "srun -Q -n1 $C exit 0; srun -Q -n2 $C cudnn" \
    >/dev/null 2>&1
rc=$?
S4=$(step_of "$D4" 1)
J4=$(job_of "$S4")
cat "$WORK/t4.out"
check "sbatch --convguard: the job's exit status as without the plugin ($ref_rc)" test "$rc" = "$ref_rc" -a "$rc" = 1
check "sbatch --convguard: step 0 (succeeded) and step 1 (failed) traced in their folders, per rank" \
    bash -c "ls '$D4/$J4.0' | grep -qE '^$host-r0-[0-9]+\.jsonl\$' && ls '$S4' | grep -cE '^$host-r[01]-[0-9]+\.jsonl\$' | grep -qx 2"
check "sbatch --convguard: the failed step's report; none for the step that succeeded" \
    bash -c "[ -s '$S4/report.txt' ] && [ ! -e '$D4/$J4.0/report.txt' ]"
check "sbatch --convguard: the failed step's headline in the job's output file, and nothing else of convguard" \
    bash -c "grep -qE '^convguard: step $J4\.1 failed \(ranks 0-1 on $host: exit 1\): \[library\] cuDNN could not create its handle' '$WORK/t4.out' && [ \$(grep -c '^convguard' '$WORK/t4.out') = 2 ]"
"$I/bin/convguard" report --job "$J4" "$D4" >"$WORK/t4.job" 2>&1
check "report --job: every step of the job (3 processes of steps 0 and 1)" \
    bash -c "[ $? = 1 ] && grep -q '^convguard report: 3 processes' '$WORK/t4.job'"

# ---- salloc --convguard: the option reaches the allocation's srun
D11=$WORK/t11
salloc -Q -n1 --convguard="$D11" srun -Q -n1 "$C" env >"$WORK/t11.out" 2>&1
check "salloc --convguard=DIR: its srun's task traces into DIR/<job>.0" \
    grep -qE "^0: CONVGUARD_DIR=$D11/[0-9]+\.0\$" "$WORK/t11.out"

# ---- an existing LD_PRELOAD is kept, the shim after it
LD_PRELOAD=$I/lib/libkeep.so srun -Q -n1 --convguard="$WORK/t5" "$C" env >"$WORK/t5.out" 2>&1
check "an existing LD_PRELOAD kept, the shim appended" \
    grep -qxF "0: LD_PRELOAD=$I/lib/libkeep.so:$I/lib/libconvguard.so" "$WORK/t5.out"
LD_PRELOAD=$I/lib/libkeep.so srun -Q -n1 "$C" env >"$WORK/t5n.out" 2>&1
check "an existing LD_PRELOAD, no flag: as it was" grep -qxF "0: LD_PRELOAD=$I/lib/libkeep.so" "$WORK/t5n.out"

# ---- exit codes and signals, against runs without the plugin
unset CGTEST_CUDNN_CREATE_STATUS
outcome() { # MODE ARG [--convguard=DIR]: srun's exit status
    srun -Q -n1 ${3:+"$3"} "$C" "$1" "$2" >/dev/null 2>"$WORK/oc.err"
    echo $?
}
cluster_plugstack "$NONE"
ref_exit=$(outcome exit 3) ref_kill=$(outcome kill 11)
cluster_plugstack "$PLUG"
check "exit 3: srun's status as without the plugin ($ref_exit)" test "$(outcome exit 3 --convguard="$WORK/t6")" = "$ref_exit"
check "killed by SIGSEGV: srun's status as without the plugin ($ref_kill)" \
    test "$(outcome kill 11 --convguard="$WORK/t6k")" = "$ref_kill"
check "killed by SIGSEGV: the headline says the task died of SIGSEGV" \
    grep -qE "^convguard: step [0-9]+\.0 failed \(rank 0 \($host:[0-9]+\): killed by SIGSEGV\)" "$WORK/oc.err"
# SIGTERM through scancel --signal: arrives once, the program's own handler decides (exit 5)
term_run() { # [--convguard=DIR] -> "got N rc"
    srun -Q -n1 ${1:+"$1"} "$C" count 15 >"$WORK/term.out" 2>"$WORK/term.err" &
    local pid=$! i
    for i in $(seq 100); do grep -q ready "$WORK/term.out" 2>/dev/null && break; sleep 0.05; done
    scancel --signal=TERM "$(squeue -h -o %i | head -1)"
    wait "$pid"
    local rc=$?
    echo "$(grep -o 'got [0-9]*' "$WORK/term.out") rc=$rc"
}
cluster_plugstack "$NONE"
ref_term=$(term_run)
cluster_plugstack "$PLUG"
got_term=$(term_run --convguard="$WORK/t6t")
echo "  scancel --signal=TERM: without the plugin '$ref_term', with it '$got_term'"
check "scancel --signal=TERM: the signal arrives once, the exit status as without the plugin" \
    test "$got_term" = "$ref_term" -a "${ref_term% *}" = "got 1"

# ---- a folder the job's user cannot write: the job runs untraced, one line says why
srun_nobody "$WORK/t7.out" "$WORK/t7.err" -n2 --convguard="$WORK/rootonly/cg" "$C" env
rc=$?
cat "$WORK/t7.err"
check "an unwritable DIR: the job runs (exit 0), untouched (no LD_PRELOAD, no CONVGUARD_DIR)" \
    bash -c "[ $rc = 0 ] && [ \$(grep -c 'LD_PRELOAD=unset' '$WORK/t7.out') = 2 ] && [ \$(grep -c 'CONVGUARD_DIR=unset' '$WORK/t7.out') = 2 ]"
check "an unwritable DIR: one line says why there is no trace" \
    bash -c "[ \$(grep -c '^convguard' '$WORK/t7.err') = 1 ] && grep -qE '^convguard: no trace for step [0-9]+\.0: $WORK/rootonly/cg: cannot be made: permission denied\$' '$WORK/t7.err' && [ -z \"\$(ls -A '$WORK/rootonly')\" ]"

# ---- a job of another user: folders, traces and the report are that user's, never root's
CGTEST_CUDNN_CREATE_STATUS=4000 srun_nobody /dev/null "$WORK/t8.err" -n2 --convguard "$C" cudnn
S8=$(step_of "$WORK/cg/nobody")
J8=$(job_of "$S8")
check "a job of nobody: its folders, traces and report are nobody's (the report ran as the job's user)" \
    bash -c "[ -n '$S8' ] && [ \"\$(stat -c '%U %a' '$WORK/cg/nobody' '$S8' | sort -u)\" = 'nobody 700' ] && [ -z \"\$(find '$S8' ! -user nobody)\" ] && [ -s '$S8/report.txt' ]"
check "a job of nobody: its headline" grep -qE "^convguard: step $J8\.0 failed \(ranks 0-1 on $host: exit 1\): \[library\]" "$WORK/t8.err"
(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$SLURM_CONF" \
    "$I/bin/convguard" report --job "$J8") >"$WORK/t8.job" 2>&1
check "report --job JOBID alone: the folder found from plugstack.conf's dir= (%u: the user asking)" \
    bash -c "[ $? = 1 ] && grep -q 'cuDNN could not create its handle' '$WORK/t8.job'"

# ---- torchrun's way: a launcher task whose workers have RANK; the step succeeded: nothing said
CGTEST_CUDNN_CREATE_STATUS=4000 srun -Q -n1 --convguard="$WORK/t10" sh -c \
    "RANK=0 $C cudnn >/dev/null 2>&1 & RANK=1 $C cudnn >/dev/null 2>&1 & wait" >/dev/null 2>"$WORK/t10.err"
S10=$(step_of "$WORK/t10")
check "a launcher under srun: its workers inherit the shim, traces named by their RANK" \
    bash -c "ls '$S10' | grep -cE '^$host-r[01]-[0-9]+\.jsonl\$' | grep -qx 2"
check "a step that succeeded: no report, no headline" \
    bash -c "[ ! -e '$S10/report.txt' ] && ! grep -q '^convguard' '$WORK/t10.err'"

# ---- MPI's way: srun --mpi=pmi2 (MPICH, Intel MPI): PMI as without the plugin, each rank traced
pmi_run() { srun -Q --mpi=pmi2 -n2 "$@" sh -c "echo pmi \$PMI_RANK/\$PMI_SIZE fd=\${PMI_FD:+yes}; exec $C exit 0" 2>&1 | grep '^pmi' | sort; }
cluster_plugstack "$NONE"
pmi_ref=$(pmi_run)
cluster_plugstack "$PLUG"
pmi_got=$(pmi_run --convguard="$WORK/t9")
S9=$(step_of "$WORK/t9")
check "srun --mpi=pmi2: PMI_RANK, PMI_SIZE and PMI_FD as without the plugin (${pmi_ref//$'\n'/, })" \
    test -n "$pmi_ref" -a "$pmi_got" = "$pmi_ref"
check "srun --mpi=pmi2: each rank traced" bash -c "ls '$S9' | grep -cE '^$host-r[01]-[0-9]+\.jsonl\$' | grep -qx 2"

# ---- report=off, fallback=on
cluster_plugstack "$PLUG report=off fallback=on"
CGTEST_CUDNN_CREATE_STATUS=4000 srun -Q -n1 --convguard="$WORK/t13" "$C" cudnn >/dev/null 2>"$WORK/t13.err"
S13=$(step_of "$WORK/t13")
check "report=off: traced, no report, no headline" \
    bash -c "ls '$S13' | grep -q '\.jsonl\$' && [ ! -e '$S13/report.txt' ] && ! grep -q '^convguard: step' '$WORK/t13.err'"
srun -Q -n1 --convguard="$WORK/t13" "$C" env >"$WORK/t13.out" 2>&1
check "fallback=on: CONVGUARD_FALLBACK=1 in the task" grep -qx '0: CONVGUARD_FALLBACK=1' "$WORK/t13.out"

# ---- a report that hangs (report_timeout=), a command that is not there (convguard=)
printf '#!/bin/sh\nsleep 30 &\necho $! >%s\nwait\n' "$WORK/slow.pid" >"$I/bin/slow-convguard"
chmod 0755 "$I/bin/slow-convguard"
# dead: no such process, or a zombie (its parent, pid 1 in a container, may never reap it)
gone() { [ ! -e "/proc/$1/stat" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
export -f gone
cluster_plugstack "$PLUG convguard=$I/bin/slow-convguard report_timeout=1"
t0=$(date +%s%N)
CGTEST_CUDNN_CREATE_STATUS=4000 srun -Q -n1 --convguard="$WORK/t14" "$C" cudnn >/dev/null 2>"$WORK/t14.err"
rc=$? t1=$(date +%s%N)
check "report_timeout=1: a report that hangs is given up, killed with what it started (the step ends in $(((t1 - t0) / 1000000)) ms, exit 1 kept)" \
    bash -c "[ $rc = 1 ] && [ $(((t1 - t0) / 1000000)) -lt 4000 ] && [ -s '$WORK/slow.pid' ] && gone \$(cat '$WORK/slow.pid')"
check "report_timeout=1: one line says the report took too long and what makes it" \
    grep -qE "^convguard: step [0-9]+\.0 failed; its report took more than 1 s \(report_timeout=\), \`convguard report --job [0-9]+\` makes it\$" "$WORK/t14.err"
cluster_plugstack "$PLUG convguard=$WORK/nowhere/convguard"
CGTEST_CUDNN_CREATE_STATUS=4000 srun -Q -n1 --convguard="$WORK/t15" "$C" cudnn >/dev/null 2>"$WORK/t15.err"
rc=$?
check "convguard= that cannot be run: the job's status kept, one line says so" \
    bash -c "[ $rc = 1 ] && grep -q 'no report: $WORK/nowhere/convguard cannot be run (convguard= in plugstack.conf)' '$WORK/t15.err' && ls '$WORK'/t15/*.0/*.jsonl"

# ---- mistakes: the admin's, the user's
cluster_plugstack "$PLUG bogus=1"
srun -Q -n1 "$C" env >"$WORK/t12.out" 2>&1
rc=$?
check "a wrong plugstack.conf argument: said, the plugin off, the job runs untouched" \
    bash -c "[ $rc = 0 ] && grep -q 'convguard: plugstack.conf: unknown argument bogus=1' '$WORK/t12.out' && grep -qx '0: LD_PRELOAD=unset' '$WORK/t12.out'"
cluster_plugstack "$PLUG"
srun -Q -n1 --convguard=relative/dir "$C" env >"$WORK/t12b.out" 2>&1
rc=$?
check "--convguard=relative/dir: srun refuses it, as any wrong option, and says why" \
    bash -c "[ $rc != 0 ] && grep -q 'convguard: --convguard=relative/dir: not an absolute folder' '$WORK/t12b.out' && ! grep -q '^0:' '$WORK/t12b.out'"
finish
