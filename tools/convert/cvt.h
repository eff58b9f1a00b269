/*
 * cvt.h - the converters behind capture_convert.
 *
 * Each converter reads one file and writes another. They share one
 * contract: return CVT_OK on success, CVT_EXIT_INPUT when the input cannot
 * be read or parsed (one line naming the file and the problem has been
 * printed to o->diag), CVT_EXIT_OUTPUT when the output cannot be written.
 * Warnings (repaired nesting, unnamed events...) go to o->diag, one line
 * each, prefixed "warning: ".
 */
#ifndef CVT_H
#define CVT_H

#include <stdio.h>

#define CVT_OK 0
#define CVT_EXIT_OUTPUT 1
#define CVT_EXIT_INPUT 2

typedef struct cvt_options {
    const char *frame_scope; /* --frame-scope NAME: each top-level occurrence
                                of NAME is one frame (importers), or NULL */
    const char *gpu_thread;  /* --gpu-thread NAME: import that thread as a
                                GPU track (Chrome JSON in), or NULL */
    const char *weight;      /* folded out: "self-us" (default) or "calls" */
    FILE *diag;              /* diagnostics; stderr in the tool */
    const char *title;       /* svg out: the picture's title (the file the
                                user named), or NULL for the input's path */
} cvt_options;

int cvt_chrome_to_cap(const char *in, const char *out, const cvt_options *o);
int cvt_puffin_to_cap(const char *in, const char *out, const cvt_options *o);
int cvt_cap_to_chrome(const char *in, const char *out, const cvt_options *o);
int cvt_cap_to_folded(const char *in, const char *out, const cvt_options *o);
int cvt_cap_to_cap(const char *in, const char *out, const cvt_options *o);
/* The flame graph of the capture (analysis/render/svg.h, an_svg_flame). */
int cvt_cap_to_svg(const char *in, const char *out, const cvt_options *o);

#endif
