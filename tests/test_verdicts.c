/*
 * test_verdicts - every row of the --over-time rule table (verdict.h) on
 * synthetic captures written through cap_writer.h, whose truth is known:
 * a capped and an uncapped ramp, a cold start, waits shrinking under a cap
 * and growing without one, profiler and program memory, zero medians.
 *
 * Until the producer tags waits in the file, the wait scope is marked by
 * setting an_scope.is_wait on the loaded model (what the reader will fill).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap_writer.h"
#include "model.h"
#include "render/render.h"
#include "report.h"

enum { N_WORK_A = 1, N_WORK_B, N_WAIT, N_RSS, N_PROF, N_SPARK, N_TINY,
       N_EXTRA1, N_EXTRA2, N_EXTRA3, N_CLOCK, N_TEMP, N_EXTRA4, N_EXTRA5,
       N_EXTRA6, N_FACTOR };

/* A game loop on one thread: work A and B, then a wait W. */
typedef struct sim {
    int frames;
    double cap_ms;                 /* > 0: the frame is held at cap_ms */
    double a_ms, b_ms;             /* work at the start */
    double (*work)(double x);      /* work factor at x in [0, 1] */
    double wait_ms;                /* uncapped: the wait's length */
    double (*wait)(double x);      /* uncapped: its factor, or NULL */
    double (*rss)(double x);       /* rss_mib, or NULL: not recorded */
    double (*prof)(double x);      /* cap.buffer_memory_mib, or NULL */
    int spark;                     /* a scope only in the second half */
    int tiny;                      /* a scope of 0.0002-0.0004 ms */
    int extra;                     /* 0-6 more work scopes of 2 ms each */
    int apart;                     /* how many of them follow `odd` */
    double (*odd)(double x);       /* their factor instead of `work` */
    double (*odd2)(double x);      /* the second one's, if not NULL */
    double (*clock)(double x);     /* cpu0.freq_mhz, or NULL */
    double (*temp)(double x);      /* thermal.soc.temp_c, or NULL */
    double (*mode)(int i);         /* frame i's own work factor (light or
                                      heavy frames), or NULL */
    int factor;                    /* record the work factor as the counter
                                      work_factor at each frame's begin */
} sim;

static char path[64];

static uint64_t ns(double ms)
{
    return (uint64_t)llround(ms * 1e6);
}

static void scope(cap_writer *w, uint32_t name, uint64_t *t, double ms)
{
    assert_int_equal(cap_writer_scope_begin(w, 0, name, *t), CAP_OK);
    *t += ns(ms);
    assert_int_equal(cap_writer_scope_end(w, 0, *t), CAP_OK);
}

static an_capture *run_sim(const sim *s, double skip_seconds)
{
    snprintf(path, sizeof path, "/tmp/cap_test_verdicts_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cap_writer *w;
    assert_int_equal(cap_writer_open_path(&w, path, NULL), CAP_OK);
    const char *names[] = {NULL,    "simulate", "render",
                           "wait_present", "rss_mib",
                           "cap.buffer_memory_mib", "spark", "tiny",
                           "extra1", "extra2", "extra3",
                           "cpu0.freq_mhz", "thermal.soc.temp_c",
                           "extra4", "extra5", "extra6", "work_factor"};
    for (uint32_t i = 1; i <= N_FACTOR; i++)
        assert_int_equal(cap_writer_name(w, i, names[i], NULL, 0), CAP_OK);
    assert_int_equal(cap_writer_thread(w, 0, "main"), CAP_OK);
    uint64_t t = 1000000;
    for (int i = 0; i < s->frames; i++) {
        double x = (double)i / (s->frames - 1);
        double k = (s->work ? s->work(x) : 1.0) * (s->mode ? s->mode(i) : 1.0);
        double a = s->a_ms * k, b = s->b_ms * k;
        double wt = s->cap_ms > 0 ? s->cap_ms - a - b
                                  : s->wait_ms * (s->wait ? s->wait(x) : 1.0);
        uint64_t begin = t;
        if (s->rss)
            assert_int_equal(cap_writer_counter(w, N_RSS, t, 1000 * s->rss(x)),
                             CAP_OK);
        if (s->prof)
            assert_int_equal(
                cap_writer_counter(w, N_PROF, t, 10 * s->prof(x)), CAP_OK);
        if (s->clock)
            assert_int_equal(cap_writer_counter(w, N_CLOCK, t, s->clock(x)),
                             CAP_OK);
        if (s->temp)
            assert_int_equal(cap_writer_counter(w, N_TEMP, t, s->temp(x)),
                             CAP_OK);
        if (s->factor)
            assert_int_equal(cap_writer_counter(w, N_FACTOR, t, k), CAP_OK);
        scope(w, N_WORK_A, &t, a);
        scope(w, N_WORK_B, &t, b);
        for (int e = 0; e < s->extra; e++)
            scope(w, (uint32_t)(e < 3 ? N_EXTRA1 + e : N_EXTRA4 + e - 3), &t,
                  2.0 * (e >= s->apart ? k
                         : e == 1 && s->odd2 ? s->odd2(x)
                                             : s->odd(x)));
        if (s->spark && x >= 0.5)
            scope(w, N_SPARK, &t, 0.5);
        if (s->tiny)
            scope(w, N_TINY, &t, 0.0002 * (1 + x));
        if (wt > 0)
            scope(w, N_WAIT, &t, wt);
        if (s->cap_ms > 0)
            t = begin + ns(s->cap_ms);
        assert_int_equal(cap_writer_frame(w, (uint64_t)i, begin, t), CAP_OK);
    }
    assert_int_equal(cap_writer_close(w), CAP_OK);
    an_capture *m;
    char d[256];
    an_options o = {.skip_seconds = skip_seconds};
    assert_int_equal(an_load(&m, path, &o, d, sizeof d), CAP_OK);
    unlink(path);
    long wi = an_find_scope(m, AN_CPU, "wait_present");
    if (wi >= 0)
        m->scopes[wi].is_wait = 1;
    return m;
}

/* The verdicts of 10 bins over the capture; also renders the report and
 * checks it never prints "nan". With `text`, *text gets the whole report
 * (caller frees). */
static an_verdicts verdicts_and_text(an_capture *m, char **text)
{
    an_over_time ot;
    assert_int_equal(an_over_time_compute(&ot, m, 10, 0), CAP_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    an_text_over_time(f, m, &ot, 0);
    fclose(f);
    assert_null(strstr(buf, "nan"));
    if (text)
        *text = buf;
    else
        free(buf);
    an_verdicts v = ot.verdicts;
    an_over_time_free(&ot);
    return v;
}

static an_verdicts verdicts_of(an_capture *m)
{
    return verdicts_and_text(m, NULL);
}

static const an_verdict *find(const an_verdicts *v, an_verdict_kind k)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->v[i].kind == k)
            return &v->v[i];
    return NULL;
}

