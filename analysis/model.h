/*
 * model.h - one capture, reduced to what every report needs.
 *
 * an_load (a path) and an_load_fd (an open file) read a capture's frames
 * (from a footer's list, else from its blocks), then everything, and keep, in memory proportional to frames x distinct
 * scopes (never to the number of scope events):
 *   - the frames (begin, end, GPU time attributed to each),
 *   - one row per scope (track kind + name, or call path): calls, total
 *     time (recursion not double-counted), self time, and its self time in
 *     each frame (sparse),
 *   - the call tree merged by path (roots are thread and GPU track names),
 *   - counter samples, metadata and the reader's damage statistics.
 *
 * Attribution rules (documented in the README and tested):
 *   - a CPU scope belongs to the frame whose [begin, end) contains the
 *     scope's begin; a scope that runs past that frame's end has its self
 *     time shared out: in each frame it overlaps, its time there less its
 *     children's time there (so no frame holds more of a thread's time
 *     than the frame lasted); self time outside every frame counts in the
 *     totals but in no frame;
 *   - a GPU span belongs to the CPU frame that recorded it;
 *   - a frame's GPU time is the sum of the self times of its measured GPU
 *     spans (nested spans are not counted twice).
 *
 * The analysis layer never parses command lines and never prints on its
 * own: reports take the FILE * to write to.
 */
#ifndef AN_MODEL_H
#define AN_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/cap_reader.h"
#include "hist.h"

typedef enum an_kind { AN_CPU = 0, AN_GPU = 1 } an_kind;

/* A frame's times: 16 bytes, the model's memory that grows with frames.
 * Its index and its GPU time are beside it in an_capture, read with
 * an_frame_index, an_frame_gpu_ns and an_frame_has_gpu. */
typedef struct an_frame {
    int64_t begin_ns, end_ns;
} an_frame;

typedef struct an_scope {
    an_kind kind;
    uint32_t name_id;
    char *name;       /* display name; "<unnamed #id>" when unnamed */
    char *path;       /* call path "thread;a;b" when by_path, else NULL */
    int unnamed;
    int is_wait;      /* the producer tagged the name as a wait (time spent
                         blocked, not working): cap_reader_name_flags */
    uint64_t calls;
    int64_t total_ns; /* recursion-free: nested repeats of the same name
                         under themselves are not added again */
    int64_t self_ns;
    /* self time per frame, sparse, sorted by frame position (empty when
       the capture's series are summarised: an_capture.approx) */
    uint32_t *pf_frame;
    int64_t *pf_self;
    size_t pf_n, pf_cap;
    int pf_sorted;
    /* an_capture.approx only: the row's self time in each frame it ran
       in, as a histogram (its sum is exact) */
    an_hist pf_hist;
    /* ... and over the fastest and the slowest quarter of frames by frame
       time (--split), when the load was asked (an_options.split_hint):
       two histograms, owned; every row has them once a load made
       an_capture.pop_of, NULL otherwise (a row costs 8 bytes for them
       where the load needs none: issue 46) */
    an_hist *pf_pop;
    /* ... and in each --over-time bin (an_options.over_time_hint): NULL
       until the row's first value, then an_capture.ot_nbins of them */
    an_hist *pf_bin;
} an_scope;

typedef struct an_node {
    uint32_t parent;  /* UINT32_MAX for a root */
    an_kind kind;
    int is_root;      /* a thread or GPU track, not a scope */
    uint32_t row1;    /* while loading, a CPU node's row in scopes + 1
                         (0: not looked up yet) */
    char *name;
    uint32_t name_id;
    uint32_t depth;   /* roots 0 */
    int is_wait;      /* as an_scope.is_wait */
    int recursive;    /* an ancestor (not the root) has its kind and name:
                         a row by name adds its total once, at the
                         outermost */
    uint64_t calls;
    int64_t total_ns, self_ns;
    uint32_t first_child, next_sibling; /* UINT32_MAX: none */
} an_node;

typedef struct an_sample {
    int64_t time_ns;
    double value;
} an_sample;

typedef struct an_counter {
    char *name;
    an_sample *s;
    size_t n, cap;
} an_counter;

struct an_capture;

