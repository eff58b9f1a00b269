/*
 * capture_diff - did it get faster or slower, and is that real?
 *
 *   capture_diff [options] BASE NEW
 *   capture_diff [options] BASE... -- NEW...
 *   capture_diff [options] --base-glob PATTERN --new-glob PATTERN
 *
 * Compares two captures, or several runs a side, scope by scope with
 * statistics that separate a change from noise (run-to-run spread
 * included), and exits 1 when anything regressed, so a CI job can gate on
 * it. Option parsing (parse_args) is apart from the work (run).
 */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "render/render.h"
#include "render/svg.h"
#include "report.h"
#include "tool_version.h"

#define EXIT_SAME 0
#define EXIT_REGRESSED 1
#define EXIT_USAGE 2

#define MAX_PATTERNS 64

typedef struct args {
    char **base, **new_;      /* the runs of each side */
    size_t nbase, nnew;
    const char *base_glob, *new_glob;
    glob_t gb, gn;            /* the globs' matches (base_glob, new_glob) */
    int gb_used, gn_used;     /* gb, gn hold matches to free */
    char **names;             /* the file arguments, in order (owned) */
    an_diff_options o;
    const char *exclude[MAX_PATTERNS], *wait[MAX_PATTERNS];
    size_t top;
    double skip_seconds;
    int csv, by_path;
    const char *svg; /* --svg FILE: the differential flame graph */
} args;

static void usage(FILE *f)
{
    fputs("usage: capture_diff [options] BASE NEW\n"
          "       capture_diff [options] BASE... -- NEW...\n"
          "       capture_diff [options] --base-glob PATTERN --new-glob "
          "PATTERN\n"
          "\n"
          "Compares the per-frame self time of every scope (and the frame "
          "time) of two\ncaptures of the same route, or of several runs a "
          "side: then a change must\nalso clear the spread between the "
          "runs of a side (the run medians' t test).\n"
          "\n"
          "  --base-glob PAT    the base runs: the files PAT matches, sorted "
          "(quote it)\n"
          "  --new-glob PAT     the new runs, the same way\n"
          "  --threshold PCT    relative band: changes within PCT % of the "
          "base median\n"
          "                     never count (default 5)\n"
          "  --floor-us US      absolute band: changes under US us per frame "
          "never count\n"
          "                     (default 0)\n"
          "  --floor-share PCT  absolute band as a share of the base median "
          "frame time\n"
          "                     (default 0.1); the floor is the larger of the "
          "two\n"
          "  --alpha A          significance level after Holm correction "
          "(default 0.05;\n"
          "                     the interval's level is 1 - 2A)\n"
          "  --min-frames N     samples each side needs, and frames a scope "
          "must have run\n"
          "                     in (default 10)\n"
          "  --block N          frames averaged into one sample (default 8; "
          "fewer when a\n"
          "                     run is short)\n"
          "  --top N            show the N largest changes (default 20; 0: "
          "all)\n"
          "  --scope NAME       compare this scope only (and the frame time)\n"
          "  --by-path          match scopes by call path, not by name\n"
          "  --exclude GLOB     drop the scopes whose name matches (repeatable)\n"
          "  --wait GLOB        mark the scopes whose name matches as waits "
          "(repeatable);\n"
          "                     scopes the program tagged as waits are marked "
          "anyway\n"
          "  --gate-waits       let regressed waits fail the run too\n"
          "  --gate-frame       let a regressed frame time fail the run too\n"
          "  --skip-seconds S   drop the first S seconds of both runs "
          "(warm-up)\n"
          "  --csv              CSV (RFC 4180) with every row\n"
          "  --svg FILE         also draw the differential flame graph in FILE:\n"
          "                     NEW's call tree, significant changes coloured\n"
          "  -h, --help         this help\n"
          "  --version          the version, then exit\n"
          "\n"
          "A scope's band is the larger of the threshold (relative to its "
          "base median)\nand the floor (time per frame). Verdicts: regressed "
          "/ improved (p < alpha after\nHolm and the whole interval past "
          "the band), unchanged (interval inside the\nband), inconclusive, "
          "insufficient (too few frames), added / removed.\n"
          "Waits (time blocked) grow when other work slows, and the frame "
          "time is wall\ntime that holds them and the machine's other load: "
          "both are judged but gate\nthe exit status only with --gate-waits "
          "and --gate-frame.\n"
          "Frames in a light and a heavy group (by frame time, or by CPU "
          "work under a\ncap): the (heavy frames) row compares how often "
          "frames are heavy, as the\nchange of the mean frame that the mix "
          "alone makes, which no row's shift\nsees; it gates like a scope "
          "(docs/STATISTICS.md section 17).\n"
          "Several runs a side: each row's frames are pooled per side, "
          "and the runs'\nmedians compared too; the report adds the "
          "between-run SD (run sd) and marks\nthe rows whose change is "
          "within run-to-run spread. One run a side is the\nplain "
          "comparison.\n"
          "Long captures: past a budget of exact per-frame values "
          "(CAP_SERIES_BUDGET), the\nsamples are read back from log "
          "histograms (each within 0.5 %), and the report\nsays so in its "
          "first line (with --csv, a note on stderr).\n"
          "Exit status: 0 nothing that gates regressed; 1 at least one "
          "regression that\ngates; 2 usage error or unreadable input (a "
          "glob that matches no file\nincluded).\n",
          f);
}

