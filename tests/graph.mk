# tests/graph.mk - test programs of the graph (backend) API layer (included by
# the top Makefile; uses tests/tests.mk's and tests/unit/unit.mk's variables).
#   client_graph      dlopen + dlsym, like JAX/XLA and TensorFlow
#   client_graph_plt  linked against the double's libcudnn.so.9, like PyTorch
GRAPH_TESTS := $(CGT_C)/client_graph $(CGT_C)/client_graph_plt
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
