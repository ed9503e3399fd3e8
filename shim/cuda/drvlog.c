/* drvlog.c - the CUDA driver's own words about its errors.
 *
 * Since CUDA 12.9 the driver explains its errors in plain words (Error Log
 * Management): "No device code available for GPU ISA 90", "Returning 209
 * (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel", also for calls
 * that no hook of ours sees (a kernel lookup or launch).  Measured on the
 * H200: a callback registered with the real cuLogsRegisterCallback on the
 * host's libcuda.so.1, even before cuInit, receives them, and nothing is
 * called until an error happens.
 *
 * So: when a libcuda.so.1 is first recorded (libs.c: at start, or after the
 * dlopen that brought it in, whoever asked), one callback is registered with
 * that copy, found in its own symbol table; libcuda is never loaded by us,
 * CUDA_LOG_FILE and the program's own callbacks and dumps are left alone (the
 * driver calls every registered callback), and a driver without the function
 * gets nothing but one word in its `lib` event.
 *
 * Each message becomes a `driver_log` event, written at once: the callback
 * runs inside a driver call, on the calling thread, so it calls no CUDA
 * function, takes no lock, allocates nothing, and writes what fits a bounded
 * buffer with one write(2).  Caps per process: MAX_EVENTS events, MAX_SAME of
 * one text; the rest are counted (exit.driver_log).  The messages of a thread
 * wait for the failure event of that thread that follows (the hooked call
 * they belong to returns after them): cg_ev_end gives it their seqs
 * (attach, through cg_ev_on_failure).  Driver calls the shim makes itself (gpuinfo.c,
 * codeload.c) raise cg_drvlog_mute (defined in gpuinfo.c, the lowest of them): their messages are counted, not written. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cuda/cuda.h"

#define MAX_EVENTS 256   /* driver_log events written per process */
#define MAX_SAME 8       /* of one message text */
#define TEXTS 256        /* distinct texts remembered for MAX_SAME */
#define MAX_MESSAGE 1024 /* bytes of a message written */
#define MAX_COPIES 4     /* copies of libcuda.so.1 registered with */
#define TIE_NS 2000000000ull /* a thread's messages wait this long for its failure event */

static _Atomic uint64_t n_messages, n_slots, n_written, n_not_written, n_own;
static _Atomic uint64_t text_hash[TEXTS];
static _Atomic uint32_t text_count[TEXTS];

/* the copies registered with (written under libs.c's lock) */
static struct {
    uintptr_t base;
    char state[64];
} regs[MAX_COPIES];
static int nregs;

/* this thread's messages not yet tied to a failure event */
static __thread struct pending {
    int n;
    uint64_t seq[8];
    uint64_t t_ns;
    bool closed;     /* the group ended with "Returning N ... from fn" */
    bool hooked;     /* ...and fn is a function convguard wraps */
    char fn[64];
} pend;
static __thread bool in_callback;

/* ---- reading a message */
struct parsed {
    const char *text; /* the words, after a "[time][tid][CUDA][E][entry]" prefix if any */
    size_t len;
    char fn[64];       /* the API entry point the message names */
    char status_name[64];
    long long status;
    bool has_status;
};

static bool ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

static size_t ident_len(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && ident_char(s[n]))
        n++;
    return n;
}

