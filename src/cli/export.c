/* export.c - profil export (in progress). */
#include "cli.h"

int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error_line("export: not built yet");
	return 2;
}
