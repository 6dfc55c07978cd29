/* profile_fmt.h - the profile format (docs/profile-schema.md) as a C struct: one reader and one writer.
 *
 * `ibench profile` fills a struct profile and writes it; `show`, `plot` and the placement engine read it back
 * through profile_read(), which validates every field it knows (type, range, required-ness) and refuses a file
 * with a one-line reason naming the field ("sois[2].tolerated: a number in [0, 100] expected"). Unknown fields are
 * ignored (a minor version only adds fields); an unknown major version is refused. Versions 1.0 and 1.1 read into
 * the same struct: the fields they lack are marked absent (NAN for numbers, NULL for strings, -1 for tri-state
 * flags), never invented.
 *
 * Strings are malloc'd and owned by the struct (NULL: absent); profile_free() releases everything.
 */
#ifndef IB_PROFILE_FMT_H
#define IB_PROFILE_FMT_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROFILE_FORMAT "ibench-profile"
#define PROFILE_MAJOR 1
#define PROFILE_MINOR 8
#define PROFILE_MAX_CPUS 256
/* sois[] entries a profile may list: each SoI once, and a newer minor version's SoIs this ibench does not know */
#define PROFILE_MAX_SOIS 256
#define PROFILE_REF_MAX 8 /* points of a caused reference's calibration */

/* One measured point of a tolerated search. */
struct profile_point {
    double intensity;    /* % */
    double value;        /* median metric beside the SoI */
    double solo;         /* median metric of the solo samples right before */
    double relative;     /* performance against solo, higher = better */
    double achieved_pct; /* the SoI's self-meter over the whole point; NAN when it completed no step */
    int meets_qos;
    int again;           /* before 1.4: the second measurement of a ramp point whose first broke QoS; 1.4: the point
                          * took confirming rounds */
    unsigned samples;    /* samples taken beside the SoI (1.2; 0 in older files: not recorded) */
    int timed_out;       /* 1.4: a sample did not finish within the timeout: value and relative are bounds
                          * (relative <= it), not values */
    double relative_se;  /* its standard error from the baseline's noise (1.4; NAN: not recorded) */
    unsigned solo_samples; /* solo samples of the point (1.4; 0: not recorded) */
    int uncertain;       /* neither met nor broke QoS beyond its noise, after its confirming rounds (1.4) */
};

/* Does the SoI reach the target's CPU (llc-cap, llc-bw, mem-bw)? 1.1+ */
struct profile_reach {
    char *verdict;          /* "reaches" | "does not reach" | "undecided" | "unchecked" */
    char *probe;            /* NULL when unchecked without a probe */
    char *unit;
    char *reason;           /* unchecked: why */
    int cpu;                /* -1: absent */
    double bar_pct, effect_pct, se_pct, soi_achieved_pct; /* NAN: absent */
};

/* Caused: what the target takes from the SoI's own work rate (1.2: repeated, with its uncertainty). */
struct profile_caused {
    double intensity;       /* % */
    char *unit;             /* the SoI's work unit per second, e.g. "B/s" */
    char *basis;            /* "cpu-second" (1.2: work per second of the SoI's own CPU time), "wall-second" (1.0/1.1),
                             * "reference" (1.5: read through a reference probe, soi_ops.caused_ref: value is the SoI
                             * intensity whose effect on the probe equals the target's; alone/beside are the probe's
                             * rates in ref_unit), or "counted" (1.8: the kernel counted no window of the target's
                             * usage above its floor; value is the usage's mean as % of the SoI's capacity, no rounds:
                             * counted_*) */
    double value;           /* raw median over the rounds, % (may be negative); NAN: not measurable (see reason) */
    double se;              /* its standard error, points; NAN in 1.0/1.1 files */
    int distinguishable;    /* 1: |value| > 2 se; 0: within 2 se of 0; -1: unknown (1.0/1.1) */
    double alone, beside;   /* median work rates alone / beside the target, in unit (per basis) */
    double cpu_lost_pct;    /* share of its CPU time the SoI lost beside the target (time taken by the target's
                             * softirqs and wake-ups, not resource pressure); <= 100, a gain
                             * is negative and unbounded; NAN: absent */
    double cpu_lost_se;
    int unthrottled;        /* 1: a rate-capped SoI ran without its cap while caused was measured; -1 absent */
    double *rounds;         /* per-round caused values, %; nrounds of them (0 in 1.0/1.1) */
    unsigned nrounds;
    char *occupancy_what;   /* footprint SoIs: what of the target's the OS shows, e.g. "resident memory" (NULL) */
    double occupancy_pct;   /* ... as % of the SoI's capacity; NAN: absent */
    char *reason;           /* why value is NAN */
    char *ref_probe;        /* 1.5, basis "reference": the probe (NULL: none) ... */
    char *ref_unit;         /* ... its work unit per second ... */
    double ref_levels[PROFILE_REF_MAX], ref_rel[PROFILE_REF_MAX]; /* ... and its calibration: relative speed beside
                                                                   * the SoI at each level, non-increasing */
    unsigned nref;
    char *counted_res;      /* 1.8, basis "counted": the usage resource ("write") ... */
    char *counted_unit;     /* ... its unit ("B/s") ... */
    double counted_mean, counted_floor; /* ... its mean and its floor, in that unit ... */
    unsigned counted_windows; /* ... and how many windows it was counted over */
};

