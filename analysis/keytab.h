/*
 * keytab.h - a table from a scope's (kind, key text) to an index: how
 * capture_diff matches a scope of one run with the same scope of another
 * in constant time (a linear scan made 65,536 names a 40 s diff).
 *
 * Open addressing with linear probing over a power-of-two array kept at
 * most half full. The table borrows the key strings: they must outlive it
 * (in capture_diff they belong to the loaded models). Not thread-safe.
 */
#ifndef AN_KEYTAB_H
#define AN_KEYTAB_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

typedef struct an_keytab_slot {
    uint64_t hash;   /* of kind and key; the slot is empty when key is NULL */
    const char *key; /* borrowed */
    an_kind kind;
    size_t value;
} an_keytab_slot;

typedef struct an_keytab {
    an_keytab_slot *slot;
    size_t cap; /* a power of two, or 0 before the first an_keytab_put */
    size_t n;   /* keys held */
} an_keytab;

/* An empty table (nothing allocated yet); free it with an_keytab_free. */
#define AN_KEYTAB_INIT {NULL, 0, 0}

/* Adds (kind, key) -> value unless the table holds (kind, key) already,
 * in which case the value first put stays. `key` is borrowed (not NULL).
 * Returns 1 when added, 0 when it was there, -1 when out of memory (the
 * table is unchanged then). */
int an_keytab_put(an_keytab *t, an_kind kind, const char *key, size_t value);

/* The value put with (kind, key), or -1 when the table has none. */
long an_keytab_find(const an_keytab *t, an_kind kind, const char *key);

/* Frees the table's array (not the keys); the table is empty again.
 * Accepts NULL. */
void an_keytab_free(an_keytab *t);

#endif
