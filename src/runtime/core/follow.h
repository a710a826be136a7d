/*
 * follow.h - the processes of a profil run that libprofil cannot follow
 * (follow.c): named before their exec, and no loader error in their
 * output.  Async-signal-safe but for follow_init.
 */
#ifndef PROFIL_FOLLOW_H
#define PROFIL_FOLLOW_H

#include <stddef.h>

/* Our own path, for the checks at exec: call before any exec. */
void follow_init(void);

/* The entries of envp. */
size_t follow_env_count(char *const envp[]);

/*
 * Before an exec of file (searched along PATH if search) with envp:
 * leaves a note if the program will run unprofiled, and returns the
 * environment to pass, envp or one built in env (count + 1 entries)
 * and pre (size bytes) without libprofil where it cannot be loaded.
 */
char *const *follow_exec(const char *file, int search, char *const envp[], char **env,
			 size_t count, char *pre, size_t size);

#endif