static int number(const char *opt, const char *s, double min, double max,
                  double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= min) || !(v <= max)) {
        fprintf(stderr, "capture_diff: %s needs a number in [%g, %g], not "
                        "'%s'\n",
                opt, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    enum { O_THR = 256, O_ALPHA, O_MIN, O_TOP, O_SCOPE, O_PATH, O_SKIP,
           O_CSV, O_FLOOR_US, O_FLOOR_SHARE, O_EXCLUDE, O_WAIT, O_GATE_WAITS, O_GATE_FRAME, O_BLOCK,
           O_SVG, O_BASE_GLOB, O_NEW_GLOB };
    static const struct option opts[] = {
        {"threshold", required_argument, 0, O_THR},
        {"alpha", required_argument, 0, O_ALPHA},
        {"min-frames", required_argument, 0, O_MIN},
        {"top", required_argument, 0, O_TOP},
        {"scope", required_argument, 0, O_SCOPE},
        {"by-path", no_argument, 0, O_PATH},
        {"skip-seconds", required_argument, 0, O_SKIP},
        {"floor-us", required_argument, 0, O_FLOOR_US},
        {"floor-share", required_argument, 0, O_FLOOR_SHARE},
        {"exclude", required_argument, 0, O_EXCLUDE},
        {"wait", required_argument, 0, O_WAIT},
        {"gate-waits", no_argument, 0, O_GATE_WAITS},
        {"gate-frame", no_argument, 0, O_GATE_FRAME},
        {"block", required_argument, 0, O_BLOCK},
        {"csv", no_argument, 0, O_CSV},
        {"svg", required_argument, 0, O_SVG},
        {"base-glob", required_argument, 0, O_BASE_GLOB},
        {"new-glob", required_argument, 0, O_NEW_GLOB},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->top = 20;
    a->o.exclude = a->exclude;
    a->o.wait = a->wait;
    /* file names in the order given: "-" in the option string returns
     * each as option 1 instead of permuting them, so that a "--" that
     * ends the options also tells the base runs from the new ones */
    a->base = a->names = calloc((size_t)argc, sizeof *a->base);
    if (!a->base) {
        fprintf(stderr, "capture_diff: out of memory\n");
        return -1;
    }
    double v;
    int c, prev = optind;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "-:h", opts, NULL)) != -1) {
        prev = optind;
        switch (c) {
        case 1: a->base[a->nbase++] = optarg; break;
        case O_BASE_GLOB: a->base_glob = optarg; break;
        case O_NEW_GLOB: a->new_glob = optarg; break;
        case O_THR:
            if (number("--threshold", optarg, 1e-9, 1000,
                       &a->o.stat.threshold_pct))
                return -1;
            break;
        case O_ALPHA:
            if (number("--alpha", optarg, 1e-12, 0.49, &a->o.stat.alpha))
                return -1;
            break;
        case O_MIN:
            if (number("--min-frames", optarg, 2, 1e9, &v))
                return -1;
            a->o.stat.min_frames = (size_t)v;
            break;
        case O_FLOOR_US:
            if (number("--floor-us", optarg, 0, 1e9, &a->o.floor_us))
                return -1;
            break;
        case O_FLOOR_SHARE:
            if (number("--floor-share", optarg, 1e-9, 100,
                       &a->o.floor_share_pct))
                return -1;
            break;
        case O_EXCLUDE:
        case O_WAIT: {
            size_t *count = c == O_EXCLUDE ? &a->o.nexclude : &a->o.nwait;
            const char **list = c == O_EXCLUDE ? a->exclude : a->wait;
            if (*count == MAX_PATTERNS) {
                fprintf(stderr, "capture_diff: at most %d %s patterns\n",
                        MAX_PATTERNS, c == O_EXCLUDE ? "--exclude" : "--wait");
                return -1;
            }
            list[(*count)++] = optarg;
            break;
        }
        case O_GATE_WAITS: a->o.gate_waits = 1; break;
        case O_GATE_FRAME: a->o.gate_frame = 1; break;
        case O_BLOCK:
            if (number("--block", optarg, 1, 1e6, &v))
                return -1;
            a->o.block = (size_t)v;
            break;
        case O_TOP:
            if (number("--top", optarg, 0, 1e9, &v))
                return -1;
            a->top = (size_t)v;
            break;
        case O_SKIP:
            if (number("--skip-seconds", optarg, 0, 1e9, &a->skip_seconds))
                return -1;
            break;
        case O_SCOPE: a->o.only_scope = optarg; break;
        case O_PATH: a->by_path = 1; break;
        case O_SVG: a->svg = optarg; break;
        case O_CSV: a->csv = 1; break;
        case 'h': return 1;
        case ':':
            fprintf(stderr, "capture_diff: %s needs a value\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "capture_diff: unknown option '%s' (see --help)\n",
                    argv[optind - 1]);
            return -1;
        }
    }
    /* getopt returned -1 at a "--" when it stepped over one */
    int sep = optind == prev + 1 && strcmp(argv[prev], "--") == 0;
    if (a->base_glob || a->new_glob) {
        if (!a->base_glob || !a->new_glob || a->nbase > 0 || sep) {
            fprintf(stderr, "capture_diff: --base-glob and --new-glob go "
                            "together, without other captures (see "
                            "--help)\n");
            return -1;
        }
        return 0;
    }
    if (sep) {
        a->new_ = argv + optind;
        a->nnew = (size_t)(argc - optind);
        if (a->nbase == 0 || a->nnew == 0) {
            fprintf(stderr, "capture_diff: give at least one capture on "
                            "each side of '--' (see --help)\n");
            return -1;
        }
        return 0;
    }
    if (a->nbase != 2) {
        fprintf(stderr, "capture_diff: give two captures, BASE and NEW (see "
                        "--help)\n");
        return -1;
    }
    a->new_ = a->base + 1;
    a->nbase = a->nnew = 1;
    return 0;
}

