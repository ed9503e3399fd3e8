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
TOOLS_SRC := $(wildcard tools/*.c)
TOOLS_OBJ := $(patsubst tools/%.c,$(BUILD)/tools/%.o,$(TOOLS_SRC))
TOOLS_HDR := $(wildcard tools/*.h tools/*.def shim/cudefs.h shim/status.def shim/cudnn_versions.def)

$(BUILD)/tools:
	mkdir -p $@
$(BUILD)/tools/%.o: tools/%.c $(TOOLS_HDR) | $(BUILD)/tools
	$(CC) $(CFLAGS) $(JANSSON_CFLAGS) -Ishim -DCONVGUARD_VERSION='"$(VERSION)"' -c $< -o $@
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

# `make accuracy`: the report on the corpus of real-world failures (tests/report/corpus/)
.PHONY: accuracy
accuracy: $(BUILD)/convguard
	bash tests/report/accuracy.sh
