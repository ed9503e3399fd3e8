/* client_graph.c - a test client of cuDNN's graph (backend) API, calling it
 * the way cudnn-frontend does for PyTorch, JAX/XLA and TensorFlow.
 *
 * Built twice: client_graph reaches cuDNN like JAX/TF (dlopen RTLD_LOCAL +
 * dlsym; the library is $CLIENT_CUDNN, default "libcudnn.so.9"), and
 * client_graph_plt is linked against libcudnn.so.9 like PyTorch (-DCLIENT_PLT).
 *
 * Modes (argv[1]):
 *   conv       tensors x/w/y, a convolution, a forward operation, an
 *              operation graph; heuristics; one plan per engine config until
 *              one finalizes (PyTorch, benchmark off), or all of them with
 *              CLIENT_ALL_PLANS=1 (benchmark on); the tensors, operation and
 *              graph are destroyed before execution, as frameworks do; then
 *              CLIENT_EXECS executions (default 3) and cleanup.
 *              CLIENT_TAG=1 reads each plan's engine index back as
 *              cudnn-frontend does for its plan tag; CLIENT_NO_WS=1 gives no
 *              workspace; CLIENT_POPULATE=1 records with
 *              cudnnBackendPopulateCudaGraph instead of executing.
 *              CLIENT_WS_MAX_MB=N: the chosen plan's workspace above N MiB
 *              "cannot be allocated" (exit 3), as on a full GPU.
 *   manual     the same graph, engines built by hand by global index (0..n-1
 *              from CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT), no heuristics
 *   badtensor  a tensor finalized without dimensions, then without strides:
 *              the statuses and the reasons the program itself reads
 *   failures   calls refused in as many ways as a GPU-less host allows, each
 *              status printed with cudnnGetErrorString's name for it
 *   stress N [T]  N descriptor create/destroy pairs on T threads (default 1),
 *              each thread keeping 32 descriptors alive in rotation; prints
 *              ns per pair and resident memory growth on stderr
 * stdout is a canonical log (no addresses, no times): a run with the shim
 * and one without must print the same bytes. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudnn_double.h"

#define CUDNN_HEUR_MODE_A_ 1
#define CUDNN_CROSS_CORRELATION_ 1
#define CUDNN_DATA_FLOAT_ 0

static struct {
    cudnnStatus_t (*create)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t *);
    cudnnStatus_t (*destroy)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*finalize)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*set)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t, cudnnBackendAttributeType_t,
                         int64_t, const void *);
    cudnnStatus_t (*get)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t, cudnnBackendAttributeType_t,
                         int64_t, int64_t *, void *);
    cudnnStatus_t (*execute)(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t);
    cudnnStatus_t (*populate)(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t, cudaGraph_t);
    void (*last_error)(char *, size_t);
    const char *(*error_name)(cudnnStatus_t);
    cudnnStatus_t (*handle_create)(cudnnHandle_t *);
    cudnnStatus_t (*handle_destroy)(cudnnHandle_t);
} api;

#ifdef CLIENT_PLT
cudnnStatus_t cudnnBackendPopulateCudaGraph(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t,
                                            cudaGraph_t) __attribute__((weak));
static int load(void)
{
    api.create = cudnnBackendCreateDescriptor;
    api.destroy = cudnnBackendDestroyDescriptor;
    api.finalize = cudnnBackendFinalize;
    api.set = cudnnBackendSetAttribute;
    api.get = cudnnBackendGetAttribute;
    api.execute = cudnnBackendExecute;
    api.populate = cudnnBackendPopulateCudaGraph;
    api.last_error = cudnnGetLastErrorString;
    api.error_name = cudnnGetErrorString;
    api.handle_create = cudnnCreate;
    api.handle_destroy = cudnnDestroy;
    printf("route: plt\n");
    return 0;
}
#else
static int load(void)
{
    const char *lib = getenv("CLIENT_CUDNN");
    void *h = dlopen(lib && *lib ? lib : "libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    printf("route: dlsym, dlopen %s\n", h ? "ok" : "failed");
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return -1;
    }
#define SYM(field, name) *(void **)&api.field = dlsym(h, name)
    SYM(create, "cudnnBackendCreateDescriptor");
    SYM(destroy, "cudnnBackendDestroyDescriptor");
    SYM(finalize, "cudnnBackendFinalize");
    SYM(set, "cudnnBackendSetAttribute");
    SYM(get, "cudnnBackendGetAttribute");
    SYM(execute, "cudnnBackendExecute");
    SYM(populate, "cudnnBackendPopulateCudaGraph");
    SYM(last_error, "cudnnGetLastErrorString");
    SYM(error_name, "cudnnGetErrorString");
    SYM(handle_create, "cudnnCreate");
    SYM(handle_destroy, "cudnnDestroy");
    return api.create && api.destroy && api.finalize && api.set && api.get && api.last_error ? 0 : -1;
}
#endif

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}

/* The program's own view of a failure: status and cuDNN's reason. */
static cudnnStatus_t said(const char *what, cudnnStatus_t st)
{
    char reason[512] = "";
    if (st)
        api.last_error(reason, sizeof reason);
    printf("%s = %d%s%s\n", what, st, st ? " reason: " : "", reason);
    return st;
}

