# tests/robust.mk - "never break the host" (issue 7): the programs that the
# crash, thread, fork, hostile-input and security tests run (tests/robust/,
# built into build/robust/ as part of `make test`), and the separate tool
# targets, none of them part of `make test` (docs/robustness.md):
#
#   make check-sanitize   the whole test suite against an ASan+UBSan build (build-san/)
#   make check-tsan       the thread test against a TSan build (build-tsan/)
#   make check-valgrind   memcheck over the test clients under the shim
#   make fuzz             libFuzzer targets (clang-14) in build-fuzz/
#   make fuzz-run FUZZ_SECONDS=600   run each target that long
#   make fuzz-ci          (.ci/run) every target: its saved crashes, then FUZZ_CI_SECONDS of fuzzing
RB        := $(BUILD)/robust
RB_SRC    := tests/robust
RB_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -Ishim -I$(CGT_TD)
RB_DRV    := $(BUILD)/doubles/cuda/libcuda.so.1
RB_RT     := $(BUILD)/doubles/cudart/libcudart.so.13
CXX       ?= g++

RB_PROGS := $(RB)/prog_crash $(RB)/prog_terminate $(RB)/libprehandler.so $(RB)/waitstatus \
	$(RB)/prog_threads $(RB)/prog_routes $(RB)/libfaultwrite.so $(RB)/prog_secure $(RB)/test_trace_edges \
	$(RB)/prog_forkstress $(RB)/prog_fdhostile
# Hosts built with a sanitizer (t_hostile.sh): their runtime calls the
# shim's dlsym while it starts.  Only where the compiler has the runtimes.
ifeq ($(findstring -fsanitize,$(CC)),)
ifneq ($(wildcard $(shell $(CC) -print-file-name=libtsan.so)),)
RB_PROGS += $(RB)/prog_threads_tsan
endif
ifneq ($(wildcard $(shell $(CC) -print-file-name=libasan.so)),)
RB_PROGS += $(RB)/prog_threads_asan
endif
endif
TEST_DEPS += robust
.PHONY: robust check-sanitize check-tsan check-valgrind fuzz fuzz-run fuzz-ci
robust: $(RB_PROGS)

$(RB)/%: $(RB_SRC)/%.c
	@mkdir -p $(@D)
	$(CC) $(RB_CFLAGS) -o $@ $< -ldl -lpthread
# undefined behaviour on purpose (a division by zero): never sanitized
$(RB)/prog_crash: $(RB_SRC)/prog_crash.c
	@mkdir -p $(@D)
	$(CC) $(RB_CFLAGS) -fno-sanitize=all -o $@ $< -ldl -lpthread
$(RB)/prog_terminate: $(RB_SRC)/prog_terminate.cc
	@mkdir -p $(@D)
	$(CXX) -O1 -g -Wall -Wextra -Werror -o $@ $<
$(RB)/lib%.so: $(RB_SRC)/lib%.c
	@mkdir -p $(@D)
	$(CC) $(RB_CFLAGS) -shared -fPIC -o $@ $<
$(RB)/prog_threads_tsan: $(RB_SRC)/prog_threads.c
	@mkdir -p $(@D)
	$(CC) $(RB_CFLAGS) -fsanitize=thread -o $@ $< -ldl -lpthread
$(RB)/prog_threads_asan: $(RB_SRC)/prog_threads.c
	@mkdir -p $(@D)
	$(CC) $(RB_CFLAGS) -fsanitize=address,undefined -o $@ $< -ldl -lpthread
# PLT route: DT_NEEDED on the driver and runtime doubles
$(RB)/prog_routes: $(RB_SRC)/prog_routes.c $(RB_DRV) $(RB_RT)
	@mkdir -p $(@D)
	$(CC) $(RB_CFLAGS) -o $@ $< -Wl,--no-as-needed -L$(dir $(RB_DRV)) -L$(dir $(RB_RT)) \
	      -l:libcuda.so.1 -l:libcudart.so.13 -Wl,-rpath,$(abspath $(dir $(RB_DRV))):$(abspath $(dir $(RB_RT))) -ldl
