/*
 * util.c - what every part of the command uses: one-line errors,
 * allocation that exits instead of failing, CSV fields (cli.h).  Apart from main.c
 * so that the fuzz targets (tests/fuzz) link the command without its main.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void error_line(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("profil: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void *xmalloc(size_t n)
{
	return xrealloc(NULL, n);
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		error_line("out of memory");
		exit(2);
	}
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

/* A CSV field on standard output, quoted when it must be (RFC 4180). */
void csv_field(const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

void html_escape(FILE *f, const char *s, size_t max)
{
	for (size_t n = 0; *s && n < max; s++, n++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}
