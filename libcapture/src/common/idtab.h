/*
 * common/idtab.h - a table of fixed-size entries by 32-bit id whose
 * memory follows the ids used, not the largest id claimed.
 *
 * Ids below CAP__IDTAB_DIRECT live in pages of CAP__IDTAB_PAGE entries,
 * made (zeroed) when an id in them is first used: the ids a producer
 * hands out are dense, and a lookup is two loads. Ids from
 * CAP__IDTAB_DIRECT up (only a crafted or foreign file has them) get one
 * entry each, in blocks that never move, found through an open-addressing
 * hash: one id in each page up to 2^28 costs an entry, not a page
 * (issue 46: one name in each 1,024 ids cost capture_convert 3.1 GiB).
 *
 * Entries never move once made, so a pointer to one stays valid until
 * cap__idtab_free. Not thread-safe. Zero a cap__idtab and set esz to
 * start.
 */
#ifndef CAP_COMMON_IDTAB_H
#define CAP_COMMON_IDTAB_H

#include <stddef.h>
#include <stdint.h>

#define CAP__IDTAB_PAGE_BITS 10
#define CAP__IDTAB_PAGE (1u << CAP__IDTAB_PAGE_BITS)
#define CAP__IDTAB_DIRECT 65536u /* ids below it: in pages by id */

typedef struct cap__idtab {
    size_t esz;          /* bytes an entry: set before first use */
    uint8_t **pages;     /* ids < CAP__IDTAB_DIRECT: page or NULL */
    uint32_t pages_n;    /* pages the array holds (made or NULL) */
    uint8_t **blk;       /* far entries, CAP__IDTAB_PAGE a block */
    size_t blk_n, ent_n; /* blocks made, far entries made */
    uint32_t *hk, *hv;   /* hash: id (0 empty), entry index */
    size_t hcap, hn;
} cap__idtab;

/* The entry of an id of CAP__IDTAB_DIRECT or more, or NULL. */
void *cap__idtab_peek_far(const cap__idtab *t, uint32_t id);

/* Id's entry when made, else NULL. */
static inline void *cap__idtab_peek(const cap__idtab *t, uint32_t id)
{
    uint32_t pg = id >> CAP__IDTAB_PAGE_BITS;
    if (pg < t->pages_n && t->pages[pg])
        return t->pages[pg] + (size_t)(id & (CAP__IDTAB_PAGE - 1)) * t->esz;
    return id >= CAP__IDTAB_DIRECT ? cap__idtab_peek_far(t, id) : NULL;
}

/* Id's entry, made zeroed when new. NULL when out of memory or id is 0
 * or past max_id. */
void *cap__idtab_make(cap__idtab *t, uint32_t id, uint32_t max_id);

/* Id's entry, made when new (cap__idtab_make). */
static inline void *cap__idtab_slot(cap__idtab *t, uint32_t id,
                                    uint32_t max_id)
{
    void *e = cap__idtab_peek(t, id);
    return e ? e : cap__idtab_make(t, id, max_id);
}

/* Calls fn on every entry made, in no set order (ids below
 * CAP__IDTAB_DIRECT by page, then the far ones). */
void cap__idtab_each(const cap__idtab *t,
                     void (*fn)(void *ctx, uint32_t id, void *entry),
                     void *ctx);

/* The far ids made, sorted, into a new array the caller frees (*n of
 * them; NULL with *n 0 when none). -1 when out of memory. */
int cap__idtab_far_ids(const cap__idtab *t, uint32_t **ids, size_t *n);

/* Frees what the table holds (not the entries' own pointers: walk them
 * with cap__idtab_each first) and zeroes it but for esz. */
void cap__idtab_free(cap__idtab *t);

#endif
