/*
 * cvt.h - the converters behind capture_convert.
 *
 * Each converter reads one file and writes another, and returns a
 * cap_result (capture/cap_result.h), after one line on o->diag naming the
 * file and the problem for every error:
 *   CAP_OK        the output was written;
 *   CAP_E_IO      a file could not be opened, read or written: the output
 *                 (or a temporary file), or the input failing under the
 *                 reader (capture_convert opens the input before it
 *                 converts, so that a missing input is a usage error);
 *   CAP_E_NOMEM   out of memory;
 *   CAP_E_MISUSE  options that do not fit the input (a --gpu-thread that
 *                 names no thread, a slice with no frame);
 *   any other     the input is not of the format, damaged, cut short, of
 *                 a newer version, or over a limit of the capture format:
 *                 the reader's code where it read a capture.
 * tools/common/tool_exit.h (tool_exit_of_result) turns these into the
 * tools' exit status. Warnings (repaired nesting, unnamed events...) go to
 * o->diag, one line each, prefixed "warning: ".
 */
#ifndef CVT_H
#define CVT_H

#include <stdint.h>
#include <stdio.h>

#include <capture/cap_reader.h>

/* The codes converters returned before they returned cap_result, for a
 * converter not moved yet (puffin_in.c): a problem with the output, with
 * the input, or success. Remove once no converter uses them. */
#define CVT_OK CAP_OK
#define CVT_EXIT_OUTPUT CAP_E_IO
#define CVT_EXIT_INPUT CAP_E_CORRUPT

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
    const char *source; /* the input's name there; NULL: its file name */
    int all_names;      /* keep every name of the input, used or not */
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
    unsigned format_major;   /* capture out (--format-version): 0 the
                                writer's default (3.1), 1 writes 1.1, 2
                                writes 2.0, 3 writes 3.1, or 3.0 with
                                no_frame_list; see cap_writer_options */
    int no_frame_list;       /* capture out: --format-version 3.0 */
} cvt_options;

/* One conversion: in to out (out "-": standard output, for the formats
 * written as text). */
typedef cap_result (*cvt_fn)(const char *in, const char *out,
                             const cvt_options *o);

cap_result cvt_chrome_to_cap(const char *in, const char *out,
                             const cvt_options *o);
cap_result cvt_puffin_to_cap(const char *in, const char *out,
                             const cvt_options *o);
cap_result cvt_cap_to_chrome(const char *in, const char *out,
                             const cvt_options *o);
cap_result cvt_cap_to_folded(const char *in, const char *out,
                             const cvt_options *o);
/* A capture re-saved, recovered (a capture cut short gets its footer) or
 * sliced (o->slice). */
cap_result cvt_cap_to_cap(const char *in, const char *out,
                          const cvt_options *o);
/* Perfetto's protobuf trace (perfetto_out.c, docs/CONVERT.md); takes
 * o->slice (--frames, --seconds, --slowest) through a temporary capture. */
cap_result cvt_cap_to_perfetto(const char *in, const char *out,
                               const cvt_options *o);
/* The flame graph of the capture (analysis/render/svg.h, an_svg_flame). */
cap_result cvt_cap_to_svg(const char *in, const char *out,
                          const cvt_options *o);

/* One format capture_convert reads or writes: a row of its table
 * (capture_convert.c, cvt_formats). A capture is read by every exporter
 * and written by every importer; a conversion between two other formats
 * goes through a temporary capture. */
typedef struct cvt_format {
    const char *name;       /* for --from and --to: "json" */
    const char *extensions; /* file name endings, space-separated:
                               ".json .json.gz" */
    cvt_fn import;          /* this format -> capture, or NULL */
    cvt_fn export;          /* capture -> this format, or NULL */
} cvt_format;

/* A window of a capture (cvt_copy_reader): from skip_seconds after the
 * capture's `stream_start_ns` (a live stream's first complete moment; the
 * origin when absent), `seconds` long (0: no end) and at most `frames`
 * frames (0: no limit). Frames, scope trees (by their root) and counters
 * are kept when they begin inside it; GPU spans when the CPU frame that
 * recorded them is kept. progress(user, frames kept, done) is called for
 * each frame kept, and with done 1 once the window is complete and 8 more
 * frames have been read (the GPU spans of the last frames come that late:
 * stop reading then). */
typedef struct cvt_window {
    double skip_seconds;
    double seconds;
    uint64_t frames;
    void (*progress)(void *user, uint64_t frames, int done);
    void *user;
} cvt_window;

/* What cvt_copy_reader copied. */
typedef struct cvt_copy_result {
    uint64_t frames;         /* frames written */
    uint64_t first_frame;    /* indices of the first and last of them */
    uint64_t last_frame;
    int window_done;         /* the window was complete */
    int truncated;           /* the input ended without a footer */
    int has_footer;
    uint64_t dropped_scopes; /* counted as dropped in the input */
    uint64_t corrupt_chunks;
} cvt_copy_result;

/* As cvt_cap_to_cap from an open reader (which it closes), named `in` in
 * messages, keeping only `win` when not NULL. With a window, an input that
 * ends without a footer is not a warning (result->truncated says it), and
 * the output may hold a little more than the window: the scopes of the
 * frame in progress at its start, GPU spans of frames not yet known to be
 * outside it. Slicing the output to result->first_frame ..
 * result->last_frame (cvt_cap_to_cap, CVT_SLICE_FRAMES) leaves exactly the
 * window's frames with what belongs to them. result may be NULL. */
cap_result cvt_copy_reader(cap_reader *r, const char *in, const char *out,
                           const cvt_window *win, const cvt_options *o,
                           cvt_copy_result *result);

#endif
