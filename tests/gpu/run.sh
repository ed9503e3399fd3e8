#!/usr/bin/env bash
# tests/gpu/run.sh - the checks that need an NVIDIA GPU, PyTorch and JAX.
# Not part of `make test` (CI has no GPU).  Usage:
#   tests/gpu/run.sh [loader] [resource] [overhead] [robust] ...    (default: loader resource)
# Prints what it measured; writes traces under $OUT (or ./gpu-out).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
SHIM=$ROOT/build/libconvguard.so
PY=${PYTHON:-python3}
sections=${*:-loader resource}
# Seen on the H200 machine: /opt/gcc/bin/gcc comes first in PATH and its LTO link fails ("could not run
# lto-wrapper"); then rebuild the shim with the system compiler.
make -s build/libconvguard.so >/dev/null 2>&1 || { [ -x /usr/bin/gcc ] && rm -rf build/shim build/libconvguard.so &&
    make -s CC=/usr/bin/gcc build/libconvguard.so >/dev/null 2>&1 && echo "(shim built with CC=/usr/bin/gcc)"; } ||
    make build/libconvguard.so || { echo "build failed"; exit 1; }
# the CLI needs libjansson; where its headers are missing, a carried unpacked
# libjansson-dev in .jansson/ is linked statically (see tools/tools.mk)
J=""
[ -e /usr/include/jansson.h ] || [ ! -d .jansson ] || J="JANSSON_DIR=$ROOT/.jansson"
make -s $J build/convguard >/dev/null 2>&1 || echo "note: the convguard CLI did not build here"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'

