/* fw.c - which framework a process ran, and "you see" in its words.
 *
 * A rule's symptom lists what each framework prints ("TensorFlow: ...;
 * PyTorch: ...; JAX: ..."): the report puts the words of the framework this
 * process ran first and leaves out the other frameworks' words.  What the
 * process ran is read from its trace: the paths of the libraries it mapped,
 * the objects that called dlopen or allocated, the frameworks the shim saw
 * mapped at exit, and argv. */
#include "rules/match.h"

static const struct marker {
    unsigned fw;
    const char *needle;
} markers[] = {
    /* folder names of the packages, not of a venv that happens to be called "torch" */
    {FW_TORCH, "-packages/torch/"},     {FW_TORCH, "libtorch_"},          {FW_TORCH, "libc10_cuda"},
    {FW_TORCH, "torchrun"},             {FW_TF, "libtensorflow"},         {FW_TF, "-packages/tensorflow/"},
    {FW_TF, "_pywrap_tensorflow"},      {FW_JAX, "jax_cuda"},             {FW_JAX, "-packages/jaxlib/"},
    {FW_JAX, "xla_cuda_plugin"},        {FW_JAX, "xla_extension"},        {FW_JAX, "jax_plugins"},
    {FW_CUPY, "-packages/cupy"},        {FW_ORT, "onnxruntime"},          {FW_CT2, "ctranslate2"},
    {FW_TRITON, "-packages/triton/"},   {FW_TRITON, "libtriton"},
};

static unsigned fw_of_text(const char *s)
{
    unsigned f = 0;
    for (size_t i = 0; s && i < sizeof markers / sizeof markers[0]; i++)
        if (strstr(s, markers[i].needle))
            f |= markers[i].fw;
    return f;
}

/* names the shim writes in exit.frameworks (shim/shim.c) */
static unsigned fw_of_name(const char *n)
{
    static const struct {
        const char *name;
        unsigned fw;
    } names[] = {{"torch", FW_TORCH}, {"tensorflow", FW_TF}, {"jax", FW_JAX},
                 {"cupy", FW_CUPY},   {"onnxruntime", FW_ORT}, {"ctranslate2", FW_CT2}};
    for (size_t i = 0; n && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(n, names[i].name) == 0)
            return names[i].fw;
    return 0;
}

unsigned fw_of_path(const char *path) { return fw_of_text(path); }

unsigned frameworks_of(struct trace *t)
{
    static const char *const fields[] = {"path", "needed_by", "caller", "name"};
    /* the events only grow (verdicts, output lines): their number tells a memo that still holds */
    if (t->fw_known && t->fw_events == json_array_size(t->events))
        return t->fw;
    unsigned f = 0;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
            f |= fw_of_text(jstr(e, fields[k], NULL));
    }
    json_t *fw = jget(t->exit, "frameworks");
    for (size_t i = 0; i < json_array_size(fw); i++)
        f |= fw_of_name(json_string_value(json_array_get(fw, i)));
    /* argv last, and only when nothing else told: `python -c "import torch"` */
    json_t *argv = jget(t->start, "argv");
    for (size_t i = 0; !f && i < json_array_size(argv); i++) {
        const char *a = json_string_value(json_array_get(argv, i));
        f |= fw_of_text(a);
        if (a && strstr(a, "import torch"))
            f |= FW_TORCH;
        if (a && (strstr(a, "import tensorflow") || strstr(a, "from tensorflow")))
            f |= FW_TF;
        if (a && (strstr(a, "import jax") || strstr(a, "from jax")))
            f |= FW_JAX;
    }
    t->fw = f, t->fw_events = json_array_size(t->events), t->fw_known = true;
    return f;
}

const char *fw_label(unsigned fw)
{
    switch (fw) {
    case FW_TORCH: return "PyTorch";
    case FW_TF: return "TensorFlow";
    case FW_JAX: return "JAX";
    case FW_CUPY: return "CuPy";
    case FW_ORT: return "onnxruntime";
    case FW_CT2: return "CTranslate2";
    case FW_TRITON: return "Triton";
    default: return "";
    }
}

