/* files.c - opening what a folder of traces holds without being stopped by
 * it: only regular files are read, and opening one never waits (a FIFO
 * named like a trace would block open(2) until someone writes to it); each
 * folder and file is taken once however many links lead to it (a `latest ->
 * .` in a trace folder made one process five). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

const char *file_kind(mode_t mode)
{
    return S_ISREG(mode)    ? "a regular file"
           : S_ISDIR(mode)  ? "a folder"
           : S_ISFIFO(mode) ? "a FIFO (named pipe)"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
                            : "not a regular file";
}

/* A descriptor of the regular file at `path`, *st its fstat; -1 with errno,
 * EINVAL when it is no regular file (*st then says what it is: file_kind).
 * O_NONBLOCK: a FIFO or a device swapped in after the caller's stat() opens
 * at once and is refused by the fstat() below instead of blocking. */
int open_regular(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    bool stated = fstat(fd, st) == 0;
    if (!stated || !S_ISREG(st->st_mode)) {
        int e = stated ? EINVAL : errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* ---- a set of (device, inode): open addressing, grown at half full */
static size_t id_hash(dev_t dev, ino_t ino, size_t cap)
{
    uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15u ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4fu;
    return (size_t)(h >> 17) & (cap - 1);
}

static void id_put(struct id_set *s, dev_t dev, ino_t ino)
{
    size_t i = id_hash(dev, ino, s->cap);
    while (s->slot[i].used)
        i = (i + 1) & (s->cap - 1);
    s->slot[i] = (struct file_id){dev, ino, true};
    s->n++;
}

bool id_set_add(struct id_set *s, dev_t dev, ino_t ino)
{
    if (s->cap) {
        for (size_t i = id_hash(dev, ino, s->cap); s->slot[i].used; i = (i + 1) & (s->cap - 1))
            if (s->slot[i].dev == dev && s->slot[i].ino == ino)
                return false;
    }
    if (2 * (s->n + 1) > s->cap) {
        struct id_set old = *s;
        s->cap = s->cap ? s->cap * 2 : 64;
        s->n = 0;
        s->slot = calloc(s->cap, sizeof *s->slot);
        if (!s->slot)
            exit(2);
        for (size_t i = 0; i < old.cap; i++)
            if (old.slot[i].used)
                id_put(s, old.slot[i].dev, old.slot[i].ino);
        free(old.slot);
    }
    id_put(s, dev, ino);
    return true;
}

void id_set_free(struct id_set *s)
{
    free(s->slot);
    memset(s, 0, sizeof *s);
}

/* A file read whole, up to about max bytes (a /proc file, which stat calls
 * empty, is read to its end); NULL with errno. */
char *file_read_all(const char *path, size_t *len, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct sbuf b = {0};
    char buf[65536];
    ssize_t n = 0;
    while (b.len < max && ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0)
            sb_addn(&b, buf, (size_t)n);
    int e = errno;
    close(fd);
    if (n < 0 && e != EINTR) {
        free(b.s);
        errno = e;
        return NULL;
    }
    *len = b.len;
    return sb_take(&b);
}
