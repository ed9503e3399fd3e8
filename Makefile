# convguard - see README.md.  `make` builds the shim and the CLI, `make test` runs the tests.
CC      ?= gcc
PREFIX  ?= /usr/local
BUILD   := build
VERSION := 0.1.0

CWARN   := -Wall -Wextra -Werror
# Link-time optimisation lets the entries inline their wrappers (the hot
# path); a compiler whose LTO plugin is broken simply builds without it.
ifeq ($(origin LTO),undefined)
LTO := $(shell echo 'int main(void){return 0;}' | $(CC) -flto=auto -x c - -o /dev/null >/dev/null 2>&1 && echo -flto=auto)
endif
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE $(CWARN)
SHIM_CFLAGS := $(CFLAGS) -Ishim -fPIC -fvisibility=hidden -fno-strict-aliasing -fcf-protection=none \
               -ftls-model=initial-exec $(LTO) $(if $(LTO),-DCG_WRAPPERS_INLINED) -DCONVGUARD_VERSION='"$(VERSION)"'
# shim/ and its layer folders (shim/README.md, shim/LAYERS); objects in build/shim/<folder>/
SHIM_DIRS := shim $(wildcard shim/*/)
SHIM_SRC := $(wildcard $(addsuffix /*.c,$(SHIM_DIRS:/=)))
SHIM_ASM := $(wildcard $(addsuffix /*.S,$(SHIM_DIRS:/=)))
SHIM_OBJ := $(patsubst shim/%.c,$(BUILD)/shim/%.o,$(SHIM_SRC)) $(patsubst shim/%.S,$(BUILD)/shim/%.o,$(SHIM_ASM))
SHIM_HDR := $(wildcard $(addsuffix /*.h,$(SHIM_DIRS:/=)) $(addsuffix /*.def,$(SHIM_DIRS:/=)))

.PHONY: all test install demo clean
all: $(BUILD)/libconvguard.so $(BUILD)/convguard

$(BUILD)/shim/%.o: shim/%.c $(SHIM_HDR)
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -c $< -o $@
$(BUILD)/shim/%.o: shim/%.S
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -c $< -o $@

# No -lunwind, no CUDA, no -ldl, no -lpthread: the shim needs libc.so.6 alone
# on every glibc (loader/real.c finds dlopen & co. itself; cg.h: cg_atfork), so that
# before glibc 2.34 it adds no libpthread.so.0 to a program without one.
$(BUILD)/libconvguard.so: $(SHIM_OBJ) shim/convguard.map
	$(CC) -shared $(LTO) -O2 -fPIC -fvisibility=hidden -o $@ $(SHIM_OBJ) -Wl,--version-script=shim/convguard.map \
	      -Wl,-z,now -Wl,-z,noexecstack

-include tools/tools.mk
-include tests/tests.mk
-include examples/examples.mk
-include tests/resource.mk
-include tests/graph.mk
-include tests/fallback.mk
include tests/unit/unit.mk
-include tests/robust.mk
-include tests/loader.mk
-include bench/bench.mk
-include packaging/packaging.mk
-include tests/notebook/notebook.mk
-include slurm/slurm.mk

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD)/libconvguard.so $(DESTDIR)$(PREFIX)/lib/libconvguard.so
	install -m 0755 $(BUILD)/convguard $(DESTDIR)$(PREFIX)/bin/convguard
	install -m 0644 docs/convguard.1 $(DESTDIR)$(PREFIX)/share/man/man1/convguard.1
	# the Python half (convguard.check(), %load_ext convguard, `convguard kernel`), which the
	# installed command runs from here (tools/kernel.c); the wheel (pip install .) installs it too
	install -d $(DESTDIR)$(PREFIX)/share/convguard/python/convguard
	install -m 0644 python/convguard/*.py $(DESTDIR)$(PREFIX)/share/convguard/python/convguard/

clean:
	rm -rf $(BUILD)

test: all $(TEST_DEPS)
	tests/run.sh

# the NVML double: the report names the process holding the GPU's memory
demo: all doubles clients $(CGT_NVML)
	examples/demo.sh

# Real TensorFlow with and without the shim (tests/tf/run.sh): TF_VENV=/path
# reuses a venv holding tensorflow 2.21.0; else build/tfvenv is made from PyPI.
.PHONY: test-tf
test-tf: all doubles
	tests/tf/run.sh

# the file-to-file call graph of shim/ and tools/ (tests/arch/callgraph.py): circles, up-calls and
# up-includes (fails on an #include of a higher layer's header); the functions over 60 lines
# (tests/arch/long_functions.py)
.PHONY: arch
arch: all
	tests/arch/callgraph.py --check shim tools
	tests/arch/long_functions.py shim tools
