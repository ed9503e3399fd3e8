/* host.h - host/: this machine and its running processes, read from outside
 * (tools/README.md): /proc/PID, the files a process mapped, the libraries on
 * disk and what each one answers when loaded in a forked child.  It calls
 * util/ only; the commands, model/ (a snapshot as a trace), analysis/ and
 * out/ read what it found.  Nothing here prints.  elf_file.h is its reader
 * of shared objects on disk. */
#ifndef CONVGUARD_HOST_H
#define CONVGUARD_HOST_H

#include "util/util.h"
#include "host/elf_file.h"

/* ---- proc.c: a running process, read from /proc/PID without stopping it:
 * no ptrace, no signal, nothing runs inside it */
struct proc_view {
    long long pid, uid, ppid;
    char root[64];       /* "" or "/proc/PID/root": where its paths are, seen from here */
    json_t *libs;        /* [{path, dir, file, soname, kind, family, label, version, version_text, version_source, ...}] */
    json_t *frameworks;  /* [{name, label, build, path}] */
    json_t *env;         /* the variables that matter (as the shim's start.env) */
    json_t *argv;
    char *exe, *cwd;
    json_t *shim;        /* {preloaded, path, trace_dir, trace} */
    json_t *gpu;         /* {known, ...} */
    bool kernel_thread;
    int error;           /* the errno of a map that could not be read */
};
/* why proc_view_read stopped */
enum proc_read {
    PROC_READ_OK,
    PROC_READ_NO_PROCESS, /* no such process (its map: ENOENT, ESRCH) */
    PROC_READ_DENIED,     /* its map refused (EACCES, EPERM): proc_denial_reason says why */
    PROC_READ_FAILED,     /* its map unreadable otherwise (p->error) */
    PROC_READ_EXITED,     /* it exited (or became a zombie) while it was read */
};
/* p->pid's map, libraries, frameworks, environment, argv, the shim's trace
 * and its GPU memory (NVML in a child); on an error nothing is left to free */
enum proc_read proc_view_read(struct proc_view *p);
void proc_view_free(struct proc_view *p);
/* why the kernel refused the map: the message's middle part */
const char *proc_denial_reason(long long pid, char *buf, size_t cap);
/* what convguard process pid is (its run, its signal relay), NULL: none of ours */
const char *proc_convguard_own(long long pid);

/* ---- libfile.c: what a mapped file is, read from the file (never loaded) */
struct libfile_kind {
    const char *prefix, *kind, *family, *label, *wheel;
};
const struct libfile_kind *libfile_kind_of(const char *base); /* NULL: no CUDA library */
/* one CUDA file a process (seen under root) maps: its kind, soname, version
 * (its data, its name, its wheel) and whether it is still the one on disk */
json_t *libfile_describe(const char *root, const struct libfile_kind *k, const char *path, bool deleted,
                         unsigned long long inode);
/* the cuDNN files of libs with no version of their own take one of the same folder */
void libfile_folder_versions(const char *root, json_t *libs);
/* a dispatcher's own version: the graph part's beside it, read from the file; -1 none */
long long libfile_cudnn_own_version(const char *dispatcher);

/* ---- frameworks.c: the frameworks, from the objects a process maps */
void framework_note(json_t *frameworks, const char *file); /* a mapped file that marks one */
/* each framework's build (cuda, cpu, unknown), once the whole map was read */
void framework_builds(const char *root, json_t *frameworks);

/* ---- probe.c: fn(arg) in a forked child, its JSON answer ({error} when it
 * died): loading a library can pull in others, start threads or crash, and
 * the command must survive it and stay free of them */
typedef json_t *(*probe_fn)(const char *arg);
json_t *probe_run(probe_fn fn, const char *arg);
json_t *probe_lib_version(const char *name); /* {path, file, version, ...} or {error}: dlopen(name) */
json_t *probe_nvml(const char *unused);      /* the driver and the GPUs with their memory holders */
/* the cuDNN the first framework of the active python3 would load (into path),
 * that framework's name (into who); false: none */
bool probe_framework_cudnn(char *path, size_t cap, char *who, size_t whocap);

/* ---- copies.c: the copies of cuDNN, the CUDA runtime and the driver on disk */
json_t *copies_dirs(void);            /* {realpath: {dir, sources}}: where to look */
json_t *copies_scan(json_t *dirs);    /* [{path, family, names, sources, version, ...}], by path */
json_t *copies_picks(json_t *copies); /* {bare name: what a program loading it gets} */
bool copies_asks_version(const char *name); /* a file whose version is asked (the others are listed) */

/* ---- conv.c: one tiny convolution through cuDNN, forward and both backward
 * passes, checked against a CPU reference; each step told as it starts and
 * ends through the functions handed in (printing is the command's) */
struct conv_report {
    void (*step)(const char *what);
    void (*ok)(const char *detail);
    void (*failed)(const char *why);
};
/* want: the libcudnn to load (NULL: the loader's); 0 and *worst (the largest
 * relative error), or 1 after a step failed */
int conv_run(const char *want, const struct conv_report *r, double *worst);
#endif
