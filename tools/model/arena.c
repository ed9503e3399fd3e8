/* arena.c - where the kept events of a trace live: one arena per trace.
 *
 * A trace's kept events are built by jansson, value by value: a line of
 * 700 bytes is some forty mallocs (an object, its hash table, a pair and a
 * value per key, a copy of each string), each with malloc's own header and
 * rounding, and freeing them took a sixth of a report's time.  While a
 * reader thread builds the events it keeps for good (trace_read.c), jansson
 * allocates from that trace's arena instead: pieces handed out one after
 * the other from large chunks, nothing freed alone, the chunks given back
 * when the trace is freed.
 *
 * Every other allocation of jansson (the analysis's facts, the report's
 * JSON, an event past the cap that is dropped again) is plain malloc.  To
 * tell the two apart when jansson frees a piece (a key added to a kept
 * event later grows its table and frees the old one), the chunks are carved
 * from one range of address space reserved at start: a pointer inside it is
 * an arena's, and freeing it does nothing; any other is malloc's.  Without
 * that range (mmap refused: a ulimit -v), every allocation is malloc's. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/model.h"

#define RESERVE (16ull << 30) /* address space only: a page costs memory once written */
#define CHUNK_MIN (16u << 10)

struct chunk {
    struct chunk *next;
    size_t size; /* of the whole chunk, this header included */
};

struct arena {
    struct chunk *chunks;
    char *at, *end;  /* what is left of the newest chunk */
    size_t bytes;    /* handed out */
};

static char *range, *range_next;
static pthread_mutex_t range_lock = PTHREAD_MUTEX_INITIALIZER;
/* chunks given back, by size: CHUNK_MIN << k */
#define CLASSES 16
static struct chunk *spare[CLASSES];
static _Thread_local struct arena *current;

static bool in_range(const void *p)
{
    return range && (const char *)p >= range && (const char *)p < range + RESERVE;
}

static void *json_alloc(size_t n)
{
    struct arena *a = current;
    if (!a)
        return malloc(n);
    n = (n + 7) & ~(size_t)7;
    if ((size_t)(a->end - a->at) < n) {
        size_t want = n + sizeof(struct chunk), size = CHUNK_MIN;
        int k = 0;
        /* each chunk of a trace at least as large as the one before: few chunks for a large trace */
        size_t last = a->chunks ? a->chunks->size : 0;
        while ((size < want || size < last) && k < CLASSES - 1)
            size <<= 1, k++;
        if (size < want)
            return malloc(n);
        struct chunk *c = NULL;
        pthread_mutex_lock(&range_lock);
        if (spare[k]) {
            c = spare[k];
            spare[k] = c->next;
        } else if (range_next + size <= range + RESERVE) {
            c = (struct chunk *)range_next;
            range_next += size;
        }
        pthread_mutex_unlock(&range_lock);
        if (!c)
            return malloc(n);
        c->size = size;
        c->next = a->chunks;
        a->chunks = c;
        a->at = (char *)(c + 1);
        a->end = (char *)c + size;
    }
    void *p = a->at;
    a->at += n;
    a->bytes += n;
    return p;
}

static void json_free(void *p)
{
    if (!in_range(p))
        free(p);
}

/* before anything allocates a JSON value: jansson must free with the
 * function it allocated with */
__attribute__((constructor)) static void arena_init(void)
{
    void *r = mmap(NULL, RESERVE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return;
    range = range_next = r;
    json_set_alloc_funcs(json_alloc, json_free);
}

struct arena *arena_new(void)
{
    struct arena *a = calloc(1, sizeof *a);
    if (!a)
        exit(2);
    return a;
}

struct arena *arena_enter(struct arena *a)
{
    struct arena *was = current;
    current = range ? a : NULL;
    return was;
}

size_t arena_bytes(const struct arena *a) { return a ? a->bytes : 0; }

/* a chunk given back: its memory to the system now, its addresses used again */
static void give_back(struct chunk *c)
{
    size_t size = c->size;
    int k = 0;
    while ((size_t)CHUNK_MIN << k < size)
        k++;
    madvise((char *)c + 4096, size - 4096, MADV_DONTNEED);
    pthread_mutex_lock(&range_lock);
    c->next = spare[k];
    spare[k] = c;
    pthread_mutex_unlock(&range_lock);
}

struct arena_mark arena_mark(const struct arena *a)
{
    return (struct arena_mark){a->chunks, a->at, a->bytes};
}

void arena_rewind(struct arena *a, struct arena_mark m)
{
    while (a->chunks && a->chunks != m.chunk) {
        struct chunk *c = a->chunks;
        a->chunks = c->next;
        give_back(c);
    }
    a->at = m.at;
    a->end = a->chunks ? (char *)a->chunks + a->chunks->size : NULL;
    a->bytes = m.bytes;
}

void arena_free(struct arena *a)
{
    if (!a)
        return;
    for (struct chunk *c = a->chunks, *next; c; c = next) {
        next = c->next;
        give_back(c);
    }
    free(a);
}
