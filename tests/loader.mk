# tests/loader.mk - the loader's and the trace's edge cases (tests/loader/):
# dlopen flags and namespaces (dlflags), a hooked name nothing defines
# (unbound), many threads writing long events (burst), driver functions from
# cudaGetDriverEntryPoint (entrypoint), errno after dlerror() (dlerrno).  Included by the top Makefile.
LDT := $(BUILD)/loader
LDT_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -fPIC
LDT_LIBS := $(LDT)/libflag_lazy.so $(LDT)/libflag_lazy2.so $(LDT)/libflag_deep.so $(LDT)/libflag_deep2.so \
	$(LDT)/libflag_count.so $(LDT)/libflag_count2.so $(LDT)/libflag_count3.so $(LDT)/libflag_never.so \
	$(LDT)/libunbound.so $(LDT)/libunbound_weak.so
$(LDT)/libflag_lazy.so $(LDT)/libflag_lazy2.so: tests/loader/flag_lib.c
	@mkdir -p $(@D)
	$(CC) $(LDT_CFLAGS) -shared -DFLAG_LAZY -Wl,-z,lazy -o $@ $<
$(LDT)/libflag_deep.so $(LDT)/libflag_deep2.so: tests/loader/flag_lib.c
	@mkdir -p $(@D)
	$(CC) $(LDT_CFLAGS) -shared -DFLAG_DEEP -o $@ $<
$(LDT)/libflag_count.so $(LDT)/libflag_count2.so $(LDT)/libflag_count3.so $(LDT)/libflag_never.so: tests/loader/flag_lib.c
	@mkdir -p $(@D)
	$(CC) $(LDT_CFLAGS) -shared -DFLAG_COUNT -o $@ $<
$(LDT)/libunbound.so: tests/loader/unbound_lib.c
	@mkdir -p $(@D)
	$(CC) $(LDT_CFLAGS) -shared -Wl,-z,lazy -o $@ $<
$(LDT)/libunbound_weak.so: tests/loader/unbound_lib.c
	@mkdir -p $(@D)
	$(CC) $(LDT_CFLAGS) -shared -DUNBOUND_WEAK -Wl,-z,lazy -o $@ $<
$(LDT)/dlflags: tests/loader/dlflags.c
	@mkdir -p $(@D)
	$(CC) $(LDT_CFLAGS) -rdynamic -o $@ $< -ldl
$(LDT)/unbound $(LDT)/burst $(LDT)/entrypoint $(LDT)/dlerrno: $(LDT)/%: tests/loader/%.c
	@mkdir -p $(@D)
	$(CC) $(LDT_CFLAGS) -o $@ $< -ldl -lpthread
.PHONY: loader-tests
loader-tests: $(LDT_LIBS) $(LDT)/dlflags $(LDT)/unbound $(LDT)/burst $(LDT)/entrypoint $(LDT)/dlerrno
TEST_DEPS += loader-tests
