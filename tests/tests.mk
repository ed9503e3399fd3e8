# tests/tests.mk - test doubles of libcuda / libcudart / libcudnn and the
# framework-like clients that load them (tests/doubles/README.md,
# tests/clients/README.md).  Included by the top Makefile.
#
#   make doubles    build/doubles/{cuda,cudart,cudnn9,cudnn8,cudnn8-broken}/
#   make clients    build/clients/
#   make doubles-selftest   run tests/clients/selftest.sh (no shim)
#
# Own flags: the doubles need no CUDA toolkit, only shim/cudefs.h.
CGT_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -fPIC -Ishim
# -Bsymbolic-functions: a double's calls to its own exported functions stay
# inside it (as in NVIDIA's builds), so a preloaded shim sees no nested calls
CGT_SO     := $(CGT_CFLAGS) -shared -fvisibility=hidden -Wl,-Bsymbolic-functions
CGT_D      := $(BUILD)/doubles
CGT_C      := $(BUILD)/clients
CGT_TD     := tests/doubles
CGT_TC     := tests/clients
CGT_HDR    := shim/cudefs.h $(CGT_TD)/cuda_double.h $(CGT_TD)/cudnn_double.h $(CGT_TD)/cgtest_env.h
CGT_CUDNN_HDR := $(CGT_HDR) $(CGT_TD)/cudnn_int.h
# RUNPATH $ORIGIN, as the real cuDNN libraries have
CGT_ORIGIN := -Wl,-rpath,'$$ORIGIN' -Wl,--enable-new-dtags
# Where the real CUDA libraries are, for ext_torchlike_real.so (optional).
CGT_CUDA_LIB ?= /usr/local/cuda/lib

CGT_DOUBLES := $(CGT_D)/cuda/libcuda.so.1 $(CGT_D)/cuda-nolog/libcuda.so.1 $(CGT_D)/cudart/libcudart.so.13 \
	$(CGT_D)/cudnn9/libcudnn.so.9 $(CGT_D)/cudnn9/libcudnn_graph.so.9 $(CGT_D)/cudnn9/libcudnn_cnn.so.9 \
	$(CGT_D)/cudnn8/libcudnn.so.8 $(CGT_D)/cudnn8/libcudnn_ops_infer.so.8 \
	$(CGT_D)/cudnn8/libcudnn_cnn_infer.so.8 \
	$(CGT_D)/cudnn8-broken/libcudnn.so.8 $(CGT_D)/cudnn8-broken/libcudnn_ops_infer.so.8

CGT_CLIENTS := $(CGT_C)/client_torchlike $(CGT_C)/ext_torchlike.so $(CGT_C)/client_tflike \
	$(CGT_C)/client_jaxlike $(CGT_C)/plugin_jaxlike.so $(CGT_C)/client_probe \
	$(CGT_C)/client_copyload $(CGT_C)/client_cudnn8 $(CGT_C)/client_drvlog \
	$(CGT_C)/client_fwstub $(CGT_C)/libfwstub.so $(CGT_C)/libfwuser.so $(CGT_C)/client_fwstub_linked \
	$(CGT_C)/libfwstub2.so $(CGT_C)/libfwuser2.so
ifneq ($(wildcard $(CGT_CUDA_LIB)/libcudnn.so.9),)
ifneq ($(wildcard $(CGT_CUDA_LIB)/libcudart.so.13),)
CGT_CLIENTS += $(CGT_C)/ext_torchlike_real.so
endif
endif

TEST_DEPS += doubles clients
.PHONY: doubles clients doubles-selftest
doubles: $(CGT_DOUBLES)
clients: $(CGT_CLIENTS)
doubles-selftest:
	sh $(CGT_TC)/selftest.sh

# Version scripts: every exported symbol in the node named after the soname,
# as in NVIDIA's libraries (nm -D: cudaMalloc@@libcudart.so.13).
$(CGT_D)/maps/%.map:
	@mkdir -p $(@D)
	printf '%s {\n  global: cu*; cgtest*;\n  local: *;\n};\n' '$*' > $@

# ---- the driver: unversioned, like the real libcuda.so.1
$(CGT_D)/cuda/libcuda.so.1: $(CGT_TD)/libcuda_double.c $(CGT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CGT_SO) -Wl,-soname,libcuda.so.1 -o $@ $< -lpthread
# a driver before CUDA 12.9: no cuLogs* functions
$(CGT_D)/cuda-nolog/libcuda.so.1: $(CGT_TD)/libcuda_double.c $(CGT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CGT_SO) -DCGTEST_NO_LOGS_API -Wl,-soname,libcuda.so.1 -o $@ $< -lpthread