/* No row says the work grew uniformly (the throttling signature). */
static void assert_not_uniform(const an_verdicts *v)
{
    assert_null(find(v, AN_V_THROTTLING));
    assert_null(find(v, AN_V_THROTTLING_UNCHECKED));
    assert_null(find(v, AN_V_UNIFORM_MEMORY_MOVED));
}

/* Seven light frames, then seven heavy ones doing 1.6x the work. */
static double sevens(int i)
{
    return (i / 7) % 2 ? 1.6 : 1.0;
}

static double linear_40(double x)
{
    return 1.0 + 0.4 * x;
}

static double linear_30(double x)
{
    return 1.0 + 0.3 * x;
}
static double flat(double x)
{
    (void)x;
    return 1.0;
}
static double cold(double x)
{
    return x < 0.1 ? 0.8 : 1.0;
}
static double warm_5pct(double x)
{
    return x < 0.05 ? 1.0 : 1.05;
}
static double leak_30(double x)
{
    return 1.0 + 0.3 * x;
}
static double quadruple(double x)
{
    return 1.0 + 3.0 * x;
}
static double wait_triples(double x)
{
    return 1.0 + 2.0 * x;
}

static void capped_ramp_is_headroom_being_eaten_and_the_wait_absorbs_it(
    void **state)
{
    (void)state;
    sim s = {.frames = 600, .cap_ms = 16.667, .a_ms = 4, .b_ms = 4,
             .work = linear_30, .rss = flat};
    an_capture *m = run_sim(&s, 0);
    an_verdicts v = verdicts_of(m);
    const an_verdict *h = find(&v, AN_V_CAPPED_HEADROOM);
    assert_non_null(h);
    assert_true(h->fig[0] > 1.20 && h->fig[0] < 1.32); /* work growth */
    assert_true(fabs(h->fig[1] - 16.667) < 0.01);      /* frame, first */
    assert_true(fabs(h->fig[2] - 16.667) < 0.01);      /* frame, last */
    const an_verdict *a = find(&v, AN_V_CAP_ABSORBING);
    assert_non_null(a);
    assert_string_equal(a->scope, "wait_present");
    assert_true(a->fig[1] < a->fig[0] && a->fig[2] <= AN_OT_SHRINK);
    assert_null(find(&v, AN_V_STEADY));
    assert_null(find(&v, AN_V_WORK_GREW));
    assert_null(find(&v, AN_V_COLD_START));
    /* the cap hides the growth from the frame, not from the verdict: both
     * scopes grew alike, so the throttling signature is named too, after
     * the headroom row */
    const an_verdict *t = find(&v, AN_V_THROTTLING);
    assert_non_null(t);
    assert_true(t > h);
    assert_true(t->fig[0] > 1.20 && t->fig[0] < 1.32);
    assert_null(t->scope);
    an_free(m);
}

static double drops_to_70(double x)
{
    return x < 0.5 ? 1.0 : 0.7;
}

static double jumps_to_300(double x)
{
    return x < 0.3 ? 1.0 : 3.0;
}

