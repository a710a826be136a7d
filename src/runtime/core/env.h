/*
 * env.h - the environment variables the runtime reads (SPEC section 7).
 */
#ifndef PROFIL_ENV_H
#define PROFIL_ENV_H

struct env_settings {
	unsigned hz;	/* PROFIL_HZ, else PROFIL_HZ_DEFAULT */
	int backend;	/* PROFIL_BACKEND, else PROFIL_BACKEND_AUTO */
	int system_time; /* PROFIL_SYSTEM_TIME: 0 or 1, else 1 */
	unsigned stacks;	/* PROFIL_STACKS: frames kept, 0 off (profil.h's default) */
};


/*
 * Read the variables.  A bad value is reported once on standard error,
 * naming the variable, the value and what is used instead.
 */
void env_read(struct env_settings *out);

/* Parse a rate as PROFIL_HZ takes it; false if it is not one. */
int env_parse_hz(const char *text, unsigned *hz);

/* Parse a backend name as PROFIL_BACKEND takes it; false if unknown. */
int env_parse_backend(const char *text, int *backend);

/* Parse PROFIL_STACKS: 0 off, 1 on at PROFIL_STACKS_DEFAULT, 2 to
   PROFIL_STACKS_MAX that depth; false if it is none of these. */
int env_parse_stacks(const char *text, unsigned *depth);

/*
 * PROFIL_STACK_COPY: the bytes of stack the perf backend copies with each
 * sample when stacks are on (PROFIL_STACK_COPY_DEFAULT unless set); read
 * the first time, a bad value reported once.  Not from a signal handler.
 */
enum { PROFIL_STACK_COPY_DEFAULT = 8192, PROFIL_STACK_COPY_MAX = 65528 };
unsigned env_stack_copy(void);

/* Parse a copy size as PROFIL_STACK_COPY takes it; false if it is not one. */
int env_parse_stack_copy(const char *text, unsigned *bytes);

/* Write one line "libprofil: NAME=VALUE: PROBLEM; using USED" to stderr. */
void env_complain(const char *name, const char *value, const char *problem,
		  const char *used);

#endif
