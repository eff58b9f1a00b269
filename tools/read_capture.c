/*
 * read_capture - open a capture and answer: what costs (self time, as a
 * tree), which frames are slow and why (--split), and whether the machine
 * drifted under the measurement (--over-time).
 *
 * Option parsing (parse_args) is kept apart from the work (run); the
 * numbers all come from the analysis library.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "read_capture_fleet.h"
#include "render/render.h"
#ifdef CAP_HAVE_REMOTE
#include "remote.h"
#else /* built without the converters: no live sources, no standard input */
static int rem_is_address(const char *s) { (void)s; return 0; }
static int rem_source_open(const char *src, double seconds, double skip,
                           const char *tool, char *path, size_t n, int *fd)
{
    (void)src, (void)seconds, (void)skip, (void)tool, (void)path, (void)n;
    *fd = -1;
    return 1;
}
#endif
#include "render/svg.h"
#include "report.h"
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
    int split_work; /* --split-by-work */
    int bins;
    double bin_seconds;
    const char *scope;
    double skip_seconds;
    const char *wait[16];
    size_t nwait;
    const char *counter[16]; /* --counter GLOB: the counters of --frames */
    size_t ncounter;
    const char *svg; /* --svg FILE, or NULL */
    double seconds; /* --seconds: the window of a live source */
} args;