/* The files that pattern matches, sorted, into *g (folders that cannot be
 * read, or do not exist, hold no match). Returns 0, or -1 after a message
 * (no match, or out of memory); *g then needs no globfree. */
static int expand(const char *opt, const char *pattern, glob_t *g)
{
    int rc = glob(pattern, 0, NULL, g);
    if (rc == 0)
        return 0;
    if (rc == GLOB_NOMATCH)
        fprintf(stderr, "capture_diff: %s '%s' matches no file\n", opt,
                pattern);
    else
        fprintf(stderr, "capture_diff: %s '%s': %s\n", opt, pattern,
                rc == GLOB_NOSPACE ? "out of memory" : "cannot be expanded");
    globfree(g);
    return -1;
}

static void compare_meta(const an_capture *b, const an_capture *n)
{
    static const char *keys[] = {"program", "build", "machine"};
    for (size_t i = 0; i < 3; i++) {
        const char *x = an_meta(b, keys[i]), *y = an_meta(n, keys[i]);
        if (x && y && strcmp(x, y) != 0)
            fprintf(stderr, "warning: the runs differ in %s (base '%s', new "
                            "'%s')%s\n",
                    keys[i], x, y,
                    i == 1 ? ": make sure that is the change under test"
                           : ": the comparison measures that difference too");
    }
    size_t fb = b->nframes, fn = n->nframes;
    if (fb && fn && (fb * 2 < fn || fn * 2 < fb))
        fprintf(stderr, "warning: one run is much shorter than the other "
                        "(%zu frames vs %zu): did both cover the same "
                        "route? (record a fixed window: CAP_SKIP_SECONDS, "
                        "CAP_RECORD_SECONDS)\n",
                fb, fn);
}

