/*
 * codec/decls.h - the sections that declare and count: CLOCK (0x01),
 * NAMES (0x02), THREADS (0x03), TRACKS (0x04), STATS (0x0A) and
 * NAME_FLAGS (0x0C, format 1.1); one entry at a time, encoders beside
 * decoders (format-spec/capture-format.md has the bytes). A list section
 * is its entries' count (v n) and then its entries. Internal to
 * libcapture.
 *
 *   CLOCK      := v tick, v mono_ns
 *   NAMES      := v n, n x (v id, str name, str file, v line)
 *   NAME_FLAGS := v n, n x (v id, v flags)
 *   THREADS    := v n, n x (v tid, str name)
 *   TRACKS     := v n, n x (v track, str name, f64 period_ns)
 *   STATS      := v n, n x (v kind, v subject, v count)
 *
 * The NAMES, NAME_FLAGS and THREADS entries are still decoded where the
 * reader keeps its name and thread tables (reader/reader.c: sec_names,
 * sec_name_flags, sec_threads).
 */
#ifndef CAP_CODEC_DECLS_H
#define CAP_CODEC_DECLS_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/* A list section's count at b: at most one entry a byte left (more marks
 * b bad). */
uint64_t capc_list_count(capf_cur *b);

/* CLOCK's body into t / at b (0, or -1 when malformed). */
void capc_clock_put(capf_buf *t, uint64_t tick, uint64_t mono_ns);
int capc_clock_get(capf_cur *b, uint64_t *tick, uint64_t *mono_ns);

/* One NAMES entry into t (file NULL: none). */
void capc_name_put(capf_buf *t, uint32_t id, const char *name,
                   const char *file, uint32_t line);

/* One NAME_FLAGS entry into t. */
void capc_name_flags_put(capf_buf *t, uint32_t id, uint32_t flags);

/* One THREADS entry into t. */
void capc_thread_put(capf_buf *t, uint32_t tid, const char *name);

/* One TRACKS entry into t / at b: the track (below CAP_MAX_TRACKS), its
 * name (not NUL-terminated, pointing into b's bytes) and its tick period
 * in ns. 0, or -1 when malformed or the period is not finite and above 0. */
void capc_track_put(capf_buf *t, uint32_t track, const char *name,
                    double period_ns);
int capc_track_get(capf_cur *b, uint32_t *track, const uint8_t **name,
                   size_t *name_len, double *period_ns);

/* One STATS entry into t / at b (enum capf_stat_kind; a reader ignores
 * kinds it does not know). 0, or -1 when malformed. */
void capc_stat_put(capf_buf *t, uint64_t kind, uint64_t subject,
                   uint64_t count);
int capc_stat_get(capf_cur *b, uint64_t *kind, uint64_t *subject,
                  uint64_t *count);

#endif
