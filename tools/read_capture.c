/*
 * read_capture - open a capture and answer: what costs (self time, as a
 * tree), which frames are slow and why (--split), and whether the machine
 * drifted under the measurement (--over-time).
 *
 * Option parsing (parse_args) is kept apart from the work (run); the
 * numbers all come from the analysis library.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "read_capture_fleet.h"
#include "render/render.h"
#include "report.h"
#include "render/svg.h"
#include "tool_version.h"

#define EXIT_REPORT 0
#define EXIT_USAGE 2
#define EXIT_WARNED 3

typedef enum report_kind { R_RANKING, R_TREE, R_SPLIT, R_OVER_TIME, R_FRAMES } report_kind;

typedef struct args {
    const char *file;
    report_kind report;
    int csv, strict;
    int depth;
    double min_share;
    const char *split_by;
    int bins;
    double bin_seconds;
    const char *scope;
    double skip_seconds;
    const char *svg; /* --svg FILE, or NULL */
} args;

static void usage(FILE *f)
{
    fputs("usage: read_capture [options] FILE\n"
          "\n"
          "Reports (one at a time; the default ranks scopes by self time):\n"
          "  --tree             the call tree merged by path\n"
          "    --depth N        show scopes down to depth N (0: top level; "
          "default: all)\n"
          "    --min-share PCT  hide nodes under PCT % of the recorded time "
          "(default 0)\n"
          "  --split            fastest vs slowest quarter of frames, with the "
          "frame/GPU ratio\n"
          "    --split-by SCOPE order frames by SCOPE's self time instead of "
          "frame time\n"
          "  --over-time        frames binned by elapsed time (throttling, "
          "warm-up)\n"
          "    --bins N         number of bins (default 10)\n"
          "    --bin-seconds S  bins of S seconds instead\n"
          "  --frames           one row per frame (for scripts)\n"
          "    --scope NAME     only this scope\n"
          "  --summary FILE...  one row per capture, for many captures\n"
          "  --export DIR FILE...  tidy CSV tables for SQL engines\n"
          "                     (read_capture --summary --help says more)\n"
          "\n"
          "Common:\n"
          "  --csv              CSV (RFC 4180) instead of aligned text\n"
          "  --svg FILE         also draw the report as an SVG picture in FILE:\n"
          "                     the frame-time chart (the ranking, --frames)\n"
          "                     or the flame graph (--tree)\n"
          "  --skip-seconds S   leave out the first S seconds after the first "
          "frame (default 0)\n"
          "  --strict           exit 3 when any warning was printed\n"
          "  -h, --help         this help\n"
          "  --version          the version, then exit\n"
          "\n"
          "Warnings (unnamed scope ids, truncated or damaged files, dropped "
          "scopes,\ninvalid GPU spans, too few frames) go to stderr.\n"
          "Exit status: 0 report written; 2 usage error or unreadable file;\n"
          "3 report written with warnings under --strict.\n",
          f);
}

