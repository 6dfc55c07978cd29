/* cmd_extender.c - `ibench extender`: the Kubernetes scheduler extender, pl_extender (placement/) served over HTTP by
 * http_server (libmicrohttpd).  docs/extender.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <getopt.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "http_server.h"
#include "ib_err.h"
#include "netsink.h"
#include "parse.h"
#include "pl_coloc.h"
#include "pl_extender.h"

#define CMD "extender"
#define EXT_KEEP_HEAP (32 << 20) /* bytes: glibc's largest mmap threshold on 64 bits */
#define MAX_PEM (1u << 20)

static void extender_usage(void)
{
    printf("usage: ibench extender [--listen ADDR:PORT] [--profiles DIR] [--nodes DIR] [--margin M]\n"
           "                       [--unknown pessimistic|optimistic] [--refuse established|uncertain]\n"
           "                       [--tls-cert F --tls-key F] [--threads N]\n"
           "                       [--max-body BYTES] [--body-memory BYTES] [--max-connections N]\n"
           "                       [--max-per-address N] [--timeout S] [--log-level off|error|info|debug]\n"
           "                       [--assume-ttl S]\n\n"
           "The Kubernetes scheduler extender (docs/extender.md): kube-scheduler POSTs an ExtenderArgs to /filter\n"
           "and /prioritize and gets place colocate's decisions for the pod on each node.  GET /healthz answers\n"
           "\"ok\" (alive), GET /readyz \"ok\" once the store is loaded (else 503), GET /metrics the Prometheus text.\n"
           "  --listen ADDR:PORT  where to listen (default 127.0.0.1:%d, loopback); numeric addresses, [::1]:PORT\n"
           "                      for IPv6; port 0 picks a free one (printed)\n"
           "  --profiles DIR      the profile store: NAME.json profiles (default .); read when first used, again\n"
           "                      once the directory changes; a name not there is asked again after %gs\n"
           "  --nodes DIR         the node state for requests of node names only: NAME.json (default\n"
           "                      PROFILES/nodes), held in memory and read again when the directory changes\n"
           "  --assume-ttl S      a pod given a top score counts as a tenant of that node until the node lists it,\n"
           "                      for at most S seconds (default %d; 0: never assumed)\n"
           "  --margin M, --unknown MODE, --refuse RULE  the co-location check's (default %g, pessimistic,\n"
           "                      established: filter refuses a node only for a break established beyond the\n"
           "                      profiles' uncertainty; an uncertain node passes and prioritize ranks it last)\n"
           "  --tls-cert F --tls-key F    HTTPS with this PEM certificate and key (both or neither)\n"
           "  --threads N         the server's thread pool (default 2)\n"
           "  --max-body BYTES    larger request bodies are refused with 413 (default %u; K, M suffixes)\n"
           "  --body-memory BYTES request bodies arriving on all connections together; past it a body is refused\n"
           "                      with 503 (default %u, at least --max-body)\n"
           "  --max-connections N connections at once (default %u), --max-per-address N of them from one client\n"
           "                      address (default %u).  At a limit the connection idle the longest is closed to\n"
           "                      admit the new one; only when all are mid-request is the new one refused\n"
           "  --timeout S         an idle connection is closed after S seconds, and a body must arrive complete\n"
           "                      within S seconds (408) (default %u: below kube-scheduler's httpTimeout of 5 s)\n"
           "  --log-level L       one JSON line per request on stderr: off, error (5xx and requests cut off),\n"
           "                      info (every request), debug (also connections evicted or refused); default error\n"
           "It prints \"ibench extender: listening on http://ADDR:PORT\" on stderr once ready and serves until SIGINT\n"
           "or SIGTERM, then stops cleanly. Exit 0 after a clean stop, 2 on bad options, 1 when it cannot listen\n"
           "(the reason is printed), 77 when TLS is asked of a libmicrohttpd without it.\n",
           PL_EXT_PORT, PL_EXT_MISS_TTL_MS / 1000.0, PL_EXT_ASSUME_TTL_S, PL_COLOC_MARGIN, PL_EXT_MAX_BODY,
           HTTP_DEFAULT_BODY_MEMORY, HTTP_DEFAULT_CONNS, HTTP_DEFAULT_PER_ADDRESS, HTTP_DEFAULT_TIMEOUT_S);
}

