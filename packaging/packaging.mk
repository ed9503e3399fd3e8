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
# zig comes from PyPI (ziglang); the version is the one pyproject.toml builds
# the wheel with.  PYTHON: an interpreter that has ziglang (setup.py passes
# its own); otherwise build/pytools, a venv made here, provides it.
PORTABLE_ARCH ?= x86_64
PORTABLE      := build-portable$(if $(filter-out x86_64,$(PORTABLE_ARCH)),-$(PORTABLE_ARCH))
ZIG_TARGET    := $(PORTABLE_ARCH)-linux-gnu.2.17
PYTOOLS       := $(BUILD)/pytools
ZIGLANG_REQ   := $(shell sed -n 's/^ *"\(ziglang[^"]*\)".*/\1/p' pyproject.toml 2>/dev/null)
PYTHON        ?= $(if $(shell python3 -c 'import ziglang' 2>/dev/null && echo y),python3,$(PYTOOLS)/bin/python)
# evaluated once, when first used
ZIG = $(eval ZIG := $(shell $(PYTHON) -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))' 2>/dev/null))$(ZIG)
# clang warns that a nonnull parameter tested for NULL is always true; the
# shim tests them anyway (after LAUNDER, loader.c): callers do pass NULL.
PORTABLE_CC = $(ZIG) cc -target $(ZIG_TARGET) -Wno-pointer-bool-conversion
# No -g: the wheel's binaries; the tests run the same ones.
PORTABLE_CFLAGS := -O2

# jansson: Debian's libjansson.a (libjansson-dev, or an unpacked one in
# JANSSON_DIR); its headers alone are copied, so that zig sees no other
# header of /usr/include.
PORTABLE_MULTIARCH := $(PORTABLE_ARCH)-linux-gnu
PORTABLE_JANSSON_ROOT := $(if $(JANSSON_DIR),$(JANSSON_DIR),)
PORTABLE_JANSSON_A := $(PORTABLE_JANSSON_ROOT)/usr/lib/$(PORTABLE_MULTIARCH)/libjansson.a
PORTABLE_JANSSON_H := $(PORTABLE_JANSSON_ROOT)/usr/include/jansson.h

# zig builds the two shipped files in $(PORTABLE)/zig/ (LTO, as make does
# with gcc); they are copied to $(PORTABLE)/, the tree the tests run against.
PORTABLE_ZIG  := $(PORTABLE)/zig
PORTABLE_BINS := $(PORTABLE)/libconvguard.so $(PORTABLE)/convguard
PORTABLE_MAKE = $(MAKE) BUILD=$(PORTABLE_ZIG) CC="$(PORTABLE_CC)" CFLAGS="$(PORTABLE_CFLAGS)" LTO=-flto \
	JANSSON_DIR= JANSSON_CFLAGS=-I$(CURDIR)/$(PORTABLE)/jansson JANSSON_LIBS=$(PORTABLE_JANSSON_A)

.PHONY: portable test-portable portable-zig wheel test-wheel pytools wheel-aarch64 test-wheel-aarch64 clean-packaging
portable: portable-zig $(PORTABLE)/jansson/jansson.h
	+$(PORTABLE_MAKE) $(PORTABLE_ZIG)/libconvguard.so $(PORTABLE_ZIG)/convguard
	cp -p $(PORTABLE_ZIG)/libconvguard.so $(PORTABLE_ZIG)/convguard $(PORTABLE)/
	packaging/check-glibc.sh 2.17 $(PORTABLE_BINS)
# The test programs and doubles are the suite's own, built by $(CC) as for
# `make test` (zig's linker lacks -Bsymbolic-functions, and they are not
# shipped); -o keeps make from rebuilding the shipped two with $(CC).
test-portable: portable
	+$(MAKE) BUILD=$(PORTABLE) $(addprefix -o ,$(PORTABLE_BINS)) test-deps
	CG_BUILD=$(CURDIR)/$(PORTABLE) tests/run.sh

portable-zig:
	@if [ -z "$(ZIG)" ]; then \
	    if [ "$(PYTHON)" = "$(PYTOOLS)/bin/python" ]; then $(MAKE) --no-print-directory pytools; \
	    else echo "packaging: $(PYTHON) has no ziglang: pip install '$(ZIGLANG_REQ)' (or make pytools)"; exit 1; fi; \
	fi

$(PORTABLE)/jansson/jansson.h:
	@if [ ! -e $(PORTABLE_JANSSON_H) ] || [ ! -e $(PORTABLE_JANSSON_A) ]; then \
	    echo "packaging: the portable CLI links Debian's static jansson: $(PORTABLE_JANSSON_A) is missing."; \
	    echo "  as root:      apt-get install libjansson-dev$(if $(filter-out x86_64,$(PORTABLE_ARCH)),:arm64)"; \
	    echo "  without root: apt-get download libjansson-dev$(if $(filter-out x86_64,$(PORTABLE_ARCH)),:arm64) && dpkg -x libjansson-dev_*.deb DIR, then JANSSON_DIR=DIR"; \
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
	PYTHON=$(PYTOOLS)/bin/python ARCH=$(PORTABLE_ARCH) packaging/test-wheel.sh dist/convguard-$(VERSION)-*$(PORTABLE_ARCH).whl
wheel-aarch64 test-wheel-aarch64:
	+$(MAKE) PORTABLE_ARCH=aarch64 $(@:-aarch64=)
clean: clean-packaging
clean-packaging:
	rm -rf build-portable build-portable-* dist python/convguard/_bin python/*.egg-info
