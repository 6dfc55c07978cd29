/* cmd_sink.c - `ibench sink`: the server net-bw sends to. Receives and discards; binds to loopback by default. */
#include <sys/socket.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "config.h"
#include "ib_err.h"
#include "netsink.h"
#include "parse.h"

static void report_closed(void *arg, uint64_t bytes, double secs)
{
    (void)arg;
    fprintf(stderr, "ibench sink: connection closed: %llu bytes in %.2f s (%.3g B/s)\n", (unsigned long long)bytes, secs,
            secs > 0 ? (double)bytes / secs : 0);
}

_Static_assert(SINK_DEFAULT_PORT == 5301, "the default of --listen below says 5301");

struct sink_opts {
    const char *listen;
    int cpu, json, quiet;
};

static int cmd_sink(void *opts, int argc, char **argv, int first)
{
    const struct sink_opts *o = opts;
    const char *addr = o->listen;
    int cpu = o->cpu, json = o->json, quiet = o->quiet;
    struct sockaddr_storage sa;
    unsigned salen;
    char why[256] = "";
    if (sink_parse_addr(addr, SINK_DEFAULT_PORT, &sa, &salen, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_USAGE, "sink", "--listen %s", why);
    struct sink *s = NULL;
    cli_signals_install();
    struct sink_report rep = {.closed = report_closed};
    if (sink_start(addr, cpu, quiet ? NULL : &rep, &s, why, sizeof(why)) < 0) {
        cli_signals_restore();
        return cli_fail(IB_EXIT_FAIL, "sink", "%s", why);
    }
    fprintf(stderr, "ibench sink: listening on %s\n", sink_address(s));
    fflush(stderr);
    while (!atomic_load(&cli_stop)) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    struct sink_stats st;
    sink_get_stats(s, &st);
    char a[80];
    snprintf(a, sizeof(a), "%s", sink_address(s));
    sink_stop(s);
    cli_signals_restore();
    if (json) {
        json_t *doc = json_pack("{s:s,s:s,s:I,s:i}", "ibench", IBENCH_VERSION, "listen", a, "bytes",
                                (json_int_t)st.bytes, "connections", (int)st.connections);
        out_json(stdout, doc);
        json_decref(doc);
    }
    char b[32];
    fprintf(stderr, "ibench sink: stopped: %s received over %u connection(s)\n", fmt_bytes((double)st.bytes, b, sizeof(b)),
            st.connections);
    return IB_EXIT_OK;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt sink_table[] = {
    {CLI_STR("listen", "ADDR:PORT", struct sink_opts, listen,
             "where to listen (loopback only by default); numeric addresses,\n"
             "[::1]:PORT for IPv6, port 0 picks a free one"),
     .def = "127.0.0.1:5301"},
    {CLI_INT("cpu", "N", struct sink_opts, cpu, 0, 1 << 20, "run its threads on CPU N"), .what = "a CPU number"},
    {CLI_FLAG("quiet", struct sink_opts, quiet, "no line per closed connection")},
    {CLI_FLAG("json", struct sink_opts, json, "at exit, print the totals as JSON on stdout")},
};

const struct cli_cmd cli_cmd_sink = {
    .name = "sink",
    CLI_RUN(cmd_sink, struct sink_opts),
    .preset = &(const struct sink_opts){.cpu = -1},
    .summary = "a TCP sink for net-bw: receives and discards",
    .usage = "usage: ibench sink [--listen ADDR:PORT] [--cpu N] [--json] [--quiet]\n\n",
    .about = "A TCP server for net-bw: it answers net-bw's handshake and then reads and discards what it is sent.\n",
    .more = "It prints \"ibench sink: listening on ADDR:PORT\" on stderr once ready and runs until SIGINT or\n"
            "SIGTERM, then prints the bytes and connections it served. Exit 2 on a bad address, 1 when it cannot\n"
            "listen (port in use).\n",
    CLI_OPTS(sink_table),
};
