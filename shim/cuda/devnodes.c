/* devnodes.c - the NVIDIA device files as this process sees them, written
 * when cuInit or a context creation failed (issue 27 item 3).  A GPU node
 * that exists but that this user may not open makes the driver answer
 * CUDA_ERROR_NO_DEVICE, the same as no GPU at all: the mode, owner, group and
 * the process's own groups tell the two apart.
 *
 * The nodes are never opened.  Opening /dev/nvidiactl or /dev/nvidia-uvm
 * makes the kernel module set up state for this process (a file of the
 * driver's, UVM's address space), opening /dev/nvidiaN may bring the GPU up
 * (seconds, without persistence mode) and nvidia-modprobe may be run to
 * create a missing node: none of that is ours to do.  What is read instead:
 * stat(2) (mode, owner, group, the device number) and faccessat(2) with
 * AT_EACCESS (R_OK|W_OK against the effective ids, as open would check them).
 * A device cgroup (a container's device rules) can still refuse an open
 * that the mode allows; faccessat does not see that, and the report says so.
 * Owner and group names are read from /etc/passwd and /etc/group directly:
 * getpwuid/getgrgid may load NSS modules (a dlopen the program did not
 * make).  Failure paths only; every fd opened here is closed before return;
 * errno as the caller had it. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "cuda/cuda.h"

#define DEV_DIR "/dev"
#define MAX_NODES 40
#define MAX_GROUPS 64

struct node {
    char path[64];
    bool exists;
    struct stat st;
    int access_errno; /* 0: R_OK|W_OK allowed */
};

static const char *errno_name(int e)
{
    switch (e) {
    case 0: return "ok";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ENODEV: return "ENODEV";
    case ENXIO: return "ENXIO";
    case EROFS: return "EROFS";
    case ENOTDIR: return "ENOTDIR";
    case ELOOP: return "ELOOP";
    default: return "other";
    }
}

static void node_look(struct node *n)
{
    n->exists = stat(n->path, &n->st) == 0;
    if (!n->exists) {
        n->access_errno = errno;
        return;
    }
    n->access_errno = faccessat(AT_FDCWD, n->path, R_OK | W_OK, AT_EACCESS) == 0 ? 0 : errno;
}

/* "nvidia0" < "nvidia1" < "nvidia10" (numbers by value), else by bytes */
static int name_cmp(const char *a, const char *b)
{
    while (*a && *a == *b && !(*a >= '0' && *a <= '9'))
        a++, b++;
    if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
        unsigned long x = 0, y = 0;
        while (*a >= '0' && *a <= '9')
            x = x * 10 + (unsigned long)(*a++ - '0');
        while (*b >= '0' && *b <= '9')
            y = y * 10 + (unsigned long)(*b++ - '0');
        return x != y ? (x < y ? -1 : 1) : name_cmp(a, b);
    }
    return (unsigned char)*a - (unsigned char)*b;
}

struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* The entries of `dir` whose name starts with `prefix`, appended to nodes
 * (getdents64 into a stack buffer: no opendir, no allocation). */
static int scan_dir(const char *dir, const char *prefix, struct node *nodes, int n, int cap, int *more)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return n;
    char buf[4096];
    size_t plen = strlen(prefix);
    for (;;) {
        long got = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (got <= 0)
            break;
        for (long off = 0; off < got;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
            off += d->d_reclen;
            if (strncmp(d->d_name, prefix, plen) != 0 || strcmp(d->d_name, "nvidia-caps") == 0)
                continue;
            if (n == cap) {
                (*more)++;
                continue;
            }
            size_t k = cg_strlcpy(nodes[n].path, dir, sizeof nodes[n].path);
            k = cg_append(nodes[n].path, sizeof nodes[n].path, k, "/");
            cg_append(nodes[n].path, sizeof nodes[n].path, k, d->d_name);
            n++;
        }
    }
    close(fd);
    return n;
}

/* Field 0 (the name) of the line of /etc/passwd or /etc/group whose field 2
 * is id; "" when none.  Long lines (a group's member list) are cut: the name
 * and the id come first. */
