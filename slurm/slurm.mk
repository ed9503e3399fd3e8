# slurm/slurm.mk - the Slurm plugin (slurm/README.md), its test and its
# benchmark (included by the top Makefile).
#   make slurm         build/slurm/spank_convguard.so, where Slurm's spank.h is
#   make test-slurm    tests/slurm/t_slurm.sh: a real one-node cluster (root; Debian's
#                      slurmctld slurmd slurm-client munge libslurm-dev)
#   make bench-slurm   the time the plugin adds to a step
.PHONY: slurm test-slurm bench-slurm
slurm:
	$(MAKE) -C slurm OUT=$(abspath $(BUILD))/slurm PREFIX=$(PREFIX)
$(BUILD)/slurm/job_client: tests/slurm/job_client.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -ldl
test-slurm: all doubles slurm $(BUILD)/slurm/job_client
	bash tests/slurm/t_slurm.sh
bench-slurm: all doubles slurm $(BUILD)/slurm/job_client
	bash bench/slurm.sh
