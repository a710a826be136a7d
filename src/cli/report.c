/*
 * report.c - profil report: the flat profile, by function (the default),
 * by source line, by object, or one function annotated.
 *
 * Every bin of the model is given to the function, line or object that
 * holds its first address: bins are 2 bytes of text (scale 0x10000), so
 * a function, aligned to at least 2 bytes, never shares one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"
#include "symbols.h"

enum by { BY_FUNCTION, BY_LINE, BY_OBJECT };
enum fmt { FMT_TEXT, FMT_CSV, FMT_JSON };

struct row {
	char *name;		/* function, file:line or object */
	char *function;		/* for lines: the function */
	const struct object *object;
	uint64_t start;		/* the function's start, for sorting ties */
	uint64_t count;
	uint64_t system;	/* of count, for time in the kernel */
};

struct rows {
	struct row *v;
	size_t n, cap;
};

struct options {
	enum by by;
	enum fmt fmt;
	int inlines;
	double threshold;	/* percent */
	const char *annotate;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Rows are few (functions); a linear search from the end finds the
 * current one at once because bins come in address order. */
static struct row *row_for(struct rows *r, const struct object *o, const char *name,
			   const char *function, uint64_t start)
{
	for (size_t i = r->n; i-- > 0 && i + 64 >= r->n;) {
		struct row *x = &r->v[i];
		if (x->object == o && strcmp(x->name, name) == 0
		    && (!function || !x->function || strcmp(x->function, function) == 0))
			return x;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 256;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	r->v[r->n] = (struct row){ xstrdup(name), function ? xstrdup(function) : NULL, o, start,
				   0, 0 };
	return &r->v[r->n++];
}

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->start > y->start) - (x->start < y->start);
}

/* Merge rows of the same name and object that the window above missed. */
static void combine(struct rows *r)
{
	if (!r->n)
		return;
	qsort(r->v, r->n, sizeof *r->v, by_count);
	for (size_t i = 0; i < r->n; i++)
		for (size_t j = i + 1; j < r->n; j++)
			if (r->v[j].count && r->v[j].object == r->v[i].object
			    && strcmp(r->v[j].name, r->v[i].name) == 0
			    && ((!r->v[j].function && !r->v[i].function)
				|| (r->v[j].function && r->v[i].function
				    && strcmp(r->v[j].function, r->v[i].function) == 0))) {
				r->v[i].count += r->v[j].count;
				r->v[i].system += r->v[j].system;
				r->v[j].count = 0;
			}
	qsort(r->v, r->n, sizeof *r->v, by_count);
	while (r->n && r->v[r->n - 1].count == 0) {
		r->n--;
		free(r->v[r->n].name);
		free(r->v[r->n].function);
	}
}

/* Open every object that has samples; one line and -1 if one cannot be. */
static int open_all(const struct model *m, struct symbols **syms)
{
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		syms[i] = NULL;
		if (!o->total || (o->flags & 4 /* PROFILE_SEG_VDSO */))
			continue;
		char why[1024];
		syms[i] = symbols_open(o, why, sizeof why);
		if (!syms[i]) {
			error_line("%s", why);
			return -1;
		}
	}
	return 0;
}

static void collect(const struct model *m, struct symbols **syms, const struct options *opt,
		    struct rows *r)
{
	char buf[4096];
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		if (!o->total)
			continue;
		if (opt->by == BY_OBJECT) {
			struct row *x = row_for(r, o, o->path, NULL, 0);
			x->count += o->total;
			for (size_t k = 0; k < o->nbins; k++)
				x->system += o->bins[k].system;
			continue;
		}
		for (size_t k = 0; k < o->nbins; k++) {
			const struct bin *b = &o->bins[k];
			struct function f;
			const char *fname;
			uint64_t start = 0;
			if (syms[i] && symbols_function(syms[i], b->first, &f)) {
				fname = f.name;
				start = f.start;
			} else {
				snprintf(buf, sizeof buf, "[%s+0x%" PRIx64 "]", base_name(o->path),
					 b->first);
				fname = (o->flags & 4) ? "[vdso]" : "[unknown]";
			}
			if (opt->inlines && syms[i]) {
				const char *in = symbols_inlined(syms[i], b->first);
				if (in)
					fname = in;
			}
			if (opt->by == BY_LINE) {
				const char *file;
				int line;
				if (syms[i] && symbols_line(syms[i], b->first, &file, &line))
					snprintf(buf, sizeof buf, "%s:%d", file, line);
				else
					snprintf(buf, sizeof buf, "??");
				struct row *x = row_for(r, o, buf, fname, start);
				x->count += b->count;
				x->system += b->system;
			} else {
				struct row *x = row_for(r, o, fname, NULL, start);
				x->count += b->count;
				x->system += b->system;
			}
		}
	}
	combine(r);
}

