/*
 * fuzz_analysis.c - libFuzzer target: read_capture's analysis and every
 * report on arbitrary bytes.
 *
 * Loads the input as a capture (an_load: both passes) and writes every
 * report, text and CSV, to /dev/null, then compares it with itself the way
 * capture_diff does. A crafted file holds any times at all, so this is
 * where overflowing sums, empty frame lists and huge ids in the report
 * arithmetic show up. Any crash, sanitizer report, leak or hang is a bug.
 */
#include <stdint.h>
#include <stdio.h>

#include "diff.h"
#include "fuzz_input.h"
#include "model.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    fuzz_input_path(data, size, path, sizeof path);
    static FILE *null;
    if (!null)
        null = fopen("/dev/null", "w");
    an_capture *m;
    char detail[256];
    an_options o = {0};
    if (an_load(&m, path, &o, detail, sizeof detail) != CAP_OK)
        return 0;
    for (int csv = 0; csv < 2; csv++) {
        rep_style st = {csv, 0};
        rep_warnings(null, m, "fuzz", 8, 0);
        rep_header(null, m, st);
        rep_ranking(null, m, st);
        rep_tree(null, m, st, -1, 0);
        rep_tree(null, m, st, 1, 5);
        rep_split(null, m, st, NULL);
        rep_over_time(null, m, st, 10, 0);
        rep_over_time(null, m, st, 0, 0.5);
        rep_frames(null, m, st, NULL);
    }
    cap_diff_options dopt = {.resamples = 200};
    an_diff d;
    if (an_diff_run(&d, m, m, &dopt, NULL) == CAP_OK) {
        an_diff_report(null, &d, &dopt, 0, 0, 5);
        an_diff_free(&d);
    }
    an_free(m);
    return 0;
}
