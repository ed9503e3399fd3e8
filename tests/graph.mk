# tests/graph.mk - test programs of the graph (backend) API layer (included by
# the top Makefile; uses tests/tests.mk's and tests/unit/unit.mk's variables).
#   client_graph      dlopen + dlsym, like JAX/XLA and TensorFlow
#   client_graph_plt  linked against the double's libcudnn.so.9, like PyTorch
#   unit/check_names  shim/cudnn_names.c against the real cudnnGetErrorString
GRAPH_TESTS := $(CGT_C)/client_graph $(CGT_C)/client_graph_plt $(BUILD)/unit/check_names
TEST_DEPS += graph-tests
.PHONY: graph-tests
graph-tests: $(GRAPH_TESTS)

$(CGT_C)/client_graph: $(CGT_TC)/client_graph.c $(CGT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -o $@ $< $(CGT_MAIN)

$(CGT_C)/client_graph_plt: $(CGT_TC)/client_graph.c $(CGT_HDR) $(CGT_D)/cudnn9/libcudnn.so.9
	@mkdir -p $(@D)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -DCLIENT_PLT -o $@ $< $(CGT_MAIN) -L$(CGT_D)/cudnn9 -l:libcudnn.so.9 \
	      -Wl,-rpath,$(abspath $(CGT_D)/cudnn9)

$(BUILD)/unit/check_names: tests/unit/check_names.c $(BUILD)/shim/cudnn_names.o shim/graph.h | $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ tests/unit/check_names.c $(BUILD)/shim/cudnn_names.o -ldl
