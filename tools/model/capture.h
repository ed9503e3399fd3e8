/* capture.h - what `convguard run` keeps of the program's stderr, and how the
 * report reads it back.
 *
 * relay.c (writer, at the top: tools/relay.h): passes the program's stderr
 * through, byte for byte, and keeps its last part in memory; at the end it writes one capture file beside
 * the traces.  capture.c (reader): finds the capture of each traced process,
 * picks the lines worth quoting (known framework and CUDA error texts from
 * patterns.def, plus the final exception line) and hands them to the rules as
 * `output` events.  File format: docs/trace-format.md, "Captured stderr". */
#ifndef CONVGUARD_CAPTURE_H
#define CONVGUARD_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/model.h"

#define CAPTURE_TAIL (256u << 10)      /* the last bytes of all output kept in the file */
#define CAPTURE_WINDOW (8u << 20)      /* the last bytes kept in memory, to split per rank */
#define CAPTURE_RANK_TAIL (64u << 10)  /* per rank section */
#define CAPTURE_MAX_RANKS 64

/* ---- capture.c: the line scanner, shared with the writer (relay.c) */
/* One line with its rank prefix taken off: torchrun's `[rank3]:` / `[3]:` (global
 * rank) and `[default0]:` (role + local rank), srun --label's `3: `.  Sets
 * *kind to 'r' (global rank), 'l' (local rank), 's' (srun task = global
 * rank), 0 (none), *num to the number; returns the length of the prefix. */
size_t rank_prefix(const char *line, size_t len, char *kind, long *num);

/* ---- capture.c: the table of known error texts (patterns.def, format in its
 * header and in docs/cli.md, "What the program printed") */
struct message {
    const char *id, *kind, *framework, *text; /* what is matched, and who prints it */
    const char *title, *cause, *fix;          /* what the report says ("" for evidence only) */
    const char *confirm;                      /* a rules.def event clause the trace can agree with, or "" */
    const char *source;                       /* the public thread that shows message and cause */
};
extern const struct message messages[];
extern const size_t n_messages;
/* The first row whose text the line holds (case ignored, `*` any run of
 * characters), NULL when none; a row of kind "benign" is returned too. */
const struct message *message_of_line(const char *line);
/* The row of an `output` event's `pattern`, NULL for "exception" or unknown. */
const struct message *message_by_id(const char *id);

/* ---- capture.c: reading captures back */
/* Finds the capture files for these report arguments (a directory: its
 * *.stderr files, a few levels down; a trace file: those beside it), ties
 * each traced process to its capture and stream, and appends to the
 * process's events one `output_capture` event plus one `output` event per
 * quotable line (docs/cli.md lists their fields).  since > 0: captures of
 * runs that started before it are ignored. */
void capture_attach(struct trace_set *s, char **paths, int npaths, double since);
/* The process's `output_capture` event (its capture's file, stream, mode,
 * bytes), NULL when it has no capture. */
json_t *capture_marker(struct trace *t);
/* The lines "you see" quotes: the exception line and up to three quotable
 * lines before it (the framework's log near the failure); without an
 * exception, the last three.  Returns a new array of output events. */
json_t *capture_quoted(struct trace *t);
/* "you see" from the captured lines of process ti, or NULL when it has no
 * capture (then the rule's template stays). */
char *capture_symptom(struct trace *t);

#endif