/* INCOMPLETE (1.4): the SoI's measurement was cut short (a sample ran out of time) or never began (the profile
 * stopped before it); its reason says which, its curve holds the points measured */
enum profile_status { PROFILE_MEASURED = 0, PROFILE_SKIPPED, PROFILE_INCOMPLETE };

/* How deep the curve falls (1.6; profile_method.h, "Depth"): its relative at 100 % and where it first falls below
 * the floor. */
struct profile_depth {
    double floor;          /* the relative the curve was followed down to */
    double relative_100;   /* the relative at 100 % (a bound when that point timed out) */
    double se_100;         /* its standard error (NAN: not recorded) */
    double below_floor_at; /* %, where the curve first falls below the floor; NAN: it does not up to 100 % */
    unsigned points;       /* points the depth added to the search */
    double seconds;        /* what they took */
};
/* The victim beside the SoI in bursts (1.7; profile_method.h, "Bursts"): a square wave, the SoI at level % for
 * on_s then idle for off_s, over whole periods. relative is the work done over the time it took against solo (a
 * time average over on and off); on_relative the relative while on that explains it, (relative - off share) / on
 * share, clamped to [0, 1]: what the model reads for a burst of on_s. */
#define PROFILE_MAX_BURSTS 8
struct profile_burst {
    double on_s, off_s, level;
    double relative, relative_se; /* se NAN: not recorded */
    double on_relative;
    unsigned samples;             /* samples beside the wave */
    double seconds;               /* what the burst point took, solo samples included */
    int timed_out;                /* a sample ran out of time: relative is a bound (<=) */
};
struct profile_confidence {
    double tolerated_pts, noise_pct;
    char *level;
};

struct profile_soi {
    char *soi, *resource;
    enum profile_status status;
    char *reason;                /* required when skipped */
    int cpus[PROFILE_MAX_CPUS];
    unsigned ncpus;
    double capacity;             /* NAN: absent (an SoI skipped before it opened) */
    char *capacity_unit, *capacity_source;
    int have_reach;
    struct profile_reach reach;
    /* measured only: */
    double tolerated;            /* 0-100 */
    double bracket[2];
    struct profile_point *curve;
    unsigned ncurve;
    int have_caused;
    struct profile_caused caused;
    int have_confidence;
    struct profile_confidence confidence;
    int have_depth;
    struct profile_depth depth;
    struct profile_burst bursts[PROFILE_MAX_BURSTS]; /* 1.7, by on_s ascending */
    unsigned nbursts;
};

struct profile_cache {
    char *name;                  /* "l1d", "l2", "llc" */
    double bytes;
};

/* What an incomplete profile lacks (1.4), and why. */
struct profile_missing {
    char *phase;                 /* "baseline before", "tolerated", "caused" or "baseline after" */
    char *soi;                   /* NULL: not an SoI's (a baseline) */
    double intensity;            /* the point, %; NAN: not a point */
    char *reason;
};

/* The machine's pressure over one phase of the profile (1.4): PSI "some" (and "full") shares of the phase's wall
 * time and the hypervisor's steal, in %; NAN where the source was absent. */
struct profile_phase {
    char *phase;                 /* as profile_missing's */
    char *soi;                   /* NULL for a baseline */
    double wall_s;
    double cpu_some, io_some, io_full, memory_some, memory_full, steal;
};

