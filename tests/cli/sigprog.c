/*
 * sigprog.c - programs that do to signals, stacks and faults what real
 * programs do, for tests/integration/hostile_signals.sh (issue 24).  Each
 * mode prints what it saw on standard output and exits with a status of
 * its own; the test runs it unprofiled, linked (built with
 * -DWITH_LIBPROFIL -lprofil: profil() is on from the start) and under
 * profil run, with each backend, and wants the same output and status.
 *
 *   fault_exit     profil() on a mapped buffer; a SIGSEGV and SIGBUS
 *                  handler of the program's that calls _exit(99); the
 *                  buffer is unmapped while samples come
 *   fault_longjmp  the same with a handler that siglongjmps
 *   own_fault      the program's own NULL dereference, its handler says so
 *   kill_segv, kill_bus  kill(getpid(), SIG...) with the default action
 *   kill_handled   kill -SEGV with a handler of the program's
 *   bus_exit       a SIGBUS handler that calls _exit(99), then work
 *                  spread over 256 KiB of text (profil run on a full disk)
 *   async_cancel   200 threads cancelled asynchronously while they work
 *   tinystack      200 threads with PTHREAD_STACK_MIN stacks, 6.5 KiB deep
 *   altstack       work while a 4 KiB sigaltstack is set; its
 *                  surroundings must stay intact
 *   altstack_min N the same with the kernel's signal frame
 *                  (_SC_MINSIGSTKSZ) and N bytes more
 *   reset_all      every signal's action reset to the default, then work
 *   catchall       a handler on every signal, then work, then SIGUSR1
 *   sigwait_all    every signal blocked; sigtimedwait, sigwaitinfo and a
 *                  signalfd for all of them while working
 *   raw_replace    a handler on every real-time signal by raw system call
 *                  (as Go's runtime), a thread made, then work: what the
 *                  handler gets after the thread was made
 *   seccomp_kill, seccomp_trap, seccomp_eperm  a seccomp filter that kills,
 *                  traps or fails perf_event_open, then this program
 *                  again (exec), which works
 *   seccomp_strict seccomp's strict mode, then work without system calls
 *   sig_profil     SIGALRM every 2 ms turns profil() on or off while the
 *                  program allocates and frees (linked: the classic
 *                  "toggle profiling on a signal")
 *   exec_in_fork   a prefork loop whose SIGHUP handler execs the program
 *                  again, SIGHUP sent by a child at a random moment: 30
 *                  generations (F4a: the signal came inside fork(), where
 *                  libprofil held its lock, and the handler's execve
 *                  waited for that lock for good)
 *
 * "work" is CPU time, so that samples come (about 0.3 s each).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef WITH_LIBPROFIL
#include "profil.h"
#endif
#include "refuse_perf.h"

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void work(double seconds)
{
	double end = cpu_now() + seconds;
	while (cpu_now() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i ^ (sink >> 3);
}

#ifdef WITH_LIBPROFIL
static unsigned short static_buf[65536];
extern char __executable_start[];
/* profil(NULL) turns profiling off; glibc's declaration says nonnull. */
static unsigned short *volatile no_buffer;
#endif

/* Linked: profiling on from here, into buf (or a buffer of our own),
   each counter 8 bytes of the program's text from its start. */
static void start(unsigned short *buf, size_t size)
{
#ifdef WITH_LIBPROFIL
	if (!buf) {
		buf = static_buf;
		size = sizeof static_buf;
	}
	if (profil(buf, size, (size_t)__executable_start, 0x4000) != 0) {
		perror("profil");
		exit(120);
	}
#else
	(void)buf;
	(void)size;
#endif
}

static void stop(void)
{
#ifdef WITH_LIBPROFIL
	profil(no_buffer, 0, 0, 0);
#endif
}

static atomic_int handled;
static sigjmp_buf jump;

static void die99(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
	_exit(99);
}

static void jump_out(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
	siglongjmp(jump, 1);
}

