# packaging/packaging.mk - the portable build and the wheel (included by the
# top Makefile; packaging/README.md says why each step is there).
#
#   make portable        build-portable/{libconvguard.so,convguard}: zig cc for glibc 2.17,
#                        jansson linked statically; checked by packaging/check-glibc.sh
#   make test-portable   the whole test suite (tests/run.sh) against that tree
#   make wheel           dist/convguard-<version>-py3-none-manylinux_2_17_<arch>.whl (pip wheel .)
#   make test-wheel      the wheel: auditwheel, a fresh venv, the installed command (packaging/test-wheel.sh)
#   make wheel-aarch64 / test-wheel-aarch64   the same, cross-built for aarch64 (qemu-user runs it)
#
#   make test-tf-wheel   i13's `make test-tf` (real TensorFlow) with the pip-installed command
#
# zig comes from PyPI (ziglang), the version pyproject.toml builds the wheel
# with: build/pytools, a venv made here, holds it with auditwheel; setup.py
# passes PYTHON, its build environment's interpreter, which has its own.
include packaging/needs.mk

PORTABLE_ARCH ?= x86_64
PORTABLE      := build-portable$(if $(filter-out x86_64,$(PORTABLE_ARCH)),-$(PORTABLE_ARCH))
ZIG_TARGET    := $(PORTABLE_ARCH)-linux-gnu.2.17
PYTOOLS       := $(BUILD)/pytools
ZIGLANG_REQ   := $(shell sed -n 's/^ *"\(ziglang[^"]*\)".*/\1/p' pyproject.toml 2>/dev/null)
PYTHON        ?= $(PYTOOLS)/bin/python
WHEEL_VENV    := $(BUILD)/wheel-venv
ZIG_OF_PYTHON := -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))'
# clang warns that a nonnull parameter tested for NULL is always true; the
# shim tests them anyway (after LAUNDER, routes.c): callers do pass NULL.
# -fomit-frame-pointer: as gcc -O2 (zig's clang keeps frame pointers): 11 of
# the 65 instructions the shim adds to a BackendCreate+Destroy, 4 of 33 to an
# Execute (bench/run.sh, callgrind).
PORTABLE_FLAGS := -Wno-pointer-bool-conversion -fomit-frame-pointer
# No -g: the wheel's binaries; the tests run the same ones.  The CLI's link
# takes CFLAGS (the shim's does not): --strip-debug drops the debug info of
# Debian's libjansson.a (1 MB on arm64); zig ignores it when it only compiles.
PORTABLE_CFLAGS := -O2 -Wl,--strip-debug

# jansson: Debian's libjansson.a (libjansson-dev, or an unpacked one in
# JANSSON_DIR); its headers alone are copied, so that zig sees no other
# header of /usr/include.
PORTABLE_MULTIARCH := $(PORTABLE_ARCH)-linux-gnu
PORTABLE_DEB_ARCH := $(if $(filter aarch64,$(PORTABLE_ARCH)),arm64,amd64)
# Cross builds take the other machine's package, fetched by apt-get (packaging/fetch-deb.sh).
PORTABLE_JANSSON_ROOT := $(or $(JANSSON_DIR),$(if $(filter-out x86_64,$(PORTABLE_ARCH)),$(CURDIR)/$(PORTABLE)/deb))
PORTABLE_JANSSON_A := $(PORTABLE_JANSSON_ROOT)/usr/lib/$(PORTABLE_MULTIARCH)/libjansson.a
PORTABLE_JANSSON_H := $(PORTABLE_JANSSON_ROOT)/usr/include/jansson.h

# zig builds the two shipped files in $(PORTABLE)/zig/ (LTO, as make does
# with gcc); they are copied to $(PORTABLE)/, the tree the tests run against.
PORTABLE_ZIG  := $(PORTABLE)/zig
PORTABLE_BINS := $(PORTABLE)/libconvguard.so $(PORTABLE)/convguard
PORTABLE_MAKE = $(MAKE) NEEDS_CHECK=0 BUILD=$(PORTABLE_ZIG) CFLAGS="$(PORTABLE_CFLAGS)" LTO=-flto \
	JANSSON_DIR= JANSSON_CFLAGS=-I$(CURDIR)/$(PORTABLE)/jansson JANSSON_LIBS=$(PORTABLE_JANSSON_A)

