/* deadline: ends connections that overstay, whatever they keep sending.
 *
 * libmicrohttpd has an idle timeout only: a client that sends one
 * header line every few seconds, or reads one byte of a response every few
 * seconds, keeps its connection for ever (slowloris). Each connection gets an
 * entry with a deadline (CLOCK_MONOTONIC ms, 0 for none) that its own thread
 * moves as the request goes on; one watcher thread looks a few times a second
 * and shuts down (shutdown(2), never close) the socket of any entry past its
 * deadline, so libmicrohttpd sees the end on its next read or write and
 * closes it the usual way. An entry is removed before its socket is closed
 * (libmicrohttpd's close notification comes first), under the lock the
 * watcher holds, so a socket number reused later is never touched.
 * Thread-safe.
 */
#ifndef FOLIO_DEADLINE_H
#define FOLIO_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>

struct clock;
struct deadline_watch;
struct deadline_entry;

/* Starts the watcher, judging deadlines by clock (NULL: CLOCK_MONOTONIC,
 * base/clock.h; it must outlive the watcher) and looking every tick_ms from
 * a thread of its own; with tick_ms 0 there is no thread, and whoever holds
 * the watcher looks (deadline_watch_look), as a test does on a clock it
 * moves. NULL on failure. */
struct deadline_watch *deadline_watch_start(unsigned tick_ms, const struct clock *clock);

/* One look now, as the watcher's thread makes each tick: every socket past
 * its deadline, or below its floor, or whose file was cut short, is shut
 * down. */
void deadline_watch_look(struct deadline_watch *w);

/* Stops the watcher and frees it and any entry left. Accepts NULL. */
void deadline_watch_stop(struct deadline_watch *w);

/* Watches fd until deadline_ms (0: none yet). NULL when out of memory. */
struct deadline_entry *deadline_add(struct deadline_watch *w, int fd, int64_t deadline_ms);

/* Moves an entry's deadline (0: none). Lock-free; accepts NULL. */
void deadline_set(struct deadline_entry *e, int64_t deadline_ms);

/* Gives e a send-rate floor instead of one deadline: the watcher reads how
 * many bytes the client acknowledged on e's socket (TCP_INFO) and shuts it
 * down when fewer than rate x window_ms came in a window, or fewer than
 * rate x (elapsed - grace_ms) since the start (acked_base: the count then).
 * deadline_set ends it. Only the watcher pays the syscalls, at most a few
 * per window. Accepts a NULL e. */
void deadline_set_floor(struct deadline_watch *w, struct deadline_entry *e, uint64_t rate, int64_t window_ms,
                        int64_t grace_ms, uint64_t acked_base);

/* Also ends e's connection, at the watcher's next look, once the file its
 * response is sent from (file_fd, which e dups and keeps) is shorter than
 * end, the offset just past the response's last byte: a file truncated
 * while it is sent can never be sent whole, and libmicrohttpd's
 * sendfile (library.h), meeting the new end, sends nothing and waits for a
 * writability that never comes (nginx: "file was truncated"). A file cut
 * and written again between two looks (a rewrite in place) leaves that
 * wait behind too, with no short file to see: so the send is also ended
 * once its socket has had nothing queued and its client has acknowledged
 * nothing more for two looks in a row, after some of the response (a slow
 * reader leaves bytes queued; a worker kept waiting has sent nothing). The
 * socket is shut down as a deadline's is, but without the reset: the client
 * gets what the kernel took, then the end. Replaces any file e watched before;
 * file_fd -1 stops watching (call that when the response is done). One
 * fstat a look while it watches. False when the dup fails (no watch).
 * Accepts a NULL e. */
bool deadline_watch_file(struct deadline_watch *w, struct deadline_entry *e, int file_fd, uint64_t end);

/* Since when e's connection has been waiting for a request still arriving
 * (its line, its fields, the body it announced: connection.h), on
 * clock_now_ms(); -1 when none is. Lock-free; accepts NULL. */
void deadline_set_arriving(struct deadline_entry *e, int64_t since_ms);

/* At the connection limit, for newest (a connection just started): shuts
 * down the socket of the connection, of any worker thread, whose request
 * has been arriving longest (a slowloris, of a head or of a body), so a
 * client that sends its request at once always finds a slot. One whose
 * whole head already waits unread in its socket (a client just accepted,
 * not yet read), or that was accepted a moment ago (its request may be on
 * its way), is not the one. libmicrohttpd sees the end on its next read and
 * closes it; its close lets the acceptor take the next. False when none
 * may be closed. */
bool deadline_evict_oldest(struct deadline_watch *w, const struct deadline_entry *newest);

/* Has each look ask waiting(ctx) how many connections wait for a slot at
 * the limit (acceptor_waiting), and then close as many as
 * deadline_evict_oldest would: a connection's start finds none to close
 * while every request arriving is a moment old, and those queued behind it
 * would each wait for the one before. NULL stops asking (before whatever ctx
 * is goes). */
void deadline_set_room(struct deadline_watch *w, unsigned (*waiting)(void *ctx), void *ctx);

/* True when deadline_evict_oldest shut e's socket down. Accepts NULL. */
bool deadline_was_evicted(const struct deadline_entry *e);

/* True when the watcher shut e's socket down after the last deadline_set. */
bool deadline_was_expired(const struct deadline_entry *e);

/* Stops watching e and frees it; call before its socket is closed. Accepts NULL. */
void deadline_remove(struct deadline_watch *w, struct deadline_entry *e);

/* Resets every watched socket at once, as if each were past its deadline:
 * the end of a graceful stop's grace, so every client still connected sees
 * its connection end now rather than when the process is gone (in a
 * container the queued bytes and the FIN go with its network). */
void deadline_expire_all(struct deadline_watch *w);

/* Shuts the read side of every socket, at the start of a graceful stop: an
 * idle kept-alive connection reads its end and closes at once (as nginx
 * closes idle keep-alive connections on a graceful stop), one sending a
 * response finishes it and closes when it would read the next request; a
 * request already in a socket's queue is still read and answered (Linux
 * keeps it readable), so none is lost between the signal and the read. */
void deadline_end_reads(struct deadline_watch *w);

/* How many sockets the watcher has shut down so far. */
uint64_t deadline_expired(const struct deadline_watch *w);

/* Every deadline is on the watcher's clock: clock_now_ms() (base/clock.h)
 * unless it was handed another. */

#endif
