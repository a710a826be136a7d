/*
 * cmdline.c - a profiled process's command line as one line of text,
 * for the report's header (text, json, html): the arguments quoted so
 * that a POSIX shell (with $'...', as bash, ksh and zsh have it) would
 * read the same arguments back, and a person sees where each ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"

struct text {
	char *s;
	size_t n, cap;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->n + n + 1 > t->cap) {
		t->cap = (t->n + n + 1) * 2;
		t->s = xrealloc(t->s, t->cap);
	}
	memcpy(t->s + t->n, s, n);
	t->n += n;
	t->s[t->n] = '\0';
}

/* Bytes a shell reads as themselves outside quotes (UTF-8 included). */
static int plain(unsigned char c)
{
	return c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	       || (c >= '0' && c <= '9') || (c && strchr("_@%+=:,./-", c));
}

static void quote(struct text *t, const char *a, size_t n)
{
	size_t i;
	int ctl = 0, all_plain = n > 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)a[i];
		all_plain &= plain(c);
		ctl |= c < 0x20 || c == 0x7f;
	}
	if (all_plain) {
		put(t, a, n);
	} else if (!ctl) {	/* '...', a quote inside as '\'' */
		put(t, "'", 1);
		for (i = 0; i < n; i++)
			a[i] == '\'' ? put(t, "'\\''", 4) : put(t, &a[i], 1);
		put(t, "'", 1);
	} else {		/* $'...': a newline or a tab stays on the line */
		put(t, "$'", 2);
		for (i = 0; i < n; i++) {
			unsigned char c = (unsigned char)a[i];
			char e[8];
			if (c == '\n' || c == '\t')
				put(t, c == '\n' ? "\\n" : "\\t", 2);
			else if (c == '\\' || c == '\'')
				put(t, e, (size_t)snprintf(e, sizeof e, "\\%c", c));
			else if (c < 0x20 || c == 0x7f)
				put(t, e, (size_t)snprintf(e, sizeof e, "\\x%02x", c));
			else
				put(t, &a[i], 1);
		}
		put(t, "'", 1);
	}
}

char *model_command_line(const struct model *m)
{
	struct text t = { 0 };
	put(&t, "", 0);
	if (!m->cmdline) {
		if (m->command[0])
			quote(&t, m->command, strlen(m->command));
		return t.s;
	}
	for (size_t at = 0; at < m->cmdline_len;) {
		const char *end = memchr(m->cmdline + at, '\0', m->cmdline_len - at);
		size_t n = end ? (size_t)(end - (m->cmdline + at)) : m->cmdline_len - at;
		if (at)
			put(&t, " ", 1);
		quote(&t, m->cmdline + at, n);
		at += n + 1;
	}
	if (m->cmdline_cut)
		put(&t, " [...]", 6);
	return t.s;
}
