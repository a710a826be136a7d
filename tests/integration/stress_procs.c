/*
 * stress_procs - the odd ways a program runs code, while sampled at the
 * highest rate:
 *   - vfork, the child exec'ing /bin/true or calling _exit (it shares
 *     the parent's memory: libprofil must leave the session alone);
 *   - posix_spawn of this program, which checks that it inherited no
 *     timer, descriptor, signal handler or blocked signal;
 *   - threads made with a raw clone(CLONE_VM | CLONE_THREAD), no
 *     pthreads, ending with the exit system call;
 *   - setjmp/longjmp and sigsetjmp/siglongjmp out of deep call chains,
 *     whose results must be those computed without profiling;
 *   - recursion into a stack overflow, caught on a sigaltstack, in a
 *     thread with a small stack, again and again.
 * Nothing crashes, every child ends as it should, nothing leaks, and
 * the statistics add up.
 */
#include "stress.h"

#include <linux/futex.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

HOT_WORK(work)

extern char **environ;

/* ---- vfork and posix_spawn ---- */

/* The spawned image: nothing of the parent's profiling came through. */
static int spawn_child(char **argv)
{
	int what = stress_inherited(atoi(argv[2]));
	return what ? 10 + what : 0;
}

/* The child execs /bin/true (exec is 1) or calls _exit(7). */
__attribute__((noinline)) static int vfork_once(int exec)
{
	pid_t pid = vfork();
	if (pid == 0) {
		if (exec)
			execl("/bin/true", "true", (char *)NULL);
		_exit(7);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == (exec ? 0 : 7);
}

static void vforks(int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += !vfork_once(i % 2);
	CHECK(bad == 0, "%d of %d vfork children ended wrong", bad, n);
}

static void spawns(int n, int fds)
{
	char count[16];
	snprintf(count, sizeof count, "%d", fds);
	char *argv[] = { "stress_procs", "spawn-child", count, NULL };
	int bad = 0, status = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int r = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
		if (r != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
		    || WEXITSTATUS(status) != 0) {
			if (++bad == 1)
				CHECK(0, "posix_spawn: %s, status %d", strerror(r), status);
		}
	}
	CHECK(bad == 0, "%d of %d spawned children failed", bad, n);
}

/* ---- raw clone threads ---- */

enum { RAW_STACK = 64 * 1024, RAW_AT_ONCE = 8 };

static int raw_thread(void *arg)
{
	(void)arg;
	/* No libc here: this thread has no TLS of its own. */
	for (int i = 0; i < 20; i++)
		check_sink += work_work(10000);
	return 0;
}