/* A PEM file, whole, NUL-terminated (at most MAX_PEM). */
static char *read_pem(const char *path, char *why, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        ib_why(why, len, -errno, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *b = malloc(MAX_PEM + 1);
    size_t n = b ? fread(b, 1, MAX_PEM + 1, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (!b || err || n == 0 || n > MAX_PEM) {
        ib_why(why, len, -EINVAL, "%s: %s", path, !b ? "out of memory" : err ? "read error" : n ? "over 1 MiB" : "empty");
        free(b);
        return NULL;
    }
    b[n] = 0;
    return b;
}

static int handle(void *ctx, const char *verb, const char *body, size_t len, char **out, int *status)
{
    return pl_extender_handle(ctx, verb, body, len, out, status);
}

static bool ready(void *ctx, char *why, size_t len) { return pl_extender_ready(ctx, why, len); }
static int metrics(void *ctx, char **text) { return pl_extender_metrics(ctx, text); }

/* The log line's fields: read by the library (pl_extender_log_fields), only when the line is written. */
static void log_fields(void *ctx, const char *verb, const char *body, size_t len, const char *answer, json_t *line)
{
    (void)ctx;
    struct pl_extender_logf f;
    pl_extender_log_fields(verb, body, len, answer, &f);
    if (f.has_pod)
        json_object_set_new(line, "pod", json_string(f.pod));
    if (f.nodes_in >= 0)
        json_object_set_new(line, "nodes_in", json_integer(f.nodes_in));
    if (f.error[0])
        json_object_set_new(line, "error", json_string(f.error));
    if (f.nodes_out >= 0)
        json_object_set_new(line, "nodes_out", json_integer(f.nodes_out));
}

enum {
    OPT_PROFILES = 256, OPT_MARGIN, OPT_UNKNOWN, OPT_CERT, OPT_KEY, OPT_THREADS, OPT_MAXBODY, OPT_TIMEOUT, OPT_CONNS,
    OPT_PER_ADDR, OPT_BODYMEM, OPT_LOGLEVEL, OPT_REFUSE, OPT_NODES, OPT_ASSUME
};

int cmd_extender(int argc, char **argv)
{
    static const struct option lo[] = {
        {"listen", required_argument, 0, 'l'},          {"profiles", required_argument, 0, OPT_PROFILES},
        {"margin", required_argument, 0, OPT_MARGIN},   {"unknown", required_argument, 0, OPT_UNKNOWN},
        {"tls-cert", required_argument, 0, OPT_CERT},   {"tls-key", required_argument, 0, OPT_KEY},
        {"threads", required_argument, 0, OPT_THREADS}, {"max-body", required_argument, 0, OPT_MAXBODY},
        {"max-connections", required_argument, 0, OPT_CONNS},
        {"max-per-address", required_argument, 0, OPT_PER_ADDR},
        {"body-memory", required_argument, 0, OPT_BODYMEM},
        {"log-level", required_argument, 0, OPT_LOGLEVEL},
        {"timeout", required_argument, 0, OPT_TIMEOUT}, {"help", no_argument, 0, 'h'},
        {"refuse", required_argument, 0, OPT_REFUSE},
        {"nodes", required_argument, 0, OPT_NODES},     {"assume-ttl", required_argument, 0, OPT_ASSUME},
        {0, 0, 0, 0}};
    char deflt[32];
    snprintf(deflt, sizeof(deflt), "127.0.0.1:%d", PL_EXT_PORT);
    const char *addr = deflt, *cert = NULL, *key = NULL;
    struct pl_extender_opts xo = {.profiles = ".", .margin = PL_COLOC_MARGIN, .pessimistic = true,
                                  .assume_ttl_s = PL_EXT_ASSUME_TTL_S, .established = true};
    unsigned long assume = PL_EXT_ASSUME_TTL_S;
    unsigned long threads = 2, timeout = HTTP_DEFAULT_TIMEOUT_S, conns = HTTP_DEFAULT_CONNS,
                  per_addr = HTTP_DEFAULT_PER_ADDRESS;
    uint64_t max_body = PL_EXT_MAX_BODY, body_mem = HTTP_DEFAULT_BODY_MEMORY;
    bool body_mem_set = false, per_addr_set = false;
    enum http_log_level level = HTTP_LOG_ERROR;
    static const char *const levels[] = {"off", "error", "info", "debug"};
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'l': addr = optarg; break;
        case OPT_PROFILES: xo.profiles = optarg; break;
        case OPT_NODES: xo.nodes = optarg; break;
        case OPT_ASSUME:
            if (parse_uint(optarg, 0, 86400, &assume) < 0)
                return cli_fail(IB_EXIT_USAGE, CMD, "--assume-ttl '%s': 0-86400 seconds expected", optarg);
            xo.assume_ttl_s = (unsigned)assume;
            break;
        case OPT_MARGIN:
            if (parse_double(optarg, &xo.margin) < 0 || !(xo.margin >= 0 && xo.margin <= 100))
                return cli_fail(IB_EXIT_USAGE, CMD, "--margin '%s': a number of points 0-100 expected", optarg);
            break;
        case OPT_UNKNOWN:
            if (strcmp(optarg, "pessimistic") && strcmp(optarg, "optimistic"))
                return cli_fail(IB_EXIT_USAGE, CMD, "--unknown '%s': pessimistic or optimistic expected", optarg);
            xo.pessimistic = !strcmp(optarg, "pessimistic");
            break;
        case OPT_REFUSE:
            if (strcmp(optarg, "established") && strcmp(optarg, "uncertain"))
                return cli_fail(IB_EXIT_USAGE, CMD, "--refuse '%s': established or uncertain expected", optarg);
            xo.established = !strcmp(optarg, "established");
            break;
        case OPT_CERT: cert = optarg; break;
        case OPT_KEY: key = optarg; break;
        case OPT_THREADS:
            if (parse_uint(optarg, 1, 256, &threads) < 0)
                return cli_fail(IB_EXIT_USAGE, CMD, "--threads '%s': 1-256 expected", optarg);
            break;
        case OPT_MAXBODY:
            if (parse_size(optarg, &max_body) < 0 || max_body < 1 || max_body > (1u << 30))
                return cli_fail(IB_EXIT_USAGE, CMD, "--max-body '%s': 1 byte to 1 GiB expected", optarg);
            break;
        case OPT_CONNS:
            if (parse_uint(optarg, 1, 4096, &conns) < 0)
                return cli_fail(IB_EXIT_USAGE, CMD, "--max-connections '%s': 1-4096 expected", optarg);
            break;
        case OPT_PER_ADDR:
            if (parse_uint(optarg, 1, 4096, &per_addr) < 0)
                return cli_fail(IB_EXIT_USAGE, CMD, "--max-per-address '%s': 1-4096 expected", optarg);
            per_addr_set = true;
            break;
        case OPT_BODYMEM:
            if (parse_size(optarg, &body_mem) < 0 || body_mem < 1 || body_mem > (16ull << 30))
                return cli_fail(IB_EXIT_USAGE, CMD, "--body-memory '%s': 1 byte to 16 GiB expected", optarg);
            body_mem_set = true;
            break;
        case OPT_LOGLEVEL: {
            unsigned i = 0;
            while (i < 4 && strcmp(optarg, levels[i]))
                i++;
            if (i == 4)
                return cli_fail(IB_EXIT_USAGE, CMD, "--log-level '%s': off, error, info or debug expected", optarg);
            level = (enum http_log_level)i;
            break;
        }
        case OPT_TIMEOUT:
            if (parse_uint(optarg, 1, 3600, &timeout) < 0)
                return cli_fail(IB_EXIT_USAGE, CMD, "--timeout '%s': 1-3600 seconds expected", optarg);
            break;
        case 'h': extender_usage(); return IB_EXIT_OK;
        default: return cli_fail(IB_EXIT_USAGE, CMD, "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_fail(IB_EXIT_USAGE, CMD, "unexpected argument '%s'", argv[optind]);
    if (conns <= threads) /* libmicrohttpd shares the limit among the pool's threads: each needs one at least */
        return cli_fail(IB_EXIT_USAGE, CMD, "--max-connections %lu: more than --threads (%lu) expected", conns,
                        threads);
    if (!per_addr_set && per_addr > conns)
        per_addr = conns;
    if (per_addr > conns)
        return cli_fail(IB_EXIT_USAGE, CMD, "--max-per-address %lu: at most --max-connections (%lu) expected",
                        per_addr, conns);
    if (!body_mem_set && body_mem < max_body)
        body_mem = max_body;
    if (body_mem < max_body) /* a body of the largest size must fit */
        return cli_fail(IB_EXIT_USAGE, CMD, "--body-memory %llu: at least --max-body (%llu) expected",
                        (unsigned long long)body_mem, (unsigned long long)max_body);
    if (!cert != !key)
        return cli_fail(IB_EXIT_USAGE, CMD, "--tls-cert and --tls-key go together");
    struct stat st;
    if (stat(xo.profiles, &st) < 0 || !S_ISDIR(st.st_mode))
        return cli_fail(IB_EXIT_USAGE, CMD, "--profiles %s: not a directory", xo.profiles);
    /* the node state may come later (a ConfigMap not written yet is mounted empty): only a file there is wrong */
    if (xo.nodes && stat(xo.nodes, &st) == 0 && !S_ISDIR(st.st_mode))
        return cli_fail(IB_EXIT_USAGE, CMD, "--nodes %s: not a directory", xo.nodes);
    struct sockaddr_storage sa;
    unsigned salen;
    char why[256] = "";
    if (sink_parse_addr(addr, PL_EXT_PORT, &sa, &salen, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_USAGE, CMD, "--listen %s", why);
    char *cpem = NULL, *kpem = NULL;
    if (cert && (!(cpem = read_pem(cert, why, sizeof(why))) || !(kpem = read_pem(key, why, sizeof(why))))) {
        free(cpem);
        return cli_fail(IB_EXIT_USAGE, CMD, "--tls-cert/--tls-key %s", why);
    }
    /* A request's body and its answer (10 MiB each with 1000 real-sized Node objects) are allocated and freed per
     * request. Above glibc's mmap threshold each was a fresh mapping whose every page faulted in again: 14 ms of a
     * 51 ms filter + prioritize pair at 1000 nodes (docs/extender.md, "Results here"). They stay in the heap
     * instead, and up to 32 MiB freed at a heap's top is kept for the next request: at most that much more
     * resident per malloc arena (about one per server thread), within --body-memory's bound on bodies at once. */
    mallopt(M_MMAP_THRESHOLD, EXT_KEEP_HEAP);
    mallopt(M_TRIM_THRESHOLD, EXT_KEEP_HEAP);
    struct pl_extender *x = NULL;
    int rc = pl_extender_new(&xo, &x, why, sizeof(why));
    if (rc < 0) {
        free(cpem), free(kpem);
        return cli_fail(cli_exit_for(rc, 0), CMD, "%s", why);
    }
    struct http_server_opts so = {.addr = (struct sockaddr *)&sa, .addrlen = salen, .threads = (unsigned)threads,
                                 .max_conns = (unsigned)conns, .per_address = (unsigned)per_addr,
                                 .max_body = (size_t)max_body, .body_memory = (size_t)body_mem,
                                 .timeout_s = (unsigned)timeout, .tls_cert = cpem, .tls_key = kpem, .handler = handle,
                                 .ctx = x, .ready = ready, .metrics = metrics, .log_fields = log_fields,
                                 .log_level = level};
    struct http_server *s = NULL;
    cli_signals_install();
    rc = http_server_start(&so, &s, why, sizeof(why));
    if (rc < 0) {
        cli_signals_restore();
        pl_extender_free(x);
        free(cpem), free(kpem);
        return cli_fail(rc == -ENOTSUP ? IB_EXIT_SKIP : IB_EXIT_FAIL, CMD, "%s", why);
    }
    /* the address as bound: the chosen port when asked for port 0 */
    char host[INET6_ADDRSTRLEN + 2] = "?", a[INET6_ADDRSTRLEN] = "?";
    if (sa.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, a, sizeof(a));
        snprintf(host, sizeof(host), "[%s]", a);
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, host, sizeof(host));
    }
    fprintf(stderr, "ibench %s: listening on %s://%s:%d\n", CMD, cert ? "https" : "http", host, http_server_port(s));
    fflush(stderr);
    while (!atomic_load(&cli_stop)) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    http_server_stop(s);
    cli_signals_restore();
    pl_extender_free(x);
    free(cpem), free(kpem);
    fprintf(stderr, "ibench %s: stopped\n", CMD);
    return IB_EXIT_OK;
}
