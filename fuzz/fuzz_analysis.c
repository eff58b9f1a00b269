/*
 * fuzz_analysis.c - libFuzzer target: read_capture's analysis and every
 * report on arbitrary bytes.
 *
 * Loads the input as a capture (an_load: both passes) and writes every
 * report, text, CSV and SVG, to /dev/null, then compares it with itself the way
 * capture_diff does; then loads it again past read_capture's budget of exact
 * per-frame values (past_budget); last, loads it on one thread and on two
 * (threads_agree) and aborts when their CSV differs. A crafted file holds
 * any times at all, so this is where overflowing sums, empty frame lists
 * and huge ids in the report arithmetic show up. Any crash, sanitizer
 * report, leak, hang or difference between the thread counts is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "fuzz_input.h"
#include "model.h"
#include "render/svg.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The CSV of model m into f: the ranking, the call tree and --over-time's
 * bins; with `frames`, the frames' table. */
static void csv_model(FILE *f, an_capture *m, int frames)
{
    if (frames) {
        an_frames fr;
        if (an_frames_compute(&fr, m, NULL) == CAP_OK) {
            an_frame_counters fcs;
            an_frame_counters_compute(&fcs, m, NULL, 0);
            an_csv_frames(f, m, &fr, &fcs);
            an_frame_counters_free(&fcs);
            an_frames_free(&fr);
        }
        return;
    }
    an_ranking r;
    if (an_ranking_compute(&r, m) == CAP_OK) {
        an_csv_ranking(f, &r);
        an_ranking_free(&r);
    }
    an_tree tr;
    if (an_tree_compute(&tr, m, -1, 0) == CAP_OK) {
        an_csv_tree(f, &tr);
        an_tree_free(&tr);
    }
    an_over_time ot;
    if (an_over_time_compute(&ot, m, 10, 0) == CAP_OK) {
        an_csv_over_time(f, &ot);
        an_over_time_free(&ot);
    }
}

/* csv_model of m (NULL: nothing) in *out, malloc'd (the caller frees). */
static void csv_text(an_capture *m, int frames, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    FILE *f = open_memstream(out, len);
    if (!f)
        return;
    if (m)
        csv_model(f, m, frames);
    fclose(f);
}

/* A load on two threads (o with threads = 2) must make the same CSV as
 * the load on one thread did (its result rc1, its CSV one): the reader
 * decoding ahead on its own thread, a run of scopes crossing to the
 * model thread as 40-byte records. A difference aborts with both
 * printed. Frees one. */
static void threads_agree(const char *path, an_options o, int frames,
                          cap_result rc1, char *one, size_t len1)
{
    an_capture *m = NULL;
    char detail[256];
    o.threads = 2;
    cap_result rc2 = an_load(&m, path, &o, detail, sizeof detail);
    char *two;
    size_t len2;
    csv_text(rc2 == CAP_OK ? m : NULL, frames, &two, &len2);
    if (rc2 == CAP_OK)
        an_free(m);
    if (rc1 != rc2 || len1 != len2 || (len1 && memcmp(one, two, len1))) {
        fprintf(stderr,
                "fuzz_analysis: one thread and two differ (%s): results %d "
                "and %d\n--- one thread\n%s\n--- two\n%s\n",
                frames ? "--frames past its budget" : "usual load", (int)rc1,
                (int)rc2, one ? one : "", two ? two : "");
        abort();
    }
    free(one);
    free(two);
}

/* The loads read_capture makes past its budget of exact per-frame values,
 * with a budget of one so that a small input takes them: the values
 * summarised (the ring and the log histograms) for the ranking, --split
 * and --over-time; and --frames' (series_reread, no call tree) with a pack
 * of one chunk, spilled to a temporary file past it, walked again for the
 * frames' table, on one thread and on two (threads_agree). */