/* `work` scopes (2 to 8) grow 1.3x but `apart` of them drop to 0.7x
 * halfway, the second of them following odd2 instead if not NULL. The
 * caller frees *m and, with `text`, *text (as verdicts_and_text). */
static an_verdicts with_apart(int work, int apart, double (*odd2)(double),
                              an_capture **m, char **text)
{
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = linear_30,
             .wait_ms = 1, .rss = flat, .extra = work - 2, .apart = apart,
             .odd = drops_to_70, .odd2 = odd2};
    *m = run_sim(&s, 0);
    return verdicts_and_text(*m, text);
}

/* The throttling row of v, with the growth of the rest in 1.20-1.32x. */
static const an_verdict *uniform_row(const an_verdicts *v)
{
    const an_verdict *t = find(v, AN_V_THROTTLING);
    assert_non_null(t);
    assert_true(t->fig[1] > 1.20 && t->fig[2] < 1.32);
    return t;
}

static void one_scope_apart_does_not_hide_a_uniform_growth(void **state)
{
    (void)state;
    /* five work scopes: four grow 1.3x, extra1 drops to 0.7x halfway (a
     * thread preempted in a new phase, seen on a game on two cores) */
    an_capture *m;
    char *text;
    an_verdicts v = with_apart(5, 1, NULL, &m, &text);
    const an_verdict *t = uniform_row(&v);
    assert_string_equal(t->scope, "extra1");
    assert_true(fabs(t->fig[4] - 0.7) < 0.01);
    assert_null(t->scope2);
    assert_non_null(strstr(text, "; extra1 stood apart at 0.70x)"));
    free(text);
    an_free(m);
}

static void two_scopes_apart_make_the_growth_uneven(void **state)
{
    (void)state;
    an_capture *m;
    an_verdicts v = with_apart(5, 2, NULL, &m, NULL);
    assert_not_uniform(&v);
    /* medians 15.15 ms in the first bin, 16.65 ms in the last: the frame
     * grew just under 1.10x, the work more: headroom eaten, and with two
     * scopes shrinking, not the throttling signature */
    assert_non_null(find(&v, AN_V_CAPPED_HEADROOM));
    an_free(m);
}

static void two_of_eight_apart_do_not_hide_a_uniform_growth(void **state)
{
    (void)state;
    /* eight work scopes: six grow 1.3x; extra1 drops to 0.7x halfway,
     * extra2 triples a third of the way in (a scope that wakes another
     * thread, on a game with more threads than cores, under TSan): one in
     * four may stand apart, so both are named and the rest judged */
    an_capture *m;
    char *text;
    an_verdicts v = with_apart(8, 2, jumps_to_300, &m, &text);
    const an_verdict *t = uniform_row(&v);
    /* the farthest from the median growth (1.3x) first */
    assert_string_equal(t->scope, "extra2");
    assert_true(fabs(t->fig[4] - 3.0) < 0.01);
    assert_string_equal(t->scope2, "extra1");
    assert_true(fabs(t->fig2 - 0.7) < 0.01);
    assert_non_null(
        strstr(text, "; extra2 (3.00x) and extra1 (0.70x) stood apart)"));
    free(text);
    an_free(m);
}

static void three_of_eight_apart_make_the_growth_uneven(void **state)
{
    (void)state;
    an_capture *m;
    an_verdicts v = with_apart(8, 3, NULL, &m, NULL);
    assert_not_uniform(&v);
    an_free(m);
}

static double shrinks_16(double x)
{
    return 1.0 - 0.16 * x;
}

static void frame_growing_less_than_the_work_is_headroom(void **state)
{
    (void)state;
    /* work 8 ms -> 10.4 ms, the wait 8 ms -> 6.72 ms: the frame grows
     * 7 %, under the growth threshold, while the work grows 1.3x */
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = linear_30,
             .wait_ms = 8, .wait = shrinks_16, .rss = flat};
    an_capture *m = run_sim(&s, 0);
    char *text;
    an_verdicts v = verdicts_and_text(m, &text);
    const an_verdict *h = find(&v, AN_V_CAPPED_HEADROOM);
    assert_non_null(h);
    assert_true(h->fig[3] > 1.05 && h->fig[3] < 1.08);
    assert_non_null(find(&v, AN_V_THROTTLING));
    assert_null(find(&v, AN_V_STEADY));
    assert_non_null(strstr(text, "Frame time grew only "));
    free(text);
    an_free(m);
}

static void uncapped_ramp_is_throttling_and_a_ramp_not_a_cold_start(
    void **state)
{
    (void)state;
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = linear_30,
             .wait_ms = 1, .rss = flat};
    an_capture *m = run_sim(&s, 0);
    an_verdicts v = verdicts_of(m);
    const an_verdict *t = find(&v, AN_V_THROTTLING);
    assert_non_null(t);
    assert_true(t->fig[0] > 1.20 && t->fig[0] < 1.32);
    assert_non_null(find(&v, AN_V_RAMP));
    assert_null(find(&v, AN_V_COLD_START));
    assert_null(find(&v, AN_V_CAPPED_HEADROOM));
    an_free(m);
    /* after --skip-seconds the ramp is still a ramp */
    m = run_sim(&s, 1.0);
    v = verdicts_of(m);
    assert_non_null(find(&v, AN_V_RAMP));
    assert_null(find(&v, AN_V_COLD_START));
    an_free(m);
}

