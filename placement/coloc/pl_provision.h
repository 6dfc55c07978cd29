/* pl_provision.h - provisioning advice from a profile (the iBench paper §V.B): the resources an application presses hardest
 * and tolerates least, ranked, and the machine types of a catalogue that would relieve them (pl_provision.c states
 * the rules; docs/placement.md, "Provisioning advice"). */
#ifndef IB_PL_PROVISION_H
#define IB_PL_PROVISION_H
#include <stdbool.h>
#include <stddef.h>

#include "profile_fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_PROV_THRESHOLD 0.25 /* a resource scoring at least this is a candidate for relief */

struct pl_prov_res {
    const char *soi;           /* the profile's, not owned */
    bool measured;             /* false: skipped (reason below), never ranked */
    const char *reason;
    double caused, caused_se;  /* as in the profile (NAN: absent) */
    bool distinguishable;      /* caused told apart from 0 (old files without se: taken as told apart) */
    double tolerated;
    double pressure;           /* 0-1: max(0, caused) / 100 when distinguishable, else 0 */
    double sensitivity;        /* 0-1: 1 - tolerated / 100 */
    double score;              /* pressure + sensitivity, 0-2 */
    bool candidate;            /* score >= PL_PROV_THRESHOLD */
};

struct pl_catalog_type {
    char *name;
    char **soi;                /* the SoIs it relieves ... */
    double *factor;            /* ... and its capacity there relative to the baseline (> 0; 1 = the same) */
    unsigned n;
    double cost;               /* relative to the baseline (1) */
};
struct pl_catalog {
    char *baseline;
    struct pl_catalog_type *t;
    unsigned n;
};

struct pl_prov_advice {
    unsigned type;             /* index into the catalogue */
    unsigned relieved;         /* how many of the top resources it relieves (factor > 1) */
    double gain;               /* the product of those factors */
};

struct pl_prov {
    struct pl_prov_res *res;   /* measured ones ranked first (score descending, then name), then skipped by name */
    unsigned nres, nranked;
    struct pl_prov_advice *adv;/* types relieving at least one top resource, best first */
    unsigned nadv;
    unsigned top;              /* how many top candidates the advice was for */
};

/* The ranking of p's resources and, with a catalogue, the advice for its `top` best-ranked candidates.  0 or
 * -ENOMEM / -EINVAL (a profile with no measured SoI) with one line. */
int pl_provision(const struct profile *p, const struct pl_catalog *cat, unsigned top, struct pl_prov *out, char *why,
                 size_t len);
void pl_prov_free(struct pl_prov *out);

/* {"version": 1, "baseline": NAME, "types": [{"name", "relieves": {SOI: FACTOR, ...}, "cost"}]}, strictly. */
int pl_catalog_read(const char *path, struct pl_catalog *cat, char *why, size_t len);
void pl_catalog_free(struct pl_catalog *cat);
/* A type's capacity for an SoI relative to the baseline (1 when the catalogue does not name it). */
double pl_catalog_factor(const struct pl_catalog_type *t, const char *soi);

#ifdef __cplusplus
}
#endif
#endif