typedef struct an_options {
    double skip_seconds; /* ignore everything before the first frame's
                            begin + skip_seconds */
    int by_path;         /* scope rows keyed by call path, not by name */
    FILE *progress;      /* progress lines (a terminal), or NULL */
    int threads;         /* 0 or N >= 2: a file with a footer's block
                            index is read in chunks (cap_chunks.h) on N
                            threads (0: CAP_READ_THREADS, else the
                            machine's cores; load/driver.h), merged in
                            chunk order: the same model whatever the
                            number of threads. Where chunks cannot be
                            merged exactly (a stream, no index, GPU
                            tracks, damage, unnamed ids, a renamed
                            thread, a scope spanning frames across a
                            chunk's edge, a scan, --frames' reread, a
                            summary_fn without summary_reset) the file
                            is read whole as with 1
                            or 2. 1: the file read whole on the calling
                            thread (the reference the chunks are tested
                            against); 2 on a file read whole: a second
                            thread reads and decodes ahead (same model,
                            byte for byte), and 0 does so for files over
                            8 MiB on a machine of 2 cores or more, unless
                            CAP_READ_THREADS is 1 */
    size_t series_budget; /* 0: keep every row's self time in every frame
                            (memory grows with rows x frames; what
                            capture_diff, --frames and the fleet need).
                            N > 0: keep them until they hold N values, then
                            summarise them (an_capture.approx): memory
                            bounded by rows and frames apart, quantiles
                            from histograms (hist.h); the environment's
                            CAP_SERIES_BUDGET=N overrides a non-zero N
                            (tests) */
    int split_hint;      /* with a budget: also summarise each row over
                            the fastest and the slowest quarter of frames
                            (an_split_compute by frame time then needs no
                            second read of the file) */
    int over_time_hint;  /* with a budget: also summarise each row over
                            the bins that an_over_time_compute(m,
                            ot_bins, ot_bin_seconds) will use (at most
                            AN_OT_HINT_MAX_BINS of them, at most
                            AN_OT_HINT_MAX_BYTES), and sum every
                            CPU row per frame, so that it needs no second
                            read of the file */
    int frame_work;      /* with a budget, once the series are
                            summarised: also sum every CPU row that is
                            not a wait per frame, into frame_work_ms (as
                            over_time_hint sums ot_cpu_ms, without its
                            bins, in floats): capture_diff's groups of
                            CPU work under a cap (diff.h, an_diff_mix) */
    int ot_bins;
    double ot_bin_seconds;
    size_t ot_hint_bytes; /* 0: AN_OT_HINT_MAX_BYTES (tests set less) */
    const char *const *wait_globs; /* names matching one of these shell
                            globs are waits, as an_mark_waits marks them
                            (read_capture --wait): done by the load, and
                            known to the over_time_hint as rows appear;
                            borrowed until an_free, for the scans) */
    size_t nwait_globs;
    int no_tree;         /* no call tree: m->nodes holds the thread and
                            GPU track roots only, with no sums (a report
                            that reads no tree: --frames); ignored with
                            by_path */
    int series_reread;   /* with a budget: past it, keep no summaries
                            either (an_capture.reread): the values are
                            kept packed (an_capture.pack,
                            AN_PACK_MAX_BYTES; past it in a temporary
                            file), else every per-frame
                            value is read again from the file when asked
                            for (an_series_walk). For --frames, whose
                            values are exact whatever the budget; the
                            ranking, --split and --over-time need the
                            summaries and must not set it */
    size_t pack_bytes;   /* 0: AN_PACK_MAX_BYTES (tests set less) */
    int pack_no_spill;   /* 1: past pack_bytes the pack is given up (the
                            file read again) instead of going on in a
                            temporary file (tests of the second read) */
    /* with a budget, once the series are summarised: called with each
       row's final self time in a frame (!= 0) as it goes into the row's
       histogram, on the loading thread, with the model being loaded (its
       frames final); a row's frames come in ascending order, but for
       late values (late_values). NULL: none. capture_diff's block sums
       (diff.h) */
    void (*summary_fn)(void *ctx, const struct an_capture *m, size_t row,
                       size_t frame, int64_t self_ns);
    void *summary_ctx;
    /* with summary_fn: forget what summary_fn was given, before an_load
       loads the file again (frames_from_blocks below); NULL: an_load
       does not load again, and the model keeps a damaged block's
       frames */
    void (*summary_reset)(void *ctx);
    int frames_from_blocks; /* 1: the frames from the blocks, never from
                            a 3.1 footer's list (cap_reader_frames_only_
                            blocks). 0: from the list where the file has
                            one; an_load then loads again from the blocks
                            when the load finds a damaged block
                            so that the frames are those of the readable
                            blocks either way (with summary_fn, only when
                            summary_reset is given) */
} an_options;

