# tools/tools.mk - the convguard command (included by the top Makefile).
# Needs libjansson (Debian: libjansson-dev) for JSON.  JANSSON_DIR=<dir> uses
# an unpacked libjansson-dev (usr/include, usr/lib/x86_64-linux-gnu/libjansson.a)
# and links it statically: how tests/gpu/run.sh builds on machines without it.
ifneq ($(JANSSON_DIR),)
JANSSON_CFLAGS := -I$(JANSSON_DIR)/usr/include
JANSSON_LIBS := $(JANSSON_DIR)/usr/lib/x86_64-linux-gnu/libjansson.a
else
JANSSON_LIBS := -ljansson
endif
# The commands at the top, their layers in folders (tools/README.md):
# tools/<folder>/x.c -> $(BUILD)/tools/<folder>/x.o; includes are named from
# tools/ ("model/model.h").
TOOLS_SRC := $(wildcard tools/*.c tools/*/*.c)
TOOLS_OBJ := $(patsubst tools/%.c,$(BUILD)/tools/%.o,$(TOOLS_SRC))
TOOLS_HDR := $(wildcard tools/*.h tools/*.def tools/*/*.h tools/*/*.def shim/cudefs.h shim/status.def shim/cudnn_versions.def \
                       shim/core/safedir.c shim/core/safedir.h shim/cudnn_version.h \
                       slurm/settings.c slurm/settings.h)
TOOLS_INC := -Itools -Ishim

$(BUILD)/tools/%.o: tools/%.c $(TOOLS_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(JANSSON_CFLAGS) $(TOOLS_INC) -DCONVGUARD_VERSION='"$(VERSION)"' -c $< -o $@
$(BUILD)/convguard: $(TOOLS_OBJ)
	$(CC) $(CFLAGS) -o $@ $(TOOLS_OBJ) $(JANSSON_LIBS) -ldl -lm -lpthread

# test programs of tests/report/
$(BUILD)/report:
	mkdir -p $@
$(BUILD)/report/cuda_client: tests/report/cuda_client.c | $(BUILD)/report
	$(CC) $(CFLAGS) -o $@ $< -ldl
TEST_DEPS += $(BUILD)/report/cuda_client
# the terminal and the program of tests/report/t_capture_run.sh (and bench/capture.sh)
$(BUILD)/report/pty_run: tests/report/pty_run.c | $(BUILD)/report
	$(CC) $(CFLAGS) -o $@ $<
$(BUILD)/report/stderr_probe: tests/report/stderr_probe.c | $(BUILD)/report
	$(CC) $(CFLAGS) -o $@ $< -ldl
TEST_DEPS += $(BUILD)/report/pty_run $(BUILD)/report/stderr_probe
# the trace sets of bench/report_scale.sh and tests/report/t_report_memory.sh, written fast
$(BUILD)/report/gen_set: tests/report/gen_set.c | $(BUILD)/report
	$(CC) $(CFLAGS) -o $@ $<
TEST_DEPS += $(BUILD)/report/gen_set

# `make accuracy`: the report on the corpus of real-world failures (tests/report/corpus/)
.PHONY: accuracy
accuracy: $(BUILD)/convguard
	bash tests/report/accuracy.sh