static void copy_ident(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

static void parse(const char *m, size_t n, struct parsed *p)
{
    memset(p, 0, sizeof *p);
    /* the file format's prefix, should the callback get it: bracketed groups */
    while (n && m[0] == '[') {
        const char *close = memchr(m, ']', n < 64 ? n : 64);
        if (!close)
            break;
        size_t g = (size_t)(close - m - 1);
        if (g > 2 && m[1] == 'c' && m[2] == 'u' && ident_len(m + 1, g) == g)
            copy_ident(p->fn, sizeof p->fn, m + 1, g);
        n -= g + 2;
        m = close + 1;
    }
    while (n && (*m == ' ' || *m == '\t'))
        m++, n--;
    p->text = m;
    p->len = n;
    /* "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel" */
    static const char ret[] = "Returning ";
    for (size_t i = 0; i + sizeof ret - 1 < n; i++) {
        if (memcmp(m + i, ret, sizeof ret - 1) != 0)
            continue;
        size_t k = i + sizeof ret - 1;
        long long v = 0;
        size_t d0 = k;
        while (k < n && m[k] >= '0' && m[k] <= '9' && k - d0 < 9)
            v = v * 10 + (m[k++] - '0');
        if (k == d0)
            continue;
        p->status = v;
        p->has_status = true;
        if (k + 1 < n && m[k] == ' ' && m[k + 1] == '(') {
            size_t l = ident_len(m + k + 2, n - k - 2);
            if (l && k + 2 + l < n && m[k + 2 + l] == ')') {
                copy_ident(p->status_name, sizeof p->status_name, m + k + 2, l);
                k += 3 + l;
            }
        }
        static const char from[] = " from ";
        if (k + sizeof from - 1 < n && memcmp(m + k, from, sizeof from - 1) == 0) {
            k += sizeof from - 1;
            size_t l = ident_len(m + k, n - k);
            if (l)
                copy_ident(p->fn, sizeof p->fn, m + k, l);
        }
        break;
    }
}

static bool is_hooked(const char *fn)
{
    for (int h = 0; h < CG_NHOOKS; h++)
        if (strcmp(cg_hooks[h].name, fn) == 0)
            return true;
    return false;
}

/* Below MAX_SAME for this text?  Texts past the table's size count as new. */
static bool text_allowed(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    h |= 1; /* 0 marks a free slot */
    for (size_t i = 0; i < TEXTS; i++) {
        size_t k = (h + i) % TEXTS;
        uint64_t cur = atomic_load_explicit(&text_hash[k], memory_order_relaxed);
        if (cur == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&text_hash[k], &expected, h))
                cur = h;
            else
                cur = expected;
        }
        if (cur == h)
            return atomic_fetch_add_explicit(&text_count[k], 1, memory_order_relaxed) < MAX_SAME;
    }
    return true;
}

static void pending_add(uint64_t seq, const struct parsed *p, bool hooked)
{
    uint64_t now = cg_now_ns();
    if (pend.n && (pend.closed || now - pend.t_ns > TIE_NS))
        pend.n = 0; /* a new group: the last one ended, or is stale */
    if (!pend.n)
        pend.closed = pend.hooked = false, pend.fn[0] = 0;
    if (pend.n < (int)(sizeof pend.seq / sizeof pend.seq[0]))
        pend.seq[pend.n++] = seq;
    pend.t_ns = now;
    if (p->has_status) {
        pend.closed = true;
        pend.hooked = hooked;
        cg_strlcpy(pend.fn, p->fn, sizeof pend.fn);
    }
}

/* One message as a driver_log event, within the caps. */
static void emit(int level, const struct parsed *p, bool hooked, bool cut)
{
    if (atomic_load_explicit(&n_slots, memory_order_relaxed) >= MAX_EVENTS || !text_allowed(p->text, p->len) ||
        atomic_fetch_add_explicit(&n_slots, 1, memory_order_relaxed) >= MAX_EVENTS) {
        atomic_fetch_add_explicit(&n_not_written, 1, memory_order_relaxed);
        return;
    }
    char b[8192];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "driver_log");
    if (level == CU_LOG_LEVEL_ERROR || level == CU_LOG_LEVEL_WARNING)
        cg_ev_str(&e, "level", level == CU_LOG_LEVEL_ERROR ? "error" : "warning");
    else
        cg_ev_i64(&e, "level", level);
    cg_ev_strn(&e, "message", p->text, p->len < MAX_MESSAGE ? p->len : MAX_MESSAGE);
    if (cut || p->len > MAX_MESSAGE)
        cg_ev_bool(&e, "message_cut", true);
    if (p->fn[0])
        cg_ev_str(&e, "fn", p->fn);
    if (p->has_status) {
        cg_ev_i64(&e, "status", p->status);
        cg_ev_str(&e, "status_name", p->status_name[0] ? p->status_name : cg_cu_result_name((int)p->status));
        cg_ev_bool(&e, "hooked", hooked);
        if (p->status == 209) /* CUDA_ERROR_NO_BINARY_FOR_GPU: the images that hold nothing for this GPU */
            cg_codeload_ev_no_fit(&e);
    }
    bool was = in_callback;
    in_callback = true;
    cg_ev_end(&e);
    in_callback = was;
    atomic_fetch_add_explicit(&n_written, 1, memory_order_relaxed);
    pending_add(e.seq, p, hooked);
}