/* over_time_hint is ignored past this many bins (memory: a histogram per
 * row and bin). */
#define AN_OT_HINT_MAX_BINS 64
/* ... and let go (the report then reads the file again) once its
 * histograms hold more than this (10 bins of the 416 rows of 300 M
 * scopes of bench_gen.h: 4.6 MB) */
#define AN_OT_HINT_MAX_BYTES ((size_t)8 << 20)

/* The budget read_capture gives its ranking, --tree, --split and
 * --over-time: 256 Ki values (3 MiB), 7 times what the largest fixture
 * holds (36,001). */
#define AN_SERIES_BUDGET_DEFAULT ((size_t)1 << 18)

/* What a report says, once, when its model is summarised (approx). */
#define AN_APPROX_NOTE                                                       \
    "per-frame medians and percentiles are from log histograms (relative " \
    "error at most 0.5 %): the capture holds more scope names x frames "   \
    "than the exact budget"

typedef struct an_capture {
    char *path;                 /* the capture's name in messages: the path
                                   given to an_load, the name to
                                   an_load_fd */
    char **meta_k, **meta_v;
    size_t meta_n;
    char *clock_source;
    unsigned major, minor;
    int64_t origin_unix_ns;

    an_frame *frames;           /* in order of their begin (the load
                                   sorts them) */
    size_t nframes;
    uint64_t *frame_index;      /* each frame's index (the producer's frame
                                   number), or NULL when they are
                                   frame_index0, frame_index0 + 1, ... in
                                   order (the usual case): an_frame_index */
    uint64_t frame_index0;
    int64_t *frame_gpu_ns;      /* per frame: the sum of GPU self time
                                   recorded by it; NULL when no measured
                                   GPU span belongs to a frame */
    uint8_t *frame_has_gpu;     /* per frame: at least one measured GPU
                                   span (NULL with frame_gpu_ns) */
    an_scope *scopes;
    size_t nscopes;
    an_node *nodes;
    size_t nnodes;
    an_counter *counters;
    size_t ncounters;
    char **threads; /* names of CPU threads seen */
    size_t nthreads;
    char **outside_threads; /* names of CPU threads whose every scope
                               ran in no frame (a loader before the
                               first frame mark, ...) */
    size_t noutside_threads;
    char **tracks;  /* names of GPU tracks seen */
    size_t ntracks;

    int64_t first_ns, last_ns; /* extent of frames and events */
    int64_t outside_ns[3];     /* CPU self time in no frame: before the
                                  first frame, between frames, after the
                                  last (of a scope that spans frames, the
                                  place of its begin when outside, else of
                                  its end; 0 without frames) */
    uint64_t cpu_events, gpu_events;

    cap_reader_stats st;        /* damage and drop statistics */
    int frames_listed;          /* the frames came from the footer's list
                                   (cap_reader_frames_listed) */
    int corrupt_seen;           /* at least one CAP_E_CORRUPT */
    char damage_detail[320];    /* the reader's first damage message */
    uint32_t unnamed_ids[8];    /* the first few unnamed ids */
    size_t unnamed_n;

    int approx;                 /* the per-frame series were summarised
                                   (series_budget): pf_hist, not pf_*;
                                   reports read them through
                                   an_series_scan / an_series_summaries */
    char *name_block;           /* the rows' and nodes' names (not the
                                   roots'): each distinct name's text once,
                                   name_block_len bytes (an_free frees a
                                   name outside it on its own) */
    size_t name_block_len;
    uint8_t *pop_of;            /* approx with split_hint: per frame, 0 in
                                   the fastest quarter, 1 the slowest, 2
                                   neither (as an_split_compute orders
                                   them); NULL otherwise */
    uint16_t *ot_bin;           /* approx with over_time_hint: per frame,
                                   its bin (NULL otherwise) */
    size_t ot_nbins;
    double *ot_cpu_ms;          /* ... and the self time (ms) of every CPU
                                   row that is not a wait in that frame
                                   (whole ns summed, in ms once loaded:
                                   as an_cpu_frame_sums; NULL until the
                                   first value) */
    double *ot_wait_ms;         /* ... and of every CPU wait row (NULL
                                   until the first) */
    float *frame_work_ms;       /* approx with an_options.frame_work (and
                                   no over_time_hint bins): each frame's
                                   self time (ms) of every CPU row that is
                                   not a wait, when ot_sums (NULL when no
                                   such value came, or the flags moved) */
    int ot_sums;                /* ot_cpu_ms and ot_wait_ms hold those
                                   sums (NULL ones: zeros): each row's
                                   wait flag (the producer's, or
                                   wait_globs) was known as its values
                                   came, and is the final one */
    int reread;                 /* approx with series_reread: neither the
                                   series nor their summaries are held
                                   (pf_hist empty); an_series_walk and
                                   an_series_scan read the file again */
    uint64_t max_lag;           /* the furthest a (row, frame) piece came
                                   behind the furthest frame already seen,
                                   in frames (0: every piece in frame
                                   order): an_series_walk's ring; measured
                                   by a series_reread load only */
    int lag_known;              /* max_lag was measured */
    uint64_t late_values;       /* approx: values that reached a frame
                                   already summarised (a thread's data
                                   far behind the others' in the file):
                                   each counted as a frame of its own */
    /* the file as the load first found it (fstat of the descriptor the
       model holds): a later pass or a second read (an_series_scan,
       an_series_walk) fails with CAP_E_CHANGED when it was cut short or
       rewritten at the same size; a longer one (a recording still being
       written) is read. A file renamed over the path is no change: the
       model reads the file it opened. */
    struct an_file_id {
        int known;
        uint64_t dev, ino, size;
        int64_t mtime_ns;
    } file;

    struct an_pack *pack;       /* series_reread past the budget: every
                                   value, packed (an_series_walk reads no
                                   capture file then); NULL when the load
                                   gave it up */
    uint64_t pack_file_bytes;   /* of them, bytes in the pack's unlinked
                                   temporary file ($TMPDIR, else /tmp;
                                   closed by an_free); 0: all in memory */
    /* private: the exact series' arena (a load with a budget: the rows'
       pf_frame and pf_self are carved from it while it has room, so that
       they grow without a page fault for each 4 KiB; see pf_add) */
    unsigned char *pf_arena;
    size_t pf_arena_len, pf_arena_used;
    size_t pf_arena_peak; /* bytes the arena gave, once let go (tests) */
    /* private: hash tables */
    uint32_t *scope_ht, *node_ht;
    size_t scope_ht_cap, node_ht_cap;
    /* private: how to read the file again (every pass, an_series_scan):
       the model's own descriptor of it (closed by an_free) */
    int fd;
    int fd_open;                /* fd is the model's (a model made by
                                   hand has none) */
    an_options load_opt;
    uint32_t win;
    int64_t cutoff_ns;
    int have_cutoff;
    /* private: chunks whose inner frames' sums came as histograms
       (analysis/model/chunks.c; tests, CAP_READ_PROFILE) */
    size_t inner_chunks;
} an_capture;

