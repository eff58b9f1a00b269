/*
 * frame_counters.h - each counter's value per frame, for the --frames
 * report (issue #17: the device's clocks and temperatures beside each
 * frame's scopes).
 *
 * A frame's value of a counter is the mean of the counter's samples whose
 * time falls inside the frame, [begin_ns, end_ns). A frame with no sample
 * inside it takes the last sample before its begin, marked as carried
 * (AN_FC_CARRIED): counters are sampled slower than frames run (the
 * device sampler every 100 ms), so most frames of a 60 fps game carry.
 * A frame before the counter's first sample has no value (AN_FC_NONE,
 * value NAN). Samples whose value is not finite are left out. The rule is
 * docs/EVIDENCE.md's "Counters per frame" section.
 *
 * Which counters: every one in the capture, or those whose name matches
 * one of the globs given (fnmatch(3), as --counter GLOB). The text report
 * shows at most AN_FC_TEXT_MAX of them unless globs chose them; CSV
 * carries all the chosen ones.
 */
#ifndef AN_FRAME_COUNTERS_H
#define AN_FRAME_COUNTERS_H

#include <stddef.h>

#include "model.h"

/* Counters the text report shows when no glob chose them (the first ones
 * in the capture's order; a line says how many more there are). */
#define AN_FC_TEXT_MAX 4

typedef enum an_fc_state {
    AN_FC_NONE = 0, /* no sample inside the frame or before it: NAN */
    AN_FC_MEAN,     /* the mean of the samples inside the frame */
    AN_FC_CARRIED   /* the last sample before the frame (none inside) */
} an_fc_state;

typedef struct an_frame_counter {
    const char *name;      /* borrowed from the model */
    double *value;         /* per frame (an_capture.frames order); NAN
                              when state is AN_FC_NONE */
    unsigned char *state;  /* per frame: an_fc_state */
} an_frame_counter;

typedef struct an_frame_counters {
    an_frame_counter *c;   /* the chosen counters, in the capture's order */
    size_t n;
    size_t nframes;
    size_t ntext;          /* how many of c[] the text report shows: all
                              when globs chose them, else at most
                              AN_FC_TEXT_MAX */
    int chosen;            /* 1 when globs chose the counters */
} an_frame_counters;

/* Each chosen counter's value per frame of m. globs[0..nglobs) choose the
 * counters by name (none: every counter). Returns CAP_OK; CAP_E_NOMEM
 * (then *out holds nothing to free); CAP_E_MISUSE when globs were given
 * and no counter matches any of them. The result borrows names from m and
 * is freed with an_frame_counters_free (which accepts a zeroed or freed
 * result). */
cap_result an_frame_counters_compute(an_frame_counters *out,
                                     const an_capture *m,
                                     const char *const *globs, size_t nglobs);

void an_frame_counters_free(an_frame_counters *fc);

#endif
