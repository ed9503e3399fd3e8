/* safedir.c - the trace folder's rule (who may write it), compiled into the
 * command from the shim's own file, so that `convguard run` refuses exactly
 * what the shim refuses: one implementation (shim/core/safedir.c, libc
 * alone; declared in shim/core/safedir.h). */
#include "core/safedir.c"
