# tests/resource.mk - what the resource layer's tests need besides the doubles
# and clients of tests/tests.mk (included by the top Makefile):
#   build/doubles/nvml/libnvidia-ml.so.1   TEST DOUBLE of NVML (tests/doubles/libnvml_double.c)
#   build/clients/client_memroutes         GPU memory on the three routes (PLT: linked to libcudart.so.13)
CGT_NVML := $(BUILD)/doubles/nvml/libnvidia-ml.so.1
CGT_MEMROUTES := $(BUILD)/clients/client_memroutes
TEST_DEPS += $(CGT_NVML) $(CGT_MEMROUTES)

$(CGT_NVML): tests/doubles/libnvml_double.c shim/cudefs.h tests/doubles/cgtest_env.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -fPIC -Ishim -shared -fvisibility=hidden \
	      -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

# RUNPATH (not RPATH): LD_LIBRARY_PATH may point it at another libcudart.
$(CGT_MEMROUTES): tests/clients/client_memroutes.c tests/doubles/cuda_double.h $(BUILD)/doubles/cudart/libcudart.so.13
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -Ishim -Itests/doubles -o $@ $< \
	      -Wl,--no-as-needed -L$(BUILD)/doubles/cudart -l:libcudart.so.13 -ldl -lpthread \
	      -Wl,--enable-new-dtags -Wl,-rpath,$(abspath $(BUILD)/doubles/cudart)