/* ---- explanations wait for their call's "Returning" line
 * The driver explains first and says "Returning N (...) from fn" last, in the
 * same call.  Only then is it known whether the call failed for real or
 * answered a question the normal way (PyTorch asks cuCtxGetDevice on threads
 * without a context: "No CUDA context is current to the calling thread",
 * then 201; measured on the H200, 36 messages in a conv training step that
 * worked).  So explanations are held, per thread, in a fixed pool (no
 * allocation, no lock), and written with the Returning line that follows, or
 * dropped with it; explanations no Returning line follows within NOTE_NS are
 * notes of calls that worked (JAX: "Duplicate entry kernels named ..."), not
 * written either.  A failure event of the thread writes what is held. */
#define HOLDS 16
#define HOLD_MSGS 8
#define HOLD_TEXT 1024
#define NOTE_NS 500000000ull
static struct hold {
    _Atomic int owner; /* tid, 0: free */
    int n;
    struct {
        uint64_t t_ns;
        int level;
        bool cut;
        size_t len;
        char fn[64];
        char text[HOLD_TEXT];
    } m[HOLD_MSGS];
} holds[HOLDS];
static __thread int my_hold = -1;
static _Atomic uint64_t n_probes, n_notes, n_held;

static struct hold *hold_claim(void)
{
    if (my_hold >= 0)
        return &holds[my_hold];
    int tid = (int)cg_gettid();
    for (int i = 0; i < HOLDS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&holds[i].owner, &expected, tid)) {
            holds[i].n = 0;
            my_hold = i;
            return &holds[i];
        }
    }
    return NULL; /* the pool is taken: explanations are written at once */
}

static void hold_release(struct hold *h)
{
    atomic_fetch_sub_explicit(&n_held, (uint64_t)h->n, memory_order_relaxed);
    h->n = 0;
    atomic_store(&h->owner, 0);
    my_hold = -1;
}

static void hold_drop(struct hold *h, _Atomic uint64_t *counter)
{
    atomic_fetch_add_explicit(counter, (uint64_t)h->n, memory_order_relaxed);
    hold_release(h);
}

static void hold_write(struct hold *h)
{
    for (int i = 0; i < h->n; i++) {
        struct parsed q = {.text = h->m[i].text, .len = h->m[i].len};
        cg_strlcpy(q.fn, h->m[i].fn, sizeof q.fn);
        emit(h->m[i].level, &q, false, h->m[i].cut);
    }
    hold_release(h);
}

/* Calls whose error is the normal answer to a question about state, not a
 * failure: "is a context current?" (cuCtxGet*: 201), "is it done?"
 * (*Query: 600 NOT_READY), "does the driver have this entry point?"
 * (cuGetProcAddress*: 500 NOT_FOUND), "is this a device pointer?"
 * (cuPointerGetAttribute*: 1). */
static bool is_probe(const char *fn, long long status)
{
    if (status == 201 && cg_starts_with(fn, "cuCtxGet"))
        return true;
    if (status == 600 && strstr(fn, "Query"))
        return true;
    if (status == 500 && cg_starts_with(fn, "cuGetProcAddress"))
        return true;
    return status == 1 && cg_starts_with(fn, "cuPointerGetAttribute");
}

