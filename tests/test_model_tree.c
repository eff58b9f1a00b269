/*
 * test_model_tree - the call tree an_load builds, on one thread and on two
 * (an_options.threads), against one worked out here from the events alone:
 * every CPU node in the order its path first appears (a scope's ancestors
 * before it), with its calls, total and self time, and whether an ancestor
 * has its name (an_node.recursive); and each row by name the same with the
 * tree (the scope's node says whether it recurses) as without it
 * (no_tree: the scope's stack says it). Every capture under fixtures/ and
 * a generated one: three threads of recursive stacks, up to 40 deep, over
 * many batches, a thread renamed half-way.
 *
 * Usage: test_model_tree FIXTURES_DIR
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap_reader.h"
#include "capture/cap_writer.h"
#include "cap_files.h"
#include "model.h"

static int failures, checked;

static void fail(const char *path, const char *what)
{
    fprintf(stderr, "FAIL %s: %s\n", path, what);
    failures++;
}

static void sat_add(int64_t *acc, int64_t v)
{
    if (__builtin_add_overflow(*acc, v, acc))
        *acc = v > 0 ? INT64_MAX : INT64_MIN;
}

/* ---- the tree from the events ------------------------------------------ */

typedef struct tpath {
    char *key; /* root name, then each name id */
    uint64_t calls;
    int64_t total_ns, self_ns;
    int recursive;
} tpath;

typedef struct ttree {
    tpath *p;
    size_t n, cap;
    uint32_t *ht; /* index + 1 */
    size_t ht_cap;
} ttree;

static uint64_t fnv(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* The path `key`, made (in order) when missing; NULL out of memory. */
static tpath *tree_get(ttree *t, const char *key)
{
    if ((t->n + 1) * 2 > t->ht_cap) {
        size_t nc = t->ht_cap ? t->ht_cap * 2 : 1024;
        uint32_t *h = calloc(nc, sizeof *h);
        if (!h)
            return NULL;
        for (size_t i = 0; i < t->n; i++) {
            size_t k = fnv(t->p[i].key) & (nc - 1);
            while (h[k])
                k = (k + 1) & (nc - 1);
            h[k] = (uint32_t)i + 1;
        }
        free(t->ht);
        t->ht = h;
        t->ht_cap = nc;
    }
    size_t k = fnv(key) & (t->ht_cap - 1);
    for (; t->ht[k]; k = (k + 1) & (t->ht_cap - 1))
        if (strcmp(t->p[t->ht[k] - 1].key, key) == 0)
            return &t->p[t->ht[k] - 1];
    if (an_grow((void **)&t->p, &t->cap, t->n + 1, sizeof *t->p) != 0)
        return NULL;
    tpath *p = &t->p[t->n];
    memset(p, 0, sizeof *p);
    if (!(p->key = strdup(key)))
        return NULL;
    t->ht[k] = (uint32_t)++t->n;
    return p;
}

static void tree_free(ttree *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->p[i].key);
    free(t->p);
    free(t->ht);
}

/* Every CPU scope of `path`, one event at a time, into t: 0, or -1 when
 * the file cannot be read (as an_load would fail). */
