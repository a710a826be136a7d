/*
 * The clauses of profil() about its arguments: EINVAL for a scale above
 * 0x10000 with the old profile still running, EFAULT for a buffer that
 * is not writable memory with nothing started, the four ways to turn
 * profiling off, and a second call replacing the first without another
 * count landing in the old buffer.
 */
#include "check.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

HOT_WORK(work)

static int is_active(void)
{
	return stats_now().active;
}

static void test_einval(void)
{
	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	burn(work_work, 0.1);
	errno = 0;
	CHECK(profil(h.buf, h.bufsiz, h.offset, 0x10001) == -1 && errno == EINVAL,
	      "scale 0x10001: errno %d", errno);
	CHECK(profil(h.buf, h.bufsiz, h.offset, 0xffffffffu) == -1 && errno == EINVAL,
	      "scale 0xffffffff: errno %d", errno);
	CHECK(is_active() && burn_until_counted(&h, work_work, 50, 3.0) >= 50,
	      "the old profile stopped after EINVAL");
	profil_off();
	errno = 0;
	CHECK(profil(h.buf, h.bufsiz, h.offset, 0x10001) == -1 && errno == EINVAL,
	      "scale 0x10001 while off: errno %d", errno);
	CHECK(!is_active(), "EINVAL started profiling");
	histogram_free(&h);
}

static void expect_efault(unsigned short *buf, size_t size, const char *what)
{
	errno = 0;
	CHECK(profil(buf, size, (uintptr_t)__executable_start, 0x10000) == -1 && errno == EFAULT,
	      "%s: returned without EFAULT (errno %d)", what, errno);
	CHECK(!is_active(), "%s: profiling started", what);
}

static void test_efault(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *pages = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(pages + page, page, PROT_NONE);
	munmap(pages + 2 * page, page);
	expect_efault((unsigned short *)(pages + page), page, "PROT_NONE page");
	expect_efault((unsigned short *)(pages + 2 * page), page, "unmapped page");
	expect_efault((unsigned short *)pages, 2 * page, "writable page, then PROT_NONE");
	expect_efault((unsigned short *)(uintptr_t)"read-only string", 16, "string literal");
	expect_efault((unsigned short *)(UINTPTR_MAX - 64), 1024, "range past the top");
	mprotect(pages + page, page, PROT_READ);
	expect_efault((unsigned short *)(pages + page), page, "PROT_READ page");

	/* EFAULT while on: the old profile goes on. */
	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	errno = 0;
	CHECK(profil((unsigned short *)(pages + page), page, 0, 0x10000) == -1 && errno == EFAULT,
	      "EFAULT while on: errno %d", errno);
	CHECK(burn_until_counted(&h, work_work, 50, 3.0) >= 50,
	      "the old profile stopped after EFAULT");
	profil_off();
	munmap(pages, 2 * page);
	histogram_free(&h);
}

/* Each way of turning off: 0 returned, nothing counted afterwards. */
static void test_off(void)
{
	struct histogram h = histogram_of_text();
	for (int way = 0; way < 6; way++) {
		CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
		burn(work_work, 0.05);
		int r = -1;
		switch (way) {
		case 0: r = profil(h.buf, h.bufsiz, h.offset, 0); break;
		case 1: r = profil(h.buf, h.bufsiz, h.offset, 1); break;
		case 2: r = profil_off(); break;
		case 3: r = profil(h.buf, 0, h.offset, 0x10000); break;
		case 4: r = profil(h.buf, 1, h.offset, 0x10000); break;
		case 5: r = profil_off(); r |= profil_off(); break;	/* twice */
		}
		CHECK(r == 0, "way %d of turning off returned %d", way, r);
		CHECK(!is_active(), "way %d left profiling on", way);
		uint64_t frozen = histogram_total(&h);
		burn(work_work, 0.1);
		CHECK(histogram_total(&h) == frozen, "way %d: counted after off", way);
	}
	histogram_free(&h);
}

/* A second call replaces the first: the old buffer is left alone. */
static void test_replace(void)
{
	struct histogram a = histogram_of_text(), b = histogram_of_text();
	CHECK(histogram_start(&a) == 0, "profil a: %s", strerror(errno));
	burn(work_work, 0.1);
	CHECK(histogram_start(&b) == 0, "profil b: %s", strerror(errno));
	unsigned short *snapshot = malloc(a.bufsiz);
	memcpy(snapshot, a.buf, a.bufsiz);
	CHECK(burn_until_counted(&b, work_work, 50, 3.0) >= 50, "new buffer not counted: %llu",
	      (unsigned long long)histogram_total(&b));
	CHECK(memcmp(snapshot, a.buf, a.bufsiz) == 0, "replaced buffer written");
	/* Different parameters: scale 0x8000, 4 bytes a counter. */
	struct histogram c = histogram_of_text();
	c.scale = 0x8000;
	CHECK(histogram_start(&c) == 0, "profil c: %s", strerror(errno));
	uint64_t frozen_b = histogram_total(&b);
	burn_until_counted(&c, work_work, 100, 3.0);
	CHECK(histogram_total(&b) == frozen_b, "replaced buffer b written");
	uint64_t first = 0;
	bins_index(HOT_START(work), c.offset, c.scale, c.bufsiz / 2, &first);
	uint64_t in_work = 0;
	for (uint64_t i = first; i <= first + (HOT_STOP(work) - HOT_START(work)) / 4; i++)
		in_work += c.buf[i];
	CHECK(in_work > 0.8 * histogram_total(&c),
	      "scale 0x8000: %llu of %llu counts where the work is",
	      (unsigned long long)in_work, (unsigned long long)histogram_total(&c));
	profil_off();
	free(snapshot);
	histogram_free(&a);
	histogram_free(&b);
	histogram_free(&c);
}

/* Scale 2: one counter for each 64 KiB. */
static void test_coarse(void)
{
	unsigned short counters[64] = { 0 };
	CHECK(profil(counters, sizeof counters, (uintptr_t)__executable_start, 2) == 0,
	      "scale 2: %s", strerror(errno));
	uint64_t index = 0;
	bins_index(HOT_START(work), (uintptr_t)__executable_start, 2, 64, &index);
	for (double used = 0; counters[index] <= 100 && used < 3.0;)
		used += burn(work_work, 0.02);
	profil_off();
	CHECK(counters[index] > 100, "scale 2: counter %llu has %u",
	      (unsigned long long)index, counters[index]);
}

/*
 * When not one thread can be given a timer (here: no queued signal
 * allowed), profil fails with EAGAIN and profiling is not half on.
 * In a child, so that the limit stays there.
 */
static void test_no_timer(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_SIGPENDING, &none);
		profil_set_backend(PROFIL_BACKEND_TIMER);	/* perf needs no signal */
		struct histogram h = histogram_of_text();
		errno = 0;
		int r = histogram_start(&h);
		int ok = r == -1 && errno == EAGAIN && !is_active();
		_exit(ok ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "profil with no timer to be had: status %#x", status);
}

int main(void)
{
	test_einval();
	test_efault();
	test_off();
	test_replace();
	test_coarse();
	test_no_timer();
	struct profil_stats st = stats_now();
	check_stats_add_up(&st);
	return check_done("errors");
}
