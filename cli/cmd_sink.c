/* cmd_sink.c - `ibench sink`: the server net-bw sends to. Receives and discards; binds to loopback by default. */
#include <getopt.h>
#include <sys/socket.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "config.h"
#include "ib_err.h"
#include "netsink.h"
#include "parse.h"

static void sink_usage(void)
{
    printf("usage: ibench sink [--listen ADDR:PORT] [--cpu N] [--json] [--quiet]\n\n"
           "A TCP server for net-bw: it answers net-bw's handshake and then reads and discards what it is sent.\n"
           "  --listen ADDR:PORT  where to listen (default 127.0.0.1:%d, loopback only); numeric addresses,\n"
           "                      [::1]:PORT for IPv6, port 0 picks a free one\n"
           "  --cpu N             run its threads on CPU N\n"
           "  --quiet             no line per closed connection\n"
           "  --json              at exit, print the totals as JSON on stdout\n"
           "It prints \"ibench sink: listening on ADDR:PORT\" on stderr once ready and runs until SIGINT or\n"
           "SIGTERM, then prints the bytes and connections it served. Exit 2 on a bad address, 1 when it cannot\n"
           "listen (port in use).\n",
           SINK_DEFAULT_PORT);
}

static void report_closed(void *arg, uint64_t bytes, double secs)
{
    (void)arg;
    fprintf(stderr, "ibench sink: connection closed: %llu bytes in %.2f s (%.3g B/s)\n", (unsigned long long)bytes, secs,
            secs > 0 ? (double)bytes / secs : 0);
}

int cmd_sink(int argc, char **argv)
{
    static const struct option lo[] = {{"listen", required_argument, 0, 'l'}, {"cpu", required_argument, 0, 'c'},
                                       {"json", no_argument, 0, 'j'},         {"quiet", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    char deflt[32];
    snprintf(deflt, sizeof(deflt), "127.0.0.1:%d", SINK_DEFAULT_PORT);
    const char *addr = deflt;
    int c, json = 0, quiet = 0, cpu = -1;
    unsigned long u;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'l': addr = optarg; break;
        case 'c':
            if (parse_uint(optarg, 0, 1u << 20, &u) < 0)
                return cli_fail(IB_EXIT_USAGE, "sink", "--cpu '%s' is not a CPU number", optarg);
            cpu = (int)u;
            break;
        case 'j': json = 1; break;
        case 'q': quiet = 1; break;
        case 'h': sink_usage(); return IB_EXIT_OK;
        default: return cli_fail(IB_EXIT_USAGE, "sink", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_fail(IB_EXIT_USAGE, "sink", "unexpected argument '%s'", argv[optind]);
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
