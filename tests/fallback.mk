# tests/fallback.mk - what the fallback tests (tests/preload/t_fallback_*.sh)
# need besides the doubles and clients of tests/tests.mk (included by the top Makefile):
#   build/clients/client_fallback   a forward convolution reached as a framework on a full GPU
#                                   reaches it (PLT: linked to the cuDNN 9 and cudart doubles, RPATH)
CGT_FALLBACK := $(BUILD)/clients/client_fallback
TEST_DEPS += $(CGT_FALLBACK)

$(CGT_FALLBACK): tests/clients/client_fallback.c tests/doubles/cuda_double.h tests/doubles/cudnn_double.h \
		$(BUILD)/doubles/cudnn9/libcudnn.so.9 $(BUILD)/doubles/cudart/libcudart.so.13
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -Ishim -Itests/doubles -o $@ $< \
	      -Wl,--no-as-needed -L$(BUILD)/doubles/cudnn9 -L$(BUILD)/doubles/cudart \
	      -l:libcudnn.so.9 -l:libcudart.so.13 -ldl -Wl,--disable-new-dtags \
	      -Wl,-rpath,$(abspath $(BUILD)/doubles/cudnn9):$(abspath $(BUILD)/doubles/cudart)
