/* safedir.c - who may write the trace folder (safedir.h).
 *
 * The rule is ssh's StrictModes with fs.protected_symlinks' view of links:
 * a name is only as safe as the folder holding it, so every folder from /
 * down must be one that no other user can change (ours or root's, and not
 * writable by group or others unless sticky, where nobody may rename or
 * remove another's entry), and a symlink is followed only when it belongs to
 * us or root (a link another user planted, such as logs -> /etc, is never
 * followed).  The walk opens one name at a time with openat(O_PATH |
 * O_NOFOLLOW) and checks what it opened, so what was checked is what the
 * file is then created in.  Compiled into the shim and the command alike:
 * libc only, no allocation, no stdio. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/safedir.h"

#define MAX_LINKS 40 /* as the kernel's own limit */

static size_t put(char *out, size_t cap, size_t n, const char *s)
{
    while (*s && n + 1 < cap)
        out[n++] = *s++;
    if (n < cap)
        out[n] = 0;
    return n;
}

static size_t put_u(char *out, size_t cap, size_t n, unsigned long v)
{
    char d[24];
    size_t k = sizeof d - 1;
    d[k] = 0;
    do
        d[--k] = (char)('0' + v % 10);
    while (v /= 10);
    return put(out, cap, n, d + k);
}

static int fail(struct cg_safedir *r, enum cg_sd_why why, int err, int fd)
{
    if (fd >= 0)
        close(fd);
    r->why = why;
    r->err = err;
    return -1;
}

/* r->at follows the walk: a name in, a name out, back to / */
static void at_push(struct cg_safedir *r, const char *name)
{
    size_t n = strlen(r->at);
    if (strcmp(name, "..") == 0) {
        char *s = strrchr(r->at, '/');
        if (s)
            s[s == r->at] = 0;
        return;
    }
    if (n == 0 || r->at[n - 1] != '/')
        n = put(r->at, sizeof r->at, n, "/");
    put(r->at, sizeof r->at, n, name);
}

static void at_pop(struct cg_safedir *r) { at_push(r, ".."); }

/* Our user-private group (the gid equal to our uid, ours alone by that
 * convention; Red Hat's umask 002 makes every folder group-writable for it):
 * its group-write bit lets no one else in. */
static bool private_group(const struct stat *st)
{
    uid_t u = geteuid();
    return u != 0 && st->st_uid == u && st->st_gid == getegid() && (unsigned)st->st_gid == (unsigned)u &&
           !(st->st_mode & S_IWOTH);
}

/* A folder on the way: can anyone but us and root change what is in it? */
static enum cg_sd_why folder_rule(const struct stat *st)
{
    if (st->st_uid != geteuid() && st->st_uid != 0)
        return CG_SD_DIR_FOREIGN;
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX) && !private_group(st))
        return CG_SD_DIR_SHARED;
    return CG_SD_OK;
}

/* The trace folder itself, once reached: ours, or root's sticky one
 * (/tmp), and writable. */
static int final_rule(struct cg_safedir *r, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail(r, CG_SD_OPEN, errno, fd);
    r->owner = (unsigned)st.st_uid;
    if (st.st_uid != geteuid() && !(st.st_uid == 0 && (st.st_mode & S_ISVTX)))
        return fail(r, CG_SD_NOT_OURS, 0, fd);
    if (faccessat(fd, ".", W_OK | X_OK, 0) != 0)
        return fail(r, CG_SD_NOT_WRITABLE, errno, fd);
    return fd;
}

/* A link met on the way, owned by us or root: its target takes its place
 * in what is left to walk (end: what came after the link's name).  The
 * descriptor to go on from: the link's folder, or / for an absolute target. */