static int tree_of_events(const char *path, ttree *t)
{
    cap_reader *r;
    char detail[320];
    if (cap_reader_open(&r, path, detail, sizeof detail) != CAP_OK)
        return -1;
    char *root[64] = {0}; /* by tid, as named at its first scope */
    char key[16384];
    cap_event ev;
    int rc = 0;
    for (;;) {
        cap_result res = cap_reader_next(r, &ev);
        if (res == CAP_DONE)
            break;
        if (res == CAP_E_CORRUPT || res == CAP_E_TRUNCATED)
            continue;
        if (res != CAP_OK) {
            rc = -1;
            break;
        }
        if (ev.kind != CAP_EV_SCOPE)
            continue;
        const cap_ev_scope *e = &ev.u.scope;
        if (e->tid >= 64) {
            rc = -1;
            break;
        }
        if (!root[e->tid]) {
            const char *nm = cap_reader_thread_name(r, e->tid);
            char buf[32];
            if (!nm || !*nm) {
                snprintf(buf, sizeof buf, "thread %u", e->tid);
                nm = buf;
            }
            if (!(root[e->tid] = strdup(nm))) {
                rc = -1;
                break;
            }
        }
        size_t len = (size_t)snprintf(key, sizeof key, "%s", root[e->tid]);
        tpath *p = NULL;
        for (uint32_t j = 0; j <= e->depth && len + 16 < sizeof key; j++) {
            uint32_t id = j < e->depth ? e->stack[j] : e->name;
            len += (size_t)snprintf(key + len, sizeof key - len, "/%u", id);
            if (!(p = tree_get(t, key))) {
                rc = -1;
                break;
            }
        }
        if (rc != 0 || !p) {
            rc = -1;
            break;
        }
        p->calls++;
        sat_add(&p->total_ns, cap_duration_ns(e->begin_ns, e->end_ns));
        sat_add(&p->self_ns,
                cap_self_ns(e->begin_ns, e->end_ns, e->children_ns));
        for (uint32_t j = 0; j < e->depth; j++)
            p->recursive |= e->stack[j] == e->name;
    }
    for (size_t i = 0; i < 64; i++)
        free(root[i]);
    cap_reader_close(r);
    return rc;
}

/* ---- the model's ------------------------------------------------------- */

/* Node i's key as tree_of_events makes it. */
static void node_key(const an_capture *m, uint32_t i, char *key, size_t size)
{
    uint32_t ids[2048];
    size_t n = 0;
    uint32_t k = i;
    while (!m->nodes[k].is_root && n < 2048) {
        ids[n++] = m->nodes[k].name_id;
        k = m->nodes[k].parent;
    }
    size_t len = (size_t)snprintf(key, size, "%s", m->nodes[k].name);
    while (n-- > 0 && len + 16 < size)
        len += (size_t)snprintf(key + len, size - len, "/%u", ids[n]);
}

static void check(const char *path)
{
    ttree t = {0};
    int readable = tree_of_events(path, &t) == 0;
    for (int threads = 1; threads <= 2; threads++) {
        an_options o = {.threads = threads};
        an_capture *m = NULL, *flat = NULL;
        char d[320];
        if (an_load(&m, path, &o, d, sizeof d) != CAP_OK) {
            if (readable)
                fail(path, "the load fails where the events read");
            continue;
        }
        checked++;
        char key[16384], msg[16600];
        size_t k = 0;
        for (uint32_t i = 0; readable && i < m->nnodes; i++) {
            const an_node *n = &m->nodes[i];
            if (n->is_root || n->kind != AN_CPU)
                continue;
            node_key(m, i, key, sizeof key);
            if (k >= t.n || strcmp(t.p[k].key, key) != 0) {
                snprintf(msg, sizeof msg,
                         "%d thread(s): CPU node %u (%s) is not path %zu "
                         "in the order of first appearance (%s)",
                         threads, i, key, k, k < t.n ? t.p[k].key : "none");
                fail(path, msg);
                break;
            }
            const tpath *p = &t.p[k++];
            if (n->calls != p->calls || n->total_ns != p->total_ns ||
                n->self_ns != p->self_ns || n->recursive != p->recursive) {
                snprintf(msg, sizeof msg,
                         "%d thread(s): node %s has %" PRIu64 " calls, "
                         "%" PRId64 "/%" PRId64 " ns, recursive %d; the "
                         "events give %" PRIu64 ", %" PRId64 "/%" PRId64
                         ", %d",
                         threads, key, n->calls, n->total_ns, n->self_ns,
                         n->recursive, p->calls, p->total_ns, p->self_ns,
                         p->recursive);
                fail(path, msg);
                break;
            }
        }
        if (readable && k != t.n && !failures) {
            snprintf(msg, sizeof msg,
                     "%d thread(s): %zu CPU nodes, the events give %zu paths",
                     threads, k, t.n);
            fail(path, msg);
        }
        /* rows by name: the recursion from the node (tree) or the stack */
        an_options q = {.threads = threads, .no_tree = 1};
        if (an_load(&flat, path, &q, d, sizeof d) != CAP_OK ||
            flat->nscopes != m->nscopes) {
            fail(path, "no_tree: another load or another row count");
        } else {
            for (size_t i = 0; i < m->nscopes; i++) {
                const an_scope *x = &m->scopes[i], *y = &flat->scopes[i];
                if (x->kind != y->kind || x->name_id != y->name_id ||
                    x->calls != y->calls || x->total_ns != y->total_ns ||
                    x->self_ns != y->self_ns) {
                    snprintf(msg, sizeof msg,
                             "%d thread(s): row %zu (%s) differs with the "
                             "tree (total %" PRId64 ") and without (%" PRId64
                             ")",
                             threads, i, x->name ? x->name : "?",
                             x->total_ns, y->total_ns);
                    fail(path, msg);
                    break;
                }
            }
        }
        an_free(flat);
        an_free(m);
    }
    tree_free(&t);
}

