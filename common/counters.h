/* counters.h - hardware counters through libpfm4, optional at run time.
 *
 * Many VMs expose no PMU. Software events (task-clock, page-faults) work unless perf_event_paranoid forbids them; hardware events (cycles,
 * instructions, LLC misses) are opened when the PMU allows, and every missing one is reported with its reason.
 */
#ifndef IB_COUNTERS_H
#define IB_COUNTERS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMU_MAX_EVENTS 8

struct pmu_event {
    const char *name;   /* ibench's name: "cycles", "instructions", "llc-misses", "task-clock", "page-faults" */
    const char *pfm;    /* libpfm4 event string */
    bool hardware;
    int fd;             /* -1 when not open */
    char why[96];       /* why it is not open */
};

struct pmu_set {
    unsigned n;
    struct pmu_event ev[PMU_MAX_EVENTS];
};

/* Whether a hardware PMU is usable here; why says what is missing when not. */
bool pmu_hw_available(char *why, size_t len);
/* Open the standard set for the calling thread. Succeeds even with no PMU (hardware events then closed). */
int pmu_open_self(struct pmu_set *p);
/* Read counters into vals[n] (0 for closed events). */
int pmu_read(const struct pmu_set *p, uint64_t *vals);
void pmu_close(struct pmu_set *p);
/* Comma list of events that are not open, e.g. "cycles, instructions, llc-misses (no PMU: ...)". */
const char *pmu_missing(const struct pmu_set *p, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