static int parse_number(const char *opt, const char *s, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= min)) {
        fprintf(stderr, "read_capture: %s needs a number >= %g, not '%s'\n",
                opt, min, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Returns -1 on a usage error (message printed), 1 for --help, 0 to run. */
static int parse_args(int argc, char **argv, args *a)
{
    enum { O_TREE = 256, O_DEPTH, O_MINSHARE, O_SPLIT, O_SPLITBY, O_OVER,
           O_BINS, O_BINSEC, O_FRAMES, O_SCOPE, O_CSV, O_STRICT, O_SKIP, O_SVG };
    static const struct option opts[] = {
        {"tree", no_argument, 0, O_TREE},
        {"depth", required_argument, 0, O_DEPTH},
        {"min-share", required_argument, 0, O_MINSHARE},
        {"split", no_argument, 0, O_SPLIT},
        {"split-by", required_argument, 0, O_SPLITBY},
        {"over-time", no_argument, 0, O_OVER},
        {"bins", required_argument, 0, O_BINS},
        {"bin-seconds", required_argument, 0, O_BINSEC},
        {"frames", no_argument, 0, O_FRAMES},
        {"scope", required_argument, 0, O_SCOPE},
        {"csv", no_argument, 0, O_CSV},
        {"strict", no_argument, 0, O_STRICT},
        {"skip-seconds", required_argument, 0, O_SKIP},
        {"svg", required_argument, 0, O_SVG},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->depth = -1;
    a->bins = 10;
    int reports = 0;
    int c;
    double v;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case O_TREE: a->report = R_TREE; reports++; break;
        case O_SPLIT: a->report = R_SPLIT; reports++; break;
        case O_OVER: a->report = R_OVER_TIME; reports++; break;
        case O_FRAMES: a->report = R_FRAMES; reports++; break;
        case O_CSV: a->csv = 1; break;
        case O_STRICT: a->strict = 1; break;
        case O_SPLITBY: a->split_by = optarg; break;
        case O_SCOPE: a->scope = optarg; break;
        case O_SVG: a->svg = optarg; break;
        case O_DEPTH:
            if (parse_number("--depth", optarg, 0, &v) != 0)
                return -1;
            a->depth = (int)v;
            break;
        case O_MINSHARE:
            if (parse_number("--min-share", optarg, 0, &a->min_share) != 0)
                return -1;
            break;
        case O_BINS:
            if (parse_number("--bins", optarg, 1, &v) != 0)
                return -1;
            a->bins = (int)v;
            break;
        case O_BINSEC:
            if (parse_number("--bin-seconds", optarg, 1e-6, &a->bin_seconds) != 0)
                return -1;
            break;
        case O_SKIP:
            if (parse_number("--skip-seconds", optarg, 0, &a->skip_seconds) != 0)
                return -1;
            break;
        case 'h':
            return 1;
        case ':':
            fprintf(stderr, "read_capture: %s needs a value\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "read_capture: unknown option '%s' (see --help)\n",
                    argv[optind - 1]);
            return -1;
        }
    }
    if (reports > 1) {
        fprintf(stderr, "read_capture: choose one report: --tree, --split, "
                        "--over-time or --frames\n");
        return -1;
    }
    if (a->split_by && a->report != R_SPLIT)
        a->report = reports ? a->report : R_SPLIT;
    if (a->split_by && a->report != R_SPLIT) {
        fprintf(stderr, "read_capture: --split-by goes with --split\n");
        return -1;
    }
    if (a->scope && a->report != R_FRAMES) {
        fprintf(stderr, "read_capture: --scope goes with --frames\n");
        return -1;
    }
    if (a->svg && (a->report == R_SPLIT || a->report == R_OVER_TIME)) {
        fprintf(stderr, "read_capture: --svg draws the ranking, --tree and "
                        "--frames; --split and --over-time have no picture "
                        "yet\n");
        return -1;
    }
    if (optind + 1 != argc) {
        fprintf(stderr, optind >= argc ? "read_capture: no capture file given "
                                         "(see --help)\n"
                                       : "read_capture: one capture file at "
                                         "a time (see --help)\n");
        return -1;
    }
    a->file = argv[optind];
    return 0;
}

/* The picture of the report into a->svg. Returns 0, -1 out of memory, or
 * -3 when the file could not be written (message printed). */
static int write_svg(const args *a, const an_capture *m)
{
    FILE *f = fopen(a->svg, "w");
    if (!f) {
        fprintf(stderr, "read_capture: %s: cannot write: %s\n", a->svg,
                strerror(errno));
        return -3;
    }
    int rc = a->report == R_TREE ? an_svg_flame(f, m, a->file)
                                 : an_svg_frames(f, m, a->file);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "read_capture: %s: writing the picture failed\n",
                a->svg);
        return -3;
    }
    return rc;
}

