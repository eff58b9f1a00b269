/*
 * live.h - the producer's socket sink: serve the capture over TCP.
 *
 * Internal to libcapture. A cap__live listens on one address and streams
 * the capture format itself to every client that connects: the 16-byte
 * file header, a META chunk (the file's, plus `stream_start_ns`: from that
 * time on the client has every event), a BLOCK declaring every name,
 * thread, track and calibration known so far, then every BLOCK the writer
 * writes, and at close a FOOTER with the client's own index and a trailer.
 * So a client's stream, saved as it arrives, is a valid capture file.
 *
 * Threads: the writer thread hands chunks over through the writer's tee
 * (cap__live_tee) and activates waiting clients (cap__live_poll); a thread
 * of the sink's own accepts clients and sends their queues with
 * non-blocking sends (MSG_NOSIGNAL: a client that vanished is an error
 * return, never SIGPIPE). The recording threads never touch a socket.
 *
 * Each client's queue holds at most queue_bytes (or one block, when a block
 * is larger), and its socket's kernel buffer a quarter of that (16 KiB to
 * 1 MiB); a block that does not fit is dropped for that client alone, and
 * the scopes lost with it (those that end in it) are counted, per thread,
 * in a STATS section (DROPPED_SCOPES) of a block sent to that client once
 * its queue has room again. A client that receives less than 64 KiB in
 * stall_ms while bytes wait for it (in its queue, or unacknowledged in its
 * kernel send buffer: SIOCOUTQ) is disconnected, with one log line.
 *
 * Hostile clients: one that sends more than 64 bytes is disconnected (a
 * client has nothing to say); one that shuts its side down keeps its
 * stream. At most 8 clients; a ninth takes the place of the one stalled
 * longest when that is 1 s or more, else it is closed before any byte.
 * Lines about clients are limited to 20 per 10 s, the rest counted in one
 * line. An empty host listens on 127.0.0.1; 0.0.0.0 or [::] logs a
 * warning line (every interface, no authentication).
 */
#ifndef CAP_LIVE_H
#define CAP_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_result.h"
#include "writer/writer_live.h"

typedef struct cap__live cap__live;

/* Listen on `addr` ("HOST:PORT", "[V6ADDR]:PORT", ":PORT" for 127.0.0.1;
 * port 0 picks a free one) and start the sink's thread. log(line) is called for each line worth
 * logging, from any of the threads involved.
 * Errors: CAP_E_MISUSE (malformed address), CAP_E_IO (the address cannot
 * be resolved, bound or listened on; *why says why), CAP_E_NOMEM. */
cap_result cap__live_start(cap__live **out, const char *addr,
                           size_t queue_bytes, unsigned stall_ms,
                           void (*log)(const char *line), char *why,
                           size_t why_size);

/* The tee callback for cap__writer_open_tee (user: the cap__live). */
void cap__live_tee(void *user, cap_writer *w, const cap__tee_chunk *c);

/* Writer thread, between blocks: give clients that connected since the
 * last call their header, metadata and declarations. */
void cap__live_poll(cap__live *l, cap_writer *w);

/* The port listened on (useful with port 0). */
int cap__live_port(const cap__live *l);

/* Blocks dropped for slow clients so far, all clients together. */
uint64_t cap__live_dropped_blocks(const cap__live *l);

/* Stop accepting, give clients up to grace_ms to take what is queued for
 * them (their footer, when the writer wrote one), close every socket, join
 * the thread and free l. Accepts NULL. */
void cap__live_stop(cap__live *l, unsigned grace_ms);

#endif
