# t_devnodes.sh - a failed cuInit carries the evidence beyond the hooked call
# (issue 27 item 3): the NVIDIA device files as this process sees them (never
# opened: mode, owner, group, faccessat's answer, the process's groups) and
# the GPUs NVML lists, for CUDA_VISIBLE_DEVICES; the report names the cause.
# A fake /dev in a private mount namespace (unshare -m, a tmpfs with mknod'd
# nodes 0660 root:video) and a second uid stand for a machine whose GPU
# nodes this user may not open.  A cuInit that works writes none of it.
source "$(dirname "$0")/../lib.sh"
D=$DOUBLES
CG=$BUILD_DIR/convguard
[ "$(id -u)" = 0 ] || skip_all "needs root (unshare -m, mknod)"
unshare -m true 2>/dev/null || skip_all "no private mount namespace here"
command -v setpriv >/dev/null || skip_all "no setpriv"
trap 'rm -rf "$WORK"' EXIT
chmod 755 "$WORK"
VIDEO=$(getent group video | cut -d: -f3); VIDEO=${VIDEO:-44}

# fakedev.sh MODE0 CMD...: /dev replaced, for CMD alone, by nvidiactl and
# nvidia-uvm (0666), nvidia0 and nvidia1 (MODE0, root:video), nvidia-caps/
cat >"$WORK/fakedev.sh" <<EOF
set -e
F=\$(mktemp -d)
mount -t tmpfs none "\$F"
mknod "\$F/null" c 1 3; chmod 666 "\$F/null"
mknod "\$F/nvidiactl" c 195 255; chmod 666 "\$F/nvidiactl"
mknod "\$F/nvidia-uvm" c 510 0; chmod 666 "\$F/nvidia-uvm"
for i in 0 1; do mknod "\$F/nvidia\$i" c 195 \$i; chmod "\$1" "\$F/nvidia\$i"; chgrp $VIDEO "\$F/nvidia\$i"; done
mkdir "\$F/nvidia-caps"; mknod "\$F/nvidia-caps/nvidia-cap1" c 235 1; chmod 0400 "\$F/nvidia-caps/nvidia-cap1"
mount --bind "\$F" /dev
shift
exec "\$@"
EOF

# as NAME MODE0 GROUPS ENV... : the jax-like client (cuInit through cuGetProcAddress) as uid 1234
as() {
    local name=$1 mode=$2 groups=$3; shift 3
    mkdir -p "$WORK/$name"; chown 1234:1234 "$WORK/$name"; chmod 700 "$WORK/$name"
    unshare -m bash "$WORK/fakedev.sh" "$mode" setpriv --reuid=1234 --regid=1234 $groups \
        env CONVGUARD_QUIET=1 CONVGUARD_DIR="$WORK/$name" LD_LIBRARY_PATH=$D/cudnn9:$D/cuda:$D/nvml LD_PRELOAD=$SHIM \
        "$@" "$CLIENTS/client_jaxlike" "$CLIENTS/plugin_jaxlike.so" >"$WORK/$name.out" 2>&1
}
ctx='first(.[] | select(.ev=="context_failed" and .fn=="cuInit"))'

as denied 0660 --clear-groups CGTEST_NO_DEVICE=1
T=$(trace_of "$WORK/denied")
check "denied: cuInit's failure lists /dev/nvidia0 with EACCES, mode 0660, group video" jqt "$T" "$ctx | any(.dev_nodes[];
    .path==\"/dev/nvidia0\" and .exists and .type==\"char\" and .access==\"EACCES\" and .mode==\"0660\" and .gid==$VIDEO and .owner==\"root\")"
check "denied: nvidiactl and nvidia-uvm are listed first, open to all (0666, ok)" jqt "$T" "$ctx |
    .dev_nodes[0].path==\"/dev/nvidiactl\" and .dev_nodes[0].access==\"ok\" and .dev_nodes[1].path==\"/dev/nvidia-uvm\" and .dev_nodes[1].mode==\"0666\""
