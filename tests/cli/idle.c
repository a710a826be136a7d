/*
 * idle.c - threads that never run, beside one that works, for the note
 * report --threads gives of threads without samples (cli_notes.sh).
 *
 *   idle N UNITS   N threads "idle0"... block on a pipe while the main
 *                  thread spins UNITS (about 10 ms each); then they are
 *                  released and joined
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;
static int gate[2];

static void *wait_gate(void *arg)
{
	char name[16], c;
	snprintf(name, sizeof name, "idle%ld", (long)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	if (read(gate[0], &c, 1) != 1)
		return NULL;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2, units = argc > 2 ? atol(argv[2]) : 10;
	if (n < 0 || n > 64 || pipe(gate) != 0)
		return 2;
	pthread_t t[64];
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, wait_gate, (void *)(intptr_t)i) != 0)
			return 2;
	for (unsigned long i = 0; i < (unsigned long)units * 1000000ul; i++)
		sink += i ^ (sink >> 3);
	close(gate[1]);	/* every read returns 0 */
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
