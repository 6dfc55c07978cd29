/* machine.h - everything known about the machine a command runs on: topology, cpuid, memory limits, and the
 * calibration cache for its fingerprint. */
#ifndef IB_MACHINE_H
#define IB_MACHINE_H
#include "calib.h"
#include "cpuinfo.h"
#include "memlimit.h"
#include "topo.h"

#ifdef __cplusplus
extern "C" {
#endif

struct machine {
    struct topo *topo;
    struct cpu_info cpu;
    struct mlim mlim;
    struct calib calib;
    char fp[96];
};

/* topo_spec NULL: this machine; else a synthetic/XML topology (tests). Loads the calibration cache. */
int machine_open(struct machine *m, const char *topo_spec, char *why, size_t len);
/* Save the calibration cache if something was measured. */
int machine_save_calib(struct machine *m, char *why, size_t len);
void machine_close(struct machine *m);

#ifdef __cplusplus
}
#endif
#endif