static void header(const struct model *m, double each)
{
	printf("Flat profile: %" PRIu64 " samples in %u profile%s, %.3f s of CPU time, "
	       "each sample %.3f ms\n", m->counted, m->nfiles, m->nfiles == 1 ? "" : "s",
	       m->cpu_ns / 1e9, each * 1e3);
	printf("samples taken %" PRIu64 " = counted %" PRIu64 " + outside %" PRIu64
	       " + dropped %" PRIu64 " (saturated %" PRIu64 ", lost %" PRIu64 "); %" PRIu64
	       " for time in the kernel\n",
	       m->taken, m->counted, m->outside, m->saturated + m->lost, m->saturated, m->lost,
	       m->system);
	if (m->gmon_files == m->nfiles) {
		printf("rate %u Hz (gmon.out: no statistics beyond the counts)\n\n", m->hz);
		return;
	}
	printf("rate %u Hz asked, %.0f observed; %" PRIu64 " thread%s sampled", m->hz,
	       m->cpu_ns ? m->observed * 1e9 / m->cpu_ns : 0.0, m->threads,
	       m->threads == 1 ? "" : "s");
	if (m->threads_unsampled)
		printf(" (%" PRIu64 " could not be)", m->threads_unsampled);
	if (m->threads_fallback)
		printf(" (%" PRIu64 " by timer: no perf event)", m->threads_fallback);
	printf("; backend %s%s\n", backend_name(m->backend),
	       m->no_kernel ? " (kernel time not seen)" : "");
	if (m->unfinished)
		printf("%u process%s did not exit normally: its last second of statistics may be "
		       "missing\n", m->unfinished, m->unfinished == 1 ? "" : "es");
	putchar('\n');
}

static void csv_field(const char *s)
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

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_rows(const struct model *m, const struct rows *r, const struct options *opt)
{
	double each = model_seconds_each(m);
	uint64_t total = m->counted ? m->counted : 1;
	const char *what = opt->by == BY_LINE ? "line" : opt->by == BY_OBJECT ? "object"
										: "function";
	uint64_t cumul = 0;
	if (opt->fmt == FMT_CSV) {
		printf("self_percent,cumulative_percent,self_seconds,samples,%s%s,object,"
		       "system_samples,system_percent\n", what, opt->by == BY_LINE ? ",function" : "");
	} else if (opt->fmt == FMT_JSON) {
		printf("{\"samples\":%" PRIu64 ",\"taken\":%" PRIu64 ",\"outside\":%" PRIu64
		       ",\"saturated\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"cpu_seconds\":%.6f"
		       ",\"system\":%" PRIu64 ",\"hz\":%u,\"observed\":%" PRIu64 ",\"backend\":\"%s\",\"threads\":%" PRIu64
		       ",\"files\":%u,\"rows\":[",
		       m->counted, m->taken, m->outside, m->saturated, m->lost, m->cpu_ns / 1e9,
		       m->system, m->hz, m->observed, backend_name(m->backend), m->threads, m->nfiles);
	} else {
		header(m, each);
		printf("%7s %7s %9s %9s %6s  %-*s %s\n", "self%", "cumul%", "self s", "samples", "sys%",
		       opt->by == BY_OBJECT ? 0 : 40, what, opt->by == BY_OBJECT ? "" : "object");
	}
	int first = 1;
	for (size_t i = 0; i < r->n; i++) {
		const struct row *x = &r->v[i];
		double pct = 100.0 * x->count / total;
		cumul += x->count;
		if (pct < opt->threshold)
			continue;
		double cpct = 100.0 * cumul / total;
		const char *obj = base_name(x->object->path);
		/* The share of the row's samples that stand for kernel time;
		   unknown (no file had system counts) is "-", or empty. */
		double spct = x->count ? 100.0 * x->system / x->count : 0.0;
		char sys[16];
		if (m->system_files)
			snprintf(sys, sizeof sys, "%5.1f%%", spct);
		else
			snprintf(sys, sizeof sys, "%6s", "-");
		if (opt->fmt == FMT_CSV) {
			printf("%.2f,%.2f,%.3f,%" PRIu64 ",", pct, cpct, x->count * each, x->count);
			csv_field(x->name);
			if (opt->by == BY_LINE) {
				putchar(',');
				csv_field(x->function ? x->function : "");
			}
			putchar(',');
			csv_field(x->object->path);
			if (m->system_files)
				printf(",%" PRIu64 ",%.2f\n", x->system, spct);
			else
				printf(",,\n");
		} else if (opt->fmt == FMT_JSON) {
			printf("%s{\"self_percent\":%.4f,\"cumulative_percent\":%.4f,"
			       "\"self_seconds\":%.6f,\"samples\":%" PRIu64 ",\"%s\":",
			       first ? "" : ",", pct, cpct, x->count * each, x->count, what);
			json_string(x->name);
			if (opt->by == BY_LINE) {
				printf(",\"function\":");
				json_string(x->function ? x->function : "");
			}
			printf(",\"object\":");
			json_string(x->object->path);
			if (m->system_files)
				printf(",\"system_samples\":%" PRIu64 ",\"system_percent\":%.4f}",
				       x->system, spct);
			else
				printf(",\"system_samples\":null,\"system_percent\":null}");
		} else if (opt->by == BY_OBJECT) {
			printf("%6.2f%% %6.2f%% %9.3f %9" PRIu64 " %s  %s\n", pct, cpct,
			       x->count * each, x->count, sys, x->name);
		} else if (opt->by == BY_LINE) {
			printf("%6.2f%% %6.2f%% %9.3f %9" PRIu64 " %s  %-40s %s (%s)\n", pct, cpct,
			       x->count * each, x->count, sys, x->name,
			       x->function ? x->function : "", obj);
		} else {
			printf("%6.2f%% %6.2f%% %9.3f %9" PRIu64 " %s  %-40s %s\n", pct, cpct,
			       x->count * each, x->count, sys, x->name, obj);
		}
		first = 0;
	}
	if (opt->fmt == FMT_JSON)
		printf("]}\n");
}

