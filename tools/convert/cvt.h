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

#include <stdint.h>
#include <stdio.h>

#define CVT_OK 0
#define CVT_EXIT_OUTPUT 1
#define CVT_EXIT_INPUT 2

/* A window of a capture's frames to keep (capture_convert --frames,
 * --seconds, --slowest; capture -> capture only). */
typedef enum cvt_slice_kind {
    CVT_SLICE_NONE = 0,
    CVT_SLICE_FRAMES,  /* frame indices in [a, b) */
    CVT_SLICE_SECONDS, /* frames beginning in [a, b) s after the first */
    CVT_SLICE_SLOWEST  /* the n slowest frames, each with `context` frames
                          either side */
} cvt_slice_kind;

typedef struct cvt_slice {
    cvt_slice_kind kind;
    double a, b;       /* b = INFINITY when open-ended */
    uint64_t n;        /* --slowest N */
    uint64_t context;  /* --context K (default 2) */
    const char *text;  /* the option as given, recorded in the metadata */
} cvt_slice;

typedef struct cvt_options {
    const cvt_slice *slice;  /* NULL or kind NONE: the whole capture */
    const char *frame_scope; /* --frame-scope NAME: each top-level occurrence
                                of NAME is one frame (importers), or NULL */
    const char *const *gpu_threads; /* --gpu-thread NAME, repeatable: each
                                named thread becomes a GPU track of its own
                                (Chrome JSON in); n_gpu_threads of them */
    size_t n_gpu_threads;
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