/* Load the capture at path. Returns CAP_OK (also for a truncated or
 * partly corrupt file: the model then holds what could be recovered and
 * `st`/corrupt_seen say what was lost) or the reader's error for a file
 * that cannot be read at all (CAP_E_IO, CAP_E_NOT_CAPTURE, CAP_E_VERSION,
 * CAP_E_CORRUPT header, CAP_E_NOMEM; CAP_E_CHANGED when the file was
 * cut short or rewritten between the load's two passes); then `detail`
 * holds one line. The model is freed with an_free. A 3.1 file's
 * frames come from its footer's list; when the load then finds a damaged
 * block it loads again from the blocks (an_options.frames_from_blocks;
 * with a summary_fn, after summary_reset). Opens path once (as
 * an_load_fd then); a path that is not a regular file (a pipe, a
 * device) is CAP_E_IO: copy a stream into a file first. */
cap_result an_load(an_capture **out, const char *path, const an_options *opt,
                   char *detail, size_t detail_size);

/* As an_load, on the capture open on fd, named `name` in the model
 * (an_capture.path) and in messages. fd must be a regular file open for
 * reading (an unlinked one will do: a stream copied into TMPDIR); its
 * position is neither used nor moved. The caller keeps fd: the model
 * holds a duplicate until an_free (one descriptor a model), and every
 * pass and later read (an_series_scan, an_series_walk) opens that file
 * again through it, so a file renamed over the capture's path meanwhile
 * changes nothing. Errors: as an_load; CAP_E_MISUSE for out or name NULL
 * or fd < 0; CAP_E_IO (detail says so) for a descriptor that is not a
 * regular file or cannot be duplicated (the process's limit). */
