/* fuzz_extender.c - libFuzzer target for the scheduler extender's request parser (pl_extender_handle, placement/).
 *
 * The first byte picks the verb (even: filter, odd: prioritize), the rest is the request body, as the HTTP server
 * (cli/http_server.c) hands it over: not NUL-terminated.  The store is a small fixture made once: the recorded
 * profiles of docs/data/corun (IBENCH_CORUN) copied into a temporary directory, and two nodes/NAME.json.  Rules
 * checked on every input: no crash, leak, hang or out-of-bounds read; 0 with an answer that is JSON, status 200 or
 * 400, and a 400's answer {"Error": "one line"}.  -ENOMEM is a finding too: libFuzzer's inputs are a few KB, and
 * jansson refusing a string that is not UTF-8 returns what looks like out of memory (an answer lost, a 500). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pl_extender.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pl_extender *ext;

static void die(const char *what)
{
    fprintf(stderr, "fuzz_extender: %s\n", what);
    abort();
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f))
        die(path);
}

/* The fixture store, once per process (left in /tmp: libFuzzer exits without a hook; it is a few files). */
static void setup(void)
{
    static char dir[] = "/tmp/ibench_fuzz_extender.XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp");
    DIR *d = opendir(IBENCH_CORUN);
    if (!d)
        die(IBENCH_CORUN);
    struct dirent *e;
    char src[4096], dst[4096];
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") || !strncmp(e->d_name, "measured", 8))
            continue;
        snprintf(src, sizeof(src), "%s/%s", IBENCH_CORUN, e->d_name);
        snprintf(dst, sizeof(dst), "%s/%s", dir, e->d_name);
        json_t *j = json_load_file(src, 0, NULL);
        if (!j || json_dump_file(j, dst, 0))
            die(src);
        json_decref(j);
    }
    closedir(d);
    snprintf(dst, sizeof(dst), "%s/nodes", dir);
    mkdir(dst, 0700);
    snprintf(dst, sizeof(dst), "%s/nodes/n1.json", dir);
    put(dst, "{\"annotations\": {\"" PL_EXT_ANN_TENANTS "\": \"[\\\"redis\\\", \\\"xz\\\"]\"}}");
    snprintf(dst, sizeof(dst), "%s/nodes/n2.json", dir);
    put(dst, "{\"annotations\": {\"" PL_EXT_ANN_TENANTS "\": \"[]\", \"" PL_EXT_ANN_MACHINE
             "\": \"{\\\"fingerprint\\\": \\\"x\\\", \\\"cpu_model\\\": \\\"y\\\", \\\"cpus\\\": 4}\"}}");
    struct pl_extender_opts o = {.profiles = dir, .margin = 5.0, .pessimistic = true};
    char why[256];
    if (pl_extender_new(&o, &ext, why, sizeof(why)) < 0)
        die(why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ext)
        setup();
    if (size < 1)
        return 0;
    /* the body in a buffer of its own size: a read past its end is ASan's finding */
    size_t len = size - 1;
    char *body = malloc(len ? len : 1);
    if (!body)
        return 0;
    memcpy(body, data + 1, len);
    const char *verb = data[0] % 2 ? PL_EXT_VERB_PRIORITIZE : PL_EXT_VERB_FILTER;
    char *out = NULL;
    int status = 0;
    int rc = pl_extender_handle(ext, verb, body, len, &out, &status);
    free(body);
    if (rc != 0 || !out)
        die(rc == -ENOMEM ? "-ENOMEM on a few KB: an answer jansson refused (a string that is not UTF-8?)"
                          : "returned an error, or 0 without an answer");
    if (status != 200 && status != 400)
        die("status neither 200 nor 400");
    json_error_t err;
    json_t *j = json_loads(out, 0, &err);
    if (!j) {
        fprintf(stderr, "answer is not JSON: %s\n", out);
        abort();
    }
    if (status == 400) {
        const char *e = json_string_value(json_object_get(j, "Error"));
        if (!e || !e[0] || strchr(e, '\n')) {
            fprintf(stderr, "400 without a one-line Error: %s\n", out);
            abort();
        }
    }
    json_decref(j);
    free(out);
    return 0;
}