# Linked to the shim itself (absolute RUNPATH): a setuid copy still loads it.
$(RB)/prog_secure: $(RB_SRC)/prog_secure.c $(BUILD)/libconvguard.so
	@mkdir -p $(@D)
	$(CC) $(RB_CFLAGS) -o $@ $< -L$(BUILD) -l:libconvguard.so -Wl,-rpath,$(abspath $(BUILD)) -ldl

# ---- sanitizers: the same tree, built again with instrumentation
SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
# what `make test` needs, named in the sub-make (where BUILD is the sanitizer tree)
# (second expansion: TEST_DEPS as it stands once every fragment is read)
.PHONY: test-deps
.SECONDEXPANSION:
test-deps: $$(BUILD)/libconvguard.so $$(TEST_DEPS) $$(if $$(wildcard tools/tools.mk),$$(BUILD)/convguard)
# The sanitized shim brings its runtimes (libasan, libubsan) in as its own
# dependencies: verify_asan_link_order=0 lets ASan start behind the preloaded
# shim (the shim must stay first, so that it, not ASan's interceptor, is the
# program's dlopen and sees the program as the caller).  ASan's own handlers
# for the crash signals are off, so that the crash tests compare like with
# like; leaks in the test programs are not the shim's (check-valgrind looks
# for the shim's).  CGTEST_MAPS_IGNORE: the runtimes are left out of the
# clients' map listings; CG_SANITIZED: tests skip what a sanitizer changes.
SAN_ENV := CG_BUILD=$(CURDIR)/build-san CG_SANITIZED=1 \
	CGTEST_MAPS_IGNORE=libasan:libubsan:libstdc++:libgcc_s:libm.so \
	ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:quarantine_size_mb=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:allow_user_segv_handler=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The sanitizer runtimes resolve the functions they intercept with dlsym()
# while they start, before their shadow memory exists; dlsym is the shim's.
# The files on that path (the loader interposers, the real-function lookup,
# the copy of the link map and the fork gate they read,
# the ELF reader) are therefore built without the memory instrumentation
# (UBSan still on); everything else is instrumented.  No LTO there: GCC
# instruments at link time, which would undo the per-file choice.
SAN_PLAIN := loader/dl.o loader/real.o loader/elf.o routes.o loader/objsnap.o core/forkgate.o
# No LTO there (LTO= on their make line: without it the wrappers are not inlined, so
# CG_WRAPPERS_INLINED must not be defined, or a failure's caller is read as the shim's own entry)
build-san/shim/%.o build-tsan/shim/%.o: SHIM_CFLAGS += -fno-lto
$(addprefix build-san/shim/,$(SAN_PLAIN)): SHIM_CFLAGS += -fno-sanitize=address
$(addprefix build-tsan/shim/,$(SAN_PLAIN)): SHIM_CFLAGS += -fno-sanitize=thread
# The doubles, clients and examples get UBSan only: linked with ASan, their
# own dlopen calls (made without the shim, in the reference runs) would go
# through ASan's interceptor, which makes libasan the caller and so loses
# their RUNPATH; the tests would compare against a wrong reference.
SAN_CLIENT_CC = $(CC) -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ifneq ($(SAN_CLIENT_CC_SET),)
$(BUILD)/doubles/% $(BUILD)/clients/% $(BUILD)/examples/%: override CC = $(SAN_CLIENT_CC_SET)
endif
check-sanitize:
	$(MAKE) BUILD=build-san LTO= CC="$(CC) $(SAN_FLAGS)" CXX="$(CXX) $(SAN_FLAGS)" SAN_CLIENT_CC_SET="$(SAN_CLIENT_CC)" test-deps
	$(SAN_ENV) tests/run.sh
check-tsan:
	$(MAKE) BUILD=build-tsan LTO= CC="$(CC) $(TSAN_FLAGS)" build-tsan/libconvguard.so build-tsan/robust/prog_threads \
	    build-tsan/robust/prog_forkstress build-tsan/clients/client_memroutes doubles
	CG_BUILD=$(CURDIR)/build-tsan CG_THREADS_ITERS=20000 CG_THREADS_FORK=forkfirst \
	    TSAN_OPTIONS=halt_on_error=1:report_signal_unsafe=0 \
	    bash tests/preload/t_threads.sh
