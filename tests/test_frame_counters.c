/*
 * test_frame_counters - each counter's value per frame for --frames
 * (analysis/frame_counters.h): the mean of the samples inside a frame,
 * the last sample before it (carried) when none fell inside, nothing
 * before the first sample; out-of-order and non-finite samples; the globs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "frame_counters.h"

#define MS 1000000ll

/* Four frames of 10 ms from t = 10 ms: [10,20) [20,30) [30,40) [40,50). */
static an_frame frames[4] = {{10 * MS, 20 * MS},
                             {20 * MS, 30 * MS},
                             {30 * MS, 40 * MS},
                             {40 * MS, 50 * MS}};

/* The four frames with counters c[0..n). */
static an_capture capture_of(an_counter *c, size_t n)
{
    an_capture m = {0};
    m.frames = frames;
    m.nframes = 4;
    m.counters = c;
    m.ncounters = n;
    return m;
}

static void values_are(const an_frame_counter *c, const double *v,
                       const unsigned char *st)
{
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c->state[i], st[i]);
        if (st[i] == AN_FC_NONE)
            assert_true(isnan(c->value[i]));
        else
            assert_float_equal(c->value[i], v[i], 1e-12);
    }
}

static void mean_inside_carried_between_none_before(void **state)
{
    (void)state;
    /* clock: two samples in frame 1 (its mean), none in frame 2 (carried
     * from frame 1's last), one at frame 3's begin (inside: [begin, end));
     * nothing before frame 1 */
    an_sample clock[] = {{22 * MS, 2900}, {28 * MS, 2500}, {40 * MS, 2000}};
    /* temp: one sample before the first frame, one exactly at frame 1's
     * end (so in frame 2), then a NaN that is left out */
    an_sample temp[] = {{5 * MS, 50}, {30 * MS, 60}, {45 * MS, NAN}};
    an_counter c[] = {{"cpu0.freq_mhz", clock, 3, 3},
                      {"thermal.soc.temp_c", temp, 3, 3}};
    an_capture m = capture_of(c, 2);
    an_frame_counters fc;
    assert_int_equal(an_frame_counters_compute(&fc, &m, NULL, 0), CAP_OK);
    assert_int_equal(fc.n, 2);
    assert_int_equal(fc.ntext, 2);
    assert_false(fc.chosen);
    assert_string_equal(fc.c[0].name, "cpu0.freq_mhz");
    values_are(&fc.c[0], (double[]){0, 2700, 2500, 2000},
               (unsigned char[]){AN_FC_NONE, AN_FC_MEAN, AN_FC_CARRIED,
                                 AN_FC_MEAN});
    values_are(&fc.c[1], (double[]){50, 50, 60, 60},
               (unsigned char[]){AN_FC_CARRIED, AN_FC_CARRIED, AN_FC_MEAN,
                                 AN_FC_CARRIED});
    an_frame_counters_free(&fc);
    an_frame_counters_free(&fc); /* a freed result frees again */
}

static void samples_out_of_order_are_sorted(void **state)
{
    (void)state;
    an_sample s[] = {{41 * MS, 4}, {12 * MS, 1}, {48 * MS, 6}, {15 * MS, 3}};
    an_counter c[] = {{"queue_depth", s, 4, 4}};
    an_capture m = capture_of(c, 1);
    an_frame_counters fc;
    assert_int_equal(an_frame_counters_compute(&fc, &m, NULL, 0), CAP_OK);
    values_are(&fc.c[0], (double[]){2, 3, 3, 5},
               (unsigned char[]){AN_FC_MEAN, AN_FC_CARRIED, AN_FC_CARRIED,
                                 AN_FC_MEAN});
    an_frame_counters_free(&fc);
}

static void globs_choose_and_text_shows_at_most_four(void **state)
{
    (void)state;
    an_sample s[] = {{12 * MS, 1}};
    static const char *names[] = {"cpu0.freq_mhz", "cpu4.freq_mhz",
                                  "gpu0.temp_c",   "thermal.soc.temp_c",
                                  "proc.rss_mib",  "proc.cpu_pct"};
    an_counter c[6];
    for (int i = 0; i < 6; i++)
        c[i] = (an_counter){(char *)names[i], s, 1, 1};
    an_capture m = capture_of(c, 6);
    an_frame_counters fc;
    assert_int_equal(an_frame_counters_compute(&fc, &m, NULL, 0), CAP_OK);
    assert_int_equal(fc.n, 6);
    assert_int_equal(fc.ntext, AN_FC_TEXT_MAX);
    an_frame_counters_free(&fc);

    const char *g[] = {"*temp_c", "cpu*"};
    assert_int_equal(an_frame_counters_compute(&fc, &m, g, 2), CAP_OK);
    assert_true(fc.chosen);
    /* cpu0, cpu4, gpu0.temp_c, thermal.soc.temp_c (not proc.cpu_pct) */
    assert_int_equal(fc.n, 4);
    assert_string_equal(fc.c[3].name, "thermal.soc.temp_c");
    assert_int_equal(fc.ntext, 4);
    an_frame_counters_free(&fc);

    const char *none[] = {"fan*"};
    assert_int_equal(an_frame_counters_compute(&fc, &m, none, 1),
                     CAP_E_MISUSE);
    assert_int_equal(fc.n, 0);
    an_frame_counters_free(&fc);
}

static void no_frames_or_no_counters(void **state)
{
    (void)state;
    an_capture m = {0};
    an_frame_counters fc;
    assert_int_equal(an_frame_counters_compute(&fc, &m, NULL, 0), CAP_OK);
    assert_int_equal(fc.n, 0);
    an_sample s[] = {{12 * MS, 1}};
    an_counter c[] = {{"x", s, 1, 1}};
    m.counters = c;
    m.ncounters = 1;
    assert_int_equal(an_frame_counters_compute(&fc, &m, NULL, 0), CAP_OK);
    assert_int_equal(fc.n, 1);
    assert_int_equal(fc.nframes, 0);
    an_frame_counters_free(&fc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mean_inside_carried_between_none_before),
        cmocka_unit_test(samples_out_of_order_are_sorted),
        cmocka_unit_test(globs_choose_and_text_shows_at_most_four),
        cmocka_unit_test(no_frames_or_no_counters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