# ---- the runtime: no DT_NEEDED on libcuda (it dlopen()s it)
$(CGT_D)/cudart/libcudart.so.13: $(CGT_TD)/libcudart_double.c $(CGT_HDR) $(CGT_D)/maps/libcudart.so.13.map
	@mkdir -p $(@D)
	$(CC) $(CGT_SO) -Wl,-soname,libcudart.so.13 -Wl,--version-script=$(CGT_D)/maps/libcudart.so.13.map \
	      -o $@ $< -ldl -lpthread

# ---- cuDNN 9: dispatcher + graph + cnn
$(CGT_D)/cudnn9/libcudnn.so.9: $(CGT_TD)/cudnn_dispatch.c $(CGT_TD)/cudnn_api.def $(CGT_HDR) \
		$(CGT_D)/maps/libcudnn.so.9.map
	@mkdir -p $(@D)
	$(CC) $(CGT_SO) -Wl,-soname,libcudnn.so.9 -Wl,--version-script=$(CGT_D)/maps/libcudnn.so.9.map \
	      $(CGT_ORIGIN) -o $@ $< -ldl
$(CGT_D)/cudnn9/libcudnn_graph.so.9: $(CGT_TD)/cudnn_handle.c $(CGT_TD)/cudnn_backend.c $(CGT_CUDNN_HDR) \
		$(CGT_D)/maps/libcudnn_graph.so.9.map
	@mkdir -p $(@D)
	$(CC) $(CGT_SO) -Wl,-soname,libcudnn_graph.so.9 -Wl,--version-script=$(CGT_D)/maps/libcudnn_graph.so.9.map \
	      $(CGT_ORIGIN) -o $@ $(CGT_TD)/cudnn_handle.c $(CGT_TD)/cudnn_backend.c -ldl -lpthread
$(CGT_D)/cudnn9/libcudnn_cnn.so.9: $(CGT_TD)/cudnn_cnn.c $(CGT_TD)/cudnn_desc.c $(CGT_CUDNN_HDR) \
		$(CGT_D)/maps/libcudnn_cnn.so.9.map $(CGT_D)/cudnn9/libcudnn_graph.so.9
	$(CC) $(CGT_SO) -Wl,-soname,libcudnn_cnn.so.9 -Wl,--version-script=$(CGT_D)/maps/libcudnn_cnn.so.9.map \
	      $(CGT_ORIGIN) -o $@ $(CGT_TD)/cudnn_cnn.c $(CGT_TD)/cudnn_desc.c \
	      -L$(CGT_D)/cudnn9 -l:libcudnn_graph.so.9

# ---- cuDNN 8: dispatcher + ops_infer + cnn_infer, 8.x status numbering
$(CGT_D)/cudnn8/libcudnn.so.8: $(CGT_TD)/cudnn_dispatch.c $(CGT_TD)/cudnn_api.def $(CGT_HDR) \
		$(CGT_D)/maps/libcudnn.so.8.map
	@mkdir -p $(@D)
	$(CC) $(CGT_SO) -DCGTEST_CUDNN8 -Wl,-soname,libcudnn.so.8 \
	      -Wl,--version-script=$(CGT_D)/maps/libcudnn.so.8.map $(CGT_ORIGIN) -o $@ $< -ldl
$(CGT_D)/cudnn8/libcudnn_ops_infer.so.8: $(CGT_TD)/cudnn_handle.c $(CGT_TD)/cudnn_desc.c $(CGT_CUDNN_HDR) \
		$(CGT_D)/maps/libcudnn_ops_infer.so.8.map
	@mkdir -p $(@D)
	$(CC) $(CGT_SO) -DCGTEST_CUDNN8 -Wl,-soname,libcudnn_ops_infer.so.8 \
	      -Wl,--version-script=$(CGT_D)/maps/libcudnn_ops_infer.so.8.map $(CGT_ORIGIN) \
	      -o $@ $(CGT_TD)/cudnn_handle.c $(CGT_TD)/cudnn_desc.c -ldl -lpthread
$(CGT_D)/cudnn8/libcudnn_cnn_infer.so.8: $(CGT_TD)/cudnn_cnn.c $(CGT_CUDNN_HDR) \
		$(CGT_D)/maps/libcudnn_cnn_infer.so.8.map $(CGT_D)/cudnn8/libcudnn_ops_infer.so.8
	$(CC) $(CGT_SO) -DCGTEST_CUDNN8 -Wl,-soname,libcudnn_cnn_infer.so.8 \
	      -Wl,--version-script=$(CGT_D)/maps/libcudnn_cnn_infer.so.8.map $(CGT_ORIGIN) \
	      -o $@ $(CGT_TD)/cudnn_cnn.c -L$(CGT_D)/cudnn8 -l:libcudnn_ops_infer.so.8
# The famous broken install: libcudnn_cnn_infer.so.8 missing.
$(CGT_D)/cudnn8-broken/%.so.8: $(CGT_D)/cudnn8/%.so.8
	@mkdir -p $(@D)
	cp $< $@