static void on(int sig, void (*fn)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* F10: a counter buffer unmapped while the program has its own handlers. */
static int fault(int longjmp_out)
{
	size_t size = 1 << 20;
	unsigned short *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 2;
	start(buf, size);
	on(SIGSEGV, longjmp_out ? jump_out : die99);
	on(SIGBUS, longjmp_out ? jump_out : die99);
	work(0.05);
	munmap(buf, size);
	if (sigsetjmp(jump, 1) == 0)
		work(0.3);
	else
		printf("jumped\n");
	stop();
	printf("handler ran %d times\n", atomic_load(&handled));
	return 0;
}

static void say_fault(int sig, siginfo_t *info, void *ctx)
{
	(void)ctx;
	char line[64];
	int n = snprintf(line, sizeof line, "caught %d code %s\n", sig,
			 info->si_code > 0 ? "fault" : "sent");
	if (write(1, line, (size_t)n) < 0)
		_exit(2);
	_exit(3);
}

static void on_info(int sig, void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static volatile int *volatile null_int;

static int own_fault(void)
{
	start(NULL, 0);
	on_info(SIGSEGV, say_fault);
	work(0.1);
	fflush(stdout);
	*null_int = 1;
	return 0;
}

static int kill_self(int sig, int handled_by_program)
{
	start(NULL, 0);
	if (handled_by_program)
		on_info(sig, say_fault);
	work(0.1);
	fflush(stdout);
	kill(getpid(), sig);
	work(0.2);
	printf("survived\n");
	return 0;
}

/* Work spread over pages of text 64 KiB apart: under profil run on a
   full disk each has counter pages of its own to fault on. */
#define FAR(n) __attribute__((noinline, aligned(65536))) static void far##n(void) { work(0.04); }
FAR(0) FAR(1) FAR(2) FAR(3)

static int bus_exit(void)
{
	start(NULL, 0);
	on(SIGBUS, die99);
	on(SIGSEGV, die99);
	for (int i = 0; i < 2; i++) {
		far0();
		far1();
		far2();
		far3();
	}
	printf("done\n");
	return 0;
}

static atomic_int running;

static void *cancelled(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	atomic_store(&running, 1);
	for (;;)
		sink += sink >> 3 ^ 7;
	return NULL;
}

static int async_cancel(void)
{
	start(NULL, 0);
	for (int i = 0; i < 200; i++) {
		pthread_t t;
		atomic_store(&running, 0);
		if (pthread_create(&t, NULL, cancelled, NULL) != 0)
			return 2;
		struct timespec ts = { 0, 2000000 };	/* it works 2 ms */
		while (!atomic_load(&running))
			sched_yield();
		nanosleep(&ts, NULL);
		pthread_cancel(t);
		pthread_join(t, NULL);
	}
	stop();
	start(NULL, 0);
	work(0.05);
	stop();
	printf("200 cancelled\n");
	return 0;
}

/* About 6.5 KiB of stack below the thread's start, then work. */
__attribute__((noinline)) static unsigned long deep(int depth)
{
	volatile char pad[400];
	pad[0] = (char)depth;
	if (depth > 0)
		return deep(depth - 1) + pad[0];
	work(0.002);
	return pad[0];
}

static void *tiny(void *arg)
{
	(void)arg;
	sink += deep(15);
	return NULL;
}

static int tinystack(void)
{
	start(NULL, 0);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
	for (int i = 0; i < 200; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, tiny, NULL) != 0)
			return 2;
		pthread_join(t, NULL);
	}
	stop();
	printf("200 threads\n");
	return 0;
}

static int altstack(size_t size)
{
	enum { PAGE = 4096, GUARD = 3 * PAGE };
	size = (size + 15) & ~(size_t)15;
	unsigned char *block = malloc(GUARD + size + GUARD);
	if (!block)
		return 2;
	memset(block, 0xa5, GUARD + size + GUARD);
	stack_t ss = { .ss_sp = block + GUARD, .ss_size = size, .ss_flags = 0 };
	if (sigaltstack(&ss, NULL) != 0) {
		perror("sigaltstack");
		return 2;
	}
	start(NULL, 0);
	work(0.3);
	stop();
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	size_t below = 0, above = 0;
	for (size_t i = 0; i < GUARD; i++) {
		below += block[i] != 0xa5;
		above += block[GUARD + size + i] != 0xa5;
	}
	printf("%zu bytes changed below, %zu above\n", below, above);
	free(block);
	return 0;
}

static int is_reserved(int sig)
{
	return sig == SIGKILL || sig == SIGSTOP || sig == 32 || sig == 33;
}

static int reset_all(void)
{
	start(NULL, 0);
	for (int sig = 1; sig < NSIG; sig++)
		if (!is_reserved(sig))
			signal(sig, SIG_DFL);
	work(0.3);
	stop();
	printf("done\n");
	return 0;
}

static atomic_int got[NSIG];

