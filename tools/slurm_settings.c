/* slurm_settings.c - the Slurm plugin's words (slurm/settings.c: its
 * plugstack.conf arguments, the folder pattern), compiled into the command
 * from the plugin's own file, so that `convguard report --job` reads the
 * pattern exactly as the plugin expands it. */
#include "../slurm/settings.c"
