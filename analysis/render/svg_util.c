/*
 * svg_util.c - the pieces every picture shares (see svg_util.h).
 */
#include "svg_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

void an__svg_head(FILE *f, int width, int height, const char *title,
                  const char *extra_css)
{
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"" AN__SVG_SANS "\" font-size=\"12\">\n<title>",
            width, height, width, height);
    an__svg_text(f, title, (size_t)-1);
    fputs("</title>\n<style>\n"
          "text { fill: " AN__SVG_INK "; }\n"
          ".h1 { font-size: 17px; font-weight: bold; }\n"
          ".sub { fill: #555555; }\n"
          ".ax { stroke: #555555; stroke-width: 1; fill: none; }\n"
          ".grid { stroke: #E4E4E4; stroke-width: 1; fill: none; }\n"
          ".tick { font-size: 11px; fill: #444444; }\n",
          f);
    if (extra_css)
        fputs(extra_css, f);
    fprintf(f, "</style>\n<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%d\" "
               "height=\"%d\" fill=\"#FFFFFF\"/>\n",
            width, height);
}

/* Decode one UTF-8 character at s (n bytes left). Returns its length, or
 * 0 when the bytes are not UTF-8 (overlong, surrogate, out of range,
 * truncated); *cp receives the code point. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

/* Write one character (code point cp, original bytes b[0..len)). */
static void put_char(FILE *f, uint32_t cp, const unsigned char *b, size_t len)
{
    switch (cp) {
    case '&': fputs("&amp;", f); return;
    case '<': fputs("&lt;", f); return;
    case '>': fputs("&gt;", f); return;
    case '"': fputs("&quot;", f); return;
    case '\'': fputs("&apos;", f); return;
    default: break;
    }
    if (cp < 0x20 || cp == 0x7F)
        fputc(' ', f);
    else if (len == 0 || cp == 0xFFFE || cp == 0xFFFF)
        fputs("\xEF\xBF\xBD", f); /* U+FFFD: not UTF-8, or not an XML char */
    else
        fwrite(b, 1, len, f);
}

/* Columns a character takes: 2 for the East Asian wide and full-width
 * ranges (CJK, Hangul, full-width forms), 1 for the rest. */
static size_t cp_cols(uint32_t cp)
{
    return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                   (cp >= 0xAC00 && cp <= 0xD7A3) ||
                   (cp >= 0xF900 && cp <= 0xFAFF) ||
                   (cp >= 0xFE30 && cp <= 0xFE4F) ||
                   (cp >= 0xFF00 && cp <= 0xFF60) ||
                   (cp >= 0xFFE0 && cp <= 0xFFE6) ||
                   (cp >= 0x1F300 && cp <= 0x1FAFF) ||
                   (cp >= 0x20000 && cp <= 0x3FFFD)
               ? 2
               : 1;
}

size_t an__svg_cols(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), cols = 0;
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_next(p + i, n - i, &cp);
        cols += l ? cp_cols(cp) : 1;
        i += l ? l : 1;
    }
    return cols;
}

void an__svg_text(FILE *f, const char *s, size_t max_cols)
{
    if (!max_cols)
        return;
    size_t cols = an__svg_cols(s);
    size_t room = cols <= max_cols ? cols : max_cols - 1;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), used = 0;
    uint32_t cp = 0;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_next(p + i, n - i, &cp);
        size_t w = l ? cp_cols(cp) : 1;
        if (used + w > room)
            break;
        put_char(f, l ? cp : 0xFFFD, p + i, l);
        used += w;
        i += l ? l : 1;
    }
    if (cols > max_cols)
        fputs("\xE2\x80\xA6", f); /* U+2026 */
}

size_t an__svg_fit(double width, double px)
{
    double w = px * AN__SVG_CHAR_EM;
    if (!(width > 0) || !(w > 0))
        return 0;
    double k = floor(width / w);
    return k > 1e6 ? (size_t)1e6 : (size_t)k;
}

double an__svg_tick_step(double hi, int max_ticks)
{
    if (!(hi > 0) || !isfinite(hi) || max_ticks < 1)
        return 1;
    double raw = hi / max_ticks;
    double mag = pow(10, floor(log10(raw)));
    static const double mult[] = {1, 2, 5, 10};
    for (size_t i = 0; i < 4; i++)
        if (mult[i] * mag >= raw * (1 - 1e-9))
            return mult[i] * mag;
    return 10 * mag;
}

void an__svg_tick_label(char *buf, size_t n, double v, double step)
{
    int dec = 0;
    if (step > 0 && step < 1)
        dec = (int)ceil(-log10(step) - 1e-9);
    if (dec > 6)
        dec = 6;
    if (fabs(v) < step * 1e-6)
        v = 0; /* no "-0" */
    snprintf(buf, n, "%.*f", dec, v);
}