static void count(int sig)
{
	atomic_fetch_add(&got[sig], 1);
}

static void print_got(const char *what)
{
	int any = 0;
	for (int sig = 1; sig < NSIG; sig++)
		if (atomic_load(&got[sig])) {
			printf("%s signal %d\n", what, sig);
			any = 1;
		}
	if (!any)
		printf("%s nothing\n", what);
}

static int catchall(void)
{
	start(NULL, 0);
	for (int sig = 1; sig < NSIG; sig++)
		if (!is_reserved(sig) && sig != SIGSEGV && sig != SIGBUS)
			on(sig, count);
	work(0.3);
	raise(SIGUSR1);
	stop();
	print_got("got");
	return 0;
}

static int sigwait_all(void)
{
	start(NULL, 0);
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	int fd = signalfd(-1, &all, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0) {
		perror("signalfd");
		return 2;
	}
	for (int round = 0; round < 30; round++) {
		work(0.01);
		siginfo_t info;
		struct timespec zero = { 0, 0 };
		int sig;
		while ((sig = sigtimedwait(&all, &info, &zero)) > 0)
			count(sig);
		struct signalfd_siginfo si;
		while (read(fd, &si, sizeof si) == (ssize_t)sizeof si)
			count((int)si.ssi_signo);
	}
	kill(getpid(), SIGUSR2);
	siginfo_t info;
	int sig = sigwaitinfo(&all, &info);
	printf("waited for %d\n", sig);
	stop();
	print_got("dequeued");
	return 0;
}

/* The kernel's sigaction, as a runtime that calls no libc sets it. */
struct kaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

static void *idle(void *arg)
{
	return arg;
}

static int raw_replace(void)
{
	start(NULL, 0);
	/* libc's restorer, as a raw caller must bring its own. */
	struct sigaction probe;
	memset(&probe, 0, sizeof probe);
	probe.sa_handler = count;
	sigaction(SIGUSR1, &probe, NULL);
	struct kaction k;
	syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, sizeof k.mask);
	k.handler = count;
	k.mask = 0;
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof k.mask);
	pthread_t t;
	pthread_create(&t, NULL, idle, NULL);
	pthread_join(t, NULL);
	memset(got, 0, sizeof got);
	work(0.3);
	stop();
	print_got("after a thread, got");
	return 0;
}

/* Profiling on if it can be (a sandbox may refuse every backend). */
static void start_if_possible(void)
{
#ifdef WITH_LIBPROFIL
	profil(static_buf, sizeof static_buf, (size_t)__executable_start, 0x4000);
#endif
}

static int sandboxed(unsigned action, const char *self)
{
	if (perf_filter(action) != 0) {
		perror("seccomp");
		return 2;
	}
	execl("/proc/self/exe", self, "sandboxed_work", (char *)NULL);
	perror("exec");
	return 2;
}

static int sandboxed_work(void)
{
	start_if_possible();
	work(0.3);
	stop();
	printf("done\n");
	return 0;
}

/* Iterations of the loop below in about seconds of CPU. */
static unsigned long calibrate(double seconds)
{
	double t0 = cpu_now();
	unsigned long n = 0;
	while (cpu_now() - t0 < 0.05)
		for (int i = 0; i < 10000; i++, n++)
			sink += (unsigned long)i ^ (sink >> 3);
	return (unsigned long)(n * seconds / (cpu_now() - t0));
}

static int seccomp_strict(void)
{
	unsigned long n = calibrate(0.3);
	start(NULL, 0);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) {
		perror("strict");
		return 2;
	}
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
	static const char done[] = "done\n";
	if (write(1, done, sizeof done - 1) < 0)
		syscall(SYS_exit, 2);
	syscall(SYS_exit, 0);	/* the only exit strict mode allows */
	return 0;
}

static void toggle(int sig)
{
	(void)sig;
#ifdef WITH_LIBPROFIL
	static atomic_int toggles;
	int saved = errno;
	if (atomic_fetch_add(&toggles, 1) % 2)
		profil(no_buffer, 0, 0, 0);
	else
		start_if_possible();
	errno = saved;
#endif
}

