/* cmd_place_score.c - `ibench place score` (placeholder until the NUMA score lands). */
#include "cli.h"
#include "ib_err.h"
#include "place.h"

int cmd_place_score(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(IB_EXIT_SKIP, "place score", "not built yet");
}
