/* state.c - the process's tracing state (core.h: struct cg_state): whether it
 * traces, its trace file, and who it is.  Written by the lifecycle (shim.c)
 * and the trace writer (trace.c), read by every layer. */
#include "core/core.h"

struct cg_state cg = {.fd = -1};