/* The runs of one side (names[0..n)) that differ from its first run in
 * program or build: one warning each. */
static void compare_side(const char *side, char *const *names,
                         an_capture *const *m, size_t n)
{
    static const char *keys[] = {"program", "build"};
    for (size_t r = 1; r < n; r++)
        for (size_t i = 0; i < 2; i++) {
            const char *x = an_meta(m[0], keys[i]), *y = an_meta(m[r], keys[i]);
            if (x && y && strcmp(x, y) != 0)
                fprintf(stderr, "warning: the %s runs differ in %s ('%s' in "
                                "%s, '%s' in %s): runs of a side should be "
                                "the same code\n",
                        side, keys[i], x, names[0], y, names[r]);
        }
}

/* The differential flame graph into a->svg, on the call tree of the first
 * new run. Returns 0, or -1 after a message. */
static int write_svg(const args *a, const an_capture *mb, const an_capture *mn,
                     const an_diff *d)
{
    an_tree t;
    if (an_tree_compute(&t, mn, -1, 0) != CAP_OK) {
        fprintf(stderr, "capture_diff: out of memory\n");
        return -1;
    }
    FILE *f = fopen(a->svg, "w");
    if (!f) {
        fprintf(stderr, "capture_diff: %s: cannot write: %s\n", a->svg,
                strerror(errno));
        an_tree_free(&t);
        return -1;
    }
    size_t tl = strlen(a->base[0]) + strlen(a->new_[0]) + 80;
    char *title = malloc(tl);
    cap_result r = CAP_E_NOMEM;
    if (title) {
        if (a->nbase == 1 && a->nnew == 1)
            snprintf(title, tl, "%s \xE2\x86\x92 %s", a->base[0], a->new_[0]);
        else
            snprintf(title, tl, "%s (%zu runs) \xE2\x86\x92 %s (%zu runs)",
                     a->base[0], a->nbase, a->new_[0], a->nnew);
        r = an_svg_diff(f, mb, mn, &t, d, a->by_path, title);
    }
    free(title);
    an_tree_free(&t);
    int bad = r != CAP_OK || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad)
        fprintf(stderr, "capture_diff: %s: writing the picture failed\n",
                a->svg);
    return bad ? -1 : 0;
}

/* Whether any run has a CPU or GPU scope named `scope`. */
static int any_has_scope(an_capture *const *m, size_t n, const char *scope)
{
    for (size_t i = 0; i < n; i++)
        if (an_find_scope(m[i], AN_CPU, scope) >= 0 ||
            an_find_scope(m[i], AN_GPU, scope) >= 0)
            return 1;
    return 0;
}