static cudnnBackendDescriptor_t make(int type)
{
    cudnnBackendDescriptor_t d = NULL;
    cudnnStatus_t st = api.create(type, &d);
    if (st)
        said("create", st);
    return d;
}

static void set_i64s(cudnnBackendDescriptor_t d, int attr, int n, const int64_t *v)
{
    api.set(d, attr, CUDNN_TYPE_INT64, n, v);
}

static void set_desc(cudnnBackendDescriptor_t d, int attr, cudnnBackendDescriptor_t v)
{
    api.set(d, attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

static cudnnBackendDescriptor_t tensor(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w)
{
    cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t dims[4] = {n, c, h, w}, strides[4] = {c * h * w, h * w, w, 1}, align = 16;
    int dt = CUDNN_DATA_FLOAT_;
    api.set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    set_i64s(t, CUDNN_ATTR_TENSOR_DIMENSIONS, 4, dims);
    set_i64s(t, CUDNN_ATTR_TENSOR_STRIDES, 4, strides);
    set_i64s(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, 1, &uid);
    set_i64s(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 1, &align);
    said("finalize tensor", api.finalize(t));
    return t;
}

struct graph {
    cudnnBackendDescriptor_t x, w, y, conv, op, g;
};

static void build_graph(cudnnHandle_t h, struct graph *G)
{
    G->x = tensor('x', 2, 3, 7, 7);
    G->w = tensor('w', 4, 3, 3, 3);
    G->y = tensor('y', 2, 4, 4, 4);
    G->conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    int64_t two = 2, pad[2] = {1, 1}, str[2] = {2, 2}, dil[2] = {1, 1};
    int mode = CUDNN_CROSS_CORRELATION_, comp = CUDNN_DATA_FLOAT_;
    set_i64s(G->conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 1, &two);
    api.set(G->conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    api.set(G->conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    set_i64s(G->conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 2, pad);
    set_i64s(G->conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, 2, pad);
    set_i64s(G->conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, 2, str);
    set_i64s(G->conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, 2, dil);
    said("finalize convolution", api.finalize(G->conv));
    G->op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    set_desc(G->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, G->x);
    set_desc(G->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, G->w);
    set_desc(G->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, G->y);
    set_desc(G->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, G->conv);
    float alpha = 1, beta = 0;
    api.set(G->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    api.set(G->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    said("finalize operation", api.finalize(G->op));
    G->g = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    api.set(G->g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    set_desc(G->g, CUDNN_ATTR_OPERATIONGRAPH_OPS, G->op);
    said("finalize operation graph", api.finalize(G->g));
}

static void drop_graph(struct graph *G)
{
    cudnnBackendDescriptor_t all[] = {G->g, G->op, G->conv, G->y, G->w, G->x};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i])
            api.destroy(all[i]);
    memset(G, 0, sizeof *G);
}

/* A plan from an engine config; its workspace, or -1 when it did not finalize. */
static cudnnBackendDescriptor_t plan_of(cudnnHandle_t h, cudnnBackendDescriptor_t cfg, int i, int64_t *ws)
{
    char what[64];
    cudnnBackendDescriptor_t p = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    api.set(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    set_desc(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
    snprintf(what, sizeof what, "finalize plan %d", i);
    *ws = -1;
    if (said(what, api.finalize(p))) {
        api.destroy(p);
        return NULL;
    }
    int64_t n = 0;
    api.get(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, ws);
    printf("plan %d workspace %lld\n", i, (long long)*ws);
    if (env_int("CLIENT_TAG", 0)) {
        cudnnBackendDescriptor_t e = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        int64_t idx = -1;
        api.get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e);
        api.get(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &idx);
        printf("plan %d tag eng%lld\n", i, (long long)idx);
        api.destroy(e);
    }
    return p;
}

static void run_plan(cudnnHandle_t h, cudnnBackendDescriptor_t plan, int64_t ws, int n)
{
    static float x[2 * 3 * 7 * 7], w[4 * 3 * 3 * 3], y[2 * 4 * 4 * 4];
    void *ptrs[3] = {x, w, y};
    int64_t uids[3] = {'x', 'w', 'y'};
    void *work = ws > 0 && !env_int("CLIENT_NO_WS", 0) ? malloc((size_t)ws) : NULL;
    cudnnBackendDescriptor_t vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set_i64s(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, 3, uids);
    api.set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    api.set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &work);
    said("finalize variant pack", api.finalize(vp));
    for (int i = 0; i < n; i++) {
        if (env_int("CLIENT_POPULATE", 0) && api.populate)
            said("populate cuda graph", api.populate(h, plan, vp, NULL));
        else
            said("execute", api.execute(h, plan, vp));
    }
    api.destroy(vp);
    free(work);
}

static int conv(int manual)
{
    cudnnHandle_t h = NULL;
    if (said("cudnnCreate", api.handle_create(&h)))
        return 1;
    struct graph G;
    build_graph(h, &G);
    int64_t n = 0;
    cudnnBackendDescriptor_t cfgs[64] = {0}, engines[64] = {0}, heur = NULL;
    if (manual) {
        api.get(G.g, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &n, &n);
        for (int64_t i = 0; i < n && i < 64; i++) {
            engines[i] = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
            set_desc(engines[i], CUDNN_ATTR_ENGINE_OPERATION_GRAPH, G.g);
            set_i64s(engines[i], CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 1, &i);
            api.finalize(engines[i]);
            cfgs[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
            set_desc(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE, engines[i]);
            api.finalize(cfgs[i]);
        }
    } else {
        heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        int hm = CUDNN_HEUR_MODE_A_;
        set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, G.g);
        api.set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
        said("finalize heuristics", api.finalize(heur));
        api.get(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL);
        n = n < 64 ? n : 64;
        for (int64_t i = 0; i < n; i++)
            cfgs[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        api.get(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, cfgs);
    }
    printf("engine configs: %lld\n", (long long)n);
    cudnnBackendDescriptor_t plans[64] = {0};
    int64_t ws[64];
    int chosen = -1, all = env_int("CLIENT_ALL_PLANS", 0);
    for (int i = 0; i < n && (all || chosen < 0); i++)
        if ((plans[i] = plan_of(h, cfgs[i], i, &ws[i])) && chosen < 0)
            chosen = i;
    /* frameworks keep the plan, not the graph they built it from */
    drop_graph(&G);
    if (heur)
        api.destroy(heur);
    if (chosen < 0) {
        printf("no plan finalized\n");
    } else {
        printf("chosen plan %d\n", chosen);
        /* CLIENT_WS_MAX_MB (for the fallback tests): a workspace above it cannot be allocated, as on a full GPU */
        if (getenv("CLIENT_WS_MAX_MB") && ws[chosen] > (int64_t)env_int("CLIENT_WS_MAX_MB", 0) * 1048576) {
            printf("workspace %lld cannot be allocated: out of memory\n", (long long)ws[chosen]);
            return 3;
        }
        if (all) /* benchmark: each candidate runs once, then the chosen one */
            for (int i = 0; i < n; i++)
                if (plans[i] && i != chosen)
                    run_plan(h, plans[i], ws[i], 1);
        run_plan(h, plans[chosen], ws[chosen], env_int("CLIENT_EXECS", 3));
    }
    for (int i = 0; i < 64; i++) {
        if (plans[i])
            api.destroy(plans[i]);
        if (cfgs[i])
            api.destroy(cfgs[i]);
        if (engines[i])
            api.destroy(engines[i]);
    }
    said("cudnnDestroy", api.handle_destroy(h));
    /* nothing the shim read back may be left for the program to find */
    char last[256] = "unchanged";
    api.last_error(last, sizeof last);
    printf("last error at the end: \"%s\"\n", last);
    return 0;
}

static int badtensor(void)
{
    cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    said("finalize tensor without dimensions", api.finalize(t));
    int64_t dims[4] = {1, 2, 3, 4};
    set_i64s(t, CUDNN_ATTR_TENSOR_DIMENSIONS, 4, dims);
    cudnnStatus_t st = api.finalize(t);
    /* read twice: the second read is empty, with or without the shim */
    said("finalize tensor without strides", st);
    char again[64] = "unchanged";
    api.last_error(again, sizeof again);
    printf("second read: \"%s\"\n", again);
    int64_t n = 0, v[4];
    said("get dimensions of an unfinalized tensor", api.get(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4,
                                                            &n, v));
    /* a failure the program does not read at once, a success, then the read */
    api.finalize(t);
    int64_t one = 1;
    api.set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &one);
    char late[128] = "unchanged";
    api.last_error(late, sizeof late);
    printf("read after a later success: \"%s\"\n", late);
    said("destroy", api.destroy(t));
    return 0;
}

static void named(const char *what, cudnnStatus_t st)
{
    char reason[256] = "";
    api.last_error(reason, sizeof reason);
    printf("%s: status %d %s reason: %s\n", what, st, api.error_name ? api.error_name(st) : "?", reason);
}

static int failures(void)
{
    cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR), d = NULL, p;
    int64_t n = 0, v[4] = {1, 2, 3, 4}, strides[4] = {24, 12, 4, 1}, align = 4;
    float f = 1;
    named("finalize an empty tensor", api.finalize(t));
    named("get from an unfinalized tensor", api.get(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, &n, v));
    named("set dimensions as floats", api.set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_FLOAT, 1, &f));
    named("destroy NULL", api.destroy(NULL));
    named("execute a NULL plan", api.execute(NULL, NULL, NULL));
    named("get from NULL", api.get(NULL, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, &n, v));
    named("create type 9999", api.create(9999, &d));
    p = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    named("finalize a plan without engine config", api.finalize(p));
    set_i64s(t, CUDNN_ATTR_TENSOR_DIMENSIONS, 4, v);
    set_i64s(t, CUDNN_ATTR_TENSOR_STRIDES, 4, strides);
    set_i64s(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 1, &align);
    said("finalize a complete tensor", api.finalize(t));
    named("set after finalize", api.set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, v));
    api.destroy(p);
    api.destroy(t);
    return 0;
}

/* ---- stress */
static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

static void *stress_thread(void *arg)
{
    cudnnBackendDescriptor_t live[32] = {0};
    long n = (long)(size_t)arg, bad = 0;
    for (long i = 0; i < n; i++) {
        int k = (int)(i & 31);
        if (live[k] && api.destroy(live[k]))
            bad++;
        live[k] = NULL;
        if (api.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &live[k]))
            bad++;
    }
    for (int k = 0; k < 32; k++)
        if (live[k] && api.destroy(live[k]))
            bad++;
    return (void *)(size_t)bad;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int stress(long n, int threads)
{
    pthread_t t[64];
    long bad = 0;
    threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    stress_thread((void *)(size_t)10000); /* warm up: the library's and the table's first pages */
    long rss0 = rss_kb();
    double t0 = now_s();
    if (threads == 1) { /* on this thread: no new stack or malloc arena in the numbers */
        bad = (long)(size_t)stress_thread((void *)(size_t)n);
    } else {
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, stress_thread, (void *)(size_t)(n / threads));
        for (int i = 0; i < threads; i++) {
            void *r;
            pthread_join(t[i], &r);
            bad += (long)(size_t)r;
        }
    }
    double dt = now_s() - t0;
    long rss1 = rss_kb();
    printf("stress: %ld pairs, %ld failed\n", n, bad);
    fprintf(stderr, "stress_ns_per_pair %.1f\nstress_rss_growth_kb %ld\n", dt * 1e9 / (double)n, rss1 - rss0);
    return bad != 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s conv|manual|badtensor|failures|stress N [T]\n", argv[0]);
        return 2;
    }
    if (load())
        return 1;
    if (!strcmp(argv[1], "conv"))
        return conv(0);
    if (!strcmp(argv[1], "manual"))
        return conv(1);
    if (!strcmp(argv[1], "badtensor"))
        return badtensor();
    if (!strcmp(argv[1], "failures"))
        return failures();
    if (!strcmp(argv[1], "stress"))
        return stress(argc > 2 ? atol(argv[2]) : 1000000, argc > 3 ? atoi(argv[3]) : 1);
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
}
