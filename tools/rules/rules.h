/* rules.h - the rule table (rules.def) and what the layers above it read of
 * the rules: the table, what counts as a failure, the texts' expansion, and
 * the few facts the analysis shows beside a finding.  rules/ calls model/
 * and util/ only (tools/README.md); match.h is for the rules/ files alone. */
#ifndef CONVGUARD_RULES_H
#define CONVGUARD_RULES_H

#include "model/model.h"

/* ---- table.c: one row per RULE of rules.def, in its order */
struct rule {
    const char *id, *layer, *severity, *group, *pattern;
    bool (*match)(struct trace_set *s, size_t ti, json_t *ev, json_t *vars);
    const char *title, *symptom, *cause, *fix;
};
extern const struct rule rules[];
extern const size_t n_rules;
/* hands every pattern of both tables to the reader (trace_keep_pattern):
 * before the first trace is read */
void rules_keep_events(void);

/* ---- failure.c: the FAILURE rows */
struct failure_text { const char *pattern, *text; };
extern const struct failure_text failure_texts[];
extern const size_t n_failure_texts;
bool is_failure_event(struct trace *t, size_t i);          /* also: unresolved loads */
char *describe_event(json_t *ev);                          /* "#8 cudnnCreate -> ..." */

/* ---- expand.c */
char *expand(const char *tmpl, json_t *vars, json_t *ev);  /* {path[:fmt]} */

/* ---- code.c: the driver's messages that explain ev, quoted: "No device ..."
 * "Returning 209 ...", or NULL. */
char *driver_words(struct trace *t, json_t *ev);

/* ---- fw.c: which framework the process ran (from its libraries, the
 * objects that called, and argv); analysis/diagnose.c asks it too */
enum {
    FW_TORCH = 1 << 0,
    FW_TF = 1 << 1,
    FW_JAX = 1 << 2,
    FW_CUPY = 1 << 3,
    FW_ORT = 1 << 4,
    FW_CT2 = 1 << 5,
    FW_TRITON = 1 << 6,
};
unsigned frameworks_of(struct trace *t);
/* "PyTorch", "TensorFlow", "JAX", ... for one bit; "" for none */
const char *fw_label(unsigned fw);
/* the frameworks a path names (a library's or a caller's folder) */
unsigned fw_of_path(const char *path);
/* ---- fw.c: "you see" in the words of the process's framework (takes text) */
char *frame_symptom(struct trace_set *s, size_t ti, char *text);
/* ---- fw.c: a fix with only the "; "-parts of the frameworks the process ran
 * ("PyTorch: ...") and the parts for everyone (takes text) */
char *frame_fix(struct trace_set *s, size_t ti, char *text);
/* the same for a set of frameworks (FW_*) */
char *fix_for_frameworks(const char *fix, unsigned fws);
/* the framework a patterns.def row names ("PyTorch", "JAX/XLA") as the
 * process's own: XLA's rows count only where the trace shows no TensorFlow */
unsigned fw_of_printed_row(struct trace *t, const char *row_fw);
/* the frameworks a fix's part starts with ("JAX and Triton: ..."), 0: everyone */
unsigned fix_part_frameworks(const char *part);

/* ---- versions.c: a cuDNN file's own version (its lib event, its file name,
 * the names it probed), -1 unknown */
long long cudnn_file_version(struct trace *t, const char *path);

#endif