static int expand_link(struct cg_safedir *r, int nfd, int fd, const char *end, size_t *orig)
{
    ssize_t n = readlinkat(nfd, "", r->link, sizeof r->link - 1);
    int err = errno;
    close(nfd);
    if (n < 0)
        return fail(r, CG_SD_OPEN, err, fd);
    size_t remlen = strlen(end);
    if ((size_t)n + 1 + remlen >= sizeof r->rest)
        return fail(r, CG_SD_TOO_LONG, 0, fd);
    memmove(r->rest + n + 1, end, remlen + 1);
    memcpy(r->rest, r->link, (size_t)n);
    r->rest[n] = '/';
    if (*orig > remlen)
        *orig = remlen;
    at_pop(r);
    if (n > 0 && r->link[0] == '/') {
        close(fd);
        put(r->at, sizeof r->at, 0, "/");
        return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    return fd;
}

/* Opens NAME in FD (no link followed), making it when it is the missing
 * last folder of the path itself (a link's missing target is not made). */
static int open_name(struct cg_safedir *r, int fd, const char *name, bool make)
{
    int nfd = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (nfd < 0 && errno == ENOENT && make) {
        if (mkdirat(fd, name, 0700) != 0 && errno != EEXIST) {
            at_push(r, name);
            return fail(r, CG_SD_CREATE, errno, -1);
        }
        nfd = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
    int err = errno;
    at_push(r, name);
    if (nfd < 0)
        return fail(r, err == ENOENT ? CG_SD_MISSING : err == ENOTDIR ? CG_SD_NOT_DIR : CG_SD_OPEN, err, -1);
    return nfd;
}

/* One step: NAME opened in FD and judged; returns the descriptor to go on
 * from (a folder), -1 when refused.  *p moves past what was used. */
static int step(struct cg_safedir *r, int fd, char **p, size_t *orig, int create, int *links)
{
    char *end = strchrnul(*p, '/'), name[256];
    size_t nl = (size_t)(end - *p);
    if (nl >= sizeof name)
        return fail(r, CG_SD_TOO_LONG, 0, fd);
    memcpy(name, *p, nl);
    name[nl] = 0;
    const char *q = end;
    while (*q == '/')
        q++;
    bool last = !*q, from_path = strlen(*p) <= *orig;
    *p = end;
    if (strcmp(name, ".") == 0)
        return fd;
    int nfd = open_name(r, fd, name, create && last && from_path);
    struct stat st;
    if (nfd < 0 || fstat(nfd, &st) != 0)
        return nfd < 0 ? fail(r, r->why, r->err, fd) : (close(nfd), fail(r, CG_SD_OPEN, errno, fd));
    if (S_ISLNK(st.st_mode)) {
        r->owner = (unsigned)st.st_uid;
        if (st.st_uid != geteuid() && st.st_uid != 0)
            return close(nfd), fail(r, CG_SD_LINK_FOREIGN, 0, fd);
        if (++*links > MAX_LINKS)
            return close(nfd), fail(r, CG_SD_LOOP, 0, fd);
        fd = expand_link(r, nfd, fd, end, orig);
        *p = r->rest;
        return fd < 0 && r->why == CG_SD_OK ? fail(r, CG_SD_OPEN, errno, -1) : fd;
    }
    close(fd);
    if (!S_ISDIR(st.st_mode))
        return fail(r, CG_SD_NOT_DIR, 0, nfd);
    r->owner = (unsigned)st.st_uid;
    enum cg_sd_why why = folder_rule(&st);
    return why ? fail(r, why, 0, nfd) : nfd;
}

int cg_safedir_open(const char *path, int create, struct cg_safedir *r)
{
    r->why = CG_SD_OK;
    r->err = 0;
    r->owner = 0;
    r->at[0] = 0;
    if (!path || path[0] != '/')
        return fail(r, CG_SD_RELATIVE, 0, -1);
    size_t len = strlen(path);
    if (len >= sizeof r->rest)
        return fail(r, CG_SD_TOO_LONG, 0, -1);
    memcpy(r->rest, path, len + 1);
    put(r->at, sizeof r->at, 0, "/");
    size_t orig = len; /* the last orig bytes of what is left are the path's own (not a link's) */
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), links = 0;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return fail(r, CG_SD_OPEN, errno, fd);
    r->owner = (unsigned)st.st_uid;
    if (folder_rule(&st) != CG_SD_OK)
        return fail(r, folder_rule(&st), 0, fd);
    for (char *p = r->rest; fd >= 0;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        fd = step(r, fd, &p, &orig, create, &links);
    }
    if (fd < 0)
        return -1;
    return final_rule(r, fd);
}

static const char *err_name(int err)
{
    switch (err) {
    case EROFS: return "read-only file system";
    case EACCES: return "permission denied";
    case EPERM: return "operation not permitted";
    case ENOSPC: return "no space left on device";
    case EDQUOT: return "disk quota exceeded";
    case ENOENT: return "no such file or directory";
    case ENOTDIR: return "not a directory";
    case ENAMETOOLONG: return "name too long";
    case ELOOP: return "too many levels of symbolic links";
    case EIO: return "input/output error";
    default: return NULL;
    }
}

static size_t put_err(char *out, size_t cap, size_t n, int err)
{
    const char *s = err_name(err);
    if (s)
        return put(out, cap, n, s);
    return put_u(out, cap, put(out, cap, n, "errno "), (unsigned long)err);
}

size_t cg_safedir_explain(const struct cg_safedir *r, const char *path, char *out, size_t cap)
{
    static const char *const what[] = {
        [CG_SD_OK] = "usable",
        [CG_SD_RELATIVE] = "not an absolute path (the working folder is unknown)",
        [CG_SD_TOO_LONG] = "a path, name or symlink target too long",
        [CG_SD_MISSING] = "missing (only the trace folder itself is made, never its parents)",
        [CG_SD_NOT_DIR] = "not a directory",
        [CG_SD_LINK_FOREIGN] = "a symlink of another user, not followed: owner uid ",
        [CG_SD_DIR_FOREIGN] = "a folder another user can change (neither ours nor root's): owner uid ",
        [CG_SD_DIR_SHARED] = "a folder other users can write (group or others, not sticky)",
        [CG_SD_LOOP] = "too many levels of symlinks",
        [CG_SD_CREATE] = "cannot be made: ",
        [CG_SD_NOT_OURS] = "not ours (the trace folder must be ours, or root's and sticky like /tmp): owner uid ",
        [CG_SD_NOT_WRITABLE] = "not writable: ",
        [CG_SD_OPEN] = "cannot be opened: ",
    };
    if (!cap)
        return 0;
    out[0] = 0;
    size_t n = put(out, cap, 0, path ? path : "");
    n = put(out, cap, n, ": ");
    if (r->at[0] && (!path || strcmp(r->at, path) != 0)) {
        n = put(out, cap, n, r->at);
        n = put(out, cap, n, ": ");
    }
    n = put(out, cap, n, (unsigned)r->why < sizeof what / sizeof what[0] ? what[r->why] : "refused");
    if (r->why == CG_SD_LINK_FOREIGN || r->why == CG_SD_DIR_FOREIGN || r->why == CG_SD_NOT_OURS)
        n = put_u(out, cap, n, r->owner);
    if (r->why == CG_SD_CREATE || r->why == CG_SD_NOT_WRITABLE || r->why == CG_SD_OPEN)
        n = put_err(out, cap, n, r->err);
    /* names from the environment and the file system: no terminal control characters */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
            out[i] = '?';
    return n;
}