static void no_memory_counter_leaves_throttling_unchecked(void **state)
{
    (void)state;
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = linear_30,
             .wait_ms = 1};
    an_capture *m = run_sim(&s, 0);
    an_verdicts v = verdicts_of(m);
    assert_non_null(find(&v, AN_V_THROTTLING_UNCHECKED));
    assert_null(find(&v, AN_V_THROTTLING));
    an_free(m);
}

static void cold_start_settles_and_is_not_a_ramp(void **state)
{
    (void)state;
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = cold, .wait_ms = 1,
             .rss = flat};
    an_capture *m = run_sim(&s, 0);
    an_verdicts v = verdicts_of(m);
    const an_verdict *c = find(&v, AN_V_COLD_START);
    assert_non_null(c);
    assert_true(c->fig[0] < 0.9 * c->fig[1]);
    assert_null(find(&v, AN_V_RAMP));
    an_free(m);
}

static void growing_waits_are_never_called_more_work(void **state)
{
    (void)state;
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = flat, .wait_ms = 2,
             .wait = wait_triples, .rss = flat};
    an_capture *m = run_sim(&s, 0);
    an_verdicts v = verdicts_of(m);
    const an_verdict *w = find(&v, AN_V_WAITS_GREW);
    assert_non_null(w);
    assert_string_equal(w->scope, "wait_present");
    assert_null(find(&v, AN_V_WORK_GREW));
    assert_null(find(&v, AN_V_THROTTLING));
    an_free(m);
}

static void profiler_memory_and_an_early_rss_rise_do_not_veto(void **state)
{
    (void)state;
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = linear_30,
             .wait_ms = 1, .rss = warm_5pct, .prof = quadruple};
    an_capture *m = run_sim(&s, 0);
    an_verdicts v = verdicts_of(m);
    assert_non_null(find(&v, AN_V_THROTTLING));
    assert_null(find(&v, AN_V_UNIFORM_MEMORY_MOVED));
    an_free(m);
    /* a leak that keeps growing does veto */
    s.rss = leak_30;
    m = run_sim(&s, 0);
    v = verdicts_of(m);
    const an_verdict *mm = find(&v, AN_V_UNIFORM_MEMORY_MOVED);
    assert_non_null(mm);
    assert_true(mm->fig[3] >= 1.0 + AN_OT_FLAT);
    assert_null(find(&v, AN_V_THROTTLING));
    an_free(m);
}

static void zero_medians_give_words_not_growths(void **state)
{
    (void)state;
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = flat, .wait_ms = 1,
             .spark = 1, .tiny = 1};
    an_capture *m = run_sim(&s, 0);
    an_over_time ot;
    assert_int_equal(an_over_time_compute(&ot, m, 10, 0), CAP_OK);
    int saw_spark = 0, saw_tiny = 0;
    for (size_t j = 0; j < ot.nscopes; j++) {
        const an_ot_scope *S = &ot.scopes[j];
        if (strcmp(S->scope->name, "spark") == 0) {
            assert_int_equal(S->growth.state, AN_RATIO_FROM_ZERO);
            saw_spark = 1;
        }
        if (strcmp(S->scope->name, "tiny") == 0) {
            assert_int_equal(S->growth.state, AN_RATIO_AT_ZERO);
            assert_true(isnan(S->growth.value));
            saw_tiny = 1;
        }
    }
    assert_true(saw_spark && saw_tiny);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    an_text_over_time(f, m, &ot, 0);
    fclose(f);
    assert_non_null(strstr(buf, "from 0"));
    assert_non_null(strstr(buf, "at 0"));
    assert_null(strstr(buf, "nan"));
    free(buf);
    an_over_time_free(&ot);
    an_free(m);
}

static void ratios_with_zero_denominators_are_states(void **state)
{
    (void)state;
    an_ratio r = an_ratio_of(2, 0, 0);
    assert_int_equal(r.state, AN_RATIO_FROM_ZERO);
    r = an_ratio_of(0, 0, 0);
    assert_int_equal(r.state, AN_RATIO_AT_ZERO);
    r = an_ratio_of(NAN, 1, 0);
    assert_int_equal(r.state, AN_RATIO_NO_DATA);
    r = an_ratio_of(0.0012, 0.0004, AN_OT_ZERO_MS); /* 0.001 over 0.000 */
    assert_int_equal(r.state, AN_RATIO_FROM_ZERO);
    r = an_ratio_of(0.0003, 0.0004, AN_OT_ZERO_MS); /* 0.000 over 0.000 */
    assert_int_equal(r.state, AN_RATIO_AT_ZERO);
    r = an_ratio_of(3, 2, AN_OT_ZERO_MS);
    assert_int_equal(r.state, AN_RATIO_VALUE);
    assert_true(r.value == 1.5);
}