static void usage(FILE *f)
{
    fputs("usage: read_capture [options] FILE\n"
          "       read_capture [options] HOST:PORT --seconds N\n"
          "       read_capture [options] -\n"
          "\n"
          "FILE is a capture file; HOST:PORT a program serving its capture\n"
          "(CAP_LISTEN, docs/LIVE.md), of which a window is reported without\n"
          "keeping a file; - reads a capture from standard input.\n"
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
          "    --split-by-work  order frames by their CPU work (every CPU "
          "scope that is\n"
          "                     not a wait, summed): the order to use when a "
          "frame cap\n"
          "                     holds the frame time\n"
          "  --over-time        frames binned by elapsed time (throttling, "
          "warm-up)\n"
          "    --bins N         number of bins (default 10)\n"
          "    --bin-seconds S  bins of S seconds instead\n"
          "  --frames           one row per frame (for scripts; a long "
          "capture's values\n"
          "                     wait in an unlinked file in $TMPDIR, else "
          "/tmp, or\n"
          "                     /var/tmp where /tmp is in memory)\n"
          "    --scope NAME     only this scope\n"
          "    --counter GLOB   only the counters whose name matches GLOB\n"
          "                     (repeatable; by default the text shows the\n"
          "                     first 4 counters, CSV all of them)\n"
          "  --summary FILE...  one row per capture, for many captures\n"
          "  --export DIR FILE...  tidy CSV tables for SQL engines\n"
          "                     (read_capture --summary --help says more)\n"
          "\n"
          "Common:\n"
          "  --csv              CSV (RFC 4180) instead of aligned text\n"
          "  --svg FILE         also draw the report as an SVG picture in FILE:\n"
          "                     the frame-time chart (the ranking, --frames),\n"
          "                     the flame graph (--tree), the two quarters\n"
          "                     (--split), the drift chart (--over-time)\n"
          "  --skip-seconds S   leave out the first S seconds after the first "
          "frame (default 0;\n"
          "                     HOST:PORT: after connecting)\n"
          "  --seconds N        HOST:PORT: report on N seconds (default: "
          "until the\n"
          "                     program closes its capture or Ctrl-C)\n"
          "  --wait GLOB        scopes whose name matches are waits (time "
          "blocked, never\n"
          "                     called work; marked in every report), for "
          "a program\n"
          "                     that did not tag them; repeatable (up to "
          "16)\n"
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
           O_BINS, O_BINSEC, O_FRAMES, O_SCOPE, O_CSV, O_STRICT, O_SKIP,
           O_WAIT, O_SVG, O_SECONDS, O_COUNTER, O_SPLITWORK };
    static const struct option opts[] = {
        {"tree", no_argument, 0, O_TREE},
        {"depth", required_argument, 0, O_DEPTH},
        {"min-share", required_argument, 0, O_MINSHARE},
        {"split", no_argument, 0, O_SPLIT},
        {"split-by", required_argument, 0, O_SPLITBY},
        {"split-by-work", no_argument, 0, O_SPLITWORK},
        {"over-time", no_argument, 0, O_OVER},
        {"bins", required_argument, 0, O_BINS},
        {"bin-seconds", required_argument, 0, O_BINSEC},
        {"frames", no_argument, 0, O_FRAMES},
        {"scope", required_argument, 0, O_SCOPE},
        {"counter", required_argument, 0, O_COUNTER},
        {"csv", no_argument, 0, O_CSV},
        {"strict", no_argument, 0, O_STRICT},
        {"skip-seconds", required_argument, 0, O_SKIP},
        {"wait", required_argument, 0, O_WAIT},
        {"svg", required_argument, 0, O_SVG},
        {"seconds", required_argument, 0, O_SECONDS},
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
        case O_SPLITWORK: a->split_work = 1; break;
        case O_SCOPE: a->scope = optarg; break;
        case O_WAIT:
            if (a->nwait == sizeof a->wait / sizeof a->wait[0]) {
                fprintf(stderr, "read_capture: at most 16 --wait patterns\n");
                return -1;
            }
            a->wait[a->nwait++] = optarg;
            break;
        case O_COUNTER:
            if (a->ncounter == sizeof a->counter / sizeof a->counter[0]) {
                fprintf(stderr, "read_capture: at most 16 --counter patterns\n");
                return -1;
            }
            a->counter[a->ncounter++] = optarg;
            break;
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
        case O_SECONDS:
            if (parse_number("--seconds", optarg, 1e-3, &a->seconds) != 0)
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
    if (a->split_by && a->split_work) {
        fprintf(stderr, "read_capture: choose --split-by or --split-by-work\n");
        return -1;
    }
    if ((a->split_by || a->split_work) && a->report != R_SPLIT)
        a->report = reports ? a->report : R_SPLIT;
    if ((a->split_by || a->split_work) && a->report != R_SPLIT) {
        fprintf(stderr, "read_capture: %s goes with --split\n",
                a->split_by ? "--split-by" : "--split-by-work");
        return -1;
    }
    if (a->scope && a->report != R_FRAMES) {
        fprintf(stderr, "read_capture: --scope goes with --frames\n");
        return -1;
    }
    if (a->ncounter && a->report != R_FRAMES) {
        fprintf(stderr, "read_capture: --counter goes with --frames\n");
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
    if (a->seconds > 0 && !rem_is_address(a->file)) {
        fprintf(stderr, "read_capture: --seconds goes with HOST:PORT\n");
        return -1;
    }
    return 0;
}

/* Compute the chosen report, then render it as text or CSV, and as a
 * picture into svg when not NULL. */
static cap_result render(const args *a, const an_capture *m, int colour,
                         FILE *svg)
{
    cap_result rc = CAP_OK;
    FILE *out = stdout;
    an_frame_counters fc = {0}; /* --frames: the counters per frame */
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
        if (svg)
            rc = an_svg_flame(svg, m, &t, a->file);
        an_tree_free(&t);
        break;
    }
    case R_SPLIT: {
        an_split s;
        if ((rc = an_split_compute(&s, m,
                                   a->split_work ? AN_SPLIT_BY_WORK
                                                 : a->split_by)) != CAP_OK)
            break;
        a->csv ? an_csv_split(out, &s) : an_text_split(out, m, &s, colour);
        if (svg)
            rc = an_svg_split(svg, m, &s, a->file);
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
        if (svg)
            rc = an_svg_over_time(svg, m, &ot, a->file);
        an_over_time_free(&ot);
        break;
    }
    case R_FRAMES: {
        an_frames f;
        if ((rc = an_frames_compute(&f, m, a->scope)) != CAP_OK)
            break;
        rc = an_frame_counters_compute(&fc, m, a->counter, a->ncounter);
        if (rc == CAP_OK)
            rc = a->csv ? an_csv_frames(out, m, &f, &fc)
                        : an_text_frames(out, m, &f, &fc, colour);
        an_frames_free(&f);
        break;
    }
    }
    if (rc == CAP_OK && svg && (a->report == R_RANKING || a->report == R_FRAMES)) {
        an_frame_chart c;
        if ((rc = an_frame_chart_compute(&c, m, AN_SVG_FRAME_COLUMNS)) != CAP_OK) {
            an_frame_counters_free(&fc);
            return rc;
        }
        /* --frames: the counters the text shows, as strips under it */
        rc = an_frame_chart_counters(&c, &fc, AN_FC_TEXT_MAX);
        if (rc == CAP_OK)
            rc = an_svg_frames(svg, m, &c, a->file);
        an_frame_chart_free(&c);
    }
    an_frame_counters_free(&fc);
    return rc;
}