static void id_name(const char *file, unsigned long id, char *out, size_t cap)
{
    out[0] = 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return;
    char buf[4096], line[256];
    size_t len = 0;
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0 && !out[0]) {
        for (ssize_t i = 0; i < r && !out[0]; i++) {
            if (buf[i] != '\n') {
                if (len < sizeof line - 1)
                    line[len++] = buf[i];
                continue;
            }
            line[len] = 0;
            char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (c2 && c2[1] >= '0' && c2[1] <= '9') {
                unsigned long v = 0;
                for (char *p = c2 + 1; *p >= '0' && *p <= '9'; p++)
                    v = v * 10 + (unsigned long)(*p - '0');
                if (v == id) {
                    *c1 = 0;
                    cg_strlcpy(out, line, cap);
                }
            }
            len = 0;
        }
    }
    close(fd);
}

/* "0660", as ls and chmod write it */
static void mode_text(unsigned m, char out[8])
{
    for (int i = 0; i < 4; i++)
        out[i] = (char)('0' + ((m >> (9 - 3 * i)) & 7));
    out[4] = 0;
}

static void ev_node(struct cg_ev *e, const struct node *n)
{
    cg_ev_open(e, NULL, '{');
    cg_ev_str(e, "path", n->path);
    cg_ev_bool(e, "exists", n->exists);
    if (n->exists) {
        char m[8], name[64];
        mode_text((unsigned)n->st.st_mode & 07777, m);
        cg_ev_str(e, "type", S_ISCHR(n->st.st_mode) ? "char" : S_ISDIR(n->st.st_mode) ? "dir" : "other");
        cg_ev_str(e, "mode", m);
        cg_ev_u64(e, "uid", n->st.st_uid);
        id_name("/etc/passwd", n->st.st_uid, name, sizeof name);
        cg_ev_str(e, "owner", name[0] ? name : NULL);
        cg_ev_u64(e, "gid", n->st.st_gid);
        id_name("/etc/group", n->st.st_gid, name, sizeof name);
        cg_ev_str(e, "group", name[0] ? name : NULL);
    }
    cg_ev_str(e, "access", errno_name(n->access_errno));
    cg_ev_close(e, '}');
}

static void ev_creds(struct cg_ev *e)
{
    gid_t g[MAX_GROUPS];
    int ng = getgroups(MAX_GROUPS, g);
    cg_ev_open(e, "creds", '{');
    cg_ev_u64(e, "euid", geteuid());
    cg_ev_u64(e, "egid", getegid());
    cg_ev_open(e, "groups", '[');
    for (int i = 0; i < ng; i++) {
        char v[24];
        v[cg_utoa(v, g[i])] = 0;
        cg_ev_raw(e, NULL, v);
    }
    cg_ev_close(e, ']');
    if (ng < 0)
        cg_ev_bool(e, "groups_unknown", true);
    cg_ev_close(e, '}');
}

void cg_ev_dev_nodes(struct cg_ev *e)
{
    int saved = errno;
    static const char *const fixed[] = {DEV_DIR "/nvidiactl", DEV_DIR "/nvidia-uvm"};
    struct node nodes[MAX_NODES];
    int n = 0, more = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        cg_strlcpy(nodes[n++].path, fixed[i], sizeof nodes[0].path);
    int listed = n;
    n = scan_dir(DEV_DIR, "nvidia", nodes, n, MAX_NODES, &more);
    n = scan_dir(DEV_DIR "/nvidia-caps", "nvidia-cap", nodes, n, MAX_NODES, &more);
    /* the fixed names were listed first; the scan finds them again */
    int k = listed;
    for (int i = listed; i < n; i++) {
        bool dup = false;
        for (int j = 0; j < listed && !dup; j++)
            dup = strcmp(nodes[i].path, nodes[j].path) == 0;
        if (!dup)
            nodes[k++] = nodes[i];
    }
    n = k;
    for (int i = listed + 1; i < n; i++) /* a handful: insertion sort */
        for (int j = i; j > listed && name_cmp(nodes[j - 1].path, nodes[j].path) > 0; j--) {
            struct node t = nodes[j];
            nodes[j] = nodes[j - 1];
            nodes[j - 1] = t;
        }
    cg_ev_open(e, "dev_nodes", '[');
    for (int i = 0; i < n; i++) {
        node_look(&nodes[i]);
        ev_node(e, &nodes[i]);
    }
    cg_ev_close(e, ']');
    if (more)
        cg_ev_u64(e, "dev_nodes_more", (unsigned long long)more);
    ev_creds(e);
    errno = saved;
}
