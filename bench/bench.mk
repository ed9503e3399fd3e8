# bench/bench.mk - benchmarks (not tests): `make bench` prints numbers.
$(BUILD)/bench:
	mkdir -p $@
$(BUILD)/bench/hotpath: bench/hotpath.c doubles | $(BUILD)/bench
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Ishim -Itests/doubles -o $@ bench/hotpath.c \
	  -L$(BUILD)/doubles/cudnn9 -L$(BUILD)/doubles/cudart -L$(BUILD)/doubles/cuda \
	  -Wl,--disable-new-dtags,-rpath,$(abspath $(BUILD))/doubles/cudnn9:$(abspath $(BUILD))/doubles/cudart:$(abspath $(BUILD))/doubles/cuda \
	  -l:libcudnn.so.9 -l:libcudnn_cnn.so.9 -l:libcudart.so.13 -l:libcuda.so.1 -ldl
$(BUILD)/bench/load_cudnn: bench/load_cudnn.c | $(BUILD)/bench
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o $@ bench/load_cudnn.c -ldl
# a framework's own stubs in the way (TensorFlow): the program's PLT -> libfwstub.so -> libcuda.so.1
$(BUILD)/bench/stubpath: bench/stubpath.c $(BUILD)/clients/libfwstub.so | $(BUILD)/bench
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Ishim -Itests/doubles -o $@ bench/stubpath.c \
	  -L$(BUILD)/clients -Wl,--no-as-needed -l:libfwstub.so -Wl,--disable-new-dtags,-rpath,$(abspath $(BUILD))/clients
.PHONY: bench
bench: all $(BUILD)/bench/hotpath $(BUILD)/bench/load_cudnn $(BUILD)/bench/stubpath
	bench/run.sh
# stderr capture of `convguard run` (issue 20): 200 MB of stderr with and without it
.PHONY: bench-capture
bench-capture: all $(BUILD)/report/stderr_probe $(BUILD)/report/pty_run
	bench/capture.sh
