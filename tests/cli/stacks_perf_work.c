/*
 * stacks_perf_work SECONDS SYMS - a program whose call structure is
 * known, for stacks_perf.sh: two threads (main and one more) each run
 * thread_main, which runs three phases of SECONDS of its CPU time:
 *   phase_rec -> rec -> rec ... (13 deep) -> a loop in rec
 *   phase_sort -> qsort (libc) -> ... -> cmp, our comparator
 *   phase_zlib -> compress2 / crc32 (libz, no frame pointers)
 * At the end it writes SYMS: "fn NAME LO HI" for each of its functions
 * and "obj NAME LO HI" for the executable segments of libc and libz, in
 * its own address space, which is what the profile's pcs are.
 *
 * Built with -rdynamic: dladdr1 finds the functions and their sizes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

static double seconds = 0.3;

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((noinline)) int cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t p = x, q = y;
	for (int i = 0; i < 16; i++) {	/* the comparator's own time */
		p = p * 2654435761u + 1;
		q = q * 2654435761u + 1;
		__asm__ volatile("" : "+r"(p), "+r"(q));
	}
	return (x > y) - (x < y) + (int)((p ^ q) & 0);
}

__attribute__((noinline)) uint64_t rec(int depth, uint64_t x)
{
	if (depth == 0) {
		for (int i = 0; i < 20000; i++) {
			x = x * 6364136223846793005u + 1442695040888963407u;
			__asm__ volatile("" : "+r"(x));
		}
		return x;
	}
	return rec(depth - 1, x + 1) ^ (uint64_t)depth;
}

__attribute__((noinline)) uint64_t phase_rec(void)
{
	uint64_t s = 0;
	double end = cpu_now() + seconds;
	do
		s += rec(13, s);
	while (cpu_now() < end);
	return s;
}

__attribute__((noinline)) uint64_t phase_sort(void)
{
	enum { N = 20000 };
	uint32_t *v = malloc(N * sizeof *v), r = 1;
	uint64_t s = 0;
	double end = cpu_now() + seconds;
	do {
		for (int i = 0; i < N; i++)
			v[i] = r = r * 1103515245u + 12345u;
		qsort(v, N, sizeof v[0], cmp);
		s += v[N / 2];
	} while (cpu_now() < end);
	free(v);
	return s;
}

__attribute__((noinline)) uint64_t phase_zlib(void)
{
	enum { N = 1 << 16 };
	unsigned char *in = malloc(N), *out = malloc(compressBound(N));
	uint64_t s = 0;
	uint32_t r = 7;
	for (int i = 0; i < N; i++) {
		r = r * 1103515245u + 12345u;
		in[i] = (unsigned char)("abcdefgh"[(r >> 16) % 8]);
	}
	double end = cpu_now() + seconds;
	do {
		uLongf len = compressBound(N);
		compress2(out, &len, in, N, 6);
		s += len + crc32(0, out, (uInt)len);
	} while (cpu_now() < end);
	free(in);
	free(out);
	return s;
}

__attribute__((noinline)) void *thread_main(void *arg)
{
	uint64_t s = phase_rec() + phase_sort() + phase_zlib();
	*(uint64_t *)arg = s;
	return NULL;
}

static void put_fn(FILE *f, const char *name, void *addr)
{
	Dl_info di;
	const ElfW(Sym) *sym = NULL;
	if (dladdr1(addr, &di, (void **)&sym, RTLD_DL_SYMENT) && sym)
		fprintf(f, "fn %s %#lx %#lx\n", name, (unsigned long)di.dli_saddr,
			(unsigned long)di.dli_saddr + (unsigned long)sym->st_size);
}

struct find {
	uintptr_t addr, lo, hi;
};

static int find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct find *f = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && f->addr >= lo && f->addr < hi) {
			f->lo = lo;
			f->hi = hi;
			return 1;
		}
	}
	return 0;
}

static void put_obj(FILE *f, const char *name, void *addr)
{
	struct find fd = { (uintptr_t)addr, 0, 0 };
	if (dl_iterate_phdr(find_segment, &fd))
		fprintf(f, "obj %s %#lx %#lx\n", name, (unsigned long)fd.lo, (unsigned long)fd.hi);
}

__attribute__((noinline)) uint64_t run_work(void)
{
	pthread_t t;
	uint64_t a = 0, b = 0;
	if (pthread_create(&t, NULL, thread_main, &a) != 0)
		return 0;
	thread_main(&b);
	pthread_join(t, NULL);
	return a ^ b;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: stacks_perf_work SECONDS SYMS\n");
		return 2;
	}
	seconds = atof(argv[1]);
	uint64_t s = run_work();
	FILE *f = fopen(argv[2], "w");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	put_fn(f, "cmp", (void *)cmp);
	put_fn(f, "rec", (void *)rec);
	put_fn(f, "phase_rec", (void *)phase_rec);
	put_fn(f, "phase_sort", (void *)phase_sort);
	put_fn(f, "phase_zlib", (void *)phase_zlib);
	put_fn(f, "thread_main", (void *)thread_main);
	put_fn(f, "run_work", (void *)run_work);
	put_fn(f, "main", (void *)main);
	/* Not qsort: under ASan that is its interceptor, in libasan. */
	put_obj(f, "libc", (void *)gnu_get_libc_version);
	put_obj(f, "libz", (void *)compress2);
	fclose(f);
	printf("%llu\n", (unsigned long long)(s & 1));
	return 0;
}
