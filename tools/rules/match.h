/* match.h - what the match functions of rules.def share (the rules/ files,
 * one per concern; rules.h is what the layers above see).  Everything here
 * reads a trace; none of it changes one. */
#ifndef CONVGUARD_RULES_MATCH_H
#define CONVGUARD_RULES_MATCH_H
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

#define MIB (1ll << 20)

/* ---- facts.c: small helpers */
bool is_ev(json_t *e, const char *name);
/* an allocation's status says out of memory */
bool alloc_oom_status(json_t *ev);
/* the position of an event in its trace, -1 when not there */
long event_index(struct trace *t, json_t *ev);
/* the `lib` event of a path, NULL when none */
json_t *lib_event(struct trace *t, const char *path);
void set_str(json_t *vars, const char *k, const char *v);
void set_own(json_t *vars, const char *k, char *v); /* takes v */
void set_prog(json_t *vars, const struct trace *t);  /* {prog}: the command line */
void set_int(json_t *vars, const char *k, long long v);
bool dir_in_path_list(const char *dir, const char *list);
bool system_lib_dir(const char *dir); /* a folder of the distribution's packages */
const char *llp_of(struct trace *t);
long long cuda_major(struct trace *t);
/* "process 4242 (python3) holds 70.0 GiB" for up to 3 other holders, largest first */
char *holders_text(json_t *ev, long long own_pid, long long *top_pid);

/* ---- fw.c (frameworks_of, fw_label: rules.h) */
/* the first of a process's frameworks, in the order a report names them */
unsigned fw_primary(unsigned fws);
/* text for the framework of the process: jax, tf, torch, or other */
const char *fw_pick(struct trace *t, const char *jax, const char *tf, const char *torch, const char *other);

/* ---- versions.c: each file's own version */
/* cuDNN's version from the dotted names a file asked the loader for
 * (libcudnn_graph.so.9.19.0 -> 91900), -1 when it asked none */
long long cudnn_version_from_probes(struct trace *t, const char *caller);

/* ---- match functions of rules.def, by file.  A match function gets the
 * process (s->t[ti]) and the event the rule's pattern matched (NULL for rules
 * without a pattern); it says whether the rule applies and adds the facts its
 * texts need to `vars`. */
#define MATCH(name) bool name(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
/* code.c: GPU code and the driver's log */
MATCH(m_code_arch);
MATCH(m_ptx_version);
MATCH(m_code_no_fit);
MATCH(m_driver_error);
/* driver.c: no driver, the GPUs hidden */
MATCH(m_no_driver);
MATCH(m_gpu_hidden);
MATCH(m_device_denied);
MATCH(m_no_device_files);
MATCH(m_larger_than_gpu);
MATCH(m_framework_pool);
/* loading.c: a library that did not load */
MATCH(m_load_failed);
MATCH(m_load_other);
/* copies.c: versions and copies */
MATCH(m_sublib_mismatch);
MATCH(m_major_mismatch);
MATCH(m_copies);
MATCH(m_replaced);
/* resource.c: the GPU's memory, workspaces, algorithms */
MATCH(m_handle_held);
MATCH(m_handle_oom);
MATCH(m_handle_other);
MATCH(m_workspace);
MATCH(m_no_algo);
MATCH(m_conv_exec);
MATCH(m_alloc_fragmented);
MATCH(m_alloc_oom);
/* runtime.c: pools, GPU code, the GPU unused, fallbacks, crashes */
MATCH(m_own_pool);
MATCH(m_code_load);
MATCH(m_never_used);
MATCH(m_fallback);
MATCH(m_crash);
/* lookup.c: the headline, a failure the lookup before it explains */
MATCH(m_lookup_workspace);
/* env.c: driver, device, container, architecture, caches */
MATCH(m_module_mismatch);
MATCH(m_mig);
MATCH(m_arch);
MATCH(m_nv_cache);
MATCH(m_alloc_held);
MATCH(m_oom_held);
MATCH(m_ranks_share_gpu);
MATCH(m_two_frameworks);
MATCH(m_ptxas);
/* versions.c */
MATCH(m_shadowed);
MATCH(m_parts_split);
/* unused.c */
MATCH(m_gpu_not_used);
/* printed.c: what the program printed (convguard run's stderr capture) */
MATCH(m_pool_exhausted);
MATCH(m_cudnn_older_than_build);
MATCH(m_printed);
/* "; " and the fix of a framework's row of these kinds ("usage,device") the
 * process printed, "" when none */
char *printed_fix_of_kinds(struct trace *t, const char *kinds);
#endif
