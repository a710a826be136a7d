/*
 * jit.c - a program that runs code it wrote into anonymous executable
 * memory, as a JIT compiler does, for the command's tests.
 *
 * jit MS [map]: alternates a few ms (random lengths) in a loop copied
 * into an anonymous mapping with a few ms in an ordinary function
 * (c_spin), for MS milliseconds of CPU time in all, each phase timed
 * by the thread's CPU clock.  With "map", it first writes the line a
 * JIT writes for perf, "START SIZE jit_loop", to /tmp/perf-PID.map.
 * It prints "jit PERCENT": the share of its CPU time spent in the
 * copied loop.  c_spin is called through a second copied piece of code,
 * jit_call (named in the map too), as JIT code calls the runtime's C.
 *
 * jit MS fill FILE: the same, but first writes FILE until its file
 * system is full (tests/integration/hostile_disk.sh), with a SIGBUS
 * handler that exits 99: a profiler that faults on the full disk while
 * the program runs its JIT code must not reach it.
 *
 * x86-64 only: the loop is "sub $1,%rdi; jnz; ret".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static const unsigned char loop_code[] = {
	0x48, 0x83, 0xef, 0x01,	/* sub $1, %rdi */
	0x75, 0xfa,		/* jnz back to the sub */
	0xc3,			/* ret */
};
#define CODE_AT 0x240		/* not at the mapping's start: a pc inside */

/* A thunk that calls c_spin, so that c_spin's stacks pass through JIT
   code: sub $8,%rsp (the callee's alignment); movabs $c_spin,%rax;
   call *%rax; add $8,%rsp; ret. */
static unsigned char call_code[] = {
	0x48, 0x83, 0xec, 0x08,
	0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
	0xff, 0xd0,
	0x48, 0x83, 0xc4, 0x08,
	0xc3,
};
#define CALL_AT 0x300

static volatile unsigned long sink;

__attribute__((noinline)) void c_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void bus(int sig)
{
	(void)sig;
	_exit(99);
}

/* Write zeros to path until the file system is full. */
static int fill(const char *path)
{
	static char zeros[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	while (write(fd, zeros, sizeof zeros) > 0)
		;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	double total = argc > 1 ? atof(argv[1]) : 1000;
	int map = argc > 2 && strcmp(argv[2], "map") == 0;
	if (argc > 3 && strcmp(argv[2], "fill") == 0) {
		signal(SIGBUS, bus);
		if (fill(argv[3]) != 0)
			return 1;
	}
	unsigned char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("jit: mmap");
		return 1;
	}
	memcpy(mem + CODE_AT, loop_code, sizeof loop_code);
	void (*spin)(unsigned long) = c_spin;
	memcpy(call_code + 6, &spin, sizeof spin);
	memcpy(mem + CALL_AT, call_code, sizeof call_code);
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0) {
		perror("jit: mprotect");
		return 1;
	}
	if (map) {
		char path[64];
		snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
		FILE *f = fopen(path, "w");
		if (!f) {
			perror(path);
			return 1;
		}
		fprintf(f, "%lx %zx jit_loop\n", (unsigned long)(mem + CODE_AT), sizeof loop_code);
		fprintf(f, "%lx %zx jit_call\n", (unsigned long)(mem + CALL_AT), sizeof call_code);
		fclose(f);
	}
	void (*jit_loop)(unsigned long) = (void (*)(unsigned long))(void *)(mem + CODE_AT);
	void (*jit_call)(unsigned long) = (void (*)(unsigned long))(void *)(mem + CALL_AT);
	double in_jit = 0, start = cpu_ms();
	unsigned r = (unsigned)getpid();
	while (cpu_ms() - start < total) {
		/* Phases of a few ms, of random lengths: a sampler that ticks
		   at a fixed period cannot fall in step with them. */
		r = r * 1103515245u + 12345u;
		double t = cpu_ms();
		jit_loop(2000000 + (r >> 8) % 16000000);
		in_jit += cpu_ms() - t;
		r = r * 1103515245u + 12345u;
		jit_call(600000 + (r >> 8) % 4800000);
	}
	double all = cpu_ms() - start;
	printf("jit %.2f\n", all > 0 ? 100.0 * in_jit / all : 0.0);
	return 0;
}