/* ---- a generated capture ----------------------------------------------- */

/* Three threads (one renamed half-way), stacks up to 40 deep drawn from 7
 * names (most recurse), runs of ends and new branches, 4 KiB blocks: many
 * batches and slots (the two-thread load's ring turns over). */
static void generated(const char *path)
{
    cap_writer_options wo = {0};
    wo.clock_source = "tsc";
    wo.tick_period_ns = 1.0;
    wo.origin_tick = 1000;
    wo.block_bytes = 4096;
    cap_writer *w;
    if (cap_writer_open_path(&w, path, &wo) != CAP_OK) {
        fail(path, "cannot write the generated capture");
        return;
    }
    for (uint32_t i = 1; i <= 7; i++) {
        char b[16];
        snprintf(b, sizeof b, "n%u", i);
        cap_writer_name(w, i, b, NULL, 0);
    }
    cap_writer_thread(w, 0, "main");
    cap_writer_thread(w, 1, "worker");
    cap_writer_thread(w, 2, "worker"); /* shares worker's root */
    uint64_t t = 5000, seed = 12345;
    for (uint64_t f = 0; f < 1200; f++) {
        uint64_t fb = t;
        if (f == 600)
            cap_writer_thread(w, 1, "worker renamed");
        for (int k = 0; k < 10; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t tid = (uint32_t)(seed >> 40) % 3;
            uint32_t depth = 0, goal = 1 + (uint32_t)(seed >> 58) % 40;
            /* up and down: each step opens or closes, until all close */
            for (int step = 0; step < 120 && (depth || step == 0); step++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                int open = depth < goal && (depth == 0 || (seed >> 61) < 5);
                if (open) {
                    uint32_t name = 1 + (uint32_t)(seed >> 45) % 7;
                    cap_writer_scope_begin(w, tid, name, t += 1 + (seed >> 50) % 9);
                    depth++;
                } else {
                    cap_writer_scope_end(w, tid, t += 1 + (seed >> 52) % 7);
                    depth--;
                }
            }
            while (depth) {
                cap_writer_scope_end(w, tid, t += 3);
                depth--;
            }
        }
        cap_writer_frame(w, f, fb, t += 10);
    }
    if (cap_writer_close(w) != CAP_OK) {
        fail(path, "cannot close the generated capture");
        return;
    }
    check(path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_model_tree FIXTURES_DIR\n");
        return 2;
    }
    cap_files_walk(argv[1], check);
    char path[64];
    if (cap_files_temp(path, sizeof path, "test_model_tree") != 0)
        return 2;
    generated(path);
    unlink(path);
    if (failures) {
        fprintf(stderr, "%d failure(s) in %d loads\n", failures, checked);
        return 1;
    }
    printf("ok: %d loads, each tree the one the events give\n", checked);
    return 0;
}
