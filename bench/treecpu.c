/*
 * treecpu.c - run a command and print the CPU seconds (user + system)
 * that it and every process it waited for used: the whole tree's cost,
 * profiler processes included.  The command's output goes to stderr.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: treecpu COMMAND [ARG...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		dup2(2, 1);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("%.4f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6
			 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
