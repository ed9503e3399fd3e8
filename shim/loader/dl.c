/* dl.c - libc's own dynamic-loader functions (cg_dl, found by real.c), and
 * the dlerror() text the shim had to consume, kept per thread for the
 * program's next dlerror() call (routes.c hands it back).  The lowest file of
 * the loader layer: the ELF reader, the PLT resolver and the GPU probes all
 * call the real loader through here.
 *
 * glibc's dlerror() also sets errno, to the error code of the failure it
 * formats ("...: No such file or directory" leaves ENOENT, "Too many open
 * files" EMFILE; an undefined symbol has none and leaves errno alone).  The
 * kept text keeps that code too, and handing the text back sets it, so the
 * program's errno after its dlerror() is glibc's. */
#include <errno.h>

#include "loader/loader.h"

struct cg_libc_dl cg_dl;

static __thread char pending_err[1024];
static __thread int pending_errno; /* errno the real dlerror() set for it, 0: none */
static __thread bool pending;

void cg_dlerror_clear(void) { pending = false; }

const char *cg_dlerror_read(int *code)
{
    int saved = errno;
    errno = 0;
    const char *msg = cg_dl.dlerror ? cg_dl.dlerror() : NULL;
    *code = msg ? errno : 0;
    errno = saved;
    return msg;
}

void cg_dlerror_set(const char *msg, int code)
{
    cg_strlcpy(pending_err, msg, sizeof pending_err);
    pending_errno = code;
    pending = true;
}

void cg_dlerror_keep(const char *msg, int code)
{
    if (msg && !pending)
        cg_dlerror_set(msg, code);
}

char *cg_dlerror_take(void)
{
    if (!pending)
        return NULL;
    pending = false;
    if (pending_errno)
        errno = pending_errno;
    return pending_err;
}
