/*
 * sysmix.c - half arithmetic, half small read()s of /dev/zero, in
 * alternating slices of CPU time, for the test of report's sys% column.
 * sysmix SECONDS [SLICE]: the CPU time to burn in all, in slices of
 * SLICE seconds each (default 0.1).  The reads use their own
 * syscall instruction, so that the pc that enters the kernel is in
 * reads() and not in libc.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>

static volatile unsigned long sink;
static int zero_fd;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void arith(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void reads(unsigned long n)
{
	char buf[64];
	for (unsigned long i = 0; i < n; i++) {
#if defined(__x86_64__)
		long ret;
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "a"((long)SYS_read), "D"((long)zero_fd), "S"(buf),
				   "d"((long)sizeof buf)
				 : "rcx", "r11", "memory");
		sink += (unsigned long)ret;
#elif defined(__aarch64__)
		register long x8 __asm__("x8") = SYS_read;
		register long x0 __asm__("x0") = zero_fd;
		register long x1 __asm__("x1") = (long)buf;
		register long x2 __asm__("x2") = sizeof buf;
		__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
		sink += (unsigned long)x0;
#else
#error "reads: no inline system call for this architecture"
#endif
	}
}

/* Call fn in small pieces until it has used seconds of CPU. */
static void burn(void (*fn)(unsigned long), unsigned long piece, double seconds)
{
	double start = cpu_now();
	while (cpu_now() - start < seconds)
		fn(piece);
}

int main(int argc, char **argv)
{
	double total = argc > 1 ? atof(argv[1]) : 2.0;
	double slice = argc > 2 ? atof(argv[2]) : 0.1;
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero_fd < 0)
		return 1;
	double start = cpu_now();
	while (cpu_now() - start < total) {
		burn(arith, 200000, slice);
		burn(reads, 200, slice);
	}
	return 0;
}
