/* protocol.h — how the `spanprof` command reads a running process's profile (SPANPROF_LIVE=DIR):
 * the names in DIR, the request and the snapshot, shared by the runtime (which answers) and the
 * tool (which asks: `spanprof serve`).  Not installed; nothing here is part of the public ABI.
 *
 * DIR holds, per process image that records with SPANPROF_LIVE=DIR:
 *   PID.sock                 a Unix stream socket, mode 0600, while the image runs.  The runtime
 *                            answers only peers of its own user or root (SO_PEERCRED).  It is
 *                            bound as .PID.sock.tmp and then renamed, so the kernel's table of
 *                            sockets (/proc/PID/net/unix) names it so: where a client finds DIR
 *                            when the process's environment no longer says it.
 *   PID.START.final          the image's last snapshot, written when it ends (exit, or exec of
 *                            another image), mode 0600; START is the image's start time on the
 *                            monotonic clock (ns), so an exec'd image's own final snapshot does
 *                            not replace its predecessor's.  The reader that consumes it unlinks it.
 *   .PID.START.tmp           a final snapshot being written (renamed to PID.START.final when complete).
 *
 * A request is one line of at most SPANPROF_LIVE_REQUEST_MAX bytes (newline included), sent by
 * the client after it connects: "snapshot\n", or "spans\n" for a snapshot without its stacks (the pprof part empty,
 * LEN 0: what per-span metrics need, without the cost of encoding the stacks).  The runtime answers with a
 * snapshot and closes the connection; any other request, or none within a second, is answered
 * with "error WORDS\n" and closed (a request ended by shutdown without a whole line, at once).
 * The runtime waits for up to 32 connections' request lines at once (a newer one closes the
 * oldest still without its line), and every answer is taken after its request came, but in turn:
 * one answer every 5 ms at most (200 a second), and a snapshot of one kind 100 ms after the last
 * at the earliest (ten a second).
 * A client has 5 s in all to take its answer (the connection is then closed); a line sent in
 * its second is answered even when another client's slow reading kept the runtime past that.
 *
 * A snapshot (the answer, and the content of a .final file) is:
 *   "spanprof-live 1\n"
 *   "json LEN\n"  LEN bytes: the JSON profile as SPANPROF_JSON writes it, with in addition
 *                 "host" (gethostname), "exe" (the executable's path), "start_unix_ns" (the
 *                 image's start, wall clock), "live_seq" (snapshots taken so far, this one
 *                 included) and, for every span whose histogram is kept (SPANPROF_HISTOGRAM=1),
 *                 "histogram": {"count": N, "sum_ns": S, "buckets": [[LE_NS, COUNT], ...]}:
 *                 the non-empty buckets, ascending, LE_NS the bucket's largest value in ns and
 *                 COUNT the activations in that bucket alone (not cumulative); S is the sum of
 *                 the activations' durations (each counted at its bucket's midpoint).
 *   "\n"
 *   "pprof LEN\n" LEN bytes: the profile.proto SPANPROF_PPROF writes (every stack's counters
 *                 since the image started; no thread labels), in gzip's framing but stored
 *                 uncompressed: it only crosses a socket, and deflate would be a third of the
 *                 snapshot's cost.  Nothing (LEN 0) in the answer to "spans".
 *   "\n"
 *   "end\n"
 * Every counter is cumulative since the image started.
 *
 * Two more requests show and switch spans: those with patch points in the objects loaded (the
 * plugin's default, spanprof.h section 6) and every other span called so far:
 *   "sites\n"                 the spans and their states;
 *   "switch on GLOBS\n"       the spans GLOBS names (comma-separated globs, as SPANPROF_SPANS
 *   "switch off GLOBS\n"      takes them) switched on or off, then listed as "sites" lists them.
 * The answer to both is
 *   "spanprof-sites 1\n"
 *   one line per span, sorted by name, file and line: "STATE\tNAME\tFILE\tLINE\n", STATE one of
 *     on         recording (or, not called yet, it will at its first call);
 *     off        its calls do not reach the runtime (its patch points, if any, are no-ops);
 *     stopping   switched off, waiting for calls that were inside it to end;
 *   "end\n".
 * A switch is done when its answer comes: a span switched off is off (or, after a second of
 * calls in progress, stopping; it goes off when they end), a span switched on records every call
 * that enters from then on.  Switching on a span still stopping waits for it the same second.
 * Errors: "error no span matches GLOBS\n", "error patching is refused here (WHY)\n", and those
 * of the snapshot requests.  Switches are answered like snapshots, in turn (one every 5 ms).
 */
#ifndef SPANPROF_LIVE_PROTOCOL_H
#define SPANPROF_LIVE_PROTOCOL_H

#define SPANPROF_LIVE_MAGIC "spanprof-live 1\n"
#define SPANPROF_LIVE_REQUEST "snapshot\n"
#define SPANPROF_LIVE_REQUEST_SPANS "spans\n"
#define SPANPROF_LIVE_REQUEST_SITES "sites\n"
#define SPANPROF_LIVE_REQUEST_SWITCH_ON "switch on "
#define SPANPROF_LIVE_REQUEST_SWITCH_OFF "switch off "
#define SPANPROF_LIVE_SITES_MAGIC "spanprof-sites 1\n"
#define SPANPROF_LIVE_REQUEST_MAX 1024
#define SPANPROF_LIVE_SOCK_SUFFIX ".sock"
#define SPANPROF_LIVE_SOCK_BOUND_SUFFIX ".sock.tmp" /* after ".PID" */
#define SPANPROF_LIVE_FINAL_SUFFIX ".final"

#endif
