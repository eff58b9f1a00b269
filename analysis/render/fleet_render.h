/*
 * fleet_render.h - renderers for many captures: the --summary table (text
 * or CSV) and the tidy gzip'd CSV tables of --export. They only render what
 * analysis/fleet.h computed. Columns, types and units: docs/FLEET.md.
 */
#ifndef AN_FLEET_RENDER_H
#define AN_FLEET_RENDER_H

#include <stdio.h>

#include "fleet.h"
#include "render/render.h"

/* The --summary table: a header line, then one row per capture. Text is
 * aligned; CSV is RFC 4180 with one header row. Each returns 0, or -1 when
 * writing failed (ferror). */
int an_fleet_header(FILE *out, int csv);
int an_fleet_row(FILE *out, int csv, const an_capture_row *s);

/* --export: captures.csv.gz, frames.csv.gz, scopes.csv.gz and
 * counters.csv.gz in directory `dir` (created if missing), each with a
 * header row; every row starts with the capture id. */
typedef struct an_export an_export;

/* Create the four files (truncating old ones). Returns 0, or -1 with one
 * line (naming the path and the reason) in err[0..n). */
int an_export_open(an_export **out, const char *dir, char *err, size_t n);

/* Append capture m, summarised as s, to the four tables. scopes.csv.gz
 * gets its rows through an_series_rows (scope by scope where the values
 * are held): m may be a load with a budget and series_reread (bounded
 * memory, as read_capture --export loads), whose values come from its
 * pack or from the file read again.
 * Returns 0; -1 when a write failed (the message is kept for
 * an_export_close); 1 when m's per-frame values could not be read back
 * (the file changed or went, the pack's temporary file could not be
 * read, out of memory): one line in err[0..n), the other tables hold the
 * capture and scopes.csv.gz part of its rows at most, and the export can
 * go on with the next capture. */
int an_export_add(an_export *x, const an_capture *m, const an_capture_row *s,
                  char *err, size_t n);

/* Finish the gzip streams and free x (NULL is accepted). Returns 0, or -1
 * with one line in err[0..n) when any write or close failed. */
int an_export_close(an_export *x, char *err, size_t n);

#endif
