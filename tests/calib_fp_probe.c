/* calib_fp_probe.c - the fingerprint and the cache file of common/calib_file.c as this program was built, for
 * test_calib.  tests/CMakeLists.txt links it with its own copy of calib.c and calib_file.c compiled at CALIB_FORMAT + 1
 * (calib_fp_next), as the next format bump would build it, so that test_calib can compare the two builds.
 *
 *   calib_fp_probe format                                                    the CALIB_FORMAT it was built at
 *   calib_fp_probe fingerprint TOPOLOGY VENDOR BRAND FAMILY MODEL STEPPING MEM_GIB
 *                                                                            calib_fingerprint of those (numbers
 *                                                                            as strtoul reads them: 0x19 or 25)
 *   calib_fp_probe save FINGERPRINT   a cache file in $IBENCH_CACHE_DIR with one bandwidth entry
 *   calib_fp_probe open FINGERPRINT   "caches C entries N": what calib_open read (0 0: nothing, the file refused)
 *
 * Exit 0, else 2 with the reason on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "cpuinfo.h"
#include "memlimit.h"
#include "topo.h"

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "calib_fp_probe: %s: %s\n", what, why);
    return 2;
}

static int fingerprint(char **a)
{
    struct topo *t = NULL;
    char why[256] = "", fp[96];
    if (topo_load(&t, a[0], why, sizeof why) < 0)
        return fail(a[0], why);
    struct cpu_info ci;
    memset(&ci, 0, sizeof ci);
    snprintf(ci.vendor, sizeof ci.vendor, "%s", a[1]);
    snprintf(ci.model, sizeof ci.model, "%s", a[2]);
    ci.family = (unsigned)strtoul(a[3], NULL, 0);
    ci.model_id = (unsigned)strtoul(a[4], NULL, 0);
    ci.stepping = (unsigned)strtoul(a[5], NULL, 0);
    struct mlim m;
    memset(&m, 0, sizeof m);
    m.mem_total = (uint64_t)strtoull(a[6], NULL, 0) << 30;
    int rc = calib_fingerprint(t, &ci, &m, fp, sizeof fp);
    topo_destroy(t);
    if (rc < 0)
        return fail("fingerprint", "does not fit");
    printf("%s\n", fp);
    return 0;
}

static int save(const char *fp)
{
    static struct calib c; /* large: not on the stack */
    char why[256] = "";
    if (calib_open(&c, fp, why, sizeof why) < 0)
        return fail("open", why);
    struct calib_bw e = {.kind = "dram", .cpus = "0", .ws_bytes = 64 << 20, .bps = 1e10, .spread = 0.01,
                         .when = 1700000000};
    if (calib_bw_store(&c, &e) < 0)
        return fail("store", "refused");
    if (calib_save(&c, why, sizeof why) < 0)
        return fail("save", why);
    return 0;
}

static int open_file(const char *fp)
{
    static struct calib c;
    char why[256] = "";
    if (calib_open(&c, fp, why, sizeof why) < 0)
        return fail("open", why);
    if (c.nocache)
        return fail("open", c.nocache_why);
    printf("caches %d entries %u\n", c.have_caches, c.nbw);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "format")) {
        printf("%d\n", CALIB_FORMAT);
        return 0;
    }
    if (argc == 9 && !strcmp(argv[1], "fingerprint"))
        return fingerprint(argv + 2);
    if (argc == 3 && !strcmp(argv[1], "save"))
        return save(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "open"))
        return open_file(argv[2]);
    return fail("usage", "format | fingerprint TOPOLOGY VENDOR BRAND FAMILY MODEL STEPPING MEM_GIB | save FP | open FP");
}
