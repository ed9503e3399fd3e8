/* test_safedir.c - the trace folder's rule (shim/core/safedir.c), the cases
 * the shell tests do not reach: a relative path, names and link targets too
 * long, a loop of links, a folder we may not search, ".." and relative link
 * targets walked physically, the one-level make, the explanation's words.
 * Run as root or not: every case here is about our own files.
 * Usage: test_safedir DIR (an empty folder of ours, not writable by others). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/safedir.h"

static int failed;
static struct cg_safedir sd;
static char base[1024];

/* PATH (under base when it does not start with '/') with CREATE: refused for
 * WHY (CG_SD_OK: accepted); the explanation holds WORDS when given */
static void expect(const char *path, int create, enum cg_sd_why why, const char *words)
{
    char p[8192], text[2048];
    if (path[0] == '/')
        snprintf(p, sizeof p, "%s", path);
    else
        snprintf(p, sizeof p, "%s/%s", base, path);
    int fd = cg_safedir_open(p, create, &sd);
    cg_safedir_explain(&sd, p, text, sizeof text);
    bool right = why == CG_SD_OK ? fd >= 0 : fd < 0 && sd.why == why;
    if (right && words)
        right = strstr(text, words) != NULL;
    printf("  %s test_safedir: %.70s%s -> %.120s\n", right ? "ok  " : "FAIL", path, create ? " (make)" : "",
           fd >= 0 ? "accepted" : text);
    if (fd >= 0)
        close(fd);
    failed += !right;
}

static void at(const char *name, char *out, size_t cap) { snprintf(out, cap, "%s/%s", base, name); }

int main(int argc, char **argv)
{
    if (argc != 2 || !realpath(argv[1], base))
        return 2;
    char a[1200], b[1200];
    at("d", a, sizeof a);
    mkdir(a, 0700);
    expect("d", 0, CG_SD_OK, NULL);
    int fd = cg_safedir_open("convguard-logs", 1, &sd);
    printf("  %s test_safedir: a relative path is refused\n", fd < 0 && sd.why == CG_SD_RELATIVE ? "ok  " : "FAIL");
    failed += !(fd < 0 && sd.why == CG_SD_RELATIVE);
    /* the one-level make: the last folder of the path, not its parents */
    expect("new", 1, CG_SD_OK, NULL);
    at("new", a, sizeof a);
    struct stat st;
    printf("  %s test_safedir: a made folder is 0700\n", stat(a, &st) == 0 && (st.st_mode & 0777) == 0700 ? "ok  " : "FAIL");
    failed += !(stat(a, &st) == 0 && (st.st_mode & 0777) == 0700);
    expect("missing/new", 1, CG_SD_MISSING, "missing: missing (only the trace folder itself is made");
    at("missing", a, sizeof a);
    printf("  %s test_safedir: ... its parent not made\n", access(a, F_OK) != 0 ? "ok  " : "FAIL");
    failed += access(a, F_OK) == 0;
    expect("new2", 0, CG_SD_MISSING, NULL); /* without CREATE nothing is made */
    /* "..", "." and repeated slashes, walked one name at a time */
    expect("d/../new//./", 0, CG_SD_OK, NULL);
    /* our own links: relative (from the link's folder) and absolute */
    at("rel", a, sizeof a);
    symlink("d/../new", a);
    expect("rel", 0, CG_SD_OK, NULL);
    at("abs", a, sizeof a);
    at("d", b, sizeof b);
    symlink(b, a);
    expect("abs/", 0, CG_SD_OK, NULL);
    /* a dangling link of ours: its target is not made */
    at("dangling", a, sizeof a);
    symlink("nowhere", a);
    expect("dangling", 1, CG_SD_MISSING, "nowhere: missing");
    at("nowhere", a, sizeof a);
    printf("  %s test_safedir: ... the link's target not made\n", access(a, F_OK) != 0 ? "ok  " : "FAIL");
    failed += access(a, F_OK) == 0;
    /* a loop of links */
    at("loop1", a, sizeof a);
    symlink("loop2", a);
    at("loop2", a, sizeof a);
    symlink("loop1", a);
    expect("loop1", 0, CG_SD_LOOP, "too many levels of symlinks");
    /* a file on the way, a file as the folder */
    at("file", a, sizeof a);
    close(open(a, O_CREAT | O_WRONLY, 0600));
    expect("file/sub", 1, CG_SD_NOT_DIR, "not a directory");
    expect("file", 1, CG_SD_NOT_DIR, NULL);
    /* too long: a name, a link's target filling the walk */
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    expect(name, 1, CG_SD_TOO_LONG, NULL);
    /* a folder we may not search (only without root: root searches anything) */
    if (geteuid() != 0) {
        at("closed", a, sizeof a);
        mkdir(a, 0700);
        at("closed/x", b, sizeof b);
        mkdir(b, 0700);
        chmod(a, 0600);
        expect("closed/x", 0, CG_SD_OPEN, "cannot be opened: permission denied");
        chmod(a, 0700);
    }
    /* a folder of ours others may write, not sticky; sticky: fine */
    at("open", a, sizeof a);
    mkdir(a, 0700);
    chmod(a, 0777);
    expect("open/x", 1, CG_SD_DIR_SHARED, "open: a folder other users can write");
    chmod(a, 01777);
    expect("open/x", 1, CG_SD_OK, NULL);
    chmod(a, 0700);
    /* a trace folder of ours we may not write (the owner's bits off; root
     * writes anything, so only the refusal without root is checked) */
    if (geteuid() != 0) {
        at("ro", a, sizeof a);
        mkdir(a, 0500);
        expect("ro", 0, CG_SD_NOT_WRITABLE, "not writable: permission denied");
    }
    /* control characters in a name are not passed on */
    char text[256];
    cg_safedir_open("rel\033[31m", 0, &sd);
    cg_safedir_explain(&sd, "rel\033[31m", text, sizeof text);
    printf("  %s test_safedir: no control characters in the explanation\n", !strchr(text, '\033') ? "ok  " : "FAIL");
    failed += strchr(text, '\033') != NULL;
    /* the explanation never runs past its buffer, and is terminated */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    size_t n = cg_safedir_explain(&sd, "/a/very/long/path/indeed", tiny, sizeof tiny);
    printf("  %s test_safedir: a short buffer: cut, terminated\n", n < sizeof tiny && tiny[n] == 0 ? "ok  " : "FAIL");
    failed += !(n < sizeof tiny && tiny[n] == 0);
    return failed ? 1 : 0;
}
