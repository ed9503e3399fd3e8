# examples/examples.mk - example programs (included by the top Makefile).
#
#   make examples     build/examples/conv_tflike  (TensorFlow-like cuDNN client: dlopen + dlsym,
#                                                  Get_v7, FindEx, workspace via cudaMalloc, fwd + bwd)
#                     build/examples/gpu_hog      (holds all but N MiB of a GPU, then sleeps)
# They load every CUDA library with dlopen: no CUDA headers or libraries are
# needed to build them.  tests/preload/t_resource_*.sh run conv_tflike
# against the test doubles; tests/gpu/run.sh (section resource) on a GPU.
EX_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g
EXAMPLES  := $(BUILD)/examples/conv_tflike $(BUILD)/examples/gpu_hog

.PHONY: examples
examples: $(EXAMPLES)
TEST_DEPS += examples

$(BUILD)/examples/%: examples/%.c
	@mkdir -p $(@D)
	$(CC) $(EX_CFLAGS) -o $@ $< -ldl
