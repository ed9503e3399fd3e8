# tests/unit/unit.mk - unit programs (included by the top Makefile).
UNIT_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -Ishim
CUDA_INC ?= /usr/local/cuda/include

$(BUILD)/unit:
	mkdir -p $@

# the trace writer and settings, linked straight from the shim's objects
$(BUILD)/unit/test_trace: tests/unit/test_trace.c $(BUILD)/shim/core/trace.o $(BUILD)/shim/core/repeat.o $(BUILD)/shim/core/safedir.o $(BUILD)/shim/core/fmt.o $(BUILD)/shim/core/config.o | $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ $^

$(BUILD)/unit/prog_basic: tests/unit/prog_basic.c | $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ $< -ldl

# our cudefs.h against the real headers, when a CUDA toolkit is installed
$(BUILD)/unit/check_cudefs: tests/unit/check_cudefs.c tests/unit/cudefs_ours.c tests/unit/cudefs_real.c | $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -c tests/unit/cudefs_ours.c -o $(BUILD)/unit/cudefs_ours.o
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -w -I$(CUDA_INC) -c tests/unit/cudefs_real.c -o $(BUILD)/unit/cudefs_real.o
	$(CC) $(UNIT_CFLAGS) -o $@ tests/unit/check_cudefs.c $(BUILD)/unit/cudefs_ours.o $(BUILD)/unit/cudefs_real.o

# shim/status.def against the real headers (the names must exist there)
$(BUILD)/unit/check_status: tests/unit/check_status.c shim/status.def | $(BUILD)/unit
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -Wall -Werror -Ishim -I$(CUDA_INC) -o $@ $<

$(BUILD)/unit/test_fallback: tests/unit/test_fallback.c $(BUILD)/shim/fallback/fallback.o $(BUILD)/shim/core/trace.o $(BUILD)/shim/core/repeat.o $(BUILD)/shim/core/safedir.o $(BUILD)/shim/core/fmt.o $(BUILD)/shim/core/config.o | $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ $^

$(BUILD)/unit/test_nvversion: tests/unit/test_nvversion.c $(BUILD)/shim/loader/nvversion.o | $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ $^

# the trace folder's rule, the shim's own object
$(BUILD)/unit/test_safedir: tests/unit/test_safedir.c $(BUILD)/shim/core/safedir.o | $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ $^

# the one cuDNN version encoder, header-only (shim/cudnn_version.h)
$(BUILD)/unit/test_cudnn_version: tests/unit/test_cudnn_version.c shim/cudnn_version.h | $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ $<

# the Slurm plugin's words (slurm/settings.c), no Slurm needed
$(BUILD)/unit/test_slurm_settings: tests/unit/test_slurm_settings.c slurm/settings.c slurm/settings.h | $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ tests/unit/test_slurm_settings.c slurm/settings.c

UNIT_PROGS := $(BUILD)/unit/test_trace $(BUILD)/unit/prog_basic $(BUILD)/unit/test_fallback $(BUILD)/unit/test_nvversion \
              $(BUILD)/unit/test_safedir $(BUILD)/unit/test_cudnn_version
UNIT_PROGS += $(BUILD)/unit/test_slurm_settings
ifneq ($(wildcard $(CUDA_INC)/cudnn.h),)
UNIT_PROGS += $(BUILD)/unit/check_cudefs $(BUILD)/unit/check_status
endif
.PHONY: unit
unit: $(UNIT_PROGS)
TEST_DEPS += unit