check "denied: the caps folder's nodes are listed too" jqt "$T" "$ctx | any(.dev_nodes[]; .path==\"/dev/nvidia-caps/nvidia-cap1\")"
check "denied: the GPUs in natural order, nvidia0 before nvidia1" jqt "$T" "$ctx |
    ([.dev_nodes[].path | select(test(\"^/dev/nvidia[0-9]+\$\"))] == [\"/dev/nvidia0\", \"/dev/nvidia1\"])"
check "denied: who the process is: euid 1234, no supplementary groups" jqt "$T" "$ctx | .creds.euid==1234 and .creds.egid==1234 and .creds.groups==[]"
check "denied: a context failure after the failed cuInit repeats none of it" jqt "$T" '
    all(.[] | select(.ev=="context_failed" and .status==3); .dev_nodes == null and .nvml_gpus == null)'
"$CG" report --json "$WORK/denied" >"$WORK/denied.json" 2>/dev/null
check "denied: the report says gpu_device_denied, not 'the driver shows no GPU'" jq -e '.findings[0].rule=="gpu_device_denied"' "$WORK/denied.json"
check "denied: the cause names the file, errno, mode, owner:group and the missing group" jq -e '.findings[0].cause |
    contains("/dev/nvidia0 exists but this process cannot open it (EACCES; mode 0660 root:video; this process (uid 1234) is not in group video)")' "$WORK/denied.json"
check "denied: the fix adds the user to the group" jq -e '.findings[0].fix | contains("usermod -aG video")' "$WORK/denied.json"

as member 0660 "--groups=$VIDEO" CGTEST_NO_DEVICE=1
T=$(trace_of "$WORK/member")
check "in group video: /dev/nvidia0's access is ok and the group is listed" jqt "$T" "$ctx |
    any(.dev_nodes[]; .path==\"/dev/nvidia0\" and .access==\"ok\") and (.creds.groups | index($VIDEO))"
"$CG" report --json "$WORK/member" >"$WORK/member.json" 2>/dev/null
check "in group video: not gpu_device_denied" jq -e '.findings[0].rule != "gpu_device_denied"' "$WORK/member.json"

as visible 0666 --clear-groups CGTEST_NO_DEVICE=1 CGTEST_NVML_GPUS=2 CUDA_VISIBLE_DEVICES=3
T=$(trace_of "$WORK/visible")
check "CUDA_VISIBLE_DEVICES=3: the failure lists NVML's GPUs (index, UUID)" jqt "$T" "$ctx |
    .nvml_gpus.count==2 and .nvml_gpus.gpus[1].index==1 and .nvml_gpus.gpus[1].uuid==\"GPU-cgtest-0001\""
"$CG" report --json "$WORK/visible" >"$WORK/visible.json" 2>/dev/null
check "CUDA_VISIBLE_DEVICES=3: the report says it names a GPU this machine does not have (it has 0, 1)" jq -e '
    .findings[0].rule=="visible_devices_unknown" and (.findings[0].cause | contains("NVML lists 2: 0 (GPU-cgtest-0000), 1 (GPU-cgtest-0001)"))' "$WORK/visible.json"

# the program's view: same output, same fds, with and without the shim (NVML's map line aside)
unshare -m bash "$WORK/fakedev.sh" 0660 setpriv --reuid=1234 --regid=1234 --clear-groups env CGTEST_NO_DEVICE=1 \
    LD_LIBRARY_PATH=$D/cudnn9:$D/cuda:$D/nvml "$CLIENTS/client_jaxlike" "$CLIENTS/plugin_jaxlike.so" >"$WORK/plain.out" 2>&1
check "denied: the client's output is the same without the shim" diff "$WORK/plain.out" <(grep -v '^maps: .*/libnvidia-ml.so.1$' "$WORK/denied.out")

# success: cuInit works, nothing new is written and NVML is not loaded
as ok 0666 --clear-groups
T=$(trace_of "$WORK/ok")
check "cuInit works: no context_failed, no dev_nodes, creds or nvml_gpus anywhere" jqt "$T" '
    all(.[]; .ev != "context_failed" and .dev_nodes == null and .creds == null and .nvml_gpus == null)'
check "cuInit works: NVML was not loaded" jqt "$T" 'all(.[]; (.path // "") | test("libnvidia-ml") | not)'
finish
