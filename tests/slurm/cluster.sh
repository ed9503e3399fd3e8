# tests/slurm/cluster.sh - a real one-node Slurm cluster for the tests and the
# benchmark: munged, slurmctld and slurmd of Debian's packages, each started
# in the foreground by us with a configuration of our own in a temporary
# folder (its own munge key and socket, its own ports, its own plugstack.conf),
# stopped by the pids we started.  Root only (SlurmUser=root; slurmd runs
# jobs as their users).  Sourced; the caller sets CL (an empty folder).
#
#   cluster_start PLUGSTACK_LINE   up, and idle; 1 when it could not start
#   cluster_plugstack LINE         the plugstack.conf the next step reads
#                                  (srun and slurmstepd read it at each step)
#   cluster_stop                   every daemon we started, by pid
#   cluster_log                    the end of the daemons' logs (on a failure)
#
# Facts (../shared/field-notes.md, "Slurm on one machine"): the node line as
# `slurmd -C` prints it; proctrack/linuxproc and task/none need no cgroups.
CL_PIDS=()

cluster_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

cluster_plugstack() { printf '%s\n' "$1" >"$CL/plugstack.conf"; }

cluster_start() {
    local node host p1 p2 i
    mkdir -p "$CL/munge" "$CL/key" "$CL/state" "$CL/spool" "$CL/log"
    chmod 0755 "$CL" "$CL/munge" # the socket is for every user's srun
    chmod 0700 "$CL/key"
    head -c 1024 /dev/urandom >"$CL/key/munge.key"
    chmod 0400 "$CL/key/munge.key"
    munged -F -f --socket="$CL/munge/socket" --key-file="$CL/key/munge.key" \
        --pid-file="$CL/munge/munged.pid" --log-file="$CL/log/munged.log" \
        --seed-file="$CL/key/seed" >>"$CL/log/munged.out" 2>&1 &
    CL_PIDS+=($!)
    for i in $(seq 50); do [ -S "$CL/munge/socket" ] && break; sleep 0.1; done
    [ -S "$CL/munge/socket" ] || return 1
    host=$(hostname -s)
    # more CPUs than the machine has (config_overrides), so that steps of several jobs run at once
    node="NodeName=$host CPUs=16 $(slurmd -C | head -1 | grep -o 'RealMemory=[0-9]*')"
    p1=$(cluster_free_port)
    p2=$(cluster_free_port)
    [ "$p1" != "$p2" ] || p2=$((p1 + 1))
    cat >"$CL/slurm.conf" <<CONF
ClusterName=cgtest
SlurmctldHost=$host
SlurmctldPort=$p1
SlurmdPort=$p2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$CL/munge/socket
StateSaveLocation=$CL/state
SlurmdSpoolDir=$CL/spool
SlurmctldPidFile=$CL/slurmctld.pid
SlurmdPidFile=$CL/slurmd.pid
SlurmctldLogFile=$CL/log/slurmctld.log
SlurmdLogFile=$CL/log/slurmd.log
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
PlugStackConfig=$CL/plugstack.conf
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=2
MinJobAge=2
$node State=UNKNOWN
PartitionName=cg Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    cluster_plugstack "${1:-}"
    export SLURM_CONF=$CL/slurm.conf
    slurmctld -D -i >>"$CL/log/slurmctld.out" 2>&1 &
    CL_PIDS+=($!)
    slurmd -D >>"$CL/log/slurmd.out" 2>&1 &
    CL_PIDS+=($!)
    for i in $(seq 100); do
        sinfo -h -o %T 2>/dev/null | grep -qx idle && return 0
        sleep 0.1
    done
    return 1
}

cluster_stop() {
    local i
    for ((i = ${#CL_PIDS[@]} - 1; i >= 0; i--)); do
        kill "${CL_PIDS[i]}" 2>/dev/null
        wait "${CL_PIDS[i]}" 2>/dev/null
    done
    CL_PIDS=()
}

cluster_log() { tail -n 20 "$CL"/log/*; }
