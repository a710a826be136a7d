/* merge.c - profil merge (in progress). */
#include "cli.h"

int cmd_merge(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error_line("merge: not built yet");
	return 2;
}
