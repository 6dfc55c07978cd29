/* pl_samples.h - sampled memory accesses, the input of thread clustering (Tam et al. EuroSys'07 §4.3; docs/placement.md, "Thread
 * clustering").  Every source (a trace file, perf_event_open, the shipped `soft` workload) hands its samples to the
 * pipeline through one callback, so the pipeline never knows where they came from. */
#ifndef IB_PL_SAMPLES_H
#define IB_PL_SAMPLES_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where an access was served, as far as the source knows. */
enum pl_src {
    PL_SRC_UNKNOWN = 0, /* the source cannot tell (counted as remote: docs say why) */
    PL_SRC_LOCAL,       /* own core's or own chip's cache */
    PL_SRC_REMOTE,      /* another chip's cache: a remote cache access, what Tam et al. EuroSys'07 samples */
    PL_SRC_MEMORY,      /* DRAM */
};

struct pl_sample {
    uint32_t tid;  /* the thread (Linux TID, or the trace's thread id) */
    uint64_t addr; /* the data's virtual address */
    enum pl_src src;
};

/* Receives one sample; returns 0 to go on, or -errno to stop the source (which returns that value). */
typedef int (*pl_sample_fn)(void *ctx, const struct pl_sample *s);

/* The source names of a trace file's optional third field: "unknown", "local", "remote", "memory". */
const char *pl_src_name(enum pl_src s);
/* -1 when the word is none of them. */
int pl_src_parse(const char *word);

#ifdef __cplusplus
}
#endif
#endif
