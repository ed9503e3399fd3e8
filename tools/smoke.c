#include "cli.h"
int cmd_smoke(int argc, char **argv) { (void)argc, (void)argv; return 2; }