/* A neighbour disturbed the phase: a share over its bound (docs/profile.md, "Pressure during the profile"), each
 * named in why ("cpu some 98.8 % > 20 %; io some 93.1 % > 20 %"). The resource the phase's own SoI presses is not judged (io for disk-cap and disk-bw,
 * memory for mem-cap). 1 disturbed, 0 not (why ""). */
int profile_phase_disturbed(const struct profile_phase *ph, char *why, size_t len);
/* A usage resource with every figure absent (NAN) and no windows. */
struct profile_usage_res;
void profile_usage_res_init(struct profile_usage_res *u);

/* 1.6: what the target pressed over time, counted by the kernel for its processes (harness/usage.h), in windows of
 * window_s while its work ran alone: per resource its windows and their summary. A window is active above floor
 * (the resource's noise floor, in its unit); level is the 90th percentile of the active windows (the pressure while
 * active), duty their share; bursts are runs of active windows. of_capacity: mean and level as % of the capacity
 * of the SoI that presses that resource (soi), when the profile measured it; NAN otherwise. */
#define PROFILE_USAGE_MAX 8
#define PROFILE_USAGE_WINDOWS 6000
struct profile_usage_res {
    char *name, *unit, *soi;     /* soi: NULL when no SoI of the profile gives a capacity */
    double floor, mean, p50, p90, max, duty, level, burst_mean_s, burst_max_s, gap_mean_s; /* NAN: absent */
    unsigned bursts;
    double cap_mean_pct, cap_level_pct;
    double *windows;             /* NAN: the window had no figure */
    unsigned nwindows;
};
struct profile_usage {
    double window_s, seconds;
    char *source;                /* how it was counted: "cgroup processes", "process tree" */
    struct profile_usage_res res[PROFILE_USAGE_MAX];
    unsigned nres;
};

struct profile {
    int major, minor;            /* as read; written as PROFILE_MAJOR.PROFILE_MINOR */
    char *warning;               /* read: one line the reader wants shown (an SoI of a newer version it does not
                                  * know); NULL: none. Not written. */
    int complete;                /* 1.4: 0 when something is missing (missing[]); older files: 1 */
    int interrupted;             /* profile_run: 1 when a stop (SIGINT/SIGTERM) cut the measuring short (complete is
                                  * then 0, missing[] says what in words). Not written, never read: 0 from a file */
    struct profile_missing *missing;
    unsigned nmissing;
    struct profile_phase *phases; /* 1.4: pressure per phase, in measuring order */
    unsigned nphases;
    int have_usage;              /* 1.6 */
    struct profile_usage usage;
    double timeout_s;            /* 1.4 method.timeout_s: one sample's limit; NAN: absent */
    double burst_on_s[PROFILE_MAX_BURSTS]; /* 1.7 method.burst_on_s: the on-lengths bursts were measured at, where due */
    unsigned nburst_on;          /* 0: bursts off or absent */
    char *bursts_off;            /* 1.7 method.bursts_off: why no SoI has bursts (off, or no square wave); NULL */
    char *tool, *created;
    /* machine */
    char *fingerprint, *cpu_model;
    int machine_cpus;
    struct profile_cache caches[8];
    unsigned ncaches;
    /* target */
    char *name, *command, *load; /* command / load: NULL when not given */
    int pid;                     /* 0: not given */
    int tcpus[PROFILE_MAX_CPUS];
    unsigned ntcpus;
    /* metric */
    char *metric_kind, *metric_spec, *metric_unit, *metric_adapter, *metric_regex;
    int higher_is_better;
    double qos;
    /* method */
    unsigned samples_per_point, baseline_samples;
    double caused_intensity;
    char *search, *relative_to;
    unsigned caused_min_rounds;  /* 1.2; 0: absent */
    double caused_budget_s;      /* 1.2; NAN: absent */
    int caused_counted;          /* 1.8: 1 caused counted where the usage saw nothing (prof_caused_counted), 0 rounds
                                  * everywhere; -1 absent */
    /* baseline */
    double before_median, after_median, drift_pct, noise_pct;
    double *before, *after;
    unsigned nbefore, nafter;
    char *confidence;
    /* per SoI */
    struct profile_soi *sois;
    unsigned nsois;
    /* characteristics (1.3, optional): what other tools measured of the application and wrote here */
    double data_sharing;         /* 0-1 (place cluster: docs/placement.md); NAN: absent */
    char *data_sharing_source;   /* how it was measured, one line; NULL with it absent */
};