static void raw_clones(int n)
{
	char *stacks = mmap(NULL, RAW_STACK * RAW_AT_ONCE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	CHECK(stacks != MAP_FAILED, "mmap: %s", strerror(errno));
	if (stacks == MAP_FAILED)
		return;
	static pid_t tids[RAW_AT_ONCE];
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD
		    | CLONE_SYSVSEM | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID;
	for (int made = 0; made < n; made += RAW_AT_ONCE) {
		for (int i = 0; i < RAW_AT_ONCE; i++) {
			tids[i] = 1;	/* the kernel clears it when the thread is gone */
			int r = clone(raw_thread, stacks + (i + 1) * RAW_STACK, flags, NULL,
				      NULL, NULL, &tids[i]);
			if (r <= 0) {
				CHECK(r > 0, "clone: %s", strerror(errno));
				tids[i] = 0;
			}
		}
		for (int i = 0; i < RAW_AT_ONCE; i++) {
			pid_t t;
			while ((t = __atomic_load_n(&tids[i], __ATOMIC_ACQUIRE)) != 0)
				syscall(SYS_futex, &tids[i], FUTEX_WAIT, t, NULL, NULL, 0);
		}
	}
	munmap(stacks, RAW_STACK * RAW_AT_ONCE);
}

/* ---- setjmp/longjmp across samples ---- */

static jmp_buf jb;
static sigjmp_buf sjb;

__attribute__((noinline)) static uint64_t dive(int depth, uint64_t x, int use_sig)
{
	for (uint64_t i = 0; i < 50 + (x & 63); i++)	/* pure: x alone decides */
		x = spin_step(x);
	if (depth == 0) {
		if (use_sig)
			siglongjmp(sjb, (int)(x & 0x7fff) | 1);
		longjmp(jb, (int)(x & 0x7fff) | 1);
	}
	return dive(depth - 1, x, use_sig) + 1;
}

/* The same work each time: its result depends on nothing else. */
static uint64_t jumps(int n)
{
	volatile uint64_t sum = 0;
	for (volatile int i = 0; i < n; i++) {
		int v = i % 2 ? sigsetjmp(sjb, 1) : setjmp(jb);
		if (v == 0)
			dive(10 + i % 50, (uint64_t)i * 2654435761u, i % 2);
		sum = sum * 31 + (uint64_t)v;
	}
	return sum;
}

/* ---- recursion into a stack overflow, on a sigaltstack ---- */

static __thread sigjmp_buf overflow_back;
static atomic_int overflows;

static void on_overflow(int sig)
{
	(void)sig;
	atomic_fetch_add(&overflows, 1);
	siglongjmp(overflow_back, 1);
}

__attribute__((noinline)) static uint64_t deeper(uint64_t n)
{
	volatile char pad[256];
	pad[0] = (char)n;
	check_sink += work_work(20);
	if (n == UINT64_MAX)	/* never: the stack ends first */
		return 0;
	return deeper(n + 1) + pad[0];
}

static void *overflower(void *p)
{
	int times = (int)(intptr_t)p;
	stack_t alt = { .ss_size = 64 * 1024 };
	alt.ss_sp = malloc(alt.ss_size);
	sigaltstack(&alt, NULL);
	for (volatile int i = 0; i < times; i++)
		if (sigsetjmp(overflow_back, 1) == 0)
			check_sink += deeper(0);
	stack_t off = { .ss_flags = SS_DISABLE };
	sigaltstack(&off, NULL);
	free(alt.ss_sp);
	return NULL;
}

static void overflow(int times)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_overflow;
	sa.sa_flags = SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_t t;
	CHECK(pthread_create(&t, &attr, overflower, (void *)(intptr_t)times) == 0,
	      "pthread_create");
	pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	sigaction(SIGSEGV, &old, NULL);
}

/* ---- all of it ---- */

struct sizes {
	int vforks, spawns, clones, jumps, overflows;
};

static double now(void)
{
	return cpu_seconds(CLOCK_MONOTONIC);
}

static void round_of(const struct sizes *n, int fds, int say)
{
	double t0 = now();
	vforks(n->vforks);
	double t1 = now();
	spawns(n->spawns, fds);
	double t2 = now();
	raw_clones(n->clones);
	double t3 = now();
	overflow(n->overflows);
	if (say)
		printf("seconds: vfork %.2f, posix_spawn %.2f, raw clones %.2f, overflows %.2f\n",
		       t1 - t0, t2 - t1, t3 - t2, now() - t3);
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "spawn-child") == 0)
		return spawn_child(argv);
	struct sizes full = { STRESS_SIZE(1000), STRESS_SIZE(200), STRESS_SIZE(1000),
			      STRESS_SIZE(20000), STRESS_SIZE(200) };
	struct sizes warm = { 10, 2, 16, 100, 2 };
	uint64_t unprofiled = jumps(full.jumps);
	stress_baseline();
	struct stress_usage idle = stress_usage_now();
	struct histogram h = stress_start(0);

	round_of(&warm, idle.fds, 0);
	struct stress_usage before = stress_usage_now();
	round_of(&full, idle.fds, 1);
	double t = now();
	CHECK(jumps(full.jumps) == unprofiled, "setjmp/longjmp computed otherwise");
	CHECK(atomic_load(&overflows) == full.overflows + warm.overflows,
	      "%d stack overflows caught of %d", atomic_load(&overflows),
	      full.overflows + warm.overflows);
	/* Raw clone threads were found by the perf backend's rescan; their
	   samplers go when a sweep sees them dead (about a second). */
	struct stress_usage after = stress_usage_now();
	for (int i = 0; i < 300 && (after.fds != before.fds || after.timers != before.timers); i++) {
		usleep(10000);
		after = stress_usage_now();
	}
	printf("seconds: longjmps and the raw clones' sweep %.2f\n", now() - t);
	stress_check_usage("while sampling", before, after, 2048, 8192);
	CHECK(stats_now().active, "profiling stopped");
	printf("%d vforks, %d posix_spawns, %d raw clones, %d longjmps, %d overflows\n",
	       full.vforks, full.spawns, full.clones, full.jumps, full.overflows);

	stress_finish(0, &h, idle, 8192);
	return check_done("stress_procs");
}