cap_result an_load_fd(an_capture **out, int fd, const char *name,
                      const an_options *opt, char *detail,
                      size_t detail_size);

void an_free(an_capture *m);

/* b - a in ns as a double: times from a crafted file can be anywhere in
 * int64, and their difference must not overflow. */
static inline double an_elapsed_ns(int64_t a, int64_t b)
{
    return (double)b - (double)a;
}

/* Frame duration in ns, saturating (see an_elapsed_ns). */
static inline int64_t an_frame_ns(const an_frame *f)
{
    int64_t d;
    if (__builtin_sub_overflow(f->end_ns, f->begin_ns, &d))
        return f->end_ns > f->begin_ns ? INT64_MAX : INT64_MIN;
    return d;
}

/* The index (the producer's frame number) of frame i < m->nframes. */
/* Position in m->frames of the first frame that begins after t
 * (m->nframes: none); the frames are in order of their begin. The frame
 * begun last by t is the one before it. Cannot fail. */
size_t an_frame_after(const an_capture *m, int64_t t);

static inline uint64_t an_frame_index(const an_capture *m, size_t i)
{
    return m->frame_index ? m->frame_index[i] : m->frame_index0 + i;
}

/* The sum of the GPU self time recorded by frame i < m->nframes (0 when
 * none). */
static inline int64_t an_frame_gpu_ns(const an_capture *m, size_t i)
{
    return m->frame_gpu_ns ? m->frame_gpu_ns[i] : 0;
}

/* 1 when frame i < m->nframes recorded at least one measured GPU span. */
static inline int an_frame_has_gpu(const an_capture *m, size_t i)
{
    return m->frame_has_gpu ? m->frame_has_gpu[i] : 0;
}

/* Fill dense[0..nframes) with scope s's self time (ns) in each frame,
 * zeros where it did not run. On a summarised model (approx) this reads
 * the file again (an_series_scan); when that fails, dense is all NAN. */
void an_scope_dense(const an_capture *m, const an_scope *s, double *dense_ns);

/* On a model that is not summarised (!approx): set sum_ms[0][i] (zeroed
 * by the caller) to the self time (ms) of every CPU row that is not a
 * wait in frame i, and sum_ms[1][i] to that of every CPU wait row (a
 * NULL array is skipped): whole ns summed, then divided once, so that
 * the sums do not depend on the order they are made in (the load's and
 * a scan's are the same). row_ns: scratch of nframes doubles. --over-time's
 * "(all CPU work)" / "(all CPU waits)" and --split-by-work use it. */
void an_cpu_frame_sums(const an_capture *m, double *row_ns,
                       double *const sum_ms[2]);

/* Frame sums made in whole ns (sum[0] work, sum[1] waits, n frames each;
 * a NULL one skipped) turned into ms, each divided once: the one place
 * where the load, a scan and an_cpu_frame_sums turn them. */
void an_frame_sums_ms(double *const sum[2], size_t n);

/* Called once for each (row, frame) with the row's self time in that
 * frame (!= 0): row indexes m->scopes, frame m->frames. */
typedef void (*an_series_fn)(void *ctx, size_t row, size_t frame,
                             int64_t self_ns);

/* Every row's self time in every frame, through fn (order unspecified).
 * Exact model: from the series in memory. Summarised model (approx): the
 * file is read again (the time of a second load, memory of a second
 * model without series); a value may then come in two parts for one
 * (row, frame) as counted by late_values. Errors: the reader's, when the
 * file can no longer be read; CAP_E_CHANGED when the file loaded was
 * cut short or rewritten since (an_capture.file);
 * CAP_E_NOMEM. */
cap_result an_series_scan(const an_capture *m, an_series_fn fn, void *ctx);