.PHONY: portable test-portable wheel test-wheel test-tf-wheel pytools wheel-aarch64 test-wheel-aarch64 clean-packaging
# A tree built by another zig (or for other flags) is built again.
portable: $(if $(filter $(PYTOOLS)/bin/python,$(PYTHON)),pytools) $(PORTABLE)/jansson/jansson.h
	@zig=$$($(PYTHON) $(ZIG_OF_PYTHON) 2>/dev/null); \
	if [ -z "$$zig" ]; then echo "packaging: $(PYTHON) has no ziglang: pip install '$(ZIGLANG_REQ)' (or leave PYTHON unset)"; exit 1; fi; \
	id="zig $$($$zig version) $(ZIG_TARGET) $(PORTABLE_FLAGS) $(PORTABLE_CFLAGS)"; \
	if [ "$$(cat $(PORTABLE_ZIG)/.toolchain 2>/dev/null)" != "$$id" ]; then \
	    rm -rf $(PORTABLE_ZIG); mkdir -p $(PORTABLE_ZIG); echo "$$id" > $(PORTABLE_ZIG)/.toolchain; fi; \
	echo "packaging: $$id"; \
	$(PORTABLE_MAKE) CC="$$zig cc -target $(ZIG_TARGET) $(PORTABLE_FLAGS)" $(PORTABLE_ZIG)/libconvguard.so $(PORTABLE_ZIG)/convguard
	cp -p $(PORTABLE_ZIG)/libconvguard.so $(PORTABLE_ZIG)/convguard $(PORTABLE)/
	packaging/check-glibc.sh 2.17 $(PORTABLE_BINS)
# The test programs and doubles are the suite's own, built by $(CC) as for
# `make test` (zig's linker lacks -Bsymbolic-functions, and they are not
# shipped); -o keeps make from rebuilding the shipped two with $(CC).  The
# CLI's objects too: t_precedence relinks a CLI with rules.def rows swapped.
test-portable: portable
	+$(MAKE) NEEDS_CHECK=0 BUILD=$(PORTABLE) $(addprefix -o ,$(PORTABLE_BINS)) test-deps \
	    $(patsubst $(BUILD)/%,$(PORTABLE)/%,$(TOOLS_OBJ))
	CG_BUILD=$(CURDIR)/$(PORTABLE) tests/run.sh

ifeq ($(JANSSON_DIR)$(filter x86_64,$(PORTABLE_ARCH)),)
$(PORTABLE)/jansson/jansson.h: | $(PORTABLE_JANSSON_A)
$(PORTABLE_JANSSON_A):
	packaging/fetch-deb.sh $(PORTABLE_DEB_ARCH) $(PORTABLE_JANSSON_ROOT) libjansson-dev
endif
$(PORTABLE)/jansson/jansson.h:
	@if [ ! -e $(PORTABLE_JANSSON_H) ] || [ ! -e $(PORTABLE_JANSSON_A) ]; then \
	    echo "packaging: the portable CLI links Debian's static jansson: $(PORTABLE_JANSSON_A) is missing."; \
	    echo "  as root:      apt-get install libjansson-dev"; \
	    echo "  without root: apt-get download libjansson-dev && dpkg -x libjansson-dev_*.deb DIR, then JANSSON_DIR=DIR"; \
	    exit 1; fi
	mkdir -p $(@D)
	cp $(dir $(PORTABLE_JANSSON_H))jansson.h $(dir $(PORTABLE_JANSSON_H))jansson_config.h $(@D)/

# The tools of the packaging steps, from PyPI, in a venv of their own.
pytools: $(PYTOOLS)/.done
$(PYTOOLS)/.done: pyproject.toml
	python3 -m venv $(PYTOOLS)
	$(PYTOOLS)/bin/pip install -q --disable-pip-version-check '$(ZIGLANG_REQ)' auditwheel build
	touch $@

# pip builds the wheel in an isolated environment from pyproject.toml's
# build requirements (setuptools, ziglang): what a user's `pip wheel .` does.
wheel: pytools
	rm -f dist/convguard-*$(PORTABLE_ARCH).whl
	CONVGUARD_ARCH=$(PORTABLE_ARCH) $(PYTOOLS)/bin/pip wheel -q --disable-pip-version-check --no-deps -w dist .
	@ls -l dist/convguard-*$(PORTABLE_ARCH).whl
test-wheel: wheel
	PYTHON=$(PYTOOLS)/bin/python ARCH=$(PORTABLE_ARCH) VENV=$(CURDIR)/$(WHEEL_VENV) \
	    packaging/test-wheel.sh dist/convguard-$(VERSION)-*$(PORTABLE_ARCH).whl
# CONVGUARD_BIN: the command test-tf runs (default build/convguard)
test-tf-wheel: test-wheel
	+$(MAKE) test-tf CONVGUARD_BIN=$(CURDIR)/$(WHEEL_VENV)/bin/convguard
wheel-aarch64 test-wheel-aarch64:
	+$(MAKE) PORTABLE_ARCH=aarch64 $(@:-aarch64=)
clean: clean-packaging
clean-packaging:
	rm -rf build-portable build-portable-* dist python/convguard/_bin python/*.egg-info
