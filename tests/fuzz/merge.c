/*
 * merge.c - fuzz target: profil merge (src/cli/merge.c) of the input as
 * a profile file, through the command's own entry point.
 *
 * A file merge accepts gives a merged file that profile_open accepts,
 * complete, with the same samples counted.
 */
#include <limits.h>

#include "../../src/cli/cli.h"
#include "../../src/format/profile.h"
#include "support/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], out[PATH_MAX], why[512];
	int fd = fuzz_file(data, size, path, sizeof path);
	snprintf(out, sizeof out, "%s/merged", fuzz_dir());
	char *argv[] = { "merge", "-o", out, path, NULL };
	struct profile in, merged;
	int readable = profile_open(&in, path, why, sizeof why) == 0;
	int status = cmd_merge(4, argv);
	FUZZ_CHECK(status == (readable ? 0 : 1));
	if (readable) {
		FUZZ_CHECK(profile_open(&merged, out, why, sizeof why) == 0);
		FUZZ_CHECK(merged.header->state == PROFILE_COMPLETE);
		FUZZ_CHECK(merged.counted == in.counted && merged.system == in.system);
		FUZZ_CHECK(merged.header->outside == in.header->outside);
		profile_close(&merged);
		profile_close(&in);
	}
	unlink(out);
	close(fd);
	return 0;
}
