#include "machine.h"

#include <string.h>

#include "ib_err.h"

int machine_open(struct machine *m, const char *topo_spec, char *why, size_t len)
{
    memset(m, 0, sizeof(*m));
    int rc = topo_load(&m->topo, topo_spec, why, len);
    if (rc < 0)
        return rc;
    cpuinfo_read(&m->cpu);
    rc = mlim_read(&m->mlim, "");
    if (rc < 0) {
        machine_close(m);
        return ib_why(why, len, rc, "cannot read /proc/meminfo or the cgroup memory limits");
    }
    rc = calib_fingerprint(m->topo, &m->cpu, &m->mlim, m->fp, sizeof(m->fp));
    if (rc == 0)
        rc = calib_open(&m->calib, m->fp, why, len);
    if (rc < 0)
        machine_close(m);
    return rc;
}

int machine_save_calib(struct machine *m, char *why, size_t len)
{
    /* an unusable cache directory was reported once at open (cli_calib_note): nothing to save, no second word */
    if (!m->calib.dirty || m->calib.nocache || !topo_is_this_machine(m->topo))
        return 0;
    int rc = calib_save(&m->calib, why, len);
    if (rc == 0)
        m->calib.dirty = 0;
    return rc;
}

void machine_close(struct machine *m)
{
    if (m->topo)
        topo_destroy(m->topo);
    m->topo = NULL;
}
