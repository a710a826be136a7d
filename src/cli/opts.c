/*
 * opts.c - options from a table (opts.h).  getopt_long does the parsing;
 * this turns each of its failures into a line that names the option as
 * the user wrote it (getopt's own messages name a short letter the user
 * never typed, "-a" for a missing --annotate value), and refuses what
 * getopt lets pass: a value option given twice with different values
 * (which one wins would be silent), and an option taken as the value of
 * the one before it (--html --lines writes a file named "--lines").
 */
#define _GNU_SOURCE
#include <string.h>

#include "cli.h"
#include "opts.h"

/* getopt_long's val for the long form of entry i: above every letter. */
#define LONG_BASE 1000

static void setup(struct opts *o)
{
	char *s = o->shorts;
	if (o->stop_at_operand)
		*s++ = '+';
	*s++ = ':';	/* a missing value is ':', not '?' */
	o->n = 0;
	for (const struct opt *e = o->v; e->name && o->n < OPTS_MAX; e++, o->n++) {
		o->longs[o->n] = (struct option){ e->name, e->value ? required_argument : no_argument,
						  NULL, LONG_BASE + (int)o->n };
		o->given[o->n] = NULL;
		if (e->letter) {
			*s++ = e->letter;
			if (e->value)
				*s++ = ':';
		}
	}
	*s = '\0';
	o->longs[o->n] = (struct option){ 0, 0, 0, 0 };
}

/* The entry getopt_long's c stands for, or -1. */
static int entry(const struct opts *o, int c)
{
	if (c >= LONG_BASE && c < LONG_BASE + (int)o->n)
		return c - LONG_BASE;
	for (size_t i = 0; c > 0 && i < o->n; i++)
		if (o->v[i].letter == c)
			return (int)i;
	return -1;
}

/* An unknown long option, or an abbreviation of several. */
static void unknown_long(const struct opts *o, const char *text)
{
	size_t len = strcspn(text + 2, "=");
	char names[256] = "";
	size_t used = 0;
	unsigned matches = 0;
	for (size_t i = 0; i < o->n; i++) {
		if (strncmp(o->v[i].name, text + 2, len) != 0)
			continue;
		int w = snprintf(names + used, sizeof names - used, "%s--%s", matches ? ", " : "",
				 o->v[i].name);
		if (w > 0 && (size_t)w < sizeof names - used)
			used += (size_t)w;
		matches++;
	}
	if (matches > 1)
		error_line("%s: '%.*s' is ambiguous: %s", o->cmd, (int)len + 2, text, names);
	else
		error_line("%s: unknown option '%s'", o->cmd, text);
}

int opts_next(struct opts *o, int argc, char **argv, const char **value)
{
	if (optind == 0)
		setup(o);
	opterr = 0;
	optopt = 0;
	int c = getopt_long(argc, argv, o->shorts, o->longs, NULL);
	*value = NULL;
	if (c == -1)
		return -1;
	const char *text = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	/* A value in an argument of its own: the option is the one before. */
	int apart = optarg && optind >= 2 && optarg == argv[optind - 1];
	if (apart && c != ':' && c != '?')
		text = argv[optind - 2];
	int i = entry(o, c == ':' || c == '?' ? optopt : c);
	int as_long = strncmp(text, "--", 2) == 0;
	char name[64];
	if (i >= 0 && (as_long || !o->v[i].letter))
		snprintf(name, sizeof name, "--%s", o->v[i].name);
	else
		snprintf(name, sizeof name, "-%c", i >= 0 ? o->v[i].letter : optopt);
	if (c == ':') {
		error_line("%s: %s needs a value (%s)", o->cmd, name, i >= 0 ? o->v[i].value : "?");
		return 0;
	}
	if (c == '?') {
		if (i >= 0 && as_long)
			error_line("%s: %s takes no value", o->cmd, name);
		else if (as_long)
			unknown_long(o, text);
		else
			error_line("%s: unknown option '-%c'", o->cmd, optopt);
		return 0;
	}
	if (i < 0) {	/* not in the table: cannot happen */
		error_line("%s: unknown option '%s'", o->cmd, text);
		return 0;
	}
	if (apart && optarg[0] == '-' && optarg[1]) {
		error_line("%s: %s needs a value (%s): '%s' is taken for an option (write %s%s%s to "
			   "mean it)", o->cmd, name, o->v[i].value, optarg, name,
			   name[1] == '-' ? "=" : "", optarg);
		return 0;
	}
	if (optarg && o->given[i] && strcmp(o->given[i], optarg) != 0) {
		error_line("%s: %s given twice ('%s', then '%s'): give it once", o->cmd, name,
			   o->given[i], optarg);
		return 0;
	}
	o->given[i] = optarg ? optarg : "";
	*value = optarg;
	return o->v[i].key;
}

int opts_given(const struct opts *o, int key)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].key == key)
			return o->given[i] != NULL;
	return 0;
}

int opts_exclusive(const struct opts *o, const int *keys, const char *why)
{
	const char *first = NULL;
	for (; *keys; keys++) {
		for (size_t i = 0; i < o->n; i++) {
			if (o->v[i].key != *keys || !o->given[i])
				continue;
			if (first) {
				error_line("%s: --%s and --%s: %s", o->cmd, first, o->v[i].name, why);
				return 1;
			}
			first = o->v[i].name;
		}
	}
	return 0;
}

/* An option as the first column of --help shows it. */
static int left(char *buf, size_t len, const struct opt *e)
{
	return snprintf(buf, len, "%c%c%c --%s%s%s", e->letter ? '-' : ' ',
			e->letter ? e->letter : ' ', e->letter ? ',' : ' ', e->name,
			e->value ? " " : "", e->value ? e->value : "");
}

void opts_help(const struct opts *o, FILE *f)
{
	fprintf(f, "usage: profil %s [OPTION...]%s%s\n%s\n\n", o->cmd, o->operands ? " " : "",
		o->operands ? o->operands : "", o->about);
	char buf[128];
	int width = 0;
	for (const struct opt *e = o->v; e->name; e++) {
		int n = left(buf, sizeof buf, e);
		width = n > width ? n : width;
	}
	for (const struct opt *e = o->v; e->name; e++) {
		left(buf, sizeof buf, e);
		fprintf(f, "  %-*s  %s\n", width, buf, e->help);
	}
	fputs("See profil(1).\n", f);
}
