/*
 * srcpath.c - one name per source file (see srcpath.h).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "srcpath.h"

char *srcpath_canonical(const char *dir, const char *file)
{
	int joined = file[0] != '/' && dir && dir[0];
	size_t dl = joined ? strlen(dir) : 0, fl = strlen(file);
	char *in = xmalloc(dl + fl + 2);
	if (joined) {
		memcpy(in, dir, dl);
		in[dl++] = '/';
	}
	memcpy(in + dl, file, fl + 1);
	/* Components are copied down over in itself: out never passes in. */
	int absolute = in[0] == '/';
	size_t o = absolute ? 1 : 0, keep = o;	/* keep: ".." cannot go above it */
	for (char *p = in; *p;) {
		while (*p == '/')
			p++;
		char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (o > keep) {	/* take out the last component */
				while (o > keep && in[o - 1] != '/')
					o--;
				if (o > keep)
					o--;	/* its slash */
			} else if (!absolute) {	/* a relative name above its start */
				if (o)
					in[o++] = '/';
				memcpy(in + o, "..", 2);
				o += 2;
				keep = o;
			}
		} else {
			if (o > (absolute ? 1u : 0u))
				in[o++] = '/';
			memmove(in + o, p, n);
			o += n;
		}
		p = end;
	}
	if (!o)
		in[o++] = '.';
	in[o] = 0;
	return in;
}
