/*
 * diff.c - profil report --diff (see diff.h).
 *
 * Each function's self time is given as CPU seconds as well as a share:
 * when one function gets faster, every other function's share rises
 * though none of them changed; their seconds do not.  Rows are sorted by
 * the change in seconds, and each carries two standard errors of that
 * change (a sample count is Poisson: variance = count), so that a change
 * within sampling noise can be told as such.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "diff.h"
#include "jsonout.h"
#include "opts.h"
#include "rows.h"
#include "symbols.h"

struct side {
	struct model m;
	struct symbols **syms;
	struct rows r;
};

static int load(struct side *s, char **files, const char *exe, const struct thread_filter *f)
{
	memset(s, 0, sizeof *s);
	s->m.exe = exe;
	if (f && (f->ntids || f->comm))
		s->m.filter = f;
	for (char **p = files; *p; p++)
		if (model_add_file(&s->m, *p) != 0)
			return -1;
	model_finish(&s->m);
	s->syms = xmalloc((s->m.nobjects + 1) * sizeof *s->syms);
	memset(s->syms, 0, (s->m.nobjects + 1) * sizeof *s->syms);
	if (rows_open_symbols(&s->m, s->syms) != 0)
		return -1;
	rows_collect(&s->m, s->syms, BY_FUNCTION, 0, &s->r);
	return 0;
}

static void unload(struct side *s)
{
	rows_free(&s->r);
	for (size_t i = 0; s->syms && i < s->m.nobjects; i++)
		symbols_close(s->syms[i]);
	free(s->syms);
	model_free(&s->m);
}

struct key {
	const char *function, *object;
	const struct row *row;
	int side;
};

static int by_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int c = strcmp(x->function, y->function);
	if (!c)
		c = strcmp(x->object, y->object);
	return c ? c : x->side - y->side;
}

static double change(const struct diff_row *r)
{
	return r->seconds[1] - r->seconds[0];
}

static int by_change(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;
	double cx = fabs(change(x)), cy = fabs(change(y));
	if (cx != cy)
		return cx > cy ? -1 : 1;
	double sx = fabs(x->share[1] - x->share[0]), sy = fabs(y->share[1] - y->share[0]);
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return strcmp(x->function, y->function);
}

/* The rows of both sides matched by function and object file name. */
static void match(struct diff *d, struct side *s)
{
	size_t n = s[0].r.n + s[1].r.n, k = 0;
	struct key *keys = xmalloc((n + 1) * sizeof *keys);
	for (int i = 0; i < 2; i++) {
		for (size_t j = 0; j < s[i].r.n; j++) {
			const struct row *r = &s[i].r.v[j];
			keys[k++] = (struct key){ r->name, base_name(r->object->path), r, i };
		}
	}
	qsort(keys, n, sizeof *keys, by_key);
	d->v = xmalloc((n + 1) * sizeof *d->v);
	d->n = 0;
	double each[2] = { model_seconds_each(&s[0].m), model_seconds_each(&s[1].m) };
	for (size_t i = 0; i < n;) {
		struct diff_row *x = &d->v[d->n++];
		memset(x, 0, sizeof *x);
		x->function = xstrdup(keys[i].function);
		x->object = keys[i].object;
		size_t j = i;
		for (; j < n && !strcmp(keys[j].function, keys[i].function)
		       && !strcmp(keys[j].object, keys[i].object); j++)
			x->count[keys[j].side] += keys[j].row->count;
		i = j;
		double var = 0;
		for (int t = 0; t < 2; t++) {
			x->seconds[t] = x->count[t] * each[t];
			x->share[t] = d->samples[t] ? 100.0 * x->count[t] / d->samples[t] : 0;
			var += x->count[t] * each[t] * each[t];
		}
		x->error = 2 * sqrt(var);
	}
	free(keys);
	qsort(d->v, d->n, sizeof *d->v, by_change);
}

static int shown(const struct diff_row *r, double threshold)
{
	return r->share[0] >= threshold || r->share[1] >= threshold;
}

/* new/base, or NAN when base had none. */
static double ratio(const struct diff_row *r)
{
	return r->count[0] ? r->seconds[1] / r->seconds[0] : NAN;
}

static void text(const struct diff *d, double threshold)
{
	printf("Diff: base %s, %" PRIu64 " samples, %.3f s of CPU time\n", d->name[0],
	       d->samples[0], d->cpu[0]);
	printf("      new  %s, %" PRIu64 " samples, %.3f s of CPU time (x%.2f)\n", d->name[1],
	       d->samples[1], d->cpu[1], d->cpu[0] > 0 ? d->cpu[1] / d->cpu[0] : 0.0);
	printf("each function's self time in both, largest change first; +- is two "
	       "standard errors of sampling\n\n");
	printf("%9s %9s %9s %7s %6s %7s %7s %8s  %-40s %s\n", "base s", "new s", "change s",
	       "+-", "ratio", "base%", "new%", "change", "function", "object");
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *r = &d->v[i];
		if (!shown(r, threshold))
			continue;
		char q[16];
		double x = ratio(r);
		if (isnan(x))
			snprintf(q, sizeof q, "new");
		else if (!r->count[1])
			snprintf(q, sizeof q, "gone");
		else
			snprintf(q, sizeof q, "%.2f", x);
		printf("%9.3f %9.3f %+9.3f %7.3f %6s %6.2f%% %6.2f%% %+7.2f%%  %-40s %s\n",
		       r->seconds[0], r->seconds[1], change(r), r->error, q, r->share[0], r->share[1],
		       r->share[1] - r->share[0], r->function, r->object);
	}
}