static void past_budget(const char *path, FILE *null)
{
    an_capture *m;
    char detail[256];
    an_options o = {.series_budget = 1};
    if (an_load(&m, path, &o, detail, sizeof detail) == CAP_OK) {
        an_split sp;
        if (an_split_compute(&sp, m, NULL) == CAP_OK) {
            an_csv_split(null, &sp);
            an_split_free(&sp);
        }
        csv_model(null, m, 0);
        an_free(m);
    }
    an_options f = {.threads = 1,
                    .series_budget = 1,
                    .series_reread = 1,
                    .no_tree = 1,
                    .pack_bytes = 1};
    cap_result rc = an_load(&m, path, &f, detail, sizeof detail);
    char *one;
    size_t len;
    csv_text(rc == CAP_OK ? m : NULL, 1, &one, &len);
    if (rc == CAP_OK)
        an_free(m);
    threads_agree(path, f, 1, rc, one, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    fuzz_input_path(data, size, path, sizeof path);
    static FILE *null;
    if (!null)
        null = fopen("/dev/null", "w");
    an_capture *m;
    char detail[256];
    an_options o = {.threads = 1}; /* two: threads_agree */
    cap_result rc = an_load(&m, path, &o, detail, sizeof detail);
    char *one;
    size_t len;
    csv_text(rc == CAP_OK ? m : NULL, 0, &one, &len);
    threads_agree(path, o, 0, rc, one, len);
    if (rc != CAP_OK)
        return 0;
    rep_warnings(null, m, "fuzz", 8, 0);
    an_frame_stats fs;
    an_totals t;
    an_totals_compute(m, &t);
    if (an_frame_stats_compute(&fs, m) == CAP_OK)
        an_text_header(null, m, &fs, &t, 0);
    an_ranking r;
    if (an_ranking_compute(&r, m) == CAP_OK) {
        an_text_ranking(null, m, &r, 0);
        an_csv_ranking(null, &r);
        an_ranking_free(&r);
    }
    for (int k = 0; k < 2; k++) {
        an_tree tr;
        if (an_tree_compute(&tr, m, k ? 1 : -1, k ? 5 : 0) == CAP_OK) {
            an_text_tree(null, m, &tr, 0);
            an_csv_tree(null, &tr);
            an_svg_flame(null, m, &tr, NULL);
            an_tree_free(&tr);
        }
        an_over_time ot;
        if (an_over_time_compute(&ot, m, k ? 0 : 10, k ? 0.5 : 0) == CAP_OK) {
            an_text_over_time(null, m, &ot, 0);
            an_csv_over_time(null, &ot);
            an_svg_over_time(null, m, &ot, NULL);
            an_over_time_free(&ot);
        }
    }
    an_split sp;
    for (int by = 0; by < 2; by++) /* by frame time, by CPU work */
        if (an_split_compute(&sp, m, by ? AN_SPLIT_BY_WORK : NULL) ==
            CAP_OK) {
            an_text_split(null, m, &sp, 0);
            an_csv_split(null, &sp);
            an_svg_split(null, m, &sp, NULL);
            an_split_free(&sp);
        }
    an_frames fr;
    if (an_frames_compute(&fr, m, NULL) == CAP_OK) {
        an_frame_counters fcs;
        an_frame_counters_compute(&fcs, m, NULL, 0); /* zeroed on failure */
        an_text_frames(null, m, &fr, &fcs, 0);
        an_csv_frames(null, m, &fr, &fcs);
        an_frame_counters_free(&fcs);
        an_frames_free(&fr);
    }
    an_frame_chart fc;
    if (an_frame_chart_compute(&fc, m, AN_SVG_FRAME_COLUMNS) == CAP_OK) {
        an_svg_frames(null, m, &fc, NULL);
        an_frame_counters fcs; /* --frames --svg: the counters' strips */
        if (an_frame_counters_compute(&fcs, m, NULL, 0) == CAP_OK &&
            an_frame_chart_counters(&fc, &fcs, AN_FC_TEXT_MAX) == CAP_OK)
            an_svg_frames(null, m, &fc, NULL);
        an_frame_counters_free(&fcs);
        an_frame_chart_free(&fc);
    }
    cap_diff_options dopt = {.resamples = 200};
    an_diff d;
    if (an_diff_run(&d, m, m, &dopt, NULL) == CAP_OK) {
        an_diff_report(null, &d, &dopt, 0, 0, 5);
        an_tree dt;
        if (an_tree_compute(&dt, m, -1, 0) == CAP_OK) {
            an_svg_diff(null, m, m, &dt, &d, 0, NULL);
            an_tree_free(&dt);
        }
        an_diff_free(&d);
    }
    an_free(m);
    past_budget(path, null);
    return 0;
}
