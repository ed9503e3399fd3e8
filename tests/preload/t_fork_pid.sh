# t_fork_pid.sh - a forked child's trace is its own (issue 26 item 15): every
# event of the child carries the child's pid (not only its start event), the
# parent's file keeps the parent's, and `convguard report` lists the two
# processes apart and puts the child's failure on the child.  Two ways: a
# child forked after the parent's events, and one forked while four threads
# of the parent keep failing allocations (a storm of events around the fork).
source "$(dirname "$0")/../lib.sh"
export CONVGUARD_QUIET=1
unset LD_LIBRARY_PATH
CC=${CC:-cc}
CG=$BUILD_DIR/convguard
[ -e "$DOUBLES/cuda/libcuda.so.1" ] || skip_all "no doubles (make doubles)"
cat >"$WORK/fk.c" <<'C'
/* fk [storm]: the parent fails an allocation, forks; the child fails a code
 * load and exits 3.  storm: four threads fail allocations meanwhile. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cuda_double.h"
static atomic_bool stop;
static void *storm(void *c)
{
    CUdeviceptr p;
    cuCtxSetCurrent((CUcontext)c);
    while (!atomic_load(&stop))
        cuMemAlloc_v2(&p, (size_t)1 << 50);
    return NULL;
}
int main(int argc, char **argv)
{
    CUdeviceptr p;
    CUcontext c;
    pthread_t t[4];
    int n = argc > 1 && strcmp(argv[1], "storm") == 0 ? 4 : 0;
    cuInit(0), cuDevicePrimaryCtxRetain(&c, 0), cuCtxSetCurrent(c);
    printf("parent %d rc=%d\n", (int)getpid(), cuMemAlloc_v2(&p, (size_t)1 << 50));
    fflush(stdout);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, storm, c);
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    pid_t k = fork();
    if (k == 0) {
        printf("child %d rc=%d\n", (int)getpid(), cuModuleLoadData((CUmodule *)&p, NULL));
        fflush(stdout);
        exit(3);
    }
    int st = 0;
    waitpid(k, &st, 0);
    atomic_store(&stop, true);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
C
$CC -std=c11 -D_GNU_SOURCE -O1 -I"$ROOT/shim" -I"$ROOT/tests/doubles" -o "$WORK/fk" "$WORK/fk.c" \
    -L"$DOUBLES/cuda" -l:libcuda.so.1 -Wl,-rpath,"$DOUBLES/cuda" -lpthread || skip_all "no C compiler"

for mode in after storm; do
    d=$WORK/$mode
    CONVGUARD_MAX_MB=4 run_shim "$d" "$WORK/fk" $mode >"$WORK/$mode.out" 2>/dev/null
    parent=$(sed -n 's/^parent \([0-9]*\) .*/\1/p' "$WORK/$mode.out")
    child=$(sed -n 's/^child \([0-9]*\) .*/\1/p' "$WORK/$mode.out")
    check "$mode: the child ran and failed its code load (exit 3)" grep -q '^child status 3$' "$WORK/$mode.out"
    cf=$(grep -l "\"forked_from\":$parent" "$d"/*.jsonl 2>/dev/null | head -1)
    pf=$(grep -L '"forked_from"' "$d"/*.jsonl 2>/dev/null | head -1)
    check "$mode: the child has a trace of its own" test -n "$cf" -a -n "$pf"
    [ -n "$cf" ] && [ -n "$pf" ] || continue
    check "$mode: every event of the child's file ($(wc -l <"$cf")) carries the child's pid $child" \
        jq -e -s --argjson p "$child" 'length > 1 and all(.[]; .pid == $p)' "$cf"
    check "$mode: every event of the parent's file ($(wc -l <"$pf")) carries the parent's pid" \
        jq -e -s --argjson p "$parent" 'length > 1 and all(.[]; .pid == $p)' "$pf"
    check "$mode: the child's code_load_failed is in the child's file" \
        jq -e -s --argjson p "$child" 'any(.[]; .ev == "code_load_failed" and .pid == $p)' "$cf"
    "$CG" report --json "$d" >"$WORK/$mode.json" 2>/dev/null
    check "$mode: report lists the two processes apart" \
        jq -e --argjson p "$parent" --argjson c "$child" '[.processes[].pid] | sort == ([$p, $c] | sort)' "$WORK/$mode.json"
    check "$mode: report puts the child's failure on the child" \
        jq -e --argjson c "$child" '.processes as $ps | [.findings[] | select(.rule == "code_load_failed")] | length == 1 and
            all(.[]; .who == "pid \($c)" and ([.processes[] | $ps[.].pid] == [$c]))' "$WORK/$mode.json"
    check "$mode: and the parent's on the parent" \
        jq -e --argjson p "$parent" '.processes as $ps | [.findings[] | select(.rule | startswith("alloc_"))] | length >= 1 and
            all(.[]; [.processes[] | $ps[.].pid] | index($p) != null)' "$WORK/$mode.json"
done
finish
