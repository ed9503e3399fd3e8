# packaging/needs.mk - before anything is built, what the goals need
# (packaging/needs.sh): a missing compiler or header is named with the
# apt-get line that installs it, instead of a compiler error half-way.
# Included by packaging/packaging.mk.  NEEDS_CHECK=0 skips it.
NEEDS_GOALS := $(or $(MAKECMDGOALS),all)
NEEDS_LEVEL := $(strip \
	$(if $(filter test test-portable check-sanitize check-tsan check-valgrind,$(NEEDS_GOALS)),test,\
	$(if $(filter portable wheel test-wheel test-tf-wheel wheel-aarch64 test-wheel-aarch64,$(NEEDS_GOALS)),wheel,\
	$(if $(filter all demo install doubles clients examples $(BUILD)/convguard,$(NEEDS_GOALS)),build))))
ifneq ($(NEEDS_CHECK),0)
ifneq ($(NEEDS_LEVEL),)
ifneq ($(shell CC='$(CC)' CXX='$(CXX)' JANSSON_DIR='$(JANSSON_DIR)' sh packaging/needs.sh $(NEEDS_LEVEL)),)
$(error install what is named above, then run make again)
endif
endif
endif