same_maps() { # name cmd...: maps with and without the shim must be identical
    local name=$1; shift
    "$@" "$OUT/$name.maps.plain" > "$OUT/$name.plain.log" 2>&1 || { echo "$name (no shim) failed:"; tail -5 "$OUT/$name.plain.log"; }
    CONVGUARD_DIR=$OUT/$name.traces LD_PRELOAD=$SHIM "$@" "$OUT/$name.maps.shim" > "$OUT/$name.shim.log" 2>&1 || { echo "$name (shim) failed:"; tail -5 "$OUT/$name.shim.log"; }
    echo "-- $name: $(head -1 "$OUT/$name.plain.log")"
    echo "   with shim: $(grep -v '^convguard:' "$OUT/$name.shim.log" | head -1)"
    grep '^convguard:' "$OUT/$name.shim.log" | sed 's/^/   /'
    if diff -q "$OUT/$name.maps.plain" "$OUT/$name.maps.shim" >/dev/null; then
        echo "   /proc/self/maps: identical ($(wc -l < "$OUT/$name.maps.plain") shared objects)"
    else
        echo "   /proc/self/maps: DIFFERENT"; diff "$OUT/$name.maps.plain" "$OUT/$name.maps.shim" | head -10
    fi
    grep -h 'libcudnn' "$OUT/$name.maps.plain" | sed 's/^/   maps: /'
    $PY tests/gpu/summarize.py "$OUT/$name.traces" | sed 's/^/   /' | head -60
    if grep -q '/usr/lib/x86_64-linux-gnu/libcudnn' "$OUT/$name.traces"/*.jsonl 2>/dev/null; then
        echo "   system cuDNN copy (/usr/lib/x86_64-linux-gnu) named in the trace"
    else
        echo "   system cuDNN copy (/usr/lib/x86_64-linux-gnu): not loaded, named nowhere in the trace"
    fi
}

for s in $sections; do
    case $s in
    loader)
        echo "== loader: PyTorch and JAX convolutions under the shim"
        ls /usr/lib/x86_64-linux-gnu/libcudnn.so* 2>/dev/null | head -3 | sed 's/^/system copy: /'
        same_maps torch_default env CG_BENCH=0 $PY tests/gpu/conv_torch.py
        same_maps torch_bench env CG_BENCH=1 $PY tests/gpu/conv_torch.py
        same_maps torch_expandable env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $PY tests/gpu/conv_torch.py
        same_maps jax env $PY tests/gpu/conv_jax.py
        ;;
    resource)
        # The resource layer (issue 3): cuDNN's handle, the legacy algorithm API and GPU memory, alone and
        # with a second process holding all but LEAVE_MIB (default 300) of the GPU.
        echo "== resource: cuDNN handle, legacy algorithm lookup and GPU memory, alone and under pressure"
        make -s examples >/dev/null 2>&1 || make examples || { echo "examples: build failed"; continue; }
        # the wheel's cuDNN 9 and cudart (what torch and jax map), for the TensorFlow-like example
        WHEEL_LIBS=$($PY -c 'import glob, os, site
d = []
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    for p in ("nvidia/*/lib/libcudnn.so.9", "nvidia/*/lib/libcudart.so.13", "nvidia/*/lib/libcudart.so.12"):
        d += [os.path.dirname(f) for f in glob.glob(os.path.join(sp, p)) if os.path.dirname(f) not in d]
print(":".join(d))' 2>/dev/null)
        echo "   wheel libraries: ${WHEEL_LIBS:-none found, the search order decides}"
        EXLP=${WHEEL_LIBS:+$WHEEL_LIBS:}${LD_LIBRARY_PATH:-}
        LEAVE=${LEAVE_MIB:-300}
        res_run() { # name cmd... : with the shim, prints the program's tail and the resource lines of its trace
            local name=$1; shift
            rm -rf "$OUT/$name.traces"
            echo "-- $name: $*"
            CONVGUARD_DIR=$OUT/$name.traces LD_PRELOAD=$SHIM timeout 600 "$@" > "$OUT/$name.log" 2>&1
            echo "   exit status $?"
            grep -v '^convguard:' "$OUT/$name.log" | grep -E 'cudnnCreate|FindEx|Get_v7|run algo|workspace [0-9]|Failed|Error|error|exit|torch|jax' | tail -12 | sed 's/^/   | /'
            grep '^convguard:' "$OUT/$name.log" | sed 's/^/   /'
            $PY tests/gpu/resource_summary.py "$OUT/$name.traces" | sed 's/^/   /' | head -80
        }
        # 1. alone
        res_run res_tf_alone env LD_LIBRARY_PATH=$EXLP CG_CONV_SHAPE=32,128,56,56,128,3,3 build/examples/conv_tflike
        # 2. under pressure: the hog holds all but $LEAVE MiB
        build/examples/gpu_hog "$LEAVE" 3000 > "$OUT/hog.log" 2>&1 &
        HOG=$!
        for i in $(seq 1 120); do grep -q '^holding' "$OUT/hog.log" 2>/dev/null && break; sleep 1; done
        echo "   hog (pid $HOG): $(tail -1 "$OUT/hog.log")"
        nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>/dev/null | sed 's/^/   nvidia-smi: /'
        res_run res_tf_pressure env LD_LIBRARY_PATH=$EXLP CG_CONV_SHAPE=32,128,56,56,128,3,3 build/examples/conv_tflike
        res_run res_tf_pressure_small env LD_LIBRARY_PATH=$EXLP CG_CONV_SHAPE=8,64,56,56,64,3,3 build/examples/conv_tflike
        res_run res_torch_legacy env TORCH_CUDNN_V8_API_DISABLED=1 CG_BENCH=0 $PY tests/gpu/conv_torch.py
        res_run res_torch_legacy_bench env TORCH_CUDNN_V8_API_DISABLED=1 CG_BENCH=1 $PY tests/gpu/conv_torch.py
        res_run res_jax env $PY tests/gpu/conv_jax.py
        res_run res_jax_noprealloc env CG_JAX_PREALLOCATE=false $PY tests/gpu/conv_jax.py
        kill "$HOG" 2>/dev/null; wait "$HOG" 2>/dev/null
        # 3. some room (LEAVE2_MIB, default 2048): the handle fits, the big workspaces do not
        build/examples/gpu_hog "${LEAVE2_MIB:-2048}" 3000 > "$OUT/hog2.log" 2>&1 &
        HOG=$!
        for i in $(seq 1 120); do grep -q '^holding' "$OUT/hog2.log" 2>/dev/null && break; sleep 1; done
        echo "   hog (pid $HOG): $(tail -1 "$OUT/hog2.log")"
        res_run res_tf_room env LD_LIBRARY_PATH=$EXLP CG_CONV_SHAPE=32,128,56,56,128,3,3 build/examples/conv_tflike
        res_run res_torch_legacy_bench_room env TORCH_CUDNN_V8_API_DISABLED=1 CG_BENCH=1 $PY tests/gpu/conv_torch.py
        kill "$HOG" 2>/dev/null; wait "$HOG" 2>/dev/null
        ;;
    overhead)
        echo "== overhead: ms/step without the shim, with it, and with cuDNN's own log (CUDNN_LOGLEVEL_DBG=3)"
        STEPS=${CG_BENCH_STEPS:-200}
        for fw in torch jax; do
            : > "$OUT/ov_$fw.txt"
            for round in 1 2 3; do
                for mode in plain shim dbg3; do
                    case $mode in
                    plain) r=$($PY tests/gpu/bench_step.py $fw $STEPS 2>/dev/null | tail -1) ;;
                    shim) r=$(CONVGUARD_QUIET=1 CONVGUARD_DIR=$OUT/ov_traces LD_PRELOAD=$SHIM $PY tests/gpu/bench_step.py $fw $STEPS 2>/dev/null | tail -1) ;;
                    dbg3) r=$(CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=$OUT/cudnn_$fw.log $PY tests/gpu/bench_step.py $fw $STEPS 2>/dev/null | tail -1) ;;
                    esac
                    echo "$mode $r" >> "$OUT/ov_$fw.txt"
                done
            done
            $PY - "$OUT/ov_$fw.txt" "$fw" <<'PYEOF'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) >= 3 and p[1] == "median_ms":
        rows.setdefault(p[0], []).append(float(p[2]))
