/* dl.c - libc's own dynamic-loader functions (cg_dl, found by real.c), and
 * the dlerror() text the shim had to consume, kept per thread for the
 * program's next dlerror() call (routes.c hands it back).  The lowest file of
 * the loader layer: the ELF reader, the PLT resolver and the GPU probes all
 * call the real loader through here. */
#include "cg.h"

struct cg_libc_dl cg_dl;

static __thread char pending_err[1024];
static __thread bool pending;

void cg_dlerror_clear(void) { pending = false; }

void cg_dlerror_set(const char *msg)
{
    cg_strlcpy(pending_err, msg, sizeof pending_err);
    pending = true;
}

void cg_dlerror_keep(const char *msg)
{
    if (msg && !pending)
        cg_dlerror_set(msg);
}

char *cg_dlerror_take(void)
{
    if (!pending)
        return NULL;
    pending = false;
    return pending_err;
}