/* ---- the device's evidence joins the scopes' verdict (issue #17) ------- */

static double clock_falls(double x) /* the work x 1.3 at the end */
{
    return 2900 / linear_30(x);
}
static double clock_holds(double x)
{
    (void)x;
    return 2900;
}
static double soc_heats(double x)
{
    return 52 + 29 * x;
}
static double soc_holds(double x)
{
    return 45 + 0.5 * x;
}

/* The verdicts; the report's text into text[size] (the sentences are
 * in it); m freed. */
static an_verdicts device_verdicts(an_capture *m, char *text, size_t size)
{
    char *buf;
    an_verdicts v = verdicts_and_text(m, &buf);
    snprintf(text, size, "%s", buf);
    free(buf);
    an_free(m);
    return v;
}

static void one_row_cites(const an_verdicts *v, an_verdict_kind device,
                          an_verdict_kind cited)
{
    const an_verdict *d = find(v, device);
    assert_non_null(d);
    assert_int_equal((int)d->fig[5], (int)cited);
    assert_null(find(v, cited)); /* replaced: one sentence, not two */
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        n += v->v[i].kind >= AN_V_DEVICE_THERMAL;
    assert_int_equal(n, 1);
}

static void clock_down_heat_up_is_thermal_throttling_in_one_sentence(
    void **state)
{
    (void)state;
    char text[16384];
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = linear_30,
             .wait_ms = 1, .rss = flat, .clock = clock_falls,
             .temp = soc_heats};
    an_verdicts v = device_verdicts(run_sim(&s, 0), text, sizeof text);
    one_row_cites(&v, AN_V_DEVICE_THERMAL, AN_V_THROTTLING);
    const an_verdict *d = find(&v, AN_V_DEVICE_THERMAL);
    assert_true(d->fig[0] > 1.20 && d->fig[0] < 1.32); /* the scopes' */
    assert_non_null(find(&v, AN_V_RAMP)); /* the other rows stay */
    assert_non_null(strstr(text, "Every top scope grew by about "));
    assert_non_null(strstr(text, "(1.27x to 1.27x) while the CPU clock fell "
                                 "from 2.85 to 2.25 GHz (cpu0.freq_mhz)"));
    assert_non_null(strstr(text, " and the temperature rose from 54 to 80 "
                                 "°C (thermal.soc.temp_c): thermal "
                                 "throttling. The device slowed down; memory "
                                 "stayed flat, so the work did not grow.\n"));
}

static void clock_down_without_heat_is_a_power_or_governor_limit(void **state)
{
    (void)state;
    char text[16384];
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = linear_30,
             .wait_ms = 1, .clock = clock_falls, .temp = soc_holds};
    an_verdicts v = device_verdicts(run_sim(&s, 0), text, sizeof text);
    /* no memory counter: the unchecked row is the one cited */
    one_row_cites(&v, AN_V_DEVICE_POWER, AN_V_THROTTLING_UNCHECKED);
    assert_non_null(strstr(text, ": a power or governor limit (the clock "
                                 "fell without heat). The device slowed "
                                 "down (no memory counter recorded to rule "
                                 "out growing work).\n"));
}

static void scopes_grew_with_flat_clocks_is_growing_work(void **state)
{
    (void)state;
    char text[16384];
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = linear_30,
             .wait_ms = 1, .rss = flat, .clock = clock_holds,
             .temp = soc_holds};
    an_verdicts v = device_verdicts(run_sim(&s, 0), text, sizeof text);
    one_row_cites(&v, AN_V_DEVICE_WORK_GREW, AN_V_THROTTLING);
    assert_non_null(strstr(text, " while the CPU clock stayed at 2.90 GHz "
                                 "(cpu0.freq_mhz) and the temperature "
                                 "stayed at 45 °C (thermal.soc.temp_c): the "
                                 "clocks did not fall, so the work grew. "
                                 "Growth this even is the throttling "
                                 "signature, but the clocks held: not "
                                 "throttling.\n"));
}

static void clock_fell_but_scopes_flat_says_the_evidence_contradicts(
    void **state)
{
    (void)state;
    char text[16384];
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .wait_ms = 1, .rss = flat,
             .clock = clock_falls, .temp = soc_heats};
    an_verdicts v = device_verdicts(run_sim(&s, 0), text, sizeof text);
    one_row_cites(&v, AN_V_DEVICE_CONTRADICTS, AN_V_STEADY);
    assert_int_equal(v.n, 1);
    assert_non_null(strstr(text, "Frame time is steady across the bins "
                                 "(1.00x from the first to the last) while "
                                 "the CPU clock fell from 2.86 to 2.26 GHz "
                                 "(cpu0.freq_mhz) and the temperature rose "
                                 "from 53 to 80 °C (thermal.soc.temp_c)"));
    assert_non_null(strstr(text, ", yet the work did not slow down (1.00x): "
                                 "the clock did not limit it. The device's "
                                 "evidence contradicts the scopes"));
}

