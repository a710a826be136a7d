/*
 * debuginfod.h - debug files from debuginfod servers (DEBUGINFOD_URLS),
 * asked through elfutils' libdebuginfod where libdwfl's own search
 * (/usr/lib/debug/.build-id, .gnu_debuglink, and debuginfod itself)
 * found none, so that the report can say in one line why an object's
 * functions and lines are missing.
 */
#ifndef PROFIL_CLI_DEBUGINFOD_H
#define PROFIL_CLI_DEBUGINFOD_H

#include <elfutils/libdwfl.h>

/*
 * libdwfl's find_debuginfo callback: dwfl_standard_find_debuginfo(),
 * then, where it found nothing and DEBUGINFOD_URLS is set, debuginfod
 * asked once more for the file or for why not.  A failure other than
 * "the servers do not have it" is said once per command, in one line.
 */
int debuginfod_find_debuginfo_cb(Dwfl_Module *mod, void **userdata, const char *modname,
				 Dwarf_Addr base, const char *file, const char *debuglink,
				 GElf_Word crc, char **debuginfo_file_name);

/* Let go of the client, if one was made. */
void debuginfod_done(void);

#endif
