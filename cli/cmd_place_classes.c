/* cmd_place_classes.c - `ibench place classes` (placeholder until the classes engine lands). */
#include "cli.h"
#include "ib_err.h"
#include "place.h"

int cmd_place_classes(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(IB_EXIT_SKIP, "place classes", "not built yet");
}
