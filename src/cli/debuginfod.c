/*
 * debuginfod.c - see debuginfod.h.
 *
 * libdwfl asks debuginfod itself (it loads libdebuginfod when
 * DEBUGINFOD_URLS is set) but keeps the reason of a failure to itself:
 * a server that is down and one that lacks the file look the same.
 * Asking again here costs nothing where the server refused at once or
 * answered "not found" (the client keeps that answer in its cache), and
 * gives the errno to say.
 */
#define _GNU_SOURCE
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "debuginfod.h"

static debuginfod_client *client;
static int said;

int debuginfod_find_debuginfo_cb(Dwfl_Module *mod, void **userdata, const char *modname,
				 Dwarf_Addr base, const char *file, const char *debuglink,
				 GElf_Word crc, char **debuginfo_file_name)
{
	int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, debuglink, crc,
					       debuginfo_file_name);
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (fd >= 0 || !urls || !urls[0])
		return fd;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0)
		return fd;
	if (!client && !(client = debuginfod_begin()))
		return fd;
	char *path = NULL;
	int got = debuginfod_find_debuginfo(client, bits, n, &path);
	if (got >= 0) {
		*debuginfo_file_name = path;
		return got;
	}
	free(path);
	/* Not on the servers is the common case (a library without a
	   debug package): nothing to say. */
	if (got != -ENOENT && !said) {
		said = 1;
		error_line("%s: no debug info from debuginfod (%s): %s; its functions without a "
			   "symbol are shown by address", file ? file : modname, urls, strerror(-got));
	}
	return fd;
}

void debuginfod_done(void)
{
	if (client)
		debuginfod_end(client);
	client = NULL;
}