/* Every row's self time in every frame where it ran, in frame order and,
 * within a frame, in row order: fn(ctx, row, frame, self_ns) once for
 * each (row, frame) with the exact sum of its pieces, including 0 where
 * the row ran for no time (the exact series' entries, as --frames lists
 * them). Exact model: from the series in memory. A series_reread load
 * that kept its values packed (an_capture.pack): from the pack, in memory
 * or in its temporary file (read through about 2 MiB of buffers), no
 * capture file read, on a second thread where the load would use two
 * (threads 2, or chosen so, for a million values or more; fn is always
 * called on the calling thread); CAP_E_IO when the temporary file cannot
 * be read back. Summarised (approx) otherwise: the
 * file is read again through a ring of frames longer than the load's
 * max_lag, so that every piece of a frame has come before the frame is
 * handed on (memory: that many frames x rows x 9 bytes); where that ring
 * would pass AN_WALK_MAX_BYTES, or the load did not measure max_lag (it
 * was not a series_reread load), the file is loaded again with the exact
 * series (memory as with budget 0). Errors: as an_series_scan. */
#define AN_WALK_MAX_BYTES ((size_t)32 << 20)
/* A series_reread load keeps the values past its budget packed (about 3
 * bytes each), in memory up to this much less 64 bytes a frame (at least
 * 4 MiB), then in an unlinked temporary file (an_spill_dir) of
 * about 2.6 bytes a value (an_capture.pack_file_bytes), while each row's
 * frames come in order; an_series_walk then reads no capture file. Where
 * the temporary file cannot be made or written (a full disk) or would
 * pass the file size limit (ulimit -f), the pack is given up and
 * an_series_walk reads the capture again. CAP_PACK_BYTES=N
 * in the environment sets the memory part (tests: 1, one chunk). */
#define AN_PACK_MAX_BYTES ((size_t)32 << 20)
cap_result an_series_walk(const an_capture *m, an_series_fn fn, void *ctx);

/* The same values as an_series_walk, row by row where they are held: the
 * exact series (each row's as they hold them, frames in order once
 * sorted) or a series_reread load's pack (each row's frames in order; no
 * file read, none of the ring's memory); where neither holds them, as
 * an_series_walk gives them (frame order). Rows of one name next to each
 * other compress better: --export's scopes.csv.gz, in gzip, 12 % smaller
 * and twice as fast to write than in frame order. Errors: as
 * an_series_walk. */
cap_result an_series_rows(const an_capture *m, an_series_fn fn, void *ctx);

/* 1 where the system makes memory out of transparent huge pages on
 * request ("always" or "madvise" in
 * /sys/kernel/mm/transparent_hugepage/enabled), 0 elsewhere. The load
 * then asks for them where it writes a few MiB at once (the exact series'
 * arena, the two-thread load's slots, --frames' pack, the ring): on a
 * virtual machine a 4 KiB page fault can cost 10 us. */
int an_huge_pages(void);

/* The directory of the pack's temporary file, given $TMPDIR's value
 * (NULL or empty: unset) and the paths of /tmp and /var/tmp: tmpdir when
 * set; else var_tmp where tmp keeps its files in memory (a tmpfs, as
 * /tmp is on Fedora, Arch and Debian 13), var_tmp does not and may be
 * written, since the file is there to take the values out of memory;
 * else tmp. Returns one of the three pointers; nothing allocated. */
const char *an_spill_dir(const char *tmpdir, const char *tmp,
                         const char *var_tmp);

/* Mark as waits (is_wait = 1) the scope rows and call-tree nodes whose
 * name matches one of the n shell globs (fnmatch), for a capture whose
 * producer did not tag its waits (read_capture --wait, as capture_diff
 * --wait; an_load does it for an_options.wait_globs). Returns how many
 * scope rows matched. */
size_t an_mark_waits(an_capture *m, const char *const *globs, size_t n);

/* Value of metadata key, or NULL. Borrowed from m. */
const char *an_meta(const an_capture *m, const char *key);

/* The CPU count at the end of m's machine description, as the producer
 * writes it ("host (model, N CPUs)"), or 0 when it has none there. */
unsigned an_machine_cpus(const an_capture *m);

/* Index of the scope row of kind with display name `name`, or -1. */
long an_find_scope(const an_capture *m, an_kind kind, const char *name);

/* Make *p hold at least `need` elements of `size` bytes, doubling *cap
 * (from 64). Returns 0, or -1 when out of memory (*p and *cap unchanged).
 * Internal to the analysis library. */
int an_grow(void **p, size_t *cap, size_t need, size_t size);

/* Sum of frame durations (ns). */
int64_t an_total_frame_ns(const an_capture *m);

#endif
