#include "cli.h"

int main(int argc, char **argv) { return ibench_main(argc, argv); }