static int sig_profil(void)
{
	on(SIGALRM, toggle);
	struct itimerval every = { { 0, 2000 }, { 0, 2000 } };
	setitimer(ITIMER_REAL, &every, NULL);
	double end = cpu_now() + 0.5;
	unsigned long sum = 0;
	while (cpu_now() < end) {
		void *p[64];
		for (int i = 0; i < 64; i++) {
			p[i] = malloc(16 + (size_t)i * 40);
			if (p[i])
				memset(p[i], i, 16);
		}
		for (int i = 0; i < 64; i++) {
			sum += p[i] ? ((unsigned char *)p[i])[3] : 0;
			free(p[i]);
		}
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	stop();
	printf("allocated and freed, %s\n", sum ? "checked" : "nothing");
	return 0;
}

/* F4a: each generation forks children that _exit at once, as fast as it
   can, until a SIGHUP its signaller sends 1 to 8 ms in makes its
   handler exec the next generation (fork restarts after a handler, so
   the handler often runs inside the fork window). */
#define GENERATIONS 30
static char *const *self_argv;

static void exec_next(int sig)
{
	(void)sig;
	char gen[16];
	int g = atoi(self_argv[2]) + 1, n = 0;
	char rev[16];
	do
		rev[n++] = (char)('0' + g % 10);
	while ((g /= 10) && n < 15);
	for (int i = 0; i < n; i++)
		gen[i] = rev[n - 1 - i];
	gen[n] = '\0';
	char *next[] = { self_argv[0], "exec_in_fork", gen, NULL };
	execv("/proc/self/exe", next);
	_exit(3);
}

static int exec_in_fork(char *const *argv)
{
	self_argv = argv;
	int g = argv[2] ? atoi(argv[2]) : 0;
	if (g >= GENERATIONS) {
		while (waitpid(-1, NULL, 0) > 0)
			;
		printf("%d generations, each execed from a handler while forking\n", g);
		return 0;
	}
	if (!argv[2]) {
		char *first[] = { argv[0], "exec_in_fork", "0", NULL };
		execv("/proc/self/exe", first);
		return 3;
	}
	start(NULL, 0);
	on(SIGHUP, exec_next);
	sigset_t hup;	/* blocked in the handler that execed this image */
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	sigprocmask(SIG_UNBLOCK, &hup, NULL);
	pid_t parent = getpid();
	if (fork() == 0) {
		struct timespec ts = { 0, 1000000L * (1 + (getpid() + g) % 8) };
		nanosleep(&ts, NULL);
		kill(parent, SIGHUP);
		_exit(0);
	}
	for (;;) {
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		if (c > 0)
			waitpid(c, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *m = argc > 1 ? argv[1] : "";
	if (!strcmp(m, "fault_exit"))
		return fault(0);
	if (!strcmp(m, "fault_longjmp"))
		return fault(1);
	if (!strcmp(m, "own_fault"))
		return own_fault();
	if (!strcmp(m, "kill_segv"))
		return kill_self(SIGSEGV, 0);
	if (!strcmp(m, "kill_bus"))
		return kill_self(SIGBUS, 0);
	if (!strcmp(m, "kill_handled"))
		return kill_self(SIGSEGV, 1);
	if (!strcmp(m, "bus_exit"))
		return bus_exit();
	if (!strcmp(m, "async_cancel"))
		return async_cancel();
	if (!strcmp(m, "tinystack"))
		return tinystack();
	if (!strcmp(m, "altstack"))
		return altstack(4096);
	if (!strcmp(m, "altstack_min") && argc > 2)
		return altstack((size_t)sysconf(_SC_MINSIGSTKSZ) + (size_t)atol(argv[2]));
	if (!strcmp(m, "reset_all"))
		return reset_all();
	if (!strcmp(m, "catchall"))
		return catchall();
	if (!strcmp(m, "sigwait_all"))
		return sigwait_all();
	if (!strcmp(m, "raw_replace"))
		return raw_replace();
	if (!strcmp(m, "seccomp_kill"))
		return sandboxed(SECCOMP_RET_KILL_PROCESS, argv[0]);
	if (!strcmp(m, "seccomp_trap"))
		return sandboxed(SECCOMP_RET_TRAP, argv[0]);
	if (!strcmp(m, "seccomp_eperm"))
		return sandboxed(SECCOMP_RET_ERRNO | 1, argv[0]);
	if (!strcmp(m, "sandboxed_work"))
		return sandboxed_work();
	if (!strcmp(m, "seccomp_strict"))
		return seccomp_strict();
	if (!strcmp(m, "sig_profil"))
		return sig_profil();
	if (!strcmp(m, "exec_in_fork"))
		return exec_in_fork(argv);
	fprintf(stderr, "sigprog: unknown mode '%s'\n", m);
	return 64;
}