static void heat_without_a_clock_cannot_tell_and_a_cap_is_cited(void **state)
{
    (void)state;
    char text[16384];
    sim s = {.frames = 600, .a_ms = 4, .b_ms = 4, .work = linear_30,
             .wait_ms = 1, .rss = flat, .temp = soc_heats};
    an_verdicts v = device_verdicts(run_sim(&s, 0), text, sizeof text);
    one_row_cites(&v, AN_V_DEVICE_NO_CLOCK, AN_V_THROTTLING);
    assert_non_null(strstr(text, ": no clock was recorded, so the cause "
                                 "cannot be told.\n"));
    /* under a cap: the throttling row that follows capped-headroom is
     * cited; the headroom and the wait's rows stay */
    sim c = {.frames = 600, .cap_ms = 16.667, .a_ms = 4, .b_ms = 4,
             .work = linear_30, .rss = flat, .clock = clock_falls,
             .temp = soc_heats};
    v = device_verdicts(run_sim(&c, 0), text, sizeof text);
    one_row_cites(&v, AN_V_DEVICE_THERMAL, AN_V_THROTTLING);
    assert_non_null(find(&v, AN_V_CAPPED_HEADROOM));
    assert_non_null(find(&v, AN_V_CAP_ABSORBING));
    assert_non_null(strstr(text, "\n  Frame time held steady (median 16.667 "
                                 "ms in the first bin, 16.667 ms in the "
                                 "last) while the work inside the frame"));
    assert_non_null(strstr(text, "°C (thermal.soc.temp_c): thermal "
                                 "throttling. The device slowed down; memory "
                                 "stayed flat, so the work did not grow.\n"));
}

static void every_row_of_the_table_has_a_key_and_a_rule(void **state)
{
    (void)state;
    for (int k = 0; k < AN_V_COUNT; k++) {
        assert_true(strlen(an_verdict_key((an_verdict_kind)k)) > 2);
        assert_true(strlen(an_verdict_rule((an_verdict_kind)k)) > 10);
    }
    assert_string_equal(an_verdict_key(AN_V_COUNT), "?");
}

/* |a - b| <= eps, in double (cmocka's float assertions are not in every
 * release Debian ships). */
#define assert_near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

/* The over-time figures of 10 bins (caller frees with an_over_time_free). */
static void over_time_of(an_capture *m, an_over_time *ot)
{
    assert_int_equal(an_over_time_compute(ot, m, 10, 0), CAP_OK);
}

/* A game that alternates light and heavy frames: a bin's plain median
 * lands on whichever group holds more of its frames, so the medians jump
 * by the heavy factor with no change in the work. The two groups are
 * found, weighted by the capture's mix, and nothing grew. */
static void alternating_heavy_frames_are_steady_not_throttling(void **state)
{
    (void)state;
    sim s = {.frames = 200, .a_ms = 4, .b_ms = 3, .wait_ms = 2,
             .work = flat, .mode = sevens, .factor = 1};
    an_capture *m = run_sim(&s, 0);
    an_over_time ot;
    over_time_of(m, &ot);
    /* the trap: plain medians jump between 9 and 13.2 ms */
    double lo = INFINITY, hi = 0;
    for (int b = 0; b < ot.nbins; b++) {
        lo = fmin(lo, ot.bins[b].frame.median);
        hi = fmax(hi, ot.bins[b].frame.median);
    }
    assert_true(hi / lo > 1.4);
    assert_int_equal(ot.groups, 2);
    assert_near(ot.group_ms[0], 9.0, 1e-6);
    assert_near(ot.group_ms[1], 13.2, 1e-6);
    assert_near(ot.group_share[0] + ot.group_share[1], 1.0, 1e-12);
    for (int b = 0; b < ot.nbins; b++) {
        const an_ot_bin *B = &ot.bins[b];
        assert_near(B->group_median[0], 9.0, 1e-6);
        assert_near(B->group_median[1], 13.2, 1e-6);
        assert_int_equal(B->group_frames[0] + B->group_frames[1], B->frames);
        assert_near(B->level,
                            9.0 * ot.group_share[0] + 13.2 * ot.group_share[1],
                            1e-6);
        assert_int_equal(B->growth.state, AN_RATIO_VALUE);
        assert_near(B->growth.value, 1.0, 1e-9);
    }
    for (size_t j = 0; j < ot.nscopes; j++)
        if (ot.scopes[j].growth.state == AN_RATIO_VALUE)
            assert_near(ot.scopes[j].growth.value, 1.0, 1e-9);
    /* a counter that follows the frames' work: its means mixed alike */
    int seen = 0;
    for (size_t c = 0; c < ot.ncounters; c++) {
        const an_ot_counter *C = &ot.counters[c];
        if (strcmp(C->name, "work_factor") != 0)
            continue;
        seen = 1;
        for (int b = ot.ref; b <= ot.last; b++)
            assert_near(C->mean[b],
                        1.0 * ot.group_share[0] + 1.6 * ot.group_share[1],
                        1e-9);
        assert_int_equal(C->growth.state, AN_RATIO_VALUE);
        assert_near(C->growth.value, 1.0, 1e-9);
    }
    assert_true(seen);
    an_over_time_free(&ot);
    char *text;
    an_verdicts v = verdicts_and_text(m, &text);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.v[0].kind, AN_V_STEADY);
    assert_non_null(strstr(text, "Frames fall in two groups all along the capture: "
                                 "light (median 9.000 ms"));
    assert_non_null(strstr(text, "mixed ms"));
    free(text);
    /* the summary at the top of every report names the groups too */
    an_frame_stats fs;
    assert_int_equal(an_frame_stats_compute(&fs, m), CAP_OK);
    assert_int_equal(fs.groups, 2);
    assert_near(fs.group_ms[0], 9.0, 1e-6);
    assert_near(fs.group_ms[1], 13.2, 1e-6);
    assert_near(fs.group_share[0] + fs.group_share[1], 1.0, 1e-12);
    an_free(m);
}

