/* kernel.c - `convguard kernel ...`: the Jupyter kernel is the Python
 * package's (python/convguard/kernel.py).  This command, as make builds and
 * installs it, runs that package with the Python on PATH ($PYTHON if set):
 * from PREFIX/share/convguard/python (make install) or the source tree's
 * python/ beside build/, and tells it where this command is (CONVGUARD_BIN),
 * so that the kernel finds the shim next to it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static char *package_dir(const char *exe_dir)
{
    static const char *const where[] = {"%s/../share/convguard/python", "%s/../python"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char *d = xasprintf(where[i], exe_dir);
        char *init = xasprintf("%s/convguard/kernel.py", d);
        bool have = access(init, R_OK) == 0;
        free(init);
        if (have) {
            char *r = realpath(d, NULL);
            free(d);
            return r;
        }
        free(d);
    }
    return NULL;
}

int cmd_kernel(int argc, char **argv)
{
    char exe[PATH_MAX], d[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        perror("convguard kernel: /proc/self/exe");
        return 1;
    }
    exe[n] = 0;
    dir_name(exe, d, sizeof d);
    char *pkg = package_dir(d);
    if (pkg) {
        const char *old = getenv("PYTHONPATH");
        char *pp = old && *old ? xasprintf("%s:%s", pkg, old) : xasprintf("%s", pkg);
        setenv("PYTHONPATH", pp, 1);
        free(pp);
        free(pkg);
    }
    setenv("CONVGUARD_BIN", exe, 1);
    const char *py = getenv("PYTHON");
    if (!py || !*py)
        py = "python3";
    char **av = calloc((size_t)argc + 4, sizeof *av);
    if (!av)
        return 1;
    av[0] = (char *)py, av[1] = "-m", av[2] = "convguard", av[3] = "kernel";
    for (int i = 1; i < argc; i++)
        av[3 + i] = argv[i];
    fflush(stdout);
    execvp(py, av);
    fprintf(stderr, "convguard kernel: cannot run %s (%s): the Jupyter kernel needs Python with ipykernel "
                    "(`pip install ipykernel`, and convguard's wheel: `pip install .` in its checkout; then "
                    "`convguard kernel install --user`)\n",
            py, strerror(errno));
    free(av);
    return 127;
}
