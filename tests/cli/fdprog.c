/*
 * fdprog.c - a program that does to its descriptors what daemons and
 * shells do (runtime audit F1, issue 23), for tests/integration/fds_program.sh.
 * Built plain (for profil run) and with -DLINKED (calls profil() first);
 * prints what it saw, which must be byte-identical to the unprofiled run.
 *
 *   pipe     closefrom(3), a pipe, a child writes 2000 lines: all read
 *   file     closefrom(3), an output file (fd 3) written while threads
 *            come and go: printed back
 *   block    closefrom(3), a blocking read of a pipe a child writes after
 *            0.3 s: no hang
 *   dup2     a file dup2'd onto 3, 4 and 5, then exec: each survives
 *   seek     fd 4 opened by the program, written line by line over 0.5 s
 *            (a rescan happens meanwhile): the lines in order
 *   nofile   RLIMIT_NOFILE lowered to 8, then 5 files opened: all open
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef LINKED
#include "profil.h"
#endif

static volatile unsigned long sink;

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void burn(double seconds)
{
	double start = cpu();
	while (cpu() - start < seconds)
		for (int i = 0; i < 100000; i++)
			sink = sink * 6364136223846793005u + 1442695040888963407u;
}

static void *worker(void *arg)
{
	(void)arg;
	burn(0.01);
	return NULL;
}

static void threads(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, worker, NULL) == 0)
			pthread_join(t, NULL);
	}
}

static int do_pipe(void)
{
	closefrom(3);
	int p[2];
	if (pipe(p) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		FILE *w = fdopen(p[1], "w");
		for (int i = 0; i < 2000; i++) {
			fprintf(w, "round %d line\n", i);
			if (i % 200 == 0) {
				fflush(w);
				burn(0.02);
			}
		}
		fclose(w);
		_exit(0);
	}
	close(p[1]);
	threads(4);
	FILE *r = fdopen(p[0], "r");
	char line[64];
	int n = 0;
	while (fgets(line, sizeof line, r))
		n++;
	fclose(r);
	waitpid(pid, NULL, 0);
	printf("pipe: %d lines\n", n);
	return n == 2000 ? 0 : 1;
}

static int do_file(void)
{
	closefrom(3);
	FILE *f = fopen("fdprog.out", "w");
	if (!f)
		return 1;
	printf("file: fd %d\n", fileno(f));
	for (int i = 0; i < 20; i++) {
		fprintf(f, "line %d of the log\n", i);
		fflush(f);
		threads(1);
	}
	burn(0.1);
	fclose(f);
	f = fopen("fdprog.out", "r");
	char line[128];
	while (f && fgets(line, sizeof line, f))
		fputs(line, stdout);
	if (f)
		fclose(f);
	return 0;
}

static int do_block(void)
{
	closefrom(3);
	int p[2];
	if (pipe(p) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		burn(0.2);
		usleep(300000);
		if (write(p[1], "hello\n", 6) != 6)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	burn(0.2);
	char buf[16] = "";
	ssize_t n = read(p[0], buf, sizeof buf - 1);
	waitpid(pid, NULL, 0);
	printf("block: read %zd: %s", n, n > 0 ? buf : "\n");
	return n == 6 ? 0 : 1;
}

static int do_dup2(char **argv)
{
	int fd = open("fdprog.dup", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	for (int i = 3; i <= 5; i++)
		if (fd != i && dup2(fd, i) != i)
			return 1;
	if (fd > 5)
		close(fd);
	burn(0.1);
	threads(2);
	execl("/proc/self/exe", argv[0], "dup2-child", (char *)NULL);
	return 1;
}

static int do_dup2_child(void)
{
	int bad = 0;
	for (int i = 3; i <= 5; i++) {
		char line[32];
		int n = snprintf(line, sizeof line, "fd %d\n", i);
		struct stat st;
		int ok = fstat(i, &st) == 0 && S_ISREG(st.st_mode) && write(i, line, (size_t)n) == n;
		printf("dup2: fd %d %s\n", i, ok ? "survived" : "lost");
		bad |= !ok;
	}
	return bad;
}

static int do_seek(void)
{
	int fd = open("fdprog.seek", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || (fd != 4 && dup2(fd, 4) != 4))
		return 1;
	for (int i = 0; i < 30; i++) {
		char line[32];
		int n = snprintf(line, sizeof line, "line %d\n", i);
		if (write(4, line, (size_t)n) != n)
			return 1;
		burn(0.01);
		usleep(10000);
	}
	close(4);
	FILE *f = fopen("fdprog.seek", "r");
	char line[64];
	while (f && fgets(line, sizeof line, f))
		fputs(line, stdout);
	if (f)
		fclose(f);
	return 0;
}

static int do_nofile(void)
{
	struct rlimit lim = { 8, 8 };
	burn(0.05);
	if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
		return 1;
	threads(2);
	int opened = 0;
	for (int i = 0; i < 5; i++)
		opened += open("/dev/null", O_RDONLY) >= 0;
	printf("nofile: %d of 5 opened\n", opened);
	return opened == 5 ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef LINKED
	static unsigned short buf[1 << 16];
	if (argc < 2 || strcmp(argv[1], "dup2-child") != 0)
		if (profil(buf, sizeof buf, 0, 0x100) != 0)
			return 2;
#endif
	const char *what = argc > 1 ? argv[1] : "";
	if (strcmp(what, "pipe") == 0)
		return do_pipe();
	if (strcmp(what, "file") == 0)
		return do_file();
	if (strcmp(what, "block") == 0)
		return do_block();
	if (strcmp(what, "dup2") == 0)
		return do_dup2(argv);
	if (strcmp(what, "dup2-child") == 0)
		return do_dup2_child();
	if (strcmp(what, "seek") == 0)
		return do_seek();
	if (strcmp(what, "nofile") == 0)
		return do_nofile();
	fprintf(stderr, "fdprog: unknown case '%s'\n", what);
	return 2;
}
