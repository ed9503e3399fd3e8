#!/usr/bin/env bash
# packaging/check-glibc.sh MAX FILE... - each ELF file runs on glibc MAX:
#   - no symbol it takes from glibc has a GLIBC_ version above MAX (objdump -T);
#   - no undefined symbol is unversioned unless weak: one glibc added later
#     (gettid is 2.30's) would link against a newer glibc's headers without a
#     version and fail at load time ("undefined symbol") on an older one;
#   - it needs no libjansson (the CLI links it statically);
#   - libconvguard.so needs libc.so.6 and the dynamic loader alone: a
#     libpthread.so.0 or libdl.so.2 (real before glibc 2.34, stubs since) would
#     be one more library in every program it is preloaded into;
#   - libconvguard.so keeps its registered lists (sections cg_fork_mutexes, cg_lazytabs).
# Prints one line per file (the highest version found); exit 1 on any failure.
set -u
max=$1
shift
rc=0
for f in "$@"; do
    syms=$(objdump -T "$f") || { echo "check-glibc: $f: objdump -T failed"; rc=1; continue; }
    highest=$(grep -o 'GLIBC_[0-9][0-9.]*' <<<"$syms" | sed 's/GLIBC_//' | sort -uV | tail -1)
    if [ -z "$highest" ]; then
        echo "check-glibc: $f: no GLIBC_ symbol version at all (not a glibc binary?)"
        rc=1
        continue
    fi
    if [ "$(printf '%s\n%s\n' "$highest" "$max" | sort -V | tail -1)" != "$max" ]; then
        echo "check-glibc: $f: needs GLIBC_$highest > $max:"
        awk '/GLIBC_/ { v = $0; sub(/.*GLIBC_/, "", v); sub(/[^0-9.].*/, "", v); print "    GLIBC_" v "  " $NF }' \
            <<<"$syms" | sort -V | tail -5
        rc=1
    fi
    # objdump -T: "0000000000000000  w   D  *UND*  0000000000000000  Base  __gmon_start__" is
    # weak (field 2 "w"), "... DF *UND* ... (GLIBC_2.2.5) unlink" versioned
    unversioned=$(awk '/\*UND\*/ && !/GLIBC_/ && $2 != "w" { print $NF }' <<<"$syms" | tr '\n' ' ')
    if [ -n "$unversioned" ]; then
        echo "check-glibc: $f: undefined without a symbol version (newer than the target glibc?): $unversioned"
        rc=1
    fi
    if objdump -p "$f" | grep -q 'NEEDED *libjansson'; then
        echo "check-glibc: $f: needs libjansson at run time (link it statically)"
        rc=1
    fi
    if [ "$(basename "$f")" = libconvguard.so ]; then
        extra=$(objdump -p "$f" | awk '$1 == "NEEDED" && $2 != "libc.so.6" && $2 !~ /^ld-linux/ { print $2 }' | tr '\n' ' ')
        if [ -n "$extra" ]; then
            echo "check-glibc: $f: a preloaded library that needs more than libc: $extra"
            rc=1
        fi
        # the shim's registered lists (cg.h CG_REGISTERED): a linker that
        # collected their sections leaves them empty (fork mutexes never
        # re-initialised, the lazy tables never made: a crash at the first
        # allocation through cuGetProcAddress)
        for sec in cg_fork_mutexes cg_lazytabs; do
            if ! objdump -h "$f" | awk '{ print $2 }' | grep -qx "$sec"; then
                echo "check-glibc: $f: section $sec is missing (the linker dropped it: CG_REGISTERED in shim/cg.h)"
                rc=1
            fi
        done
    fi
    echo "check-glibc: $f: highest GLIBC_$highest (limit $max)"
done
exit $rc
