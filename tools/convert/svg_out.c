/*
 * svg_out.c - capture -> flame graph SVG (cvt_cap_to_svg).
 *
 * The capture is loaded by the analysis library (analysis/model.h) and
 * drawn by an_svg_flame (analysis/render/svg.h): one section per thread
 * and GPU track, widths by total time. The warnings are read_capture's
 * (what the capture lacks or lost), one line each.
 */
#include "cvt.h"
#include "cvt_util.h"

#include <errno.h>
#include <string.h>

#include "model.h"
#include "render/render.h"
#include "render/svg.h"
#include "report.h"

cap_result cvt_cap_to_svg(const char *in, const char *out, const cvt_options *o)
{
    cvt_diag d = {.out = o->diag, .file = in};
    /* the flame graph reads the call tree's totals alone: the per-frame
       values past the budget are summarised, so that memory stays bounded
       whatever the length (issue 12) */
    an_options ao = {.series_budget = AN_SERIES_BUDGET_DEFAULT};
    an_capture *m;
    char detail[400];
    cap_result r = an_load(&m, in, &ao, detail, sizeof detail);
    if (r != CAP_OK) {
        cvt_error(&d, "%s", detail);
        return r;
    }
    if (o->diag)
        an_text_warnings(o->diag, m, "the flame graph", 0, 0);
    an_tree t;
    if (an_tree_compute(&t, m, -1, 0) != CAP_OK) {
        cvt_error(&d, "out of memory");
        an_free(m);
        return CAP_E_NOMEM;
    }
    int to_stdout = strcmp(out, "-") == 0;
    FILE *fp = to_stdout ? stdout : fopen(out, "w");
    if (!fp) {
        d.file = out;
        cvt_error(&d, "cannot create: %s", strerror(errno));
        an_tree_free(&t);
        an_free(m);
        return CAP_E_IO;
    }
    cap_result rc = CAP_OK;
    if (an_svg_flame(fp, m, &t, o->title ? o->title : in) != CAP_OK) {
        cvt_error(&d, "out of memory");
        rc = CAP_E_NOMEM;
    }
    int werr = ferror(fp) != 0;
    if (to_stdout ? fflush(fp) != 0 : fclose(fp) != 0)
        werr = 1;
    if (werr && rc == CAP_OK) {
        d.file = out;
        cvt_error(&d, "write failed: %s", strerror(errno));
        rc = CAP_E_IO;
    }
    an_tree_free(&t);
    an_free(m);
    return rc;
}
