/*
 * test_svg.c - the pictures' shared pieces: XML text, label truncation,
 * axis ticks, and whole pictures of the bundled captures that must be
 * well-formed whatever the names hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frame_chart.h"
#include "model.h"
#include "render/svg.h"
#include "render/svg_util.h"

/* What an__svg_text writes for s with max_cols. */
static char *text(const char *s, size_t max_cols)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    an__svg_text(f, s, max_cols);
    fclose(f);
    return buf;
}

static void check_text(const char *s, size_t max_cols, const char *want)
{
    char *got = text(s, max_cols);
    assert_string_equal(got, want);
    free(got);
}

static void xml_special_characters_are_escaped(void **state)
{
    (void)state;
    check_text("a<b & \"c\" 'd'>", SIZE_MAX,
               "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
    check_text("]]></title><script>", SIZE_MAX,
               "]]&gt;&lt;/title&gt;&lt;script&gt;");
}

static void bytes_that_are_not_utf8_become_replacement_characters(void **state)
{
    (void)state;
    /* a lone continuation byte, an overlong '/', a surrogate, a cut
     * sequence at the end */
    check_text("a\x80z", SIZE_MAX, "a\xEF\xBF\xBDz");
    check_text("\xC0\xAF", SIZE_MAX, "\xEF\xBF\xBD\xEF\xBF\xBD");
    check_text("\xED\xA0\x80", SIZE_MAX,
               "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    check_text("ok\xE2\x82", SIZE_MAX, "ok\xEF\xBF\xBD\xEF\xBF\xBD");
    /* valid multi-byte text passes unchanged */
    check_text("Gr\xC3\xBC\xC3\x9F" "e \xE6\x97\xA5", SIZE_MAX,
               "Gr\xC3\xBC\xC3\x9F" "e \xE6\x97\xA5");
}

static void control_characters_become_spaces(void **state)
{
    (void)state;
    check_text("a\nb\tc\x01" "d\x7F", SIZE_MAX, "a b c d ");
}

static void long_labels_are_cut_with_an_ellipsis(void **state)
{
    (void)state;
    check_text("render", 6, "render");
    check_text("render", 5, "rend\xE2\x80\xA6");
    check_text("render", 1, "\xE2\x80\xA6");
    check_text("render", 0, "");
    /* an escaped character counts as one column */
    check_text("a&b&c", 4, "a&amp;b\xE2\x80\xA6");
    /* East Asian wide characters take two columns */
    assert_int_equal(an__svg_cols("\xE6\x97\xA5\xE6\x9C\xAC" "x"), 5);
    check_text("\xE6\x97\xA5\xE6\x9C\xAC" "x", 4, "\xE6\x97\xA5\xE2\x80\xA6");
    assert_int_equal(an__svg_fit(72, 12), 10);
    assert_int_equal(an__svg_fit(-3, 12), 0);
}

static void ticks_are_round_and_labels_keep_the_decimals_they_need(void **state)
{
    (void)state;
    assert_true(an__svg_tick_step(21.35, 6) == 5);
    assert_true(an__svg_tick_step(3.54, 6) == 1);
    assert_true(an__svg_tick_step(0.3, 6) == 0.05);
    assert_true(an__svg_tick_step(3388, 10) == 500);
    assert_true(an__svg_tick_step(0, 6) == 1);
    char b[32];
    an__svg_tick_label(b, sizeof b, 0.1 + 0.2, 0.05);
    assert_string_equal(b, "0.30");
    an__svg_tick_label(b, sizeof b, 25, 5);
    assert_string_equal(b, "25");
    an__svg_tick_label(b, sizeof b, -1e-12, 0.5);
    assert_string_equal(b, "0.0");
}

static an_capture *load(const char *name)
{
    const char *dir = getenv("CAP_FIXTURES");
    char path[512], detail[400];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "fixtures", name);
    an_options o = {0};
    an_capture *m = NULL;
    assert_int_equal(an_load(&m, path, &o, detail, sizeof detail), CAP_OK);
    return m;
}

static void frame_chart_keeps_every_spike_and_counts_stutters_as_the_report(void **state)
{
    (void)state;
    an_capture *m = load("gpu/h200_vk_passes.cap");
    an_frame_chart c;
    assert_int_equal(an_frame_chart_compute(&c, m, 100), 0);
    assert_int_equal(c.ncols, 100);
    /* the columns cover every frame once, in order */
    size_t next = 0;
    double top = 0;
    for (size_t k = 0; k < c.ncols; k++) {
        assert_int_equal(c.cols[k].first, next);
        assert_true(c.cols[k].count == 10 || c.cols[k].count == 11);
        next += c.cols[k].count;
        if (c.cols[k].max_ms > top)
            top = c.cols[k].max_ms;
        assert_true(c.cols[k].min_ms <= c.cols[k].max_ms);
    }
    assert_int_equal(next, m->nframes);
    /* the longest frame survives the reduction */
    assert_true(top == c.fs.max);
    assert_int_equal(c.nstutters, c.fs.stutters);
    assert_int_equal(c.nstutters, 1);
    assert_true(c.stutters[0].ms > 2.5 * c.stutters[0].local_ms);
    an_frame_chart_free(&c);
    /* fewer frames than columns: one frame each */
    assert_int_equal(an_frame_chart_compute(&c, m, 5000), 0);
    assert_int_equal(c.ncols, m->nframes);
    assert_int_equal(c.cols[7].count, 1);
    an_frame_chart_free(&c);
    an_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(xml_special_characters_are_escaped),
        cmocka_unit_test(bytes_that_are_not_utf8_become_replacement_characters),
        cmocka_unit_test(control_characters_become_spaces),
        cmocka_unit_test(long_labels_are_cut_with_an_ellipsis),
        cmocka_unit_test(ticks_are_round_and_labels_keep_the_decimals_they_need),
        cmocka_unit_test(frame_chart_keeps_every_spike_and_counts_stutters_as_the_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