static void on_message(void *data, CUlogLevel level, char *message, size_t length)
{
    (void)data;
    int saved = errno;
    atomic_fetch_add_explicit(&n_messages, 1, memory_order_relaxed);
    if (cg_drvlog_mute > 0 || !message) {
        atomic_fetch_add_explicit(&n_own, 1, memory_order_relaxed);
        errno = saved;
        return;
    }
    size_t n = strnlen(message, length ? length : 4 * MAX_MESSAGE);
    while (n && (message[n - 1] == '\n' || message[n - 1] == '\r' || message[n - 1] == ' '))
        n--;
    struct parsed p;
    parse(message, n, &p);
    uint64_t now = cg_now_ns();
    struct hold *h = my_hold >= 0 ? &holds[my_hold] : NULL;
    if (h && h->n && now - h->m[h->n - 1].t_ns > NOTE_NS)
        hold_drop(h, &n_notes), h = NULL;
    if (!p.has_status) {
        if (!h)
            h = hold_claim();
        if (!h) {
            emit(level, &p, false, false);
        } else {
            if (h->n == HOLD_MSGS) { /* the oldest was a note */
                memmove(&h->m[0], &h->m[1], sizeof h->m[0] * (HOLD_MSGS - 1));
                h->n--;
                atomic_fetch_add_explicit(&n_notes, 1, memory_order_relaxed);
                atomic_fetch_sub_explicit(&n_held, 1, memory_order_relaxed);
            }
            size_t k = p.len < HOLD_TEXT ? p.len : HOLD_TEXT;
            h->m[h->n].t_ns = now;
            h->m[h->n].level = level;
            h->m[h->n].cut = p.len > HOLD_TEXT;
            h->m[h->n].len = k;
            memcpy(h->m[h->n].text, p.text, k);
            cg_strlcpy(h->m[h->n].fn, p.fn, sizeof h->m[0].fn);
            h->n++;
            atomic_fetch_add_explicit(&n_held, 1, memory_order_relaxed);
        }
        errno = saved;
        return;
    }
    if (p.fn[0] && is_probe(p.fn, p.status)) {
        atomic_fetch_add_explicit(&n_probes, 1, memory_order_relaxed);
        if (h)
            hold_drop(h, &n_probes);
        errno = saved;
        return;
    }
    bool hooked = p.fn[0] && is_hooked(p.fn);
    if (p.status && !hooked)
        cg_failed(CG_NO_HOOK, CG_FAIL_REPORTED); /* a failure no hook saw: it counts in exit.failures, written or not */
    if (h)
        hold_write(h);
    emit(level, &p, hooked, false);
    errno = saved;
}

/* ---- tying a thread's messages to its failure event */
static bool driver_fn(const char *fn) { return fn[0] == 'c' && fn[1] == 'u' && fn[2] >= 'A' && fn[2] <= 'Z'; }

/* cg_ev_on_failure: appends "driver_log":[seq...] to a failure event */
static void attach(struct cg_ev *e)
{
    if (in_callback || e->overflow || e->depth)
        return;
    if (my_hold >= 0 && holds[my_hold].n)
        hold_write(&holds[my_hold]); /* explanations with no Returning line: this failure's */
    if (!pend.n)
        return;
    if (cg_now_ns() - pend.t_ns > TIE_NS) {
        pend.n = 0;
        return;
    }
    /* the event's own top-level "fn" (every failure event with one writes it first) */
    char fn[64] = "";
    static const char key[] = ",\"fn\":\"";
    for (size_t i = 0; i + sizeof key - 1 < e->len; i++)
        if (memcmp(e->buf + i, key, sizeof key - 1) == 0) {
            const char *s = e->buf + i + sizeof key - 1;
            size_t l = ident_len(s, e->len - (size_t)(s - e->buf));
            copy_ident(fn, sizeof fn, s, l);
            break;
        }
    if (!fn[0])
        return;
    /* A group that named its function belongs to that call, or to a runtime or
     * cuDNN call it happened inside; one without a name, to this failure. */
    if (pend.closed && driver_fn(fn) && strcmp(fn, pend.fn) != 0)
        return;
    if (pend.closed && !pend.hooked && driver_fn(fn))
        return;
    cg_ev_open(e, "driver_log", '[');
    for (int i = 0; i < pend.n; i++)
        cg_ev_u64(e, NULL, pend.seq[i]);
    cg_ev_close(e, ']');
    pend.n = 0;
}