/* JAX and TensorFlow load PyTorch's libraries less often than the other way
 * round (a JAX job with torch imported for its data loader): the framework
 * that ran the failing work is most often the one named first here. */
unsigned fw_primary(unsigned fws)
{
    static const unsigned order[] = {FW_JAX, FW_TF, FW_TORCH, FW_CUPY, FW_ORT, FW_CT2};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (fws & order[i])
            return order[i];
    return 0;
}

const char *fw_pick(struct trace *t, const char *jax, const char *tf, const char *torch, const char *other)
{
    switch (fw_primary(frameworks_of(t))) {
    case FW_JAX: return jax;
    case FW_TF: return tf;
    case FW_TORCH: return torch;
    default: return other;
    }
}

/* The framework a "; "-separated part of a symptom speaks for: it starts
 * with the framework's name and a colon or a space ("TensorFlow: ...",
 * "JAX/XLA: ...", "TensorFlow lists no GPU").  0: every framework. */
static unsigned segment_fw(const char *s)
{
    static const struct {
        const char *label;
        unsigned fw;
    } labels[] = {{"PyTorch/Python", FW_TORCH}, {"PyTorch", FW_TORCH}, {"TensorFlow", FW_TF},
                  {"JAX/XLA", FW_JAX},         {"JAX", FW_JAX},       {"CuPy", FW_CUPY},
                  {"onnxruntime", FW_ORT},     {"CTranslate2", FW_CT2}};
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
        size_t n = strlen(labels[i].label);
        if (strncmp(s, labels[i].label, n) == 0 && (s[n] == ':' || s[n] == ' '))
            return labels[i].fw;
    }
    return 0;
}

char *frame_symptom(struct trace_set *set, size_t ti, char *text)
{
    unsigned fws = frameworks_of(&set->t[ti]);
    if (!text)
        return text;
    if (!fws) {
        /* a program of its own that calls CUDA/cuDNN (no framework, not Python): it sees the
         * status its calls returned; the frameworks' words stay, for a framework it embeds */
        const char *path = jstr(set->t[ti].start, "exe", "");
        const char *exe = base_name(path);
        if (*path != '/' || strncmp(exe, "python", 6) == 0) /* unknown, or Python */
            return text;
        char *own = xasprintf("%s (no framework seen) gets the status its own calls returned (\"in the trace\" "
                              "below); a framework would print: %s", exe, text);
        free(text);
        return own;
    }
    /* cut at "; " where a framework's part begins */
    const char *start[32];
    size_t len[32], n = 0;
    const char *p = text, *seg = text;
    while (n < 31) {
        const char *q = strstr(p, "; ");
        while (q && !segment_fw(q + 2))
            q = strstr(q + 2, "; ");
        start[n] = seg;
        len[n] = q ? (size_t)(q - seg) : strlen(seg);
        n++;
        if (!q)
            break;
        seg = p = q + 2;
    }
    if (n == 31) /* more parts than we keep: leave the text as it is */
        return text;
    bool own = false;
    for (size_t i = 0; i < n; i++)
        own |= (segment_fw(start[i]) & fws) != 0;
    if (!own)
        return text;
    struct sbuf b = {0};
    /* the process's own framework first (the primary one before the others it ran) */
    unsigned first = fw_primary(fws);
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < n; i++) {
            unsigned f = segment_fw(start[i]);
            bool take = pass == 0 ? f == first : pass == 1 ? (f & fws) && f != first : f == 0;
            if (take) {
                if (b.len)
                    sb_add(&b, "; ");
                sb_addn(&b, start[i], len[i]);
            }
        }
    free(text);
    return sb_take(&b);
}

