#!/usr/bin/env bash
# packaging/test-wheel.sh WHEEL - the wheel as a user gets it (make test-wheel):
# auditwheel's verdict, the binaries' glibc floor, then `pip install` into a
# fresh venv and, from another directory, the installed command: --help,
# python -m convguard, doctor, shim-path, and `convguard run` tracing a
# program with the packaged shim.
#   PYTHON   the interpreter that makes the venv and has auditwheel (build/pytools)
#   VENV     where to install (kept, for make test-tf-wheel); default: a temporary one
#   ARCH     x86_64 (default) or aarch64: that one is checked statically here
#            and run under qemu-user where it is installed (packaging/README.md)
source "$(dirname "$0")/../tests/lib.sh"
WHEEL=$(realpath "${1:?usage: test-wheel.sh WHEEL}")
PYTHON=${PYTHON:-python3}
case $PYTHON in */*) PYTHON=$(realpath -s "$PYTHON") ;; esac # a venv's: not through its symlink
ARCH=${ARCH:-x86_64}
VENV=${VENV:-$WORK/venv}
case $ARCH in x86_64) ;; aarch64) ;; *) echo "test-wheel: ARCH $ARCH?"; exit 2 ;; esac

# ---- the wheel itself
aw=$("$(dirname "$PYTHON")/auditwheel" show "$WHEEL" 2>&1)
echo "$aw" | sed 's/^/    auditwheel: /'
check "auditwheel: consistent with manylinux_2_17_$ARCH (manylinux2014)" \
    bash -c "tr -s ' \n' ' ' <<<\"\$1\" | grep -q 'consistent with the following platform tag: \"manylinux_2_17_$ARCH\"'" _ "$aw"
case $(basename "$WHEEL") in
*-py3-none-manylinux_2_17_$ARCH.manylinux2014_$ARCH.whl) pass "wheel tag py3-none-manylinux_2_17_$ARCH.manylinux2014_$ARCH" ;;
*) fail "wheel tag: $(basename "$WHEEL")" ;;
esac
mkdir -p "$WORK/unz"
(cd "$WORK/unz" && "$PYTHON" -m zipfile -e "$WHEEL" .)
chmod +x "$WORK"/unz/convguard/_bin/* 2>/dev/null # zipfile keeps no modes
B=$WORK/unz/convguard/_bin
check "the wheel holds convguard/_bin/{convguard,libconvguard.so}, and the package's modules" \
    bash -c "test -f '$B/convguard' -a -f '$B/libconvguard.so' && for m in __init__ __main__ _check magic kernel _launch; do test -f '$WORK/unz/convguard/'\$m.py || exit 1; done"
glibc=$("$ROOT/packaging/check-glibc.sh" 2.17 "$B/libconvguard.so" "$B/convguard" 2>&1)
echo "$glibc" | sed 's/^/    /'
check "shim and CLI: highest GLIBC_ 2.17, nothing unversioned, no libjansson, the shim needs libc alone" \
    "$ROOT/packaging/check-glibc.sh" 2.17 "$B/libconvguard.so" "$B/convguard"
want_machine=$([ "$ARCH" = x86_64 ] && echo 'X86-64' || echo 'AArch64')
check "both built for $ARCH" bash -c "readelf -h '$B/convguard' | grep -q '$want_machine' && readelf -h '$B/libconvguard.so' | grep -q '$want_machine'"

if [ "$ARCH" != x86_64 ]; then
    # no venv of another machine here: run the binaries under qemu-user
    QEMU=$(command -v "qemu-$ARCH" || command -v "qemu-$ARCH-static" || true)
    SYSROOT=/usr/$ARCH-linux-gnu
    if [ -z "$QEMU" ] || [ ! -e "$SYSROOT/lib/libc.so.6" ]; then
        echo "test-wheel: no qemu-$ARCH or no $SYSROOT (apt-get install qemu-user libc6-arm64-cross): not run"
    else
        # qemu -L maps every absolute path that exists under its prefix there, "/" too, so
        # the shim's trace-folder walk (open("/"), then openat one name at a time) starts
        # at the prefix's root, not the host's: a folder of the host is "missing" there.
        # A prefix of our own (the cross libc linked in, the trace folder a real folder at
        # its root) gives the walk a folder it finds, and the host reads it at $QROOT/d.
        QROOT=$WORK/qemu-root
        mkdir -p "$QROOT/d"
        ln -s "$SYSROOT/lib" "$QROOT/lib"
        Q=("$QEMU" -L "$QROOT")
        out=$("${Q[@]}" "$B/convguard" --version 2>&1)
        check "$ARCH: convguard --version under qemu ($out)" test "$out" = "convguard $(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")"
        # an $ARCH program that loads cuDNN by name, as frameworks do (built by the wheel's zig)
        zig=$("$PYTHON" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
        cat >"$WORK/client.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
    void *h = dlopen("libcudnn.so.9", RTLD_NOW);
    printf("%s\n", h ? "loaded" : dlerror());
    return h ? 0 : 3;
}
EOF
        "$zig" cc -target "$ARCH-linux-gnu.2.17" -o "$WORK/client" "$WORK/client.c" -ldl
        plain=$("${Q[@]}" "$WORK/client" 2>&1)
        rc_plain=$?
        D=$QROOT/d
        shimmed=$("${Q[@]}" -E LD_PRELOAD="$B/libconvguard.so" -E CONVGUARD_DIR=/d -E CONVGUARD_QUIET=1 "$WORK/client" 2>&1)
        rc_shim=$?
        check "$ARCH: with the shim preloaded the program prints and exits as without ($rc_plain: $plain)" \
            test "$shimmed" = "$plain" -a $rc_shim = $rc_plain
        ok=$([ $rc_plain = 0 ] && echo true || echo false)
        T=$(trace_of "$D")
        check "$ARCH: its trace, by the packaged shim: start, the dlopen of libcudnn.so.9 (ok: $ok), exit" \
            jqt "$T" ".[0].ev == \"start\" and (.[0].env.LD_PRELOAD | endswith(\"_bin/libconvguard.so\")) and any(.[]; .ev == \"dlopen\" and .name == \"libcudnn.so.9\" and .ok == $ok) and .[-1].ev == \"exit\""
        "${Q[@]}" "$B/convguard" report /d >"$WORK/qreport.out" 2>&1
        rc=$?
        check "$ARCH: the $ARCH convguard report reads it (exit $rc) and names libcudnn.so.9" \
            bash -c "[ $rc -le 1 ] && grep -q 'libcudnn.so.9' '$WORK/qreport.out'"
    fi
    finish
    exit $?
fi

# ---- installed into a fresh venv, used from elsewhere
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps --no-index "$WHEEL"
check "pip install into a fresh venv" test -x "$VENV/bin/convguard"
mkdir -p "$WORK/elsewhere"
cd "$WORK/elsewhere" || exit 1
export PATH=$VENV/bin:$PATH
unset CONVGUARD_SHIM CONVGUARD_DIR
SITE=$("$VENV/bin/python" -c 'import convguard, os; print(os.path.dirname(convguard.__file__))')

check "convguard on PATH is the venv's console script" test "$(command -v convguard)" = "$VENV/bin/convguard"
out=$(convguard --help)
check "convguard --help: exit 0, the usage, shim-path among the commands" \
    bash -c "grep -q '^usage: convguard COMMAND' <<<\"\$1\" && grep -q 'shim-path' <<<\"\$1\"" _ "$out"
check "python -m convguard --help: the same text" test "$(python -m convguard --help)" = "$out"
check "convguard --version: the wheel's version" \
    test "$(convguard --version)" = "convguard $(python -c 'import convguard; print(convguard.__version__)')"
shim=$(convguard shim-path)
check "convguard shim-path: the package's libconvguard.so ($shim)" test "$shim" = "$SITE/_bin/libconvguard.so" -a -f "$shim"
check "python: convguard.shim_path() is the same file" \
    test "$(python -c 'import convguard; print(convguard.shim_path())')" = "$shim"
convguard doctor >"$WORK/doctor.out" 2>&1
rc=$?
check "convguard doctor: runs to its verdict (exit $rc: 0 or 1)" \
    bash -c "[ $rc -le 1 ] && grep -q '^verdict' '$WORK/doctor.out'"
convguard no-such-command >/dev/null 2>&1
check "an unknown command: exit 2 through the console script" test $? = 2

# arguments, exit statuses, signals: those of the native program
check "convguard run: arguments as given" \
    test "$(convguard run --quiet --dir "$WORK/args" -- printf '%s|' 'a b' '' "c'd" 2>/dev/null)" = "a b||c'd|"
convguard run --quiet --dir "$WORK/rc" -- sh -c 'exit 7' 2>/dev/null
check "convguard run: the program's exit status (7)" test $? = 7
python -m convguard run --quiet --dir "$WORK/rc" -- sh -c 'kill -TERM $$' 2>/dev/null
check "python -m convguard run: killed by SIGTERM -> 143" test $? = 143
convguard run --quiet --dir "$WORK/sleep" -- sleep 30 2>/dev/null &
pid=$!
for _ in $(seq 50); do [ "$(readlink "/proc/$pid/exe")" = "$SITE/_bin/convguard" ] && break; sleep 0.1; done
check "the console script became the native convguard (exec: same pid, no Python left)" \
    test "$(readlink "/proc/$pid/exe")" = "$SITE/_bin/convguard"
kill -TERM "$pid"
wait "$pid"
check "SIGTERM to that pid reaches the program (143)" test $? = 143

# the packaged shim traces a program that loads cuDNN by name
D=$WORK/traces
py='import ctypes; ctypes.CDLL("libcudnn.so.9")'
python -c "$py" 2>/dev/null
plain=$?
convguard run --dir "$D" -- python -c "$py" >"$WORK/run.out" 2>&1
check "convguard run -- python -c 'ctypes.CDLL(\"libcudnn.so.9\")': its exit status ($plain)" test $? = $plain
T=$(trace_of "$D")
check "one trace, written by the packaged shim (LD_PRELOAD is the package's libconvguard.so)" \
    jqt "$T" ".[0].ev == \"start\" and (.[0].env.LD_PRELOAD | split(\":\")[0]) == \"$shim\" and .[-1].ev == \"exit\""
if [ $plain = 0 ]; then
    check "the trace has cuDNN's load (dlopen libcudnn.so.9, then its lib event)" \
        jqt "$T" 'any(.[]; .ev == "dlopen" and .name == "libcudnn.so.9" and .ok) and any(.[]; .ev == "lib" and .soname == "libcudnn.so.9")'
else
    check "the trace has cuDNN's failed load (dlopen libcudnn.so.9 with its error)" \
        jqt "$T" 'any(.[]; .ev == "dlopen" and .name == "libcudnn.so.9" and (.ok | not))'
fi
convguard report "$D" >"$WORK/report.out" 2>&1
rc=$?
check "convguard report reads it (exit $rc: 0 or 1), naming the python process" \
    bash -c "[ $rc -le 1 ] && grep -q 'python' '$WORK/report.out'"
check "the man page is installed with the command (venv/share/man/man1/convguard.1)" \
    test -s "$VENV/share/man/man1/convguard.1"
# the Slurm plugin's source (docs/slurm.md), and, where Slurm's spank.h is, it builds from there
SL=$VENV/share/convguard/slurm
check "the Slurm plugin's source is installed (venv/share/convguard/slurm, with core/safedir.c)" \
    test -s "$SL/spank_convguard.c" -a -s "$SL/settings.c" -a -s "$SL/Makefile" -a -s "$SL/core/safedir.c"
if [ -e /usr/include/slurm/spank.h ]; then
    cp -r "$SL" "$WORK/slurm-src"
    check "the Slurm plugin builds from the wheel's copy (make there)" \
        bash -c "make -C '$WORK/slurm-src' >/dev/null 2>&1 && [ -s '$WORK/slurm-src/spank_convguard.so' ]"
fi
finish