static void csv(const struct diff *d, double threshold)
{
	printf("function,object,base_samples,new_samples,base_seconds,new_seconds,"
	       "seconds_change,seconds_error,ratio,base_percent,new_percent,percent_change\n");
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *r = &d->v[i];
		if (!shown(r, threshold))
			continue;
		csv_field(r->function);
		putchar(',');
		csv_field(r->object);
		printf(",%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,", r->count[0], r->count[1],
		       r->seconds[0], r->seconds[1], change(r), r->error);
		if (!isnan(ratio(r)))
			printf("%.4f", ratio(r));
		printf(",%.4f,%.4f,%.4f\n", r->share[0], r->share[1], r->share[1] - r->share[0]);
	}
}

static void json(const struct diff *d, double threshold)
{
	printf("{");
	for (int t = 0; t < 2; t++) {
		printf("\"%s\":{\"name\":", t ? "new" : "base");
		json_string(stdout, d->name[t], 0);
		printf(",\"samples\":%" PRIu64 ",\"cpu_seconds\":%.6f},", d->samples[t], d->cpu[t]);
	}
	printf("\"rows\":[");
	int first = 1;
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *r = &d->v[i];
		if (!shown(r, threshold))
			continue;
		printf("%s{\"function\":", first ? "" : ",");
		first = 0;
		json_string(stdout, r->function, 0);
		printf(",\"object\":");
		json_string(stdout, r->object, 0);
		printf(",\"base_samples\":%" PRIu64 ",\"new_samples\":%" PRIu64
		       ",\"base_seconds\":%.6f,\"new_seconds\":%.6f,\"seconds_change\":%.6f"
		       ",\"seconds_error\":%.6f,\"ratio\":",
		       r->count[0], r->count[1], r->seconds[0], r->seconds[1], change(r), r->error);
		if (isnan(ratio(r)))
			printf("null");
		else
			printf("%.4f", ratio(r));
		printf(",\"base_percent\":%.4f,\"new_percent\":%.4f,\"percent_change\":%.4f}",
		       r->share[0], r->share[1], r->share[1] - r->share[0]);
	}
	printf("]}\n");
}

static int write_page(const struct diff *d, const char *out, double threshold, const char *flame)
{
	char tmp[4096 + 16];
	int fd = temp_open(out, tmp, sizeof tmp, 0666);
	if (fd < 0)
		return 1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		temp_finish(fd, tmp, out, 0);
		return 1;
	}
	diff_html(f, d, threshold, flame);
	errno = 0;
	int ok = fflush(f) == 0 && !ferror(f) && fsync(fd) == 0;
	if (fclose(f) != 0)
		ok = 0;
	if (!ok)
		error_line("--html '%s': %s", out, strerror(errno ? errno : EIO));
	return temp_finish(-1, tmp, out, ok) == 0 && ok ? 0 : 1;
}

int diff_report(char **base, const char *base_name, char **news, const char *new_name,
		const char *exe, const struct thread_filter *filter, enum diff_fmt fmt,
		double threshold, const char *html)
{
	struct side s[2];
	memset(s, 0, sizeof s);
	int status = 0;
	if (load(&s[0], base, exe, filter) != 0 || load(&s[1], news, exe, filter) != 0)
		status = 1;
	if (!status && html
	    && (output_refused("--html", html, base, exe, &s[0].m)
		|| output_refused("--html", html, news, exe, &s[1].m)))
		status = 2;
	struct diff d = { { base_name, new_name }, { 0, 0 }, { 0, 0 }, NULL, 0 };
	for (int t = 0; !status && t < 2; t++) {
		d.samples[t] = model_samples(&s[t].m);
		d.cpu[t] = d.samples[t] * model_seconds_each(&s[t].m);
		if (!d.samples[t]) {
			error_line("--diff: %s: no samples to compare", d.name[t]);
			status = 1;
		}
	}
	if (!status) {
		match(&d, s);
		if (html) {
			char *flame = NULL;
			size_t len = 0;
			FILE *mem = open_memstream(&flame, &len);
			if (mem) {
				diff_flame(mem, &s[0].m, s[0].syms, &s[1].m, s[1].syms);
				fclose(mem);
			}
			status = write_page(&d, html, threshold, flame);
			free(flame);
		}
		else if (fmt == DIFF_CSV)
			csv(&d, threshold);
		else if (fmt == DIFF_JSON)
			json(&d, threshold);
		else
			text(&d, threshold);
	}
	for (size_t i = 0; i < d.n; i++)
		free(d.v[i].function);
	free(d.v);
	unload(&s[0]);
	unload(&s[1]);
	return status;
}

int diff_conflicts(const struct opts *o)
{
	static const int views[] = { 'l', 'O', 'a', 'T', 'q', 'i', 0 };
	for (const int *k = views; *k; k++) {
		const int pair[] = { 'D', *k, 0 };
		if (opts_exclusive(o, pair, "--diff compares the functions of the flat profile"))
			return 1;
	}
	return 0;
}

int diff_command(const char *base, int argc, char **argv, const char *exe,
		 const struct thread_filter *filter, enum diff_fmt fmt, double threshold,
		 const char *html)
{
	char *given[] = { (char *)base, NULL };
	char **bases = input_files(1, given);
	if (!bases)
		return 1;
	char **news = input_files(argc, argv);
	if (!news) {
		free_files(bases);
		return 1;
	}
	char name[4096];
	if (argc > 1)
		snprintf(name, sizeof name, "%s and %d more", argv[0], argc - 1);
	else
		snprintf(name, sizeof name, "%s", argc ? argv[0] : "the last run");
	int st = diff_report(bases, base, news, name, exe, filter, fmt, threshold, html);
	free_files(bases);
	free_files(news);
	if (!st && fflush(stdout) != 0) {
		error_line("standard output: %s", strerror(errno));
		st = 1;
	}
	return st;
}
