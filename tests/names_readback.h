/*
 * names_readback.h - read a capture back into per-name scope counts, for
 * the runtime-name tests (C and C++). Header-only; plain asserts through
 * the caller's FAIL macro.
 */
#ifndef NAMES_READBACK_H
#define NAMES_READBACK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_reader.h"

#define NR_MAX 512

typedef struct nr_name {
    char text[64];
    char parent[64]; /* name of the parent of the first scope seen */
    uint32_t flags; /* cap_reader_name_flags at the end of the file */
    uint32_t id;
    size_t count;
    int64_t max_ns; /* longest duration */
} nr_name;

typedef struct nr_file {
    nr_name names[NR_MAX];
    size_t n;
    size_t scopes;
    cap_reader_stats stats;
    unsigned major, minor;
    int ok; /* read to CAP_DONE */
} nr_file;

static inline nr_name *nr_find(nr_file *f, const char *text)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->names[i].text, text) == 0)
            return &f->names[i];
    return NULL;
}

static inline size_t nr_count(nr_file *f, const char *text)
{
    nr_name *n = nr_find(f, text);
    return n ? n->count : 0;
}

/* Fill *f from the capture at path; 0 on success. */
static inline int nr_read(nr_file *f, const char *path)
{
    memset(f, 0, sizeof *f);
    cap_reader *r;
    char detail[256];
    if (cap_reader_open(&r, path, detail, sizeof detail) != CAP_OK) {
        fprintf(stderr, "cannot read %s: %s\n", path, detail);
        return -1;
    }
    cap_event ev;
    cap_result res;
    while ((res = cap_reader_next(r, &ev)) == CAP_OK) {
        if (ev.kind != CAP_EV_SCOPE)
            continue;
        f->scopes++;
        const char *text = cap_reader_name(r, ev.u.scope.name);
        if (!text)
            text = "(unnamed)";
        nr_name *n = nr_find(f, text);
        if (!n) {
            if (f->n == NR_MAX)
                continue;
            n = &f->names[f->n++];
            snprintf(n->text, sizeof n->text, "%s", text);
            const char *parent =
                ev.u.scope.depth
                    ? cap_reader_name(r, ev.u.scope.stack[ev.u.scope.depth - 1])
                    : "";
            snprintf(n->parent, sizeof n->parent, "%s", parent ? parent : "");
            n->id = ev.u.scope.name;
        }
        n->count++;
        if (ev.u.scope.end_ns - ev.u.scope.begin_ns > n->max_ns)
            n->max_ns = ev.u.scope.end_ns - ev.u.scope.begin_ns;
    }
    for (size_t i = 0; i < f->n; i++)
        f->names[i].flags = cap_reader_name_flags(r, f->names[i].id);
    cap_reader_version(r, &f->major, &f->minor);
    f->stats = *cap_reader_get_stats(r);
    f->ok = res == CAP_DONE;
    cap_reader_close(r);
    return f->ok ? 0 : -1;
}

#endif
