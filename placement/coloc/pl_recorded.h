/* pl_recorded.h - profiles recorded on the development machine (the JSON files of docs/data/corun but measured*),
 * compiled in: the built-in scenarios' pool of real applications (pl_sim.h).  The text is parsed with
 * profile_parse, as a file would be. */
#ifndef IB_PL_RECORDED_H
#define IB_PL_RECORDED_H

#ifdef __cplusplus
extern "C" {
#endif

struct pl_recorded {
    const char *name; /* the file's name, e.g. "memcached.json" */
    const char *text;
};
extern const struct pl_recorded pl_recorded[];
extern const unsigned pl_nrecorded;

#ifdef __cplusplus
}
#endif
#endif
