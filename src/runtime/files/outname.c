/*
 * outname.c - expanding PROFIL_OUT (outname.h).
 *
 * Async-signal-safe: the gmon runtime names its file from crash
 * handlers.  Pure string work on the caller's buffer.
 */
#include "files/outname.h"

struct out {
	char *p;
	size_t len, size;
	int cut;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->p[o->len++] = c;
	else
		o->cut = 1;
}

static void put_num(struct out *o, unsigned long v)
{
	char d[24];
	int i = sizeof d;
	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (i < (int)sizeof d)
		put(o, d[i++]);
}

int outname_expand(const char *pattern, const char *prog, unsigned long pid,
		   char *out, size_t size)
{
	struct out o = { out, 0, size, 0 };
	for (const char *p = pattern; *p; p++) {
		if (*p != '%' || !p[1]) {
			put(&o, *p);
			continue;
		}
		p++;
		if (*p == 'p')
			put_num(&o, pid);
		else if (*p == 'n')
			for (const char *s = prog; *s; s++)
				put(&o, *s);
		else
			put(&o, *p);	/* %% and unknown: the character */
	}
	out[o.len] = '\0';
	return o.cut ? -1 : 0;
}
