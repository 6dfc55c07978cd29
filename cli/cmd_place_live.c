/* cmd_place_live.c - `ibench place apply` and `ibench place show` (placeholders until they land). */
#include "cli.h"
#include "ib_err.h"
#include "place.h"

int cmd_place_apply(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(IB_EXIT_SKIP, "place apply", "not built yet");
}

int cmd_place_show(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(IB_EXIT_SKIP, "place show", "not built yet");
}