/* --annotate: the function's disassembly, with the samples of each instruction. */
static int annotate(const struct model *m, struct symbols **syms, const char *want)
{
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		struct function f;
		if (!syms[i] || !symbols_find(syms[i], want, &f))
			continue;
		uint64_t end = f.start + (f.size ? f.size : 1);
		uint64_t in_fn = 0;
		for (size_t k = 0; k < o->nbins; k++)
			if (o->bins[k].first >= f.start && o->bins[k].first < end)
				in_fn += o->bins[k].count;
		printf("%s in %s: %" PRIu64 " samples (%.2f%% of all)\n\n", f.name, o->path, in_fn,
		       m->counted ? 100.0 * in_fn / m->counted : 0.0);
		char cmd[8192];
		snprintf(cmd, sizeof cmd,
			 "objdump -d -l -C --no-show-raw-insn --start-address=0x%" PRIx64
			 " --stop-address=0x%" PRIx64 " '%s' 2>&1", f.start, end, o->path);
		if (strchr(o->path, '\'')) {
			error_line("%s: a quote in the name: cannot annotate", o->path);
			return 1;
		}
		FILE *p = popen(cmd, "r");
		if (!p) {
			error_line("cannot run objdump: %s", strerror(errno));
			return 1;
		}
		/* Read every instruction's address first, to give each bin to the
		 * instruction that holds its last byte. */
		char **lines = NULL;
		uint64_t *addrs = NULL;
		size_t n = 0;
		char line[4096];
		int started = 0;
		while (fgets(line, sizeof line, p)) {
			if (!started) {	/* skip objdump's banner */
				if (strstr(line, ">:"))
					started = 1;
				continue;
			}
			char *colon;
			uint64_t a = UINT64_MAX;
			if (strchr(line, '\t') && (colon = strchr(line, ':'))) {
				char *endp;
				uint64_t v = strtoull(line, &endp, 16);
				if (endp == colon)
					a = v;
			}
			lines = xrealloc(lines, (n + 1) * sizeof *lines);
			addrs = xrealloc(addrs, (n + 1) * sizeof *addrs);
			lines[n] = xstrdup(line);
			addrs[n++] = a;
		}
		int st = pclose(p);
		if (st != 0 || !started) {
			error_line("objdump could not disassemble %s in %s", f.name, o->path);
			return 1;
		}
		uint64_t *counts = calloc(n ? n : 1, sizeof *counts);
		for (size_t k = 0; k < o->nbins; k++) {
			const struct bin *b = &o->bins[k];
			if (b->first < f.start || b->first >= end)
				continue;
			size_t best = SIZE_MAX;
			for (size_t j = 0; j < n; j++)
				if (addrs[j] != UINT64_MAX && addrs[j] <= b->last
				    && (best == SIZE_MAX || addrs[j] > addrs[best]))
					best = j;
			if (best != SIZE_MAX)
				counts[best] += b->count;
		}
		for (size_t j = 0; j < n; j++) {
			if (addrs[j] == UINT64_MAX)
				printf("%17s %s", "", lines[j]);
			else if (counts[j])
				printf("%6.2f%% %8" PRIu64 "  %s", 100.0 * counts[j] / (in_fn ? in_fn : 1),
				       counts[j], lines[j]);
			else
				printf("%17s %s", "", lines[j]);
			free(lines[j]);
		}
		free(lines);
		free(addrs);
		free(counts);
		return 0;
	}
	error_line("--annotate '%s': no function of that name in the profiled objects", want);
	return 1;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "lines", no_argument, NULL, 'l' },
		{ "objects", no_argument, NULL, 'O' },
		{ "inline", no_argument, NULL, 'i' },
		{ "annotate", required_argument, NULL, 'a' },
		{ "threshold", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "exe", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct options opt = { BY_FUNCTION, FMT_TEXT, 0, 0.0, NULL };
	const char *exe = NULL;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "lOia:t:f:e:h", longs, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'e': exe = optarg; break;
		case 'l': opt.by = BY_LINE; break;
		case 'O': opt.by = BY_OBJECT; break;
		case 'i': opt.inlines = 1; break;
		case 'a': opt.annotate = optarg; break;
		case 't':
			errno = 0;
			opt.threshold = strtod(optarg, &end);
			if (errno || end == optarg || *end || opt.threshold < 0 || opt.threshold > 100) {
				error_line("--threshold '%s': not a percentage from 0 to 100", optarg);
				return 2;
			}
			break;
		case 'f':
			if (strcmp(optarg, "text") == 0)
				opt.fmt = FMT_TEXT;
			else if (strcmp(optarg, "csv") == 0)
				opt.fmt = FMT_CSV;
			else if (strcmp(optarg, "json") == 0)
				opt.fmt = FMT_JSON;
			else {
				error_line("--format '%s': not one of text, csv, json", optarg);
				return 2;
			}
			break;
		case 'h':
			puts("usage: profil report [--lines|--objects|--annotate FUNC] [--inline] "
			     "[--threshold PCT] [--format text|csv|json] [--exe PROGRAM] [FILE...]");
			return 0;
		default:
			if (optopt)
				error_line("report: unknown option or missing value: '-%c'", optopt);
			else
				error_line("report: unknown option '%s'", argv[optind - 1]);
			return 2;
		}
	}
	char **files = input_files(argc - optind, argv + optind);
	if (!files)
		return 1;
	struct model m = { 0 };
	m.exe = exe;
	int status = 0;
	for (char **f = files; *f && !status; f++)
		if (model_add_file(&m, *f) != 0)
			status = 1;
	free_files(files);
	struct symbols **syms = xmalloc((m.nobjects + 1) * sizeof *syms);
	memset(syms, 0, (m.nobjects + 1) * sizeof *syms);
	if (!status) {
		model_finish(&m);
		if (open_all(&m, syms) != 0)
			status = 1;
	}
	if (!status && opt.annotate) {
		status = annotate(&m, syms, opt.annotate);
	} else if (!status) {
		struct rows r = { 0 };
		collect(&m, syms, &opt, &r);
		print_rows(&m, &r, &opt);
		for (size_t i = 0; i < r.n; i++) {
			free(r.v[i].name);
			free(r.v[i].function);
		}
		free(r.v);
	}
	for (size_t i = 0; i < m.nobjects; i++)
		symbols_close(syms[i]);
	free(syms);
	model_free(&m);
	if (fflush(stdout) != 0) {
		error_line("standard output: %s", strerror(errno));
		return 1;
	}
	return status;
}