static int run(const args *a)
{
    /* exact per-frame values while they fit read_capture's budget, log
     * histograms past it (an_diff.approx); every file loaded at once; no
     * call tree but for the picture (the rows are by name, or by path:
     * then the tree is built whatever no_tree says) */
    an_options lo = {.skip_seconds = a->skip_seconds, .by_path = a->by_path,
                     .series_budget = AN_DIFF_SERIES_BUDGET,
                     .no_tree = !a->svg};
    size_t nall = a->nbase + a->nnew;
    an_capture **m = calloc(nall, sizeof *m);
    an_diff_sums **sums = calloc(nall, sizeof *sums);
    const char **names = calloc(nall, sizeof *names);
    if (!m || !sums || !names) {
        fprintf(stderr, "capture_diff: out of memory\n");
        free(m);
        free(sums);
        free(names);
        return EXIT_USAGE;
    }
    an_capture **mb = m, **mn = m + a->nbase;
    char detail[400];
    int status = EXIT_USAGE;
    for (size_t i = 0; i < nall; i++)
        names[i] = i < a->nbase ? a->base[i] : a->new_[i - a->nbase];
    size_t failed = 0;
    if (an_diff_load(m, sums, names, nall, &lo, &a->o, 0, &failed, detail,
                     sizeof detail) != CAP_OK) {
        fprintf(stderr, "capture_diff: %s: %s\n", names[failed], detail);
        goto done;
    }
    int colour_err = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
    for (size_t i = 0; i < nall; i++)
        rep_warnings(stderr, m[i], "capture_diff", 0, colour_err);
    compare_meta(mb[0], mn[0]);
    compare_side("base", a->base, mb, a->nbase);
    compare_side("new", a->new_, mn, a->nnew);
    const char *scope = a->o.only_scope;
    if (scope && !any_has_scope(m, nall, scope)) {
        fprintf(stderr, "capture_diff: no scope named '%s' in %s\n", scope,
                nall == 2 ? "either run" : "any run");
        goto done;
    }
    an_diff d;
    cap_result r = an_diff_runs_sums(
        &d, (const an_capture *const *)mb,
        (const an_diff_sums *const *)sums, a->nbase,
        (const an_capture *const *)mn,
        (const an_diff_sums *const *)sums + a->nbase, a->nnew, &a->o);
    if (r != CAP_OK) {
        fprintf(stderr, "capture_diff: comparison failed: %s\n",
                cap_result_message(r));
    } else {
        if (d.approx && a->csv)
            fprintf(stderr, "note: %s\n", AN_DIFF_APPROX_NOTE);
        int colour = !a->csv && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
        an_diff_report(stdout, &d, &a->o.stat, a->csv, colour,
                       a->csv ? 0 : a->top);
        status = d.gating ? EXIT_REGRESSED : EXIT_SAME;
        if (a->svg && write_svg(a, mb[0], mn[0], &d) != 0)
            status = EXIT_USAGE;
        if (fflush(stdout) != 0) {
            fprintf(stderr, "capture_diff: writing the report failed: %s\n",
                    strerror(errno));
            status = EXIT_USAGE;
        }
        an_diff_free(&d);
    }
done:
    for (size_t i = 0; i < nall; i++) {
        an_free(m[i]);
        an_diff_sums_free(sums[i]);
    }
    free(m);
    free(sums);
    free(names);
    return status;
}

int main(int argc, char **argv)
{
    if (tool_version(argc, argv, "capture_diff"))
        return tool_version_done();
    args a;
    int p = parse_args(argc, argv, &a);
    if (p == 1) {
        usage(stdout);
        free(a.names);
        return EXIT_SAME;
    }
    int status = EXIT_USAGE;
    if (p == 0 && a.base_glob) {
        if (expand("--base-glob", a.base_glob, &a.gb) != 0)
            goto out;
        a.gb_used = 1;
        if (expand("--new-glob", a.new_glob, &a.gn) != 0)
            goto out;
        a.gn_used = 1;
        a.base = a.gb.gl_pathv;
        a.nbase = a.gb.gl_pathc;
        a.new_ = a.gn.gl_pathv;
        a.nnew = a.gn.gl_pathc;
    }
    if (p == 0)
        status = run(&a);
out:
    if (a.gb_used)
        globfree(&a.gb);
    if (a.gn_used)
        globfree(&a.gn);
    free(a.names);
    return status;
}