# ---- clients (glibc >= 2.34: -ldl/-lpthread add nothing; older: needed)
CGT_MAIN := -ldl -lpthread
CGT_CLIENT_HDR := $(CGT_TC)/common.h $(CGT_HDR)

$(CGT_C)/%: $(CGT_TC)/%.c $(CGT_CLIENT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -o $@ $< $(CGT_MAIN)

# PyTorch-like extension: DT_NEEDED libcudnn.so.9 + libcudart.so.13, found
# through an RPATH (not RUNPATH), as torch's libraries are.
$(CGT_C)/ext_torchlike.so: $(CGT_TC)/ext_torchlike.c $(CGT_CLIENT_HDR) \
		$(CGT_D)/cudnn9/libcudnn.so.9 $(CGT_D)/cudart/libcudart.so.13
	@mkdir -p $(@D)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -shared -o $@ $< -Wl,--no-as-needed \
	      -L$(CGT_D)/cudnn9 -L$(CGT_D)/cudart -l:libcudnn.so.9 -l:libcudart.so.13 -Wl,--disable-new-dtags \
	      -Wl,-rpath,$(abspath $(CGT_D)/cudnn9):$(abspath $(CGT_D)/cudart)
# The same source against NVIDIA's libraries.
$(CGT_C)/ext_torchlike_real.so: $(CGT_TC)/ext_torchlike.c $(CGT_CLIENT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -shared -o $@ $< -Wl,--no-as-needed \
	      -L$(CGT_CUDA_LIB) -l:libcudnn.so.9 -l:libcudart.so.13 -Wl,--disable-new-dtags \
	      -Wl,-rpath,$(CGT_CUDA_LIB)
# JAX-like plugin: no DT_NEEDED on any CUDA library.
$(CGT_C)/plugin_jaxlike.so: $(CGT_TC)/plugin_jaxlike.c $(CGT_CLIENT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -shared -o $@ $< -ldl

# ---- framework-style stubs (TensorFlow's own cu*/cuda*/cudnn* definitions): fwstub.c
# libfwstub.so defines every hooked name (and calls them itself: fwstub_run);
# libfwuser.so calls them from another library; client_fwstub_linked from the program.
CGT_FW_SEQ := $(CGT_TC)/fwstub_seq.c
$(CGT_C)/libfwstub.so: $(CGT_TC)/fwstub.c $(CGT_FW_SEQ) shim/hooks.def $(CGT_CLIENT_HDR)
	@mkdir -p $(@D)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -shared -Wl,-soname,libfwstub.so -o $@ $(CGT_TC)/fwstub.c \
	      -x c -DSEQ_NAME=fwstub_run $(CGT_FW_SEQ) -ldl
$(CGT_C)/libfwuser.so: $(CGT_FW_SEQ) $(CGT_C)/libfwstub.so $(CGT_CLIENT_HDR)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -shared -Wl,-soname,libfwuser.so -o $@ -DSEQ_NAME=fwuser_run $(CGT_FW_SEQ) \
	      -Wl,--no-as-needed -L$(CGT_C) -l:libfwstub.so -Wl,-rpath,'$$ORIGIN' -Wl,--enable-new-dtags
# a second framework with its own stubs (another soname: the loader keeps one copy per soname)
$(CGT_C)/libfwstub2.so: $(CGT_TC)/fwstub.c $(CGT_FW_SEQ) shim/hooks.def $(CGT_CLIENT_HDR)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -shared -DMISS_DRV=999 -Wl,-soname,libfwstub2.so -o $@ $(CGT_TC)/fwstub.c \
	      -x c -DSEQ_NAME=fwstub_run $(CGT_FW_SEQ) -ldl
$(CGT_C)/libfwuser2.so: $(CGT_FW_SEQ) $(CGT_C)/libfwstub2.so $(CGT_CLIENT_HDR)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -shared -Wl,-soname,libfwuser2.so -o $@ -DSEQ_NAME=fwuser_run $(CGT_FW_SEQ) \
	      -Wl,--no-as-needed -L$(CGT_C) -l:libfwstub2.so -Wl,-rpath,'$$ORIGIN' -Wl,--enable-new-dtags
$(CGT_C)/client_fwstub_linked: $(CGT_TC)/client_fwstub.c $(CGT_FW_SEQ) $(CGT_C)/libfwstub.so $(CGT_CLIENT_HDR)
	$(CC) $(CGT_CFLAGS) -I$(CGT_TD) -DFWSTUB_LINKED -DSEQ_NAME=main_run -o $@ $(CGT_TC)/client_fwstub.c \
	      $(CGT_FW_SEQ) -Wl,--no-as-needed -L$(CGT_C) -l:libfwstub.so -Wl,-rpath,'$$ORIGIN' $(CGT_MAIN)
