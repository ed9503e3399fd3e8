# test_slurm_settings.sh - the Slurm plugin's words (slurm/settings.c: its
# plugstack.conf arguments, --convguard's value, the folder pattern, the
# task's LD_PRELOAD), without Slurm (tests/unit/test_slurm_settings.c);
# the plugin on a real cluster: tests/slurm/t_slurm.sh (make test-slurm)
source "$(dirname "$0")/../lib.sh"
[ -x "$UNIT/test_slurm_settings" ] || skip_all "test_slurm_settings not built (make unit)"
"$UNIT/test_slurm_settings"
check "every case as expected" test $? = 0
finish