/* Compute the chosen report, then render it as text or CSV. */
static cap_result render(const args *a, const an_capture *m, int colour)
{
    cap_result rc = CAP_OK;
    FILE *out = stdout;
    if (!a->csv) {
        an_frame_stats fs;
        an_totals t;
        if ((rc = an_frame_stats_compute(&fs, m)) != CAP_OK)
            return rc;
        an_totals_compute(m, &t);
        an_text_header(out, m, &fs, &t, colour);
    }
    switch (a->report) {
    case R_RANKING: {
        an_ranking r;
        if ((rc = an_ranking_compute(&r, m)) != CAP_OK)
            break;
        a->csv ? an_csv_ranking(out, &r) : an_text_ranking(out, m, &r, colour);
        an_ranking_free(&r);
        break;
    }
    case R_TREE: {
        an_tree t;
        if ((rc = an_tree_compute(&t, m, a->depth, a->min_share)) != CAP_OK)
            break;
        a->csv ? an_csv_tree(out, &t) : an_text_tree(out, m, &t, colour);
        an_tree_free(&t);
        break;
    }
    case R_SPLIT: {
        an_split s;
        if ((rc = an_split_compute(&s, m, a->split_by)) != CAP_OK)
            break;
        a->csv ? an_csv_split(out, &s) : an_text_split(out, m, &s, colour);
        an_split_free(&s);
        break;
    }
    case R_OVER_TIME: {
        an_over_time ot;
        rc = an_over_time_compute(&ot, m, a->bins, a->bin_seconds);
        if (rc != CAP_OK)
            break;
        a->csv ? an_csv_over_time(out, &ot)
               : an_text_over_time(out, m, &ot, colour);
        an_over_time_free(&ot);
        break;
    }
    case R_FRAMES: {
        an_frames f;
        if ((rc = an_frames_compute(&f, m, a->scope)) != CAP_OK)
            break;
        a->csv ? an_csv_frames(out, m, &f) : an_text_frames(out, m, &f, colour);
        an_frames_free(&f);
        break;
    }
    }
    return rc;
}

static int run(const args *a)
{
    int tty_err = isatty(STDERR_FILENO);
    int colour_out = !a->csv && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    int colour_err = tty_err && !getenv("NO_COLOR");
    an_options o = {.skip_seconds = a->skip_seconds,
                    .progress = tty_err ? stderr : NULL};
    an_capture *m;
    char detail[400];
    cap_result r = an_load(&m, a->file, &o, detail, sizeof detail);
    if (r != CAP_OK) {
        fprintf(stderr, "read_capture: %s: %s\n", a->file, detail);
        return EXIT_USAGE;
    }
    const char *want = a->report == R_SPLIT ? a->split_by
                       : a->report == R_FRAMES ? a->scope : NULL;
    if (want && an_find_scope(m, AN_CPU, want) < 0 &&
        an_find_scope(m, AN_GPU, want) < 0) {
        fprintf(stderr, "read_capture: %s: no scope named '%s'\n", a->file,
                want);
        an_free(m);
        return EXIT_USAGE;
    }
    static const char *names[] = {"the ranking", "--tree", "--split",
                                  "--over-time", "--frames"};
    size_t min_frames = 0;
    if (a->report == R_SPLIT)
        min_frames = 8;
    else if (a->report == R_OVER_TIME)
        min_frames = a->bin_seconds > 0 ? 4 : (size_t)a->bins * 2;
    else if (a->report == R_FRAMES)
        min_frames = 1;
    int warned = an_text_warnings(stderr, m, names[a->report], min_frames,
                                  colour_err);
    cap_result rc = render(a, m, colour_out);
    int svg_rc = 0;
    if (rc == CAP_OK && a->svg)
        svg_rc = write_svg(a, m);
    an_free(m);
    if (svg_rc == -3)
        return EXIT_USAGE;
    if (svg_rc == -1)
        rc = CAP_E_NOMEM;
    if (rc == CAP_E_MISUSE) {
        fprintf(stderr, "read_capture: %s: no scope named '%s'\n", a->file,
                a->report == R_SPLIT ? a->split_by : a->scope);
        return EXIT_USAGE;
    }
    if (rc != CAP_OK) {
        fprintf(stderr, "read_capture: %s: %s\n", a->file,
                cap_result_message(rc));
        return EXIT_USAGE;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "read_capture: writing the report failed: %s\n",
                strerror(errno));
        return EXIT_USAGE;
    }
    return a->strict && warned ? EXIT_WARNED : EXIT_REPORT;
}

int main(int argc, char **argv)
{
    if (tool_version(argc, argv, "read_capture"))
        return tool_version_done();
    if (fleet_wanted(argc, argv)) /* many captures: read_capture_fleet.c */
        return fleet_main(argc, argv);
    args a;
    int p = parse_args(argc, argv, &a);
    if (p == 1) {
        usage(stdout);
        return EXIT_REPORT;
    }
    if (p != 0)
        return EXIT_USAGE;
    return run(&a);
}