/* ---- a fix in the words of the frameworks the process ran
 *
 * A rule's fix is "; "-separated parts; a part for some frameworks starts with
 * their names and a colon ("PyTorch: ...", "JAX and Triton: ...").  The
 * report keeps the parts of the frameworks this process ran and the parts for
 * everyone: a fix never names the knobs of a framework that is not there, and
 * a program of its own (no framework) gets the generic parts only. */

static const struct {
    const char *label;
    unsigned fw;
} fix_labels[] = {{"PyTorch", FW_TORCH}, {"TensorFlow", FW_TF}, {"JAX/XLA", FW_JAX},   {"JAX", FW_JAX},
                  {"XLA", FW_JAX | FW_TF}, {"CuPy", FW_CUPY}, {"Triton", FW_TRITON}, {"onnxruntime", FW_ORT},
                  {"CTranslate2", FW_CT2}};

static size_t fix_label_at(const char *s, unsigned *fw)
{
    for (size_t i = 0; i < sizeof fix_labels / sizeof fix_labels[0]; i++) {
        size_t n = strlen(fix_labels[i].label);
        if (strncmp(s, fix_labels[i].label, n) == 0) {
            *fw = fix_labels[i].fw;
            return n;
        }
    }
    return 0;
}

/* the frameworks a part is for ("JAX and Triton:" -> both), 0: everyone */
unsigned fix_part_frameworks(const char *s)
{
    static const char *const joins[] = {" and ", " or ", ", ", "/"};
    unsigned fws = 0, f;
    for (size_t n; (n = fix_label_at(s, &f)) > 0;) {
        fws |= f, s += n;
        if (*s == ':')
            return fws;
        size_t j = 0;
        while (j < sizeof joins / sizeof joins[0] && strncmp(s, joins[j], strlen(joins[j])) != 0)
            j++;
        if (j == sizeof joins / sizeof joins[0])
            return 0;
        s += strlen(joins[j]);
    }
    return 0;
}

unsigned fw_of_printed_row(struct trace *t, const char *row_fw)
{
    unsigned f = 0;
    if (!row_fw || !fix_label_at(row_fw, &f))
        return 0;
    /* XLA's words ("JAX/XLA", "XLA") are printed by TensorFlow too: JAX's only
     * when the trace shows neither */
    if (strstr(row_fw, "XLA"))
        return frameworks_of(t) & (FW_TF | FW_JAX) ? 0 : FW_JAX;
    return f;
}

/* the frameworks whose messages the process printed (its output events) */
static unsigned fw_of_printed(struct trace *t)
{
    unsigned fws = 0;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (strcmp(jstr(e, "ev", ""), "output") == 0)
            fws |= fw_of_printed_row(t, jstr(e, "framework", NULL));
    }
    return fws;
}

char *fix_for_frameworks(const char *fix, unsigned fws)
{
    struct sbuf b = {0};
    for (const char *seg = fix; seg && *seg;) {
        const char *next = strstr(seg, "; ");
        size_t len = next ? (size_t)(next - seg) : strlen(seg);
        unsigned f = fix_part_frameworks(seg);
        if (!f || (f & fws)) {
            if (b.len)
                sb_add(&b, "; ");
            else if (strncmp(seg, "or ", 3) == 0) /* the part before it was left out */
                seg += 3, len -= 3;
            sb_addn(&b, seg, len);
        }
        seg = next ? next + 2 : NULL;
    }
    return b.len ? sb_take(&b) : xstrdup("see the program's own message above");
}

char *frame_fix(struct trace_set *set, size_t ti, char *text)
{
    struct trace *t = &set->t[ti];
    unsigned fws = frameworks_of(t) | fw_of_printed(t);
    if (!text)
        return text;
    if (!fws) { /* a Python process whose framework is not known: every framework's part may be its own */
        const char *path = jstr(t->start, "exe", "");
        if (*path != '/' || strncmp(base_name(path), "python", 6) == 0)
            return text;
    }
    char *own = fix_for_frameworks(text, fws);
    free(text);
    return own;
}
