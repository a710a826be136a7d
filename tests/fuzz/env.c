/*
 * env.c - fuzz target: the runtime's environment parsers
 * (src/runtime/core/env.c: PROFIL_HZ, PROFIL_BACKEND, PROFIL_SYSTEM_TIME) and
 * PROFIL_OUT's expansion (src/runtime/files/outname.c).
 *
 * The input is split at NUL bytes: a rate, a backend, a system-time
 * switch, a PROFIL_OUT pattern, a program name, and one byte for the
 * size of the name's buffer.
 */
#include <errno.h>
#include <string.h>

#include "../../include/profil.h"
#include "../../src/runtime/core/env.h"
#include "../../src/runtime/files/outname.h"
#include "support/fuzz.h"

/* Field i of the input (NUL-separated), copied; "" past the end. */
static char *field(const uint8_t *data, size_t size, int i)
{
	size_t at = 0;
	for (; i > 0 && at < size; at++)
		if (data[at] == 0)
			i--;
	size_t n = 0;
	while (at + n < size && data[at + n])
		n++;
	char *s = malloc(n + 1);
	FUZZ_CHECK(s != NULL);
	memcpy(s, data + at, n);
	s[n] = '\0';
	return s;
}

static void hz(const char *text)
{
	unsigned v = 0;
	if (!env_parse_hz(text, &v))
		return;
	FUZZ_CHECK(v >= PROFIL_HZ_MIN && v <= PROFIL_HZ_MAX);
	FUZZ_CHECK(strspn(text, "0123456789") == strlen(text));
	FUZZ_CHECK(strtoul(text, NULL, 10) == v);
}

static void backend(const char *text)
{
	int b = -1;
	int known = !strcmp(text, "auto") || !strcmp(text, "perf") || !strcmp(text, "timer");
	FUZZ_CHECK(env_parse_backend(text, &b) == known);
	FUZZ_CHECK(!known || b == (text[0] == 'a' ? PROFIL_BACKEND_AUTO
				  : text[0] == 'p' ? PROFIL_BACKEND_PERF : PROFIL_BACKEND_TIMER));
}

/* The expansion cut to size is the start of the whole one. */
static void outname(const char *pattern, const char *prog, unsigned long pid, size_t size)
{
	size_t big = strlen(pattern) * (strlen(prog) + 24) + 1;
	char *whole = malloc(big), *cut = malloc(size);
	FUZZ_CHECK(whole && cut);
	FUZZ_CHECK(outname_expand(pattern, prog, pid, whole, big) == 0);
	int r = outname_expand(pattern, prog, pid, cut, size);
	size_t n = strlen(cut);
	FUZZ_CHECK(n < size && strncmp(cut, whole, n) == 0);
	FUZZ_CHECK(r == (strlen(whole) >= size ? -1 : 0));
	FUZZ_CHECK(r != 0 || strcmp(cut, whole) == 0);
	for (const char *p = pattern; *p; p++)	/* no pattern, no change */
		if (*p == '%')
			goto done;
	FUZZ_CHECK(strcmp(whole, pattern) == 0);
done:
	free(whole);
	free(cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *f[5];
	for (int i = 0; i < 5; i++)
		f[i] = field(data, size, i);
	hz(f[0]);
	backend(f[1]);
	/* env_read as the runtime calls it, with these values set. */
	setenv("PROFIL_HZ", f[0], 1);
	setenv("PROFIL_BACKEND", f[1], 1);
	setenv("PROFIL_SYSTEM_TIME", f[2], 1);
	struct env_settings s;
	int saved = errno;
	env_read(&s);
	FUZZ_CHECK(errno == saved);
	unsigned want_hz = PROFIL_HZ_DEFAULT;
	int want_backend = PROFIL_BACKEND_AUTO;
	env_parse_hz(f[0], &want_hz);
	env_parse_backend(f[1], &want_backend);
	FUZZ_CHECK(s.hz == want_hz && s.backend == want_backend);
	FUZZ_CHECK(s.system_time == (strcmp(f[2], "0") != 0));
	unsigned long pid = size ? data[0] * 1000003ul : 0;
	outname(f[3], f[4], pid, size ? (size_t)data[size - 1] % 300 + 1 : 1);
	for (int i = 0; i < 5; i++)
		free(f[i]);
	return 0;
}