# the pointer table (shim/cuda/gpumem.c) under 8 threads freeing and re-allocating the same addresses
	for m in churn_mt churn_hot; do rm -rf build-tsan/churn && mkdir -p build-tsan/churn && \
	    CGTEST_FREE_YIELD=1 CONVGUARD_DIR=build-tsan/churn TSAN_OPTIONS=halt_on_error=1:report_signal_unsafe=0 \
	    LD_LIBRARY_PATH=build-tsan/doubles/cuda LD_PRELOAD=$(CURDIR)/build-tsan/libconvguard.so \
	    build-tsan/clients/client_memroutes $$m || exit 1; done
# the threads + fork client (issue 21): the forked children run no threads,
# which TSan supports; fewer forks (TSan makes each slow)
	mkdir -p build-tsan/doubles && cp -r $(BUILD)/doubles/. build-tsan/doubles/
	CG_BUILD=$(CURDIR)/build-tsan CG_FORK_DIV=5 CG_FORK_BASELINE=0 TSAN_OPTIONS=halt_on_error=1:report_signal_unsafe=0:die_after_fork=0:suppressions=$(CURDIR)/tests/robust/tsan.supp \
	    bash tests/preload/t_fork_threads.sh

# ---- valgrind: memcheck over the clients, the shim preloaded
VG := valgrind --leak-check=full --errors-for-leak-kinds=definite --child-silent-after-fork=yes
check-valgrind: all $(TEST_DEPS)
	VALGRIND="$(VG)" bash tests/robust/valgrind.sh

