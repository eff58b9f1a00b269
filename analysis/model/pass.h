/* pass.h - the reports' parts of a load, as passes the loader runs
 * without knowing the reports (issue 41).
 *
 * A pass is what a report asks of the load beyond the model every report
 * reads (frames, rows, tree, counters): --split's frame populations,
 * --over-time's bins and their sums, --wait's flags. Each says when it is
 * wanted (from an_options' hints), sets up its state once the frames are
 * known (before the events), and finishes it once every event is in and
 * the names are resolved. What a pass keeps per value is summed where the
 * values are summarised (window.c's emit reads m->pop_of, m->ot_bin, the
 * frame-work sums); a chunked load's chunks keep exact series (no budget),
 * so a pass acts on the merged model and keeps no state per chunk.
 *
 * The loader (load.c) calls ml_passes_frames and ml_passes_finish; the
 * passes run in the order of passes.c's table. A new one is a file with
 * its functions and one entry in that table. Private to analysis/model/.
 */
#ifndef AN_MODEL_PASS_H
#define AN_MODEL_PASS_H

struct loader;

typedef struct ml_pass {
    const char *name;
    /* 1 when this load needs the pass */
    int (*wanted)(const struct loader *L);
    /* the frames known, no event read yet: 0, or -1 out of memory (NULL:
       nothing to set up) */
    int (*frames)(struct loader *L);
    /* every event in, names resolved: 0, or -1 out of memory (NULL:
       nothing to finish) */
    int (*finish)(struct loader *L);
} ml_pass;

extern const ml_pass ml_pass_split;     /* pass_split.c */
extern const ml_pass ml_pass_over_time; /* pass_over_time.c */
extern const ml_pass ml_pass_waits;     /* waits.c */

/* Every wanted pass's frames step, in table order; stops at the first
 * failure. 0, or -1 when out of memory. */
int ml_passes_frames(struct loader *L);

/* Every wanted pass's finish step, in table order; stops at the first
 * failure. 0, or -1 when out of memory. */
int ml_passes_finish(struct loader *L);

#endif
