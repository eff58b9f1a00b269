/* keytab.c - (kind, key text) -> index, open addressing (keytab.h). */
#include "keytab.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a over the key's bytes, the kind folded in first. */
static uint64_t hash_of(an_kind kind, const char *key)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)kind;
    h *= 0x100000001b3ull;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h ^ (h >> 29);
}

/* The slot holding (kind, key), or the empty slot where it would go. */
static an_keytab_slot *probe(an_keytab_slot *slot, size_t cap, uint64_t h,
                             an_kind kind, const char *key)
{
    size_t i = (size_t)h & (cap - 1);
    while (slot[i].key && !(slot[i].hash == h && slot[i].kind == kind &&
                            strcmp(slot[i].key, key) == 0))
        i = (i + 1) & (cap - 1);
    return &slot[i];
}

/* The array grown to twice its size (16 slots at first). */
static int grow(an_keytab *t)
{
    size_t cap = t->cap ? 2 * t->cap : 16;
    if (cap > SIZE_MAX / sizeof *t->slot)
        return -1;
    an_keytab_slot *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i].key)
            *probe(s, cap, t->slot[i].hash, t->slot[i].kind,
                   t->slot[i].key) = t->slot[i];
    free(t->slot);
    t->slot = s;
    t->cap = cap;
    return 0;
}

int an_keytab_put(an_keytab *t, an_kind kind, const char *key, size_t value)
{
    if (2 * (t->n + 1) > t->cap && grow(t) != 0)
        return -1;
    uint64_t h = hash_of(kind, key);
    an_keytab_slot *s = probe(t->slot, t->cap, h, kind, key);
    if (s->key)
        return 0;
    *s = (an_keytab_slot){h, key, kind, value};
    t->n++;
    return 1;
}

long an_keytab_find(const an_keytab *t, an_kind kind, const char *key)
{
    if (!t->cap)
        return -1;
    const an_keytab_slot *s =
        probe(t->slot, t->cap, hash_of(kind, key), kind, key);
    return s->key ? (long)s->value : -1;
}

void an_keytab_free(an_keytab *t)
{
    if (!t)
        return;
    free(t->slot);
    t->slot = NULL;
    t->cap = t->n = 0;
}