# ---- fuzzing: libFuzzer (clang-14), sources compiled in
FUZZ_CC      ?= clang-14
FUZZ_FLAGS   := -g -O1 -std=c11 -D_GNU_SOURCE -Ishim -fsanitize=fuzzer,address,undefined
FUZZ_SECONDS ?= 120
FZ           := build-fuzz
FUZZ_TARGETS := $(FZ)/fuzz_env $(FZ)/fuzz_event $(if $(wildcard tools/model/trace_read.c),$(FZ)/fuzz_reader $(FZ)/fuzz_scan $(FZ)/fuzz_capture $(FZ)/fuzz_html)
fuzz: $(FUZZ_TARGETS)
$(FZ)/fuzz_env: tests/fuzz/fuzz_env.c shim/core/config.c shim/core/fmt.c $(SHIM_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_env.c shim/core/config.c shim/core/fmt.c
$(FZ)/fuzz_event: tests/fuzz/fuzz_event.c tests/fuzz/json_check.h shim/core/trace.c shim/core/repeat.c shim/core/safedir.c shim/core/fmt.c shim/core/config.c $(SHIM_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_event.c shim/core/trace.c shim/core/repeat.c shim/core/safedir.c shim/core/fmt.c shim/core/config.c
# the CLI's reader, analysis and JSON report: every tools/*.c but the main program
FUZZ_TOOLS := $(filter-out tools/convguard.c,$(TOOLS_SRC))
$(FZ)/fuzz_reader: tests/fuzz/fuzz_reader.c $(FUZZ_TOOLS) $(TOOLS_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(JANSSON_CFLAGS) -Itools -DCONVGUARD_VERSION='"$(VERSION)"' -o $@ \
	    tests/fuzz/fuzz_reader.c $(FUZZ_TOOLS) $(JANSSON_LIBS) -ldl -lm -lpthread
# the stderr capture: relay.c's writer and model/capture.c's reader, round trip and hostile files
$(FZ)/fuzz_capture: tests/fuzz/fuzz_capture.c $(FUZZ_TOOLS) $(TOOLS_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(JANSSON_CFLAGS) -Itools -DCONVGUARD_VERSION='"$(VERSION)"' -o $@ \
	    tests/fuzz/fuzz_capture.c $(FUZZ_TOOLS) $(JANSSON_LIBS) -ldl -lm -lpthread
# the same, through the HTML, text and JSON reports: our markup only, no raw control (docs/robustness.md "Output")
$(FZ)/fuzz_html: tests/fuzz/fuzz_html.c tests/fuzz/json_check.h $(FUZZ_TOOLS) $(TOOLS_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(JANSSON_CFLAGS) -Itools -DCONVGUARD_VERSION='"$(VERSION)"' -o $@ \
	    tests/fuzz/fuzz_html.c $(FUZZ_TOOLS) $(JANSSON_LIBS) -ldl -lm -lpthread
# the reader's line scan and line builder against jansson
$(FZ)/fuzz_scan: tests/fuzz/fuzz_scan.c tools/util/json_scan.c tools/util/term.c tools/util/util.c tools/util/util.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(JANSSON_CFLAGS) -Itools -Ishim -o $@ tests/fuzz/fuzz_scan.c tools/util/json_scan.c \
	    tools/util/term.c tools/util/util.c $(JANSSON_LIBS) -lpthread
# -close_fd_mask=2: the targets' warnings on stderr would drown the fuzzer's
fuzz-run: fuzz
	@for t in $(FUZZ_TARGETS); do \
	    n=$$(basename $$t); mkdir -p $(FZ)/corpus-$$n; \
	    cp -n tests/fuzz/seeds/$$n/* $(FZ)/corpus-$$n/ 2>/dev/null; \
	    echo "== $$n for $(FUZZ_SECONDS) s (log: $(FZ)/$$n.log)"; \
	    $$t -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=2 -print_final_stats=1 $(FZ)/corpus-$$n \
	        >$(FZ)/$$n.log 2>&1; rc=$$?; tail -12 $(FZ)/$$n.log; \
	    [ $$rc = 0 ] || { echo "$$n: FAILED (rc $$rc)"; exit 1; }; \
	done

# CI: for every target `make fuzz` builds, the inputs that once crashed it
# (tests/fuzz/crashes/<target>/, kept for good) run as regression inputs, then
# FUZZ_CI_SECONDS of fuzzing from its seeds (tests/fuzz/seeds/<target>/) in a
# scratch corpus; a new crash is written to tests/fuzz/crashes/<target>/ (add it
# to the repository with the fix) and fails the run.
FUZZ_CI_SECONDS ?= 30
# extra libFuzzer flags and environment for CI (none: a leak fails it like a crash)
FUZZ_CI_FLAGS ?=
FUZZ_CI_ENV ?=
fuzz-ci: fuzz
	@for t in $(FUZZ_TARGETS); do \
	    n=$$(basename $$t); c=tests/fuzz/crashes/$$n; mkdir -p $$c $(FZ)/ci-$$n; \
	    if ls $$c/* >/dev/null 2>&1; then \
	        echo "== $$n: $$(ls $$c | wc -l) saved crash input(s)"; \
	        $(FUZZ_CI_ENV) $$t $(FUZZ_CI_FLAGS) -close_fd_mask=2 $$c/* >$(FZ)/$$n.regress.log 2>&1 || \
	            { tail -30 $(FZ)/$$n.regress.log; echo "$$n: a saved crash input fails again"; exit 1; }; \
	    fi; \
	    echo "== $$n: $(FUZZ_CI_SECONDS) s from tests/fuzz/seeds/$$n"; \
	    $(FUZZ_CI_ENV) $$t $(FUZZ_CI_FLAGS) -max_total_time=$(FUZZ_CI_SECONDS) -close_fd_mask=2 -print_final_stats=1 -artifact_prefix=$$c/ \
	        $(FZ)/ci-$$n $$(ls -d tests/fuzz/seeds/$$n 2>/dev/null) >$(FZ)/$$n.log 2>&1; rc=$$?; \
	    grep -a -E '^#[0-9]+.*DONE|^stat::number_of_executed_units' $(FZ)/$$n.log; \
	    [ $$rc = 0 ] || { tail -40 $(FZ)/$$n.log; echo "$$n: FAILED (rc $$rc), input saved in $$c/"; exit 1; }; \
	done

# the trace builder's edges, linked straight from the shim's objects
$(RB)/test_trace_edges: $(RB_SRC)/test_trace_edges.c $(BUILD)/shim/core/trace.o $(BUILD)/shim/core/repeat.o $(BUILD)/shim/core/safedir.o $(BUILD)/shim/core/fmt.o $(BUILD)/shim/core/config.o
	@mkdir -p $(@D)
	$(CC) $(RB_CFLAGS) -o $@ $^