static int run(const args *a)
{
    int tty_err = isatty(STDERR_FILENO);
    int colour_out = !a->csv && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    int colour_err = tty_err && !getenv("NO_COLOR");
    an_options o = {.skip_seconds = a->skip_seconds,
                    .progress = tty_err ? stderr : NULL};
    /* memory bounded whatever the length; --frames lists every frame's
       exact values: past the budget it keeps none and reads them again,
       frame by frame (an_frames_walk) */
    o.series_budget = AN_SERIES_BUDGET_DEFAULT;
    o.series_reread = a->report == R_FRAMES;
    o.no_tree = a->report == R_FRAMES;
    o.split_hint = a->report == R_SPLIT && !a->split_by && !a->split_work;
    /* --split-by-work orders frames by the CPU work the over-time hint
       sums per frame as it reads */
    o.over_time_hint = a->report == R_OVER_TIME || a->split_work;
    o.ot_bins = a->bins;
    o.ot_bin_seconds = a->bin_seconds;
    /* --wait: marked by the load, so that --over-time sums work and waits
       apart as it reads */
    o.wait_globs = a->wait;
    o.nwait_globs = a->nwait;
    /* a live source or standard input: read from a copy in TMPDIR */
    char live_path[64];
    int live_fd = -1;
    int live = rem_source_open(a->file, a->seconds, a->skip_seconds,
                               "read_capture", live_path, sizeof live_path,
                               &live_fd);
    if (live < 0)
        return EXIT_USAGE;
    if (live == 0 && strcmp(a->file, "-") != 0)
        o.skip_seconds = 0; /* the window skipped it already */
    an_capture *m;
    char detail[400];
    cap_result r = an_load(&m, live == 0 ? live_path : a->file, &o, detail,
                           sizeof detail);
    if (r != CAP_OK) {
        if (live_fd >= 0)
            close(live_fd);
        fprintf(stderr, "read_capture: %s: %s\n", a->file, detail);
        return EXIT_USAGE;
    }
    if (live == 0) { /* messages name the source, not the copy */
        char *name = strdup(a->file);
        if (name) {
            free(m->path);
            m->path = name;
        }
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
    if (a->ncounter) { /* --counter: at least one counter must match */
        int hit = 0;
        for (size_t c = 0; c < m->ncounters && !hit; c++)
            for (size_t g = 0; g < a->ncounter && !hit; g++)
                hit = m->counters[c].name &&
                      fnmatch(a->counter[g], m->counters[c].name, 0) == 0;
        if (!hit) {
            fprintf(stderr, "read_capture: %s: no counter matches --counter "
                            "'%s'%s\n",
                    a->file, a->counter[0], a->ncounter > 1 ? " (or the "
                                                              "others)" : "");
            an_free(m);
            return EXIT_USAGE;
        }
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
    FILE *svg = NULL;
    if (a->svg && !(svg = fopen(a->svg, "w"))) {
        fprintf(stderr, "read_capture: %s: cannot write: %s\n", a->svg,
                strerror(errno));
        an_free(m);
        return EXIT_USAGE;
    }
    if (m->approx && !m->reread && a->csv)
        fprintf(stderr, "note: %s: %s\n", a->file, AN_APPROX_NOTE);
    cap_result rc = render(a, m, colour_out, svg); /* may read the copy
                                                       again: open till here */
    if (live_fd >= 0)
        close(live_fd);
    an_free(m);
    int svg_bad = svg && ferror(svg);
    if (svg && fclose(svg) != 0)
        svg_bad = 1;
    if (svg_bad) {
        fprintf(stderr, "read_capture: %s: writing the picture failed\n",
                a->svg);
        return EXIT_USAGE;
    }
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
