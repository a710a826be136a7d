/*
 * export.c - fuzz target: the pprof writer's input path.  The input, as
 * a file of any kind the command reads (profile, gmon.out, mon.out,
 * pcsample), becomes a model (src/cli/model.c, classic.c), which is
 * exported as pprof and as gmon.out (src/cli/export.c), without symbols.
 *
 * What export writes as gmon.out reads back, and holds no more samples
 * than the model had.
 */
#include <limits.h>
#include <string.h>

#include "../../src/cli/export.h"
#include "../../src/format/gmon.h"
#include "../../src/format/profile.h"
#include "support/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], out[PATH_MAX];
	int fd = fuzz_file(data, size, path, sizeof path);
	struct model m = { 0 };
	m.exe = "/proc/self/exe";	/* the program of a gmon.out: anything readable */
	if (model_add_file(&m, path) != 0) {
		model_free(&m);
		close(fd);
		return 0;
	}
	close(fd);
	model_finish(&m);
	uint64_t total = 0;
	for (size_t i = 0; i < m.nobjects; i++) {
		const struct object *o = &m.objects[i];
		uint64_t sum = 0;
		for (size_t k = 0; k < o->nbins; k++) {
			FUZZ_CHECK(o->bins[k].first <= o->bins[k].last);
			FUZZ_CHECK(k == 0 || o->bins[k - 1].first <= o->bins[k].first);
			sum += o->bins[k].count;
		}
		FUZZ_CHECK(sum == o->total);
		total += sum;
	}
	FUZZ_CHECK(total <= m.counted);
	struct symbols **syms = calloc(m.nobjects + 1, sizeof *syms);
	FUZZ_CHECK(syms != NULL);
	snprintf(out, sizeof out, "%s/out.pb.gz", fuzz_dir());
	if (export_pprof(&m, syms, out) == 0)
		FUZZ_CHECK(access(out, R_OK) == 0);
	unlink(out);
	snprintf(out, sizeof out, "%s/gmon.out", fuzz_dir());
	const struct object *main_object = NULL;
	for (size_t i = 0; i < m.nobjects && !main_object; i++)
		if (m.objects[i].flags & PROFILE_SEG_MAIN)
			main_object = &m.objects[i];
	if (export_gmon(&m, NULL, out) == 0) {
		struct gmon_profile g;
		char why[512];
		FUZZ_CHECK(main_object != NULL);
		FUZZ_CHECK(gmon_read_file(out, &g, why, sizeof why) == 0);
		uint64_t sum = 0;
		for (size_t i = 0; i < g.nhist; i++)
			for (uint64_t k = 0; k < g.hist[i].nbins; k++)
				sum += g.hist[i].counts[k];
		FUZZ_CHECK(sum <= main_object->total);
		gmon_free(&g);
	}
	unlink(out);
	free(syms);
	model_free(&m);
	return 0;
}
