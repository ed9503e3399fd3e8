# t_diagnosis_data.sh - what the shim records for the report's library-layer
# diagnoses (issue 14): the loader's own words sorted (only an absent file is
# a probe), the folders the loader did not search (the caller's own, pip's
# wheels), copies LD_LIBRARY_PATH shadowed, each file's own version, the
# library being loaded when the loader crashes, and which processes get a
# trace file at all.
source "$(dirname "$0")/../lib.sh"
P=$UNIT/prog_basic
D=$DOUBLES
cc=${CC:-cc}

# ---- loader errors: the kind, the file named, its size
mkdir -p "$WORK/empty" "$WORK/bad" "$WORK/undef" "$WORK/dep"
: >"$WORK/empty/libcudnn_graph.so.9"
printf 'not a library at all, just a text longer than the 64 bytes of an ELF header: %080d\n' 0 >"$WORK/bad/libcudnn_graph.so.9"
printf 'extern int no_such_symbol_anywhere(void);\nint f(void){return no_such_symbol_anywhere();}\n' |
    $cc -shared -fPIC -x c - -o "$WORK/undef/libcudnn_graph.so.9"
printf 'int g(void){return 0;}\n' | $cc -shared -fPIC -x c - -o "$WORK/dep/libcudnn_graph.so.9" \
    -Wl,--no-as-needed -L"$WORK/dep" -Wl,-soname,libcudnn_graph.so.9 2>/dev/null
# a dependency that is not there: link against a stub, then remove it
printf 'int h(void){return 0;}\n' | $cc -shared -fPIC -x c - -o "$WORK/dep/libmissingdep.so.1" -Wl,-soname,libmissingdep.so.1
printf 'int g(void){return 0;}\n' | $cc -shared -fPIC -x c - -o "$WORK/dep/libcudnn_graph.so.9" \
    -Wl,--no-as-needed -L"$WORK/dep" -l:libmissingdep.so.1