/* ---- registration */
static void after_fork_child(void)
{
    atomic_store(&n_messages, 0);
    atomic_store(&n_slots, 0);
    atomic_store(&n_written, 0);
    atomic_store(&n_not_written, 0);
    atomic_store(&n_own, 0);
    for (size_t i = 0; i < TEXTS; i++) {
        atomic_store(&text_hash[i], 0);
        atomic_store(&text_count[i], 0);
    }
    pend.n = 0;
    /* the other threads' held messages were the parent's */
    for (int i = 0; i < HOLDS; i++)
        holds[i].n = 0, atomic_store(&holds[i].owner, 0);
    my_hold = -1;
    atomic_store(&n_probes, 0);
    atomic_store(&n_notes, 0);
    atomic_store(&n_held, 0);
}

void cg_drvlog_after_fork(void) { after_fork_child(); }

const char *cg_drvlog_on_load(const struct cg_obj *o)
{
    if (!atomic_load(&cg.traced) || !o->dyn)
        return NULL;
    for (int i = 0; i < nregs; i++)
        if (regs[i].base == o->base)
            return regs[i].state;
    if (nregs >= MAX_COPIES)
        return "not registered: too many copies of libcuda.so.1";
    CUresult (*reg)(CUlogsCallback, void *, CUlogsCallbackHandle *) =
        (CUresult(*)(CUlogsCallback, void *, CUlogsCallbackHandle *))cg_elf_sym(o, "cuLogsRegisterCallback", NULL);
    char *state = regs[nregs].state;
    regs[nregs].base = o->base;
    nregs++;
    if (!reg) {
        /* drivers before CUDA 12.9 */
        cg_strlcpy(state, "unavailable", sizeof regs[0].state);
        return state;
    }
    CUlogsCallbackHandle h = NULL;
    int saved = errno;
    cg_drvlog_mute++;
    CUresult r = reg(on_message, NULL, &h);
    cg_drvlog_mute--;
    errno = saved;
    if (r != CUDA_SUCCESS) {
        size_t k = cg_strlcpy(state, "refused: ", sizeof regs[0].state);
        cg_strlcpy(state + k, cg_cu_result_name(r), sizeof regs[0].state - k);
        return state;
    }
    cg_strlcpy(state, "registered", sizeof regs[0].state);
    __atomic_store_n(&cg_ev_on_failure, attach, __ATOMIC_RELEASE);
    return state;
}

void cg_drvlog_exit(struct cg_ev *e)
{
    bool any = false;
    for (int i = 0; i < nregs; i++)
        any |= strcmp(regs[i].state, "registered") == 0;
    if (!any)
        return;
    cg_ev_open(e, "driver_log", '{');
    cg_ev_u64(e, "messages", atomic_load(&n_messages));
    cg_ev_u64(e, "written", atomic_load(&n_written));
    cg_ev_u64(e, "not_written", atomic_load(&n_not_written));
    cg_ev_u64(e, "own", atomic_load(&n_own));
    cg_ev_u64(e, "probes", atomic_load(&n_probes));
    if (my_hold >= 0 && holds[my_hold].n) /* this thread's last explanations: no error followed */
        hold_drop(&holds[my_hold], &n_notes);
    cg_ev_u64(e, "notes", atomic_load(&n_notes));
    cg_ev_u64(e, "held", atomic_load(&n_held));
    cg_ev_close(e, '}');
}