base = statistics.median(rows.get("plain", [float("nan")]))
for m in ("plain", "shim", "dbg3"):
    v = rows.get(m, [])
    if v:
        med = statistics.median(v)
        print("   %-5s %-5s ms/step median of %d runs: %.3f  (runs: %s)  ratio %.3f" % (
            sys.argv[2], m, len(v), med, " ".join("%.3f" % x for x in v), med / base))
PYEOF
            ls -la "$OUT/cudnn_$fw.log" 2>/dev/null | awk '{print "   cuDNN log (DBG=3) bytes for 3 runs: " $5}'
        done
        # trace volume in steady state: bytes written between a short and a long run
        for n in 50 550; do
            rm -rf "$OUT/vol$n"
            CONVGUARD_QUIET=1 CONVGUARD_DIR=$OUT/vol$n LD_PRELOAD=$SHIM $PY tests/gpu/bench_step.py torch $n > "$OUT/vol$n.txt" 2>/dev/null
        done
        $PY - "$OUT" <<'PYEOF'
import sys, glob, os
out = sys.argv[1]
def size(n): return sum(os.path.getsize(f) for f in glob.glob("%s/vol%d/*.jsonl" % (out, n)))
def secs(n): return float(open("%s/vol%d.txt" % (out, n)).read().split()[-1])
b50, b550, s50, s550 = size(50), size(550), secs(50), secs(550)
rate = (b550 - b50) / max(s550 - s50, 1e-9) * 3600
print("   trace bytes: %d (50 steps), %d (550 steps); steady state %.0f bytes/hour extrapolated (%.1f s more)" %
      (b50, b550, rate, s550 - s50))
