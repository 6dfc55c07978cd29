/* cmd_extender.c - `ibench extender`: the Kubernetes scheduler extender, pl_extender (placement/) served over HTTP by
 * http_server (libmicrohttpd).  docs/extender.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
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
#include "opts.h"
#include "parse.h"
#include "pl_coloc.h"
#include "pl_extender.h"

#define CMD "extender"
#define EXT_KEEP_HEAP (32 << 20) /* bytes: glibc's largest mmap threshold on 64 bits */
#define MAX_PEM (1u << 20)

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

/* The command's options, as given. */
struct extender_opts {
    const char *listen, *profiles, *nodes, *unknown, *refuse, *decide, *cert, *key, *log_level;
    double margin;
    unsigned assume_ttl_s, threads, conns, per_addr, timeout_s;
    uint64_t max_body, body_mem;
    int per_addr_set, body_mem_set;
};

static int cmd_extender(void *opts, int argc, char **argv, int first)
{
    (void)argc, (void)argv, (void)first;
    const struct extender_opts *eo = opts;
    const char *addr = eo->listen, *cert = eo->cert, *key = eo->key;
    struct pl_extender_opts xo = {.profiles = eo->profiles, .nodes = eo->nodes, .margin = eo->margin,
                                  .pessimistic = !strcmp(eo->unknown, "pessimistic"),
                                  .assume_ttl_s = eo->assume_ttl_s, .established = strcmp(eo->refuse, "uncertain") != 0,
                                  .likely = !strcmp(eo->refuse, "likely"),
                                  .decide_headroom = !strcmp(eo->decide, "headroom")};
    unsigned long threads = eo->threads, timeout = eo->timeout_s, conns = eo->conns, per_addr = eo->per_addr;
    uint64_t max_body = eo->max_body, body_mem = eo->body_mem;
    bool body_mem_set = eo->body_mem_set, per_addr_set = eo->per_addr_set;
    static const char *const levels[] = {"off", "error", "info", "debug"};
    unsigned li = 0;
    while (strcmp(eo->log_level, levels[li])) /* one of them: the table's choices */
        li++;
    enum http_log_level level = (enum http_log_level)li;
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

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

/* the defaults below spell the libraries' constants */
_Static_assert(PL_EXT_PORT == 8888, "the default of --listen below says 8888");
_Static_assert(PL_EXT_MISS_TTL_MS == 5000, "the help of --profiles below says 5s");
_Static_assert(PL_EXT_MAX_BODY == 4u << 20, "the default of --max-body below says 4M");
_Static_assert(HTTP_DEFAULT_BODY_MEMORY == 64u << 20, "the default of --body-memory below says 64M");
_Static_assert(HTTP_DEFAULT_CONNS == 256 && HTTP_DEFAULT_PER_ADDRESS == 32 && HTTP_DEFAULT_TIMEOUT_S == 3,
               "the defaults of --max-connections, --max-per-address and --timeout below say 256, 32 and 3");

static const char *const unknown_modes[] = {"pessimistic", "optimistic", NULL};
static const char *const refuse_rules[] = {"likely", "established", "uncertain", NULL};
static const char *const decide_modes[] = {"model", "headroom", NULL};
static const char *const log_levels[] = {"off", "error", "info", "debug", NULL};

#define EO struct extender_opts
static const struct cli_opt extender_table[] = {
    {CLI_STR("listen", "ADDR:PORT", EO, listen,
             "where to listen (loopback); numeric addresses, [::1]:PORT for IPv6; port 0\n"
             "picks a free one (printed)"),
     .def = "127.0.0.1:8888"},
    {CLI_STR("profiles", "DIR", EO, profiles,
             "the profile store: NAME.json profiles; read when first used, again once the\n"
             "directory changes; a name not there is asked again after 5s"),
     .def = "."},
    {CLI_STR("nodes", "DIR", EO, nodes,
             "the node state for requests of node names only: NAME.json (default\n"
             "PROFILES/nodes), held in memory and read again when the directory changes")},
    {CLI_UINT("assume-ttl", "S", EO, assume_ttl_s, 0, 86400,
              "a pod given a top score counts as a tenant of that node until the node lists\n"
              "it, for at most S seconds (0: never assumed)"),
     .def = CLI_STR_OF(PL_EXT_ASSUME_TTL_S), .what = "0-86400 seconds"},
    {CLI_DOUBLE("margin", "M", EO, margin, 0, 100, "the co-location check's margin, in points"),
     .def = CLI_STR_OF(PL_COLOC_MARGIN), .what = "a number of points 0-100"},
    {CLI_CHOICE("unknown", "MODE", EO, unknown, unknown_modes, "the co-location check's unknowns"),
     .def = "pessimistic"},
    {CLI_CHOICE("refuse", "RULE", EO, refuse, refuse_rules,
                "likely: filter refuses a node for a break established beyond the profiles'\n"
                "uncertainty, and for one the bounds leave open whose predicted relative\n"
                "performance is under a QoS line with a harm told from none (optimistic bound\n"
                "under 1); established: only the first; what passes uncertain, prioritize ranks\n"
                "last; uncertain: refuse every uncertain node"),
     .def = "likely"},
    {CLI_CHOICE("decide", "MODE", EO, decide, decide_modes,
                "model: the predicted relative performance with its bounds against each\n"
                "member's QoS line; headroom: the rule before 1.7 (docs/placement.md)"),
     .def = "model"},
    {CLI_STR("tls-cert", "F", EO, cert, "HTTPS with this PEM certificate (with --tls-key)")},
    {CLI_STR("tls-key", "F", EO, key, "and this PEM key (both or neither)")},
    {CLI_UINT("threads", "N", EO, threads, 1, 256, "the server's thread pool"), .def = "2", .what = "1-256"},
    {CLI_SIZE("max-body", "BYTES", EO, max_body, 1, 1 << 30,
              "larger request bodies are refused with 413 (K, M suffixes)"),
     .def = "4M", .what = "1 byte to 1 GiB"},
    {CLI_SIZE("body-memory", "BYTES", EO, body_mem, 1, 16.0 * (1 << 30),
              "request bodies arriving on all connections together; past it a body is\n"
              "refused with 503 (at least --max-body)"),
     .def = "64M", .have = CLI_HAVE(EO, body_mem_set), .what = "1 byte to 16 GiB"},
    {CLI_UINT("max-connections", "N", EO, conns, 1, 4096,
              "connections at once.  At a limit the connection idle the longest is closed\n"
              "to admit the new one; only when all are mid-request is the new one\n"
              "refused"),
     .def = "256", .what = "1-4096"},
    {CLI_UINT("max-per-address", "N", EO, per_addr, 1, 4096, "of the connections, from one client address"),
     .def = "32", .have = CLI_HAVE(EO, per_addr_set), .what = "1-4096"},
    {CLI_UINT("timeout", "S", EO, timeout_s, 1, 3600,
              "an idle connection is closed after S seconds, and a body must arrive complete\n"
              "within S seconds (408); the default is below kube-scheduler's httpTimeout\n"
              "of 5 s"),
     .def = "3", .what = "1-3600 seconds"},
    {CLI_CHOICE("log-level", "L", EO, log_level, log_levels,
                "one JSON line per request on stderr: off, error (5xx and requests cut off),\n"
                "info (every request), debug (also connections evicted or refused)"),
     .def = "error"},
};
#undef EO

const struct cli_cmd cli_cmd_extender = {
    .name = "extender",
    CLI_RUN(cmd_extender, struct extender_opts),
    .summary = "the Kubernetes scheduler extender: filter and prioritize over HTTP",
    .usage = "usage: ibench extender [--listen ADDR:PORT] [--profiles DIR] [--nodes DIR] [--margin M]\n"
             "                       [--unknown pessimistic|optimistic] [--refuse likely|established|uncertain]\n"
             "                       [--decide model|headroom]\n"
             "                       [--tls-cert F --tls-key F] [--threads N]\n"
             "                       [--max-body BYTES] [--body-memory BYTES] [--max-connections N]\n"
             "                       [--max-per-address N] [--timeout S] [--log-level off|error|info|debug]\n"
             "                       [--assume-ttl S]\n\n",
    .about = "The Kubernetes scheduler extender (docs/extender.md): kube-scheduler POSTs an ExtenderArgs to /filter\n"
             "and /prioritize and gets place colocate's decisions for the pod on each node.  GET /healthz answers\n"
             "\"ok\" (alive), GET /readyz \"ok\" once the store is loaded (else 503), GET /metrics the Prometheus text.\n",
    .more = "It prints \"ibench extender: listening on http://ADDR:PORT\" on stderr once ready and serves until SIGINT\n"
            "or SIGTERM, then stops cleanly. Exit 0 after a clean stop, 2 on bad options, 1 when it cannot listen\n"
            "(the reason is printed), 77 when TLS is asked of a libmicrohttpd without it.\n",
    CLI_OPTS(extender_table),
};