/* The same frames on a device that slows 1.4x over the run: both groups
 * slow alike, and the growth is the clock's, not the mix's. */
static void alternating_heavy_frames_under_throttling_grow_by_the_clock(
    void **state)
{
    (void)state;
    sim s = {.frames = 200, .a_ms = 4, .b_ms = 3, .wait_ms = 0.001,
             .work = linear_40, .mode = sevens};
    an_capture *m = run_sim(&s, 0);
    an_over_time ot;
    over_time_of(m, &ot);
    assert_int_equal(ot.groups, 2);
    /* each group's median grew about as the work factor between the two
       bins' middles (1.4x over the run) */
    double g[2];
    for (int k = 0; k < 2; k++)
        g[k] = ot.bins[ot.last].group_median[k] /
               ot.bins[ot.ref].group_median[k];
    assert_true(g[0] > 1.28 && g[0] < 1.40);
    assert_true(g[1] > 1.28 && g[1] < 1.40);
    double fg = ot.bins[ot.last].growth.value;
    assert_true(fabs(fg - (g[0] + g[1]) / 2) < 0.03);
    an_over_time_free(&ot);
    an_verdicts v = verdicts_of(m);
    const an_verdict *t = find(&v, AN_V_THROTTLING_UNCHECKED);
    assert_non_null(t);
    assert_true(t->fig[0] > 1.28 && t->fig[0] < 1.40);
    an_free(m);
}

/* Under a frame cap the frame times are all the cap's: the light and
 * heavy frames split by their CPU work instead, and the work's mixed
 * median holds while the mix moves. */
static void capped_alternating_heavy_frames_split_by_work_and_hold(
    void **state)
{
    (void)state;
    sim s = {.frames = 200, .cap_ms = 16.667, .a_ms = 4, .b_ms = 3,
             .work = flat, .mode = sevens};
    an_capture *m = run_sim(&s, 0);
    an_over_time ot;
    over_time_of(m, &ot);
    assert_int_equal(ot.groups, 2);
    assert_int_equal(ot.group_by_work, 1);
    assert_near(ot.group_ms[0], 7.0, 1e-6);
    assert_near(ot.group_ms[1], 11.2, 1e-6);
    for (int b = ot.ref; b <= ot.last; b++) {
        assert_near(ot.bins[b].group_median[0], 7.0, 1e-6);
        assert_near(ot.bins[b].group_median[1], 11.2, 1e-6);
        assert_near(ot.work.median[b],
                    7.0 * ot.group_share[0] + 11.2 * ot.group_share[1], 1e-6);
    }
    assert_int_equal(ot.work.growth.state, AN_RATIO_VALUE);
    assert_near(ot.work.growth.value, 1.0, 1e-9);
    an_over_time_free(&ot);
    char *text;
    an_verdicts v = verdicts_and_text(m, &text);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.v[0].kind, AN_V_STEADY);
    assert_non_null(strstr(text, "two groups all along the capture by their CPU work"));
    assert_non_null(strstr(text, "light work"));
    free(text);
    an_free(m);
}

/* The same capped frames on a device that slows 1.4x: the headroom is
 * eaten, by the clock's factor, whatever the mix of the last bin. */
static void capped_alternating_heavy_frames_under_throttling_eat_headroom(
    void **state)
{
    (void)state;
    sim s = {.frames = 200, .cap_ms = 16.667, .a_ms = 4, .b_ms = 3,
             .work = linear_40, .mode = sevens};
    an_capture *m = run_sim(&s, 0);
    an_verdicts v = verdicts_of(m);
    const an_verdict *h = find(&v, AN_V_CAPPED_HEADROOM);
    assert_non_null(h);
    assert_true(h->fig[0] > 1.28 && h->fig[0] < 1.40);
    const an_verdict *t = find(&v, AN_V_THROTTLING_UNCHECKED);
    assert_non_null(t);
    assert_true(t->fig[0] > 1.28 && t->fig[0] < 1.40);
    an_free(m);
}