PYEOF
        ;;
    robust)
        # Issue 7: crashes under PyTorch end as without the shim and leave a
        # crash event (this machine has no libunwind: glibc's unwinder, since
        # torch brings libgcc_s); Python's faulthandler, installed after the
        # shim, still runs and chains to it; many threads on the real driver.
        echo "== robust: crashes, faulthandler, threads on the real driver"
        make -s build/robust/prog_threads build/robust/waitstatus >/dev/null 2>&1 ||
            make -s CC=/usr/bin/gcc build/robust/prog_threads build/robust/waitstatus >/dev/null 2>&1
        WS=$ROOT/build/robust/waitstatus
        crash_case() { # name python-code [env...]
            local name=$1 code=$2; shift 2
            rm -rf "$OUT/crash-$name"
            local a b
            a=$(ulimit -c 0; "$WS" env "$@" $PY -c "$code" 2>"$OUT/crash-$name.plain.err" | tail -1)
            b=$(ulimit -c 0; "$WS" env "$@" CONVGUARD_QUIET=1 CONVGUARD_DIR=$OUT/crash-$name LD_PRELOAD=$SHIM \
                $PY -c "$code" 2>"$OUT/crash-$name.shim.err" | tail -1)
            echo "-- $name: without the shim: $a; with it: $b $([ "$a" = "$b" ] && echo '(same)' || echo '(DIFFERENT)')"
            grep -q "Fatal Python error" "$OUT/crash-$name.shim.err" && echo "   faulthandler printed its report"
            $PY - "$OUT/crash-$name" <<'PYEOF'
import sys, glob, json
evs = []
for f in glob.glob(sys.argv[1] + "/*.jsonl"):
    for line in open(f, errors="replace"):
        try: evs.append(json.loads(line))
        except ValueError: pass
c = [e for e in evs if e.get("ev") == "crash"]
if not c:
    print("   NO crash event"); sys.exit()
c = c[0]
print("   crash: %s %s addr=%s unwinder=%s frames=%d next=%s last_failure=%s" % (c["signal_name"],
      c.get("code_name"), c.get("addr"), c["unwinder"], len(c["backtrace"]), c.get("next"), c.get("last_failure")))
for fr in c["backtrace"][:8]:
    print("     %s +%s" % (fr["module"], fr["offset"]))
PYEOF
        }
        crash_case segv "import torch, ctypes; torch.zeros(1, device='cuda'); ctypes.string_at(0)"
        crash_case segv-faulthandler "import torch, ctypes; torch.zeros(1, device='cuda'); ctypes.string_at(0)" PYTHONFAULTHANDLER=1
        crash_case abort "import torch, os; torch.zeros(1, device='cuda'); os.abort()"
        crash_case segv-libunwind-off "import torch, ctypes; torch.zeros(1, device='cuda'); ctypes.string_at(0)" CONVGUARD_UNWIND=none
        # 64 threads x 20,000 driver calls on the real libcuda.so.1 (no fork:
        # a forked child cannot use CUDA): same output with and without the
        # shim, every trace line whole, exit.calls exact
        T=$ROOT/build/robust/prog_threads
        rm -rf "$OUT/threads"
        a=$(CG_FAIL_KIND=release "$T" 64 20000 100 2>&1)
        b=$(CG_FAIL_KIND=release CONVGUARD_QUIET=1 CONVGUARD_DIR=$OUT/threads LD_PRELOAD=$SHIM "$T" 64 20000 100 2>&1)
        echo "-- threads (real driver): without the shim: $a; with it: $b $([ "$a" = "$b" ] && echo '(same)' || echo '(DIFFERENT)')"
        $PY - "$OUT/threads" <<'PYEOF'
import sys, glob, json
for f in glob.glob(sys.argv[1] + "/*.jsonl"):
    lines = open(f, errors="replace").read().split("\n")
    evs = [json.loads(l) for l in lines if l]
    seqs = sorted(e["seq"] for e in evs)
    ex = [e for e in evs if e["ev"] == "exit"]
    print("   %d lines, all JSON; seq 0..n-1: %s; exit calls=%s fails=%s" % (len(evs), seqs == list(range(len(evs))),
          json.dumps(ex[0]["calls"]) if ex else "-", json.dumps(ex[0]["fails"]) if ex else "-"))
PYEOF
        ;;
    *) echo "unknown section $s" ;;
    esac
done
