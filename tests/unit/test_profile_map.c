/*
 * src/format/profile.c maps a packed file's large extents instead of
 * copying them, and a file cut short while mapped reads as zeros past
 * its new end instead of killing the reader with SIGBUS
 * (profile_guard.c), while what was checked at opening (a segment's
 * head) stays as it was.  The file is made here: one segment of 512 Ki
 * counters whose first 256 Ki (1 MiB) are 1, packed by profile_pack.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/format/profile.h"

#define N (512u << 10)		/* counters */
#define SET (256u << 10)	/* of them, 1 */

static char dir[] = "/tmp/test_profile_map.XXXXXX";
static char path[PATH_MAX];

static void make_file(void)
{
	snprintf(path, sizeof path, "%s/prog.1.prof", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	uint64_t end = PROFILE_PAGE + profile_segment_size(N, 4);
	static char page[PROFILE_PAGE];
	struct profile_header *h = (struct profile_header *)page;
	memcpy(h->magic, PROFILE_MAGIC, 8);
	h->version = 4;
	h->state = PROFILE_COMPLETE;
	h->byte_order = 0x01020304;
	h->nsegments = 1;
	h->end = end;
	h->pid = 1;
	h->hz = 1000;
	h->taken = h->counted = SET;
	snprintf(h->command, sizeof h->command, "prog");
	assert_int_equal(pwrite(fd, page, sizeof page, 0), (ssize_t)sizeof page);
	memset(page, 0, sizeof page);
	struct profile_segment *s = (struct profile_segment *)page;
	s->size = profile_segment_size(N, 4);
	s->start = s->vaddr = 0x400000;
	s->length = 2ull * N;
	s->ncounters = N;
	s->counted = SET;
	s->scale = 0x10000;
	s->width = 4;
	s->flags = PROFILE_SEG_MAIN;
	snprintf(s->path, sizeof s->path, "/bin/prog");
	assert_int_equal(pwrite(fd, page, sizeof page, PROFILE_PAGE), (ssize_t)sizeof page);
	uint32_t *c = malloc(SET * sizeof *c);
	for (uint32_t i = 0; i < SET; i++)
		c[i] = 1;
	assert_int_equal(pwrite(fd, c, SET * sizeof *c, 2 * PROFILE_PAGE),
			 (ssize_t)(SET * sizeof *c));
	free(c);
	assert_int_equal(ftruncate(fd, (off_t)end), 0);	/* the rest a hole */
	close(fd);
	char why[256] = "";
	assert_int_equal(profile_pack(path, why, sizeof why), 1);
	profile_pack_drop_spare();
}

/* Whether this process maps the file. */
static int mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 256];
	int found = 0;
	while (f && fgets(line, sizeof line, f))
		found |= strstr(line, path) != NULL;
	if (f)
		fclose(f);
	return found;
}

static uint64_t sum(const struct profile *p)
{
	const uint32_t *c = (const uint32_t *)p->segs[0].counters;
	uint64_t s = 0;
	for (uint64_t k = 0; k < N; k++)	/* not the head's: it may be cut too */
		s += c[k];
	return s;
}

static void test_mapped_and_cut(void **state)
{
	(void)state;
	make_file();
	struct profile p;
	char why[256] = "";
	assert_int_equal(profile_open(&p, path, why, sizeof why), 0);
	assert_true(p.counted == SET);
	assert_true(mapped());
	assert_true(p.segs[0].head->ncounters == N);
	assert_true(sum(&p) == SET);
	/* Cut short by someone else: what was mapped reads as zeros. */
	assert_int_equal(truncate(path, 2 * PROFILE_PAGE), 0);
	assert_true(sum(&p) == 0);
	/* What was checked (the segment's head) is the reader's own copy. */
	assert_true(p.segs[0].head->ncounters == N);
	assert_true(p.segs[0].head->width == 4);
	profile_close(&p);
	assert_false(mapped());
	unlink(path);
}

/* A file as its packer left it is mapped; the same file one byte
   longer (not as packed) is read, and reads the same. */
static void test_not_as_packed(void **state)
{
	(void)state;
	make_file();
	int fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "", 1), 1);
	close(fd);
	struct profile p;
	char why[256] = "";
	assert_int_equal(profile_open(&p, path, why, sizeof why), 0);
	assert_false(mapped());
	assert_true(p.counted == SET);
	assert_true(sum(&p) == SET);
	profile_close(&p);
	unlink(path);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("test_profile_map: mkdtemp");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mapped_and_cut),
		cmocka_unit_test(test_not_as_packed),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return r;
}