/* Twenty-five light frames, then twenty-five heavy ones. */
static double twenty_fives(int i)
{
    return (i / 25) % 2 ? 1.6 : 1.0;
}

/* Stretches longer than a bin: most bins hold one group only, and a plain
 * median lands on a different group from one bin to the next. A bin takes
 * the group it lacks from its nearest bins: every bin reads the same. */
static void stretches_longer_than_a_bin_borrow_the_group_they_lack(
    void **state)
{
    (void)state;
    sim s = {.frames = 300, .a_ms = 4, .b_ms = 3, .wait_ms = 2,
             .work = flat, .mode = twenty_fives};
    an_capture *m = run_sim(&s, 0);
    an_over_time ot;
    over_time_of(m, &ot);
    assert_int_equal(ot.groups, 2);
    assert_int_equal(ot.group_by_work, 0);
    int lacking = 0;
    double want = 9.0 * ot.group_share[0] + 13.2 * ot.group_share[1];
    for (int b = ot.ref; b <= ot.last; b++) {
        const an_ot_bin *B = &ot.bins[b];
        lacking += !B->group_frames[0] || !B->group_frames[1];
        assert_true(isnan(B->group_median[1]) == !B->group_frames[1]);
        assert_near(B->level, want, 1e-6);
    }
    assert_true(lacking >= 2);
    an_over_time_free(&ot);
    char *text;
    an_verdicts v = verdicts_and_text(m, &text);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.v[0].kind, AN_V_STEADY);
    assert_non_null(strstr(text, "takes that group's median from the "
                                 "nearest bins with it"));
    free(text);
    an_free(m);
}

/* Frames that vary without falling in two groups keep plain medians. */
static void frames_in_one_group_keep_plain_medians(void **state)
{
    (void)state;
    sim s = {.frames = 200, .a_ms = 4, .b_ms = 3, .wait_ms = 2,
             .work = linear_30};
    an_capture *m = run_sim(&s, 0);
    an_over_time ot;
    over_time_of(m, &ot);
    assert_int_equal(ot.groups, 1);
    for (int b = 0; b < ot.nbins; b++)
        assert_true(ot.bins[b].level == ot.bins[b].frame.median ||
                    (isnan(ot.bins[b].level) &&
                     isnan(ot.bins[b].frame.median)));
    an_over_time_free(&ot);
    an_frame_stats fs;
    assert_int_equal(an_frame_stats_compute(&fs, m), CAP_OK);
    assert_int_equal(fs.groups, 1);
    an_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(capped_ramp_is_headroom_being_eaten_and_the_wait_absorbs_it),
        cmocka_unit_test(uncapped_ramp_is_throttling_and_a_ramp_not_a_cold_start),
        cmocka_unit_test(one_scope_apart_does_not_hide_a_uniform_growth),
        cmocka_unit_test(two_scopes_apart_make_the_growth_uneven),
        cmocka_unit_test(two_of_eight_apart_do_not_hide_a_uniform_growth),
        cmocka_unit_test(three_of_eight_apart_make_the_growth_uneven),
        cmocka_unit_test(frame_growing_less_than_the_work_is_headroom),
        cmocka_unit_test(no_memory_counter_leaves_throttling_unchecked),
        cmocka_unit_test(cold_start_settles_and_is_not_a_ramp),
        cmocka_unit_test(growing_waits_are_never_called_more_work),
        cmocka_unit_test(profiler_memory_and_an_early_rss_rise_do_not_veto),
        cmocka_unit_test(zero_medians_give_words_not_growths),
        cmocka_unit_test(ratios_with_zero_denominators_are_states),
        cmocka_unit_test(clock_down_heat_up_is_thermal_throttling_in_one_sentence),
        cmocka_unit_test(clock_down_without_heat_is_a_power_or_governor_limit),
        cmocka_unit_test(scopes_grew_with_flat_clocks_is_growing_work),
        cmocka_unit_test(clock_fell_but_scopes_flat_says_the_evidence_contradicts),
        cmocka_unit_test(heat_without_a_clock_cannot_tell_and_a_cap_is_cited),
        cmocka_unit_test(every_row_of_the_table_has_a_key_and_a_rule),
        cmocka_unit_test(alternating_heavy_frames_are_steady_not_throttling),
        cmocka_unit_test(
            alternating_heavy_frames_under_throttling_grow_by_the_clock),
        cmocka_unit_test(frames_in_one_group_keep_plain_medians),
        cmocka_unit_test(
            stretches_longer_than_a_bin_borrow_the_group_they_lack),
        cmocka_unit_test(
            capped_alternating_heavy_frames_split_by_work_and_hold),
        cmocka_unit_test(
            capped_alternating_heavy_frames_under_throttling_eat_headroom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