/* Read and validate a profile. 0 with *p filled (release with profile_free), or -errno with a one-line why naming
 * the file and the field: -ENOENT/-EACCES (unreadable), -EFBIG (larger than a profile can be), -EINVAL (malformed,
 * not a profile, a field of the wrong type or out of range, an unknown major version), -ENOMEM. Every error but
 * -ENOMEM is the file the user named: bad input. On error *p holds nothing to free. */
int profile_read(const char *path, struct profile *p, char *why, size_t len);
/* The same from a string (tests, the extender). */
int profile_parse(const char *text, const char *name, struct profile *p, char *why, size_t len);
/* Write p as the current version (PROFILE_MAJOR.PROFILE_MINOR), atomically (temp file + rename). 0 or -errno.
 * The text is first read back through profile_parse: a struct the reader would refuse (a required field absent or
 * out of range) is not written, -EINVAL with "not written: <path>: <field>: ...". Absent optional values (NAN, NULL,
 * -1, 0 rounds) are omitted; a measured SoI needs have_caused and have_confidence. */
int profile_write(const char *path, const struct profile *p, char *why, size_t len);
/* The JSON text of p (malloc'd; NULL on out of memory). */
char *profile_dumps(const struct profile *p);
void profile_free(struct profile *p);

/* A zeroed profile with every optional number NAN and every tri-state -1 (for a writer to fill). */
void profile_init(struct profile *p);
void profile_soi_init(struct profile_soi *s);
/* Frees what s holds and makes it as profile_soi_init does (an SoI measured once more). */
void profile_soi_clear(struct profile_soi *s);
/* Append a missing item (p->complete becomes 0) / a phase's pressure; soi may be NULL. 0 or -ENOMEM. */
int profile_add_missing(struct profile *p, const char *phase, const char *soi, double intensity, const char *reason);
int profile_add_phase(struct profile *p, const char *phase, const char *soi, const struct profile_phase *figures);
/* What a decision reads as the SoI's tolerated: the safe end of its bracket (bracket[0]), the highest intensity that
 * met QoS beyond its noise; `tolerated` itself where the entry has no valid bracket (bracket[0] <= tolerated <=
 * bracket[1], bracket[1] > 0). Before 1.4 tolerated was the safe end, so older profiles read the same. */
double profile_soi_safe_tolerated(const struct profile_soi *s);
/* How far, as a factor >= 1, the solo baseline of s's points strayed outside the range of the profile's own baseline
 * samples (before and after): max over points of max(solo / baseline max, baseline min / solo); 1 when every point's
 * solo lies within it; NAN when the profile or the SoI recorded none. A point's relative is its samples beside the
 * SoI against that solo; a solo far outside what the target does alone says the machine (or the target) was in
 * another state while the curve was measured, and its points say nothing of the SoI (docs/placement.md, "A curve
 * measured while the target's own speed moved"). */
double profile_soi_solo_stray(const struct profile *p, const struct profile_soi *s);
/* Beyond this factor a curve is not read by the placement model: PROFILE_SOLO_STRAY_MAX. */
#define PROFILE_SOLO_STRAY_MAX 4.0
/* What s's point at 100 % (the SoI unthrottled) achieved, % of the capacity its lower points were paced against
 * (the mean of its repeats' achieved_pct); NAN when it has no such point. Far beyond 100 (PROFILE_CAPACITY_LOW_PCT)
 * the capacity was measured while the resource was slower than when the curve was: the points below 100 % are
 * shares of that low figure, and the one at 100 % lies far beyond them. */
double profile_soi_full_achieved(const struct profile_soi *s);
#define PROFILE_CAPACITY_LOW_PCT 250.0
/* The SoI whose capacity a usage resource is a share of ("write" -> "disk-write", "read" -> "disk-bw", "memory" ->
 * "mem-cap", "net" -> "net-bw", "llc" -> "llc-cap", "mem-bw" -> "mem-bw"), or NULL: no SoI presses it.  One table for the profile's of_capacity and the placement model. */
const char *profile_usage_soi(const char *usage_name);
/* 1 when a usage resource's unit reads in an SoI's capacity unit (the same, or "B" against "bytes"); 0 otherwise
 * (NULL included). The profile's of_capacity and the placement model convert only then. */
int profile_usage_unit_ok(const char *usage_unit, const char *capacity_unit);

#ifdef __cplusplus
}
#endif
#endif