rm "$WORK/dep/libmissingdep.so.1"
for k in empty:too_short bad:bad_elf undef:undefined_symbol dep:dependency_absent; do
    dir=${k%%:*} kind=${k#*:}
    CONVGUARD_QUIET=1 run_shim "$WORK/t-$dir" env LD_LIBRARY_PATH="$WORK/$dir" "$P" load libcudnn_graph.so.9.1.0 \
        libcudnn_graph.so.9 >/dev/null 2>&1
    T=$(trace_of "$WORK/t-$dir")
    check "$kind: the dlopen failure says $kind" \
        jqt "$T" "map(select(.ev==\"dlopen\" and .name==\"libcudnn_graph.so.9\"))[0].error_kind == \"$kind\""
    check "$kind: the probe before it (.so.9.1.0, absent) says absent" \
        jqt "$T" 'map(select(.ev=="dlopen" and .name=="libcudnn_graph.so.9.1.0"))[0].error_kind == "absent"'
    check "$kind: candidates listed (never a 'likely probe')" \
        jqt "$T" 'map(select(.ev=="dlopen" and .name=="libcudnn_graph.so.9"))[0] | (.candidates | length > 0) and (.likely_probe | not)'
    check "$kind: counted as a failure at exit" jqt "$T" '.[-1].load_failures_unresolved >= 1'
done
T=$(trace_of "$WORK/t-empty")
check "too_short: the file the loader named, with its size (0)" \
    jqt "$T" "map(select(.ev==\"dlopen\" and .name==\"libcudnn_graph.so.9\"))[0] | .error_file == \"$WORK/empty/libcudnn_graph.so.9\" and .error_file_size == 0"
T=$(trace_of "$WORK/t-dep")
check "dependency_absent: the dependency is the file named" \
    jqt "$T" 'map(select(.ev=="dlopen" and .name=="libcudnn_graph.so.9"))[0].error_file == "libmissingdep.so.1"'

# a broken file first, a good one later: the success lists no broken file as a benign probe
CONVGUARD_QUIET=1 run_shim "$WORK/t-later" env LD_LIBRARY_PATH="$WORK/empty" "$P" load libcudnn_graph.so.9 \
    "$D/cudnn9/libcudnn_graph.so.9" >/dev/null 2>&1
T=$(trace_of "$WORK/t-later")
check "broken then loaded from elsewhere: still an unresolved failure at exit" jqt "$T" '.[-1].load_failures_unresolved == 1'

# ---- folders the loader did not search
# (a cuDNN in this machine's ld.so.cache would answer the bare names: hide it
# in a private mount namespace where we may; else these checks are skipped)
nocache=()
if unshare -m --propagation private true 2>/dev/null; then
    nocache=(unshare -m --propagation private sh -c 'mount --bind /dev/null /etc/ld.so.cache && exec "$@"' sh)
elif ldconfig -p 2>/dev/null | grep -q libcudnn_graph; then
    nocache=(skip)
fi
d=$WORK/norunpath
mkdir -p "$d" && cp "$D"/cudnn9/libcudnn_graph.so.9 "$D"/cudnn9/libcudnn_cnn.so.9 "$d"/
$cc -std=c11 -D_GNU_SOURCE -O1 -fPIC -shared -fvisibility=hidden -I"$ROOT/shim" -I"$ROOT/tests/doubles" \
    -Wl,-soname,libcudnn.so.9 -Wl,--version-script="$D/maps/libcudnn.so.9.map" -o "$d/libcudnn.so.9" \
    "$ROOT/tests/doubles/cudnn_dispatch.c" -ldl
sp=$WORK/venv/lib/python3.12/site-packages
mkdir -p "$sp/pkg.libs" "$sp/nvidia/cudnn/lib"
cp "$D"/cudnn9/libcudnn.so.9 "$sp/pkg.libs/"
cp "$D"/cudnn9/libcudnn_graph.so.9 "$D"/cudnn9/libcudnn_cnn.so.9 "$sp/nvidia/cudnn/lib/"
[ "${nocache[*]}" != skip ] && {
CONVGUARD_QUIET=1 run_shim "$WORK/t-own" "${nocache[@]}" env LD_LIBRARY_PATH="$D/cudart:$D/cuda" "$CLIENTS/client_copyload" "$d" >/dev/null 2>&1
T=$(trace_of "$WORK/t-own")
check "no RUNPATH: the caller's own folder is listed, searched: false, with the part" \
    jqt "$T" "map(select(.ev==\"dlopen\" and .name==\"libcudnn_graph.so.9\"))[0] | .caller_runpath == null and
        any(.candidates[]; .source == \"caller_dir\" and .searched == false and .dir == \"$d\" and
            any(.files[]; .name == \"libcudnn_graph.so.9\"))"
CONVGUARD_QUIET=1 run_shim "$WORK/t-wheel" "${nocache[@]}" env LD_LIBRARY_PATH="$D/cudart:$D/cuda" "$CLIENTS/client_copyload" "$sp/pkg.libs" >/dev/null 2>&1
T=$(trace_of "$WORK/t-wheel")
check "pip's wheel folder next to the asker: listed, source wheel, searched: false" \
    jqt "$T" "map(select(.ev==\"dlopen\" and .name==\"libcudnn_graph.so.9\"))[0] | .caller_runpath == \"\$ORIGIN\" and
        any(.candidates[]; .source == \"wheel\" and .searched == false and .dir == \"$sp/nvidia/cudnn/lib\")"
}
[ "${nocache[*]}" = skip ] && echo "  (skipped: folders not searched: this machine's ld.so.cache has a cuDNN and unshare -m is not allowed)"

# ---- a copy in LD_LIBRARY_PATH shadows the one the needer's RUNPATH names; versions from files
r=$WORK/shadow
mkdir -p "$r/fw/lib" "$r/old"
cp "$D"/cudnn9/libcudnn*.so.9 "$r/fw/lib/"
cp "$D"/cudnn9/libcudnn.so.9 "$r/old/libcudnn.so.9.0.0" && ln -s libcudnn.so.9.0.0 "$r/old/libcudnn.so.9"
cp "$D"/cudnn9/libcudnn_graph.so.9 "$D"/cudnn9/libcudnn_cnn.so.9 "$r/old/"
$cc -std=c11 -D_GNU_SOURCE -O1 -fPIC -shared -I"$ROOT/shim" -I"$ROOT/tests/doubles" -I"$ROOT/tests/clients" \
    -o "$r/fw/lib/libfw.so" "$ROOT/tests/clients/ext_torchlike.c" -Wl,--no-as-needed -L"$r/fw/lib" -L"$D/cudart" \
    -l:libcudnn.so.9 -l:libcudart.so.13 -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN' -Wl,-rpath,"$D/cudart"
CONVGUARD_QUIET=1 run_shim "$WORK/t-shadow" env LD_LIBRARY_PATH="$r/old:$D/cuda" "$CLIENTS/client_torchlike" "$r/fw/lib/libfw.so" >/dev/null 2>&1
T=$(trace_of "$WORK/t-shadow")
check "shadowed: the lib event from LD_LIBRARY_PATH names the RUNPATH copy that lost" \
    jqt "$T" "map(select(.ev==\"lib\" and .soname==\"libcudnn.so.9\"))[0] | .path == \"$r/old/libcudnn.so.9\" and
        .shadowed == [{\"path\": \"$r/fw/lib/libcudnn.so.9\", \"source\": \"RUNPATH\"}]"
check "the dispatcher's own version from its file's name (9.0.0), not its part's" \
    jqt "$T" 'map(select(.ev=="lib" and .soname=="libcudnn.so.9"))[0] | .version == 90000 and .version_source == "file_name" and .file_version == "9.0.0"'
check "the part's version is its own (9.1.0, asked of it)" \
    jqt "$T" 'map(select(.ev=="lib" and .soname=="libcudnn_graph.so.9"))[0] | .version == 90100 and (.version_source | not)'
CONVGUARD_QUIET=1 run_shim "$WORK/t-noshadow" env LD_LIBRARY_PATH="$D/cuda" "$CLIENTS/client_torchlike" "$r/fw/lib/libfw.so" >/dev/null 2>&1
check "found through RUNPATH itself: nothing shadowed" \
    jqt "$(trace_of "$WORK/t-noshadow")" 'map(select(.ev=="lib" and has("shadowed"))) | length == 0'
mkdir -p "$sp/nvidia_cudnn_cu13-9.1.0.70.dist-info"
CONVGUARD_QUIET=1 run_shim "$WORK/t-wv" "$P" load "$sp/pkg.libs/../nvidia/cudnn/lib/libcudnn_cnn.so.9" >/dev/null 2>&1
check "a part with no version of its own: the wheel's (dist-info)" \
    jqt "$(trace_of "$WORK/t-wv")" 'map(select(.ev=="lib" and .soname=="libcudnn_cnn.so.9"))[0] | .version == 90100 and .version_source == "wheel"'

# ---- a crash inside the dynamic loader names what was being loaded
mkdir -p "$WORK/trunc"
head -c 8192 "$D/cudnn9/libcudnn_graph.so.9" >"$WORK/trunc/libcudnn_graph.so.9"
want=$("$ROBUST/waitstatus" "$P" load "$WORK/trunc/libcudnn_graph.so.9" 2>/dev/null)
got=$(mkdir -p "$WORK/t-trunc"; "$ROBUST/waitstatus" env CONVGUARD_QUIET=1 CONVGUARD_DIR="$WORK/t-trunc" LD_PRELOAD="$SHIM" \
    "$P" load "$WORK/trunc/libcudnn_graph.so.9" 2>/dev/null)
check "truncated library: the process ends as without the shim ($want)" test "$got" = "$want"
check "truncated library: a crash event (the file made by it), in ld.so, naming the file and its size" \
    jqt "$(trace_of "$WORK/t-trunc")" ".[0].ev == \"start\" and (map(select(.ev==\"crash\"))[0] | .signal_name == \"SIGBUS\" and
        (.backtrace[0].module | test(\"ld-linux\")) and .loading == {\"name\": \"$WORK/trunc/libcudnn_graph.so.9\",
        \"file\": \"$WORK/trunc/libcudnn_graph.so.9\", \"size\": 8192})"
CONVGUARD_QUIET=1 run_shim "$WORK/t-segv" env PROG_CUDA_LIB="$D/cuda/libcuda.so.1" "$ROBUST/prog_crash" segv >/dev/null 2>&1
check "a crash outside any dlopen has no 'loading'" jqt "$(trace_of "$WORK/t-segv")" 'map(select(.ev=="crash"))[0] | has("loading") | not'

# ---- which processes get a file
mkdir -p "$WORK/fw/torch/lib"
printf 'int torch_cpu_marker(void){return 0;}\n' | $cc -shared -fPIC -x c - -o "$WORK/fw/torch/lib/libtorch_cpu.so"
CONVGUARD_QUIET=1 run_shim "$WORK/t-fw" "$P" load "$WORK/fw/torch/lib/libtorch_cpu.so" >/dev/null 2>&1
T=$(trace_of "$WORK/t-fw")
check "a framework mapped, no CUDA at all: a file at exit, start then exit with frameworks [torch]" \
    jqt "$T" 'length == 2 and .[0].ev == "start" and .[1].ev == "exit" and .[1].frameworks == ["torch"] and .[1].libs == 0'
mkdir -p "$WORK/cuda-11.8/bin" && cp "$P" "$WORK/cuda-11.8/bin/ptxas"
printf '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "11.8.20220929"\n   }\n}\n' >"$WORK/cuda-11.8/version.json"
CONVGUARD_QUIET=1 run_shim "$WORK/t-tool" "$WORK/cuda-11.8/bin/ptxas" echo x >/dev/null 2>&1
check "a CUDA tool (ptxas) gets a file, with its toolkit's version" \
    jqt "$(trace_of "$WORK/t-tool")" '.[0].cuda_tool == {"name": "ptxas", "toolkit_version": "11.8.20220929"}'
CONVGUARD_QUIET=1 run_shim "$WORK/t-sh" bash -c "$P echo a; $P echo b; /bin/true" >/dev/null 2>&1
check "a shell and its children that touch no CUDA library: no file at all" test -z "$(ls "$WORK/t-sh")"
if [ -e /.dockerenv ]; then
    CONVGUARD_QUIET=1 run_shim "$WORK/t-ct" "$P" load "$D/cuda/libcuda.so.1" >/dev/null 2>&1
    want=false; { [ -e /dev/nvidiactl ] || [ -e /dev/nvidia0 ]; } && want=true
    check "in a container: start.container says docker and whether /dev/nvidia* exists ($want)" \
        jqt "$(trace_of "$WORK/t-ct")" ".[0].container == {\"kind\": \"docker\", \"nvidia_devices\": $want}"
fi
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -p "$WORK/h/.nv" && chown nobody "$WORK/h/.nv" && chmod 0700 "$WORK/h/.nv"
    # as root, access() says writable: the owner is what differs
    HOME=$WORK/h CONVGUARD_QUIET=1 run_shim "$WORK/t-nv" "$P" load "$D/cuda/libcuda.so.1" >/dev/null 2>&1
    check "a ~/.nv owned by another user: start.nv_cache names it and its owner" \
        jqt "$(trace_of "$WORK/t-nv")" ".[0].nv_cache.path == \"$WORK/h/.nv\" and .[0].nv_cache.owner == $(id -u nobody)"
fi
HOME=$WORK CONVGUARD_QUIET=1 run_shim "$WORK/t-nonv" "$P" load "$D/cuda/libcuda.so.1" >/dev/null 2>&1
check "no ~/.nv (or one of ours): nothing about it" jqt "$(trace_of "$WORK/t-nonv")" '.[0] | has("nv_cache") | not'
finish
