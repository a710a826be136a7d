/*
 * report.c - profil report: the flat profile, by function (the default),
 * by source line, by object, or one function annotated, as text, csv or
 * json.  The rows themselves are made by rows.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callgraph.h"
#include "bidcache.h"
#include "cli.h"
#include "cxxname.h"
#include "diff.h"
#include "html.h"
#include "jsonout.h"
#include "model.h"
#include "opts.h"
#include "rows.h"
#include "stackprint.h"
#include "stacks.h"
#include "symbols.h"

enum fmt { FMT_TEXT, FMT_CSV, FMT_JSON };

struct options {
	enum by by;
	enum fmt fmt;
	int inlines;
	double threshold;	/* percent */
	const char *annotate;
	int callgraph;		/* --callgraph: gprof -q's entries */
	const char *html;	/* --html FILE */
	int threads;		/* --threads: a row per thread */
	int full_names;		/* --full-names: C++ names whole in text */
	const char *callers, *callees;	/* --callers, --callees FUNCTION */
	int tree;		/* --tree: the calls from the outermost frames */
};

/* Longer function names are shortened in text (cxxname_short). */
#define NAME_MAX_TEXT 60

/* What a filter of threads left in, for the header. */
static void filter_line(const struct model *m)
{
	if (!m->filter)
		return;
	printf("threads kept: %zu, with %" PRIu64 " of the %" PRIu64 " samples", m->kept_threads,
	       m->kept, m->counted);
	if (m->kept_unplaced)
		printf(" (%" PRIu64 " of them at addresses the thread table had no room for)",
		       m->kept_unplaced);
	if (m->thread_files < m->nfiles)
		printf("; %u file%s without per-thread counts left out", m->nfiles - m->thread_files,
		       m->nfiles - m->thread_files == 1 ? "" : "s");
	/* A thread's samples are kept by the counter they went to: those
	   outside every object (JIT code) went to none. */
	if (m->outside)
		printf("; the %" PRIu64 " samples outside every object (JIT code) left out: "
		       "they have no thread", m->outside);
	putchar('\n');
}

/* The command line of the (first) process, when the files have it. */
static void command_line(const struct model *m)
{
	char *c = model_command_line(m);
	if (*c && m->nfiles > 1)
		printf("command: %s (the first of %u processes)\n", c, m->nfiles);
	else if (*c)
		printf("command: %s\n", c);
	free(c);
}

static void header(const struct model *m, double each)
{
	char runs[80] = "";
	if (m->origins.nruns > 1 || m->origins.nprograms > 1) {
		char d[64];
		snprintf(runs, sizeof runs, " (%s)", origins_describe(&m->origins, d, sizeof d));
	}
	/* Under --tid or --comm, the time of the threads kept: by their
	   samples, since the files hold no CPU time per thread. */
	char cpu[96];
	if (m->filter)
		snprintf(cpu, sizeof cpu, "%.3f s of CPU time in the threads kept (%.3f s in all)",
			 m->kept * each, m->cpu_ns / 1e9);
	else if (m->gmon_unrecorded)
		/* glibc's gmon.out: the samples in the text are all it holds. */
		snprintf(cpu, sizeof cpu, "CPU time not recorded (%.3f s in the program's text)",
			 m->cpu_ns / 1e9);
	else
		snprintf(cpu, sizeof cpu, "%.3f s of CPU time", m->cpu_ns / 1e9);
	printf("Flat profile: %" PRIu64 " samples in %u profile%s%s, %s, each sample %.3f ms\n",
	       model_samples(m), m->nfiles, m->nfiles == 1 ? "" : "s", runs, cpu, each * 1e3);
	filter_line(m);
	if (m->gmon_unrecorded) {
		printf("samples taken not recorded = counted %" PRIu64 " + outside not recorded"
		       " + dropped not recorded (%u gmon.out file%s without statistics)\n",
		       m->counted, m->gmon_unrecorded, m->gmon_unrecorded == 1 ? "" : "s");
	} else {
		printf("samples taken %" PRIu64 " = counted %" PRIu64 " + outside %" PRIu64
		       " + dropped %" PRIu64 " (saturated %" PRIu64 ", lost %" PRIu64 "); %" PRIu64
		       " for time in the kernel\n",
		       m->taken, m->counted, m->outside, m->saturated + m->lost, m->saturated,
		       m->lost, m->system);
		if (m->lost) {
			char by[512];
			lost_describe(m, by, sizeof by);
			printf("lost %" PRIu64 " (%.2f%% of taken): %s\n", m->lost,
			       m->taken ? 100.0 * m->lost / m->taken : 0.0, by);
		}
	}
	if (m->gmon_files == m->nfiles) {
		printf("rate %u Hz (gmon.out: %s)\n\n", m->hz,
		       m->gmon_unrecorded ? "no statistics beyond the counts"
					  : "statistics from the .stats file beside it");
		return;
	}
	if (m->hz_asked)	/* lowered to the backend's limit */
		printf("rate %u Hz asked, %u Hz used (the backend's limit), %.0f observed; %" PRIu64
		       " thread%s sampled", m->hz_asked, m->hz,
		       m->cpu_ns ? m->observed * 1e9 / m->cpu_ns : 0.0, m->threads,
		       m->threads == 1 ? "" : "s");
	else
		printf("rate %u Hz asked, %.0f observed; %" PRIu64 " thread%s sampled", m->hz,
		       m->cpu_ns ? m->observed * 1e9 / m->cpu_ns : 0.0, m->threads,
		       m->threads == 1 ? "" : "s");
	if (m->threads_unsampled)
		printf(" (%" PRIu64 " could not be)", m->threads_unsampled);
	if (m->threads_fallback)
		printf(" (%" PRIu64 " by timer: no perf event)", m->threads_fallback);
	printf("; backend %s%s", backend_name(m->backend),
	       m->no_kernel ? " (kernel time not seen)" : "");
	if (m->perf_errno)
		printf(" (perf events refused: %s)", perf_refusal(m->perf_errno));
	putchar('\n');
	command_line(m);
	stacks_note(m);
	if (m->write_lost)
		printf("%u process%s lost samples: the file system had no room for their "
		       "counters (lost counts them)\n", m->write_lost,
		       m->write_lost == 1 ? "" : "es");
	char running[320], killed[320];
	unfinished_notes(m, running, killed, sizeof running);
	if (*running)
		printf("%s\n", running);
	if (*killed)
		printf("%s\n", killed);
	putchar('\n');
}

/* totals: the rows' inclusive samples, from the stacks, or NULL. */
static void print_rows(const struct model *m, const struct rows *r, const struct options *opt,
		       const uint64_t *totals)
{
	double each = model_seconds_each(m);
	uint64_t total = model_samples(m) ? model_samples(m) : 1;
	const char *what = opt->by == BY_LINE ? "line" : opt->by == BY_OBJECT ? "object"
										: "function";
	uint64_t cumul = 0;
	/* Calls where gmon.out files gave them, as gprof -p shows them. */
	int calls = opt->by == BY_FUNCTION && m->gmon_files;
	if (opt->fmt == FMT_CSV) {
		printf("self_percent,cumulative_percent,self_seconds,samples,%s%s,object,"
		       "system_samples,system_percent,calls,self_ms_per_call,total_ms_per_call%s\n",
		       opt->by == BY_LINE ? "file,line" : what, opt->by == BY_LINE ? ",function" : "",
		       totals ? ",total_samples,total_percent" : "");
	} else if (opt->fmt == FMT_JSON) {
		if (m->gmon_unrecorded)	/* not known: null, never 0 */
			printf("{\"samples\":%" PRIu64 ",\"taken\":null,\"outside\":null"
			       ",\"saturated\":null,\"lost\":null,\"cpu_seconds\":null",
			       m->counted);
		else
			printf("{\"samples\":%" PRIu64 ",\"taken\":%" PRIu64 ",\"outside\":%" PRIu64
			       ",\"saturated\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"cpu_seconds\":%.6f",
			       m->counted, m->taken, m->outside, m->saturated, m->lost, m->cpu_ns / 1e9);
		printf(",\"system\":%" PRIu64 ",\"hz\":%u,\"observed\":%" PRIu64 ",\"backend\":\"%s\",\"threads\":%" PRIu64
		       ",\"files\":%u",
		       m->system, m->hz, m->observed, backend_name(m->backend), m->threads, m->nfiles);
		lost_json(stdout, m);
		putchar(',');
		printf("\"runs\":%zu,\"programs\":%zu,\"unfinished\":%u,\"still_running\":%u,",
		       m->origins.nruns, m->origins.nprograms, m->unfinished, m->running);
		stacks_json(m);
		char *c = model_command_line(m);
		printf("\"command\":");
		json_string(stdout, c, 0);
		putchar(',');
		free(c);
		if (m->filter)
			printf("\"threads_kept\":%zu,\"kept_samples\":%" PRIu64
			       ",\"kept_unplaced\":%" PRIu64 ",\"kept_cpu_seconds\":%.6f,",
			       m->kept_threads, m->kept, m->kept_unplaced, m->kept * each);
		printf("\"rows\":[");
	} else {
		header(m, each);
		printf("%7s %7s %9s %9s %6s  ", "self%", "cumul%", "self s", "samples", "sys%");
		if (totals)
			printf("%7s  ", "total%");
		if (calls)
			printf("%9s %12s %13s  ", "calls", "self ms/call", "total ms/call");
		printf("%-*s %s\n", opt->by == BY_OBJECT ? 0 : 40, what,
		       opt->by == BY_OBJECT ? "" : "object");
	}
	int first = 1;
	char shortened[1024];
	size_t name_max = opt->full_names ? SIZE_MAX : NAME_MAX_TEXT;
	for (size_t i = 0; i < r->n; i++) {
		const struct row *x = &r->v[i];
		double pct = 100.0 * x->count / total;
		double tpct = totals ? 100.0 * totals[i] / total : 0.0;
		cumul += x->count;
		if (pct < opt->threshold && (!totals || tpct < opt->threshold))
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
		/* Per call, as gprof -p: self, and self with the children's share. */
		double self_ms = x->calls ? 1e3 * x->count * each / x->calls : 0.0;
		double total_ms = x->calls ? 1e3 * (x->count * each + x->children) / x->calls : 0.0;
		if (opt->fmt == FMT_CSV) {
			printf("%.2f,%.2f,%.3f,%" PRIu64 ",", pct, cpct, x->count * each, x->count);
			if (opt->by == BY_LINE) {	/* file and line apart */
				char file[4096];
				int line = rows_split_line(x->name, file, sizeof file);
				csv_field(file);
				if (line)
					printf(",%d,", line);
				else
					printf(",,");
				csv_field(x->function ? x->function : "");
			} else {
				csv_field(x->name);
			}
			putchar(',');
			csv_field(x->object->path);
			if (m->system_files)
				printf(",%" PRIu64 ",%.2f", x->system, spct);
			else
				printf(",,");
			if (x->calls)
				printf(",%" PRIu64 ",%.6f,%.6f", x->calls, self_ms, total_ms);
			else
				printf(",,,");
			if (totals)
				printf(",%" PRIu64 ",%.2f", totals[i], tpct);
			putchar('\n');
		} else if (opt->fmt == FMT_JSON) {
			printf("%s{\"self_percent\":%.4f,\"cumulative_percent\":%.4f,"
			       "\"self_seconds\":%.6f,\"samples\":%" PRIu64 ",\"%s\":",
			       first ? "" : ",", pct, cpct, x->count * each, x->count, what);
			json_string(stdout, x->name, 0);
			if (opt->by == BY_LINE) {
				char file[4096];
				int line = rows_split_line(x->name, file, sizeof file);
				printf(",\"file\":");
				json_string(stdout, file, 0);
				if (line)
					printf(",\"line_number\":%d", line);
				else
					printf(",\"line_number\":null");
				printf(",\"function\":");
				json_string(stdout, x->function ? x->function : "", 0);
			}
			printf(",\"object\":");
			json_string(stdout, x->object->path, 0);
			if (m->system_files)
				printf(",\"system_samples\":%" PRIu64 ",\"system_percent\":%.4f",
				       x->system, spct);
			else
				printf(",\"system_samples\":null,\"system_percent\":null");
			if (x->calls)
				printf(",\"calls\":%" PRIu64 ",\"self_ms_per_call\":%.6f"
				       ",\"total_ms_per_call\":%.6f}", x->calls, self_ms, total_ms);
			else
				printf(",\"calls\":null,\"self_ms_per_call\":null,"
				       "\"total_ms_per_call\":null");
			if (totals)
				printf(",\"total_samples\":%" PRIu64 ",\"total_percent\":%.4f", totals[i],
				       tpct);
			putchar('}');
		} else if (opt->by == BY_OBJECT) {
			printf("%6.2f%% %6.2f%% %9.3f %9" PRIu64 " %s  %s\n", pct, cpct,
			       x->count * each, x->count, sys, x->name);
		} else if (opt->by == BY_LINE) {
			printf("%6.2f%% %6.2f%% %9.3f %9" PRIu64 " %s  %-40s %s (%s)\n", pct, cpct,
			       x->count * each, x->count, sys, x->name,
			       cxxname_short(x->function ? x->function : "", name_max, shortened,
					     sizeof shortened), obj);
		} else {
			printf("%6.2f%% %6.2f%% %9.3f %9" PRIu64 " %s  ", pct, cpct, x->count * each,
			       x->count, sys);
			if (totals)
				printf("%6.2f%%  ", tpct);
			if (calls && x->calls)
				printf("%9" PRIu64 " %12.4f %13.4f  ", x->calls, self_ms, total_ms);
			else if (calls)
				printf("%9s %12s %13s  ", "", "", "");
			printf("%-40s %s\n", cxxname_short(x->name, name_max, shortened, sizeof shortened),
			       obj);
		}
		first = 0;
	}
	if (opt->fmt == FMT_JSON)
		printf("]}\n");
}

static int hotter_thread(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The name of a thread's row: its own, or what the row stands for. */
static const char *thread_name(const struct thread *t)
{
	switch (t->tid) {
	case THREAD_OTHERS: return "[other threads]";
	case THREAD_NO_TABLE: return "[no per-thread counts]";
	case THREAD_UNATTRIBUTED: return "[unattributed]";
	default: return t->comm;
	}
}

/* --threads: a row per thread (per process too, when there are several),
   hottest first, its share of every thread's samples. */
static void print_threads(struct model *m, const struct options *opt)
{
	double each = model_seconds_each(m);
	qsort(m->thread_rows, m->nthread_rows, sizeof *m->thread_rows, hotter_thread);
	uint64_t total = 0;
	int32_t pid = 0;	/* the first known; 0 in a merged file's sums */
	int several = 0;
	for (size_t i = 0; i < m->nthread_rows; i++) {
		const struct thread *t = &m->thread_rows[i];
		total += t->samples;
		several |= pid && t->pid && t->pid != pid;
		pid = pid ? pid : t->pid;
	}
	if (opt->fmt == FMT_CSV) {
		printf("self_percent,self_seconds,samples,tid,name,pid,program,system_samples,"
		       "system_percent,unplaced_samples\n");
	} else if (opt->fmt == FMT_JSON) {
		printf("{\"samples\":%" PRIu64 ",\"cpu_seconds\":%.6f,\"files\":%u,"
		       "\"runs\":%zu,\"programs\":%zu,\"thread_files\":%u,\"unattributed\":%" PRIu64
		       ",\"threads_without_samples\":%" PRIu64 ",\"rows\":[", total, m->cpu_ns / 1e9,
		       m->nfiles, m->origins.nruns, m->origins.nprograms, m->thread_files,
		       m->unattributed, m->threads_silent);
	} else {
		header(m, each);
		printf("%7s %9s %9s %6s  %7s  %-16s%s\n", "self%", "self s", "samples", "sys%", "tid",
		       "name", several ? "     pid  program" : "");
	}
	int first = 1;
	for (size_t i = 0; i < m->nthread_rows; i++) {
		const struct thread *t = &m->thread_rows[i];
		double pct = total ? 100.0 * t->samples / total : 0.0;
		if (pct < opt->threshold || (m->filter && !thread_kept(m->filter, t->tid, t->comm)))
			continue;
		double spct = t->samples ? 100.0 * t->system / t->samples : 0.0;
		char tid[16], pid_s[16];
		snprintf(tid, sizeof tid, t->tid > 0 ? "%d" : "-", (int)t->tid);
		snprintf(pid_s, sizeof pid_s, t->pid > 0 ? "%d" : "-", (int)t->pid);
		if (opt->fmt == FMT_CSV) {
			printf("%.2f,%.3f,%" PRIu64 ",%s,", pct, t->samples * each, t->samples,
			       t->tid > 0 ? tid : "");
			csv_field(thread_name(t));
			printf(",%s,", t->pid > 0 ? pid_s : "");
			csv_field(t->program);
			if (m->system_files)
				printf(",%" PRIu64 ",%.2f", t->system, spct);
			else
				printf(",,");
			printf(",%" PRIu64 "\n", t->unplaced);
		} else if (opt->fmt == FMT_JSON) {
			printf("%s{\"self_percent\":%.4f,\"self_seconds\":%.6f,\"samples\":%" PRIu64
			       ",\"tid\":%s,\"name\":", first ? "" : ",", pct, t->samples * each,
			       t->samples, t->tid > 0 ? tid : "null");
			json_string(stdout, thread_name(t), 0);
			printf(",\"pid\":%s,\"program\":", t->pid > 0 ? pid_s : "null");
			json_string(stdout, t->program, 0);
			if (m->system_files)
				printf(",\"system_samples\":%" PRIu64 ",\"system_percent\":%.4f", t->system,
				       spct);
			else
				printf(",\"system_samples\":null,\"system_percent\":null");
			printf(",\"unplaced_samples\":%" PRIu64 ",\"ended\":%s}", t->unplaced,
			       t->ended ? "true" : "false");
		} else {
			char sys[16];
			if (m->system_files)
				snprintf(sys, sizeof sys, "%5.1f%%", spct);
			else
				snprintf(sys, sizeof sys, "%6s", "-");
			printf("%6.2f%% %9.3f %9" PRIu64 " %s  %7s  %-16s", pct, t->samples * each,
			       t->samples, sys, tid, thread_name(t));
			if (several)
				printf("%8s  %s", pid_s, t->program);
			putchar('\n');
		}
		first = 0;
	}
	/* Their names are unknown: a filter by name could not say which. */
	if (opt->fmt == FMT_TEXT && m->threads_silent && !m->filter)
		printf("%" PRIu64 " more thread%s had no sample (asleep or waiting all along): "
		       "not shown\n", m->threads_silent, m->threads_silent == 1 ? "" : "s");
	if (opt->fmt == FMT_JSON)
		printf("]}\n");
}

/* A function --annotate names, and its samples. */
struct match {
	const struct object *o;
	struct function f;
	uint64_t samples;
	size_t order;		/* found; ties keep it */
};

static int hotter_match(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return (x->order > y->order) - (x->order < y->order);
}

static uint64_t samples_in(const struct object *o, const struct function *f)
{
	uint64_t n = 0, end = f->start + (f->size ? f->size : 1);
	for (size_t k = 0; k < o->nbins; k++)
		if (o->bins[k].first >= f->start && o->bins[k].first < end)
			n += o->bins[k].count;
	return n;
}

/* One function's disassembly, with the samples of each instruction. */
static int annotate_one(const struct model *m, const struct match *x)
{
	struct disasm d;
	if (disasm_function(x->o, &x->f, &d, 0) != 0)
		return 1;
	printf("%s in %s: %" PRIu64 " samples (%.2f%% of %s)\n", x->f.name, x->o->path,
	       d.samples, model_samples(m) ? 100.0 * d.samples / model_samples(m) : 0.0,
	       m->filter ? "the threads kept" : "all");
	filter_line(m);
	putchar('\n');
	for (size_t j = 0; j < d.n; j++) {
		if (d.addrs[j] != UINT64_MAX && d.counts[j])
			printf("%6.2f%% %8" PRIu64 "  %s",
			       100.0 * d.counts[j] / (d.samples ? d.samples : 1), d.counts[j],
			       d.lines[j]);
		else
			printf("%17s %s", "", d.lines[j]);
	}
	disasm_free(&d);
	return 0;
}

/*
 * --annotate: every function the name names (a C++ function and its
 * [clone .cold], the instances of a template, statics of one name in
 * several files) is listed, and those with samples are annotated,
 * hottest first; if none has, the first found.
 */
static int annotate(const struct model *m, struct symbols **syms, const char *want)
{
	struct match *v = NULL;
	size_t n = 0;
	for (size_t i = 0; i < m->nobjects; i++) {
		struct function *fs;
		size_t k = syms[i] ? symbols_find_all(syms[i], want, &fs) : 0;
		if (!k)
			continue;
		v = xrealloc(v, (n + k) * sizeof *v);
		for (size_t j = 0; j < k; j++, n++)
			v[n] = (struct match){ &m->objects[i], fs[j], samples_in(&m->objects[i], &fs[j]),
					       n };
		free(fs);
	}
	if (!n) {
		error_line("--annotate '%s': no function of that name in the profiled objects", want);
		return 1;
	}
	qsort(v, n, sizeof *v, hotter_match);
	size_t hot = 0;
	while (hot < n && v[hot].samples)
		hot++;
	if (n > 1) {
		printf("%zu functions match '%s'; %s:\n", n, want,
		       hot > 1 ? "those with samples are annotated below, hottest first"
		       : hot ? "the one with samples is annotated below"
			     : "none has samples, the first is annotated below");
		for (size_t j = 0; j < n; j++)
			printf("  %9" PRIu64 " samples  %s  (%s)\n", v[j].samples, v[j].f.name,
			       base_name(v[j].o->path));
		putchar('\n');
	}
	int status = 0;
	for (size_t j = 0; j < (hot ? hot : 1) && !status; j++) {
		if (j)
			putchar('\n');
		status = annotate_one(m, &v[j]);
	}
	free(v);
	return status;
}

static const struct opt report_opts[] = {
	{ "lines", 'l', 'l', NULL, "by source line (file:line and function)" },
	{ "objects", 'O', 'O', NULL, "by object" },
	{ "annotate", 'a', 'a', "FUNCTION", "FUNCTION's instructions and their samples" },
	{ "threads", 0, 'T', NULL, "a row per thread" },
	{ "callgraph", 'q', 'q', NULL, "the call graph of gmon.out call arcs, as gprof -q" },
	{ "callers", 0, 'K', "FUNCTION", "FUNCTION's callers in the call stacks, with shares" },
	{ "callees", 0, 'E', "FUNCTION", "FUNCTION's callees in the call stacks, with shares" },
	{ "tree", 0, 'W', NULL, "the calls of the call stacks as a tree" },
	{ "html", 0, 'H', "FILE", "write the profile as one HTML page to FILE" },
	{ "diff", 0, 'D', "BASE", "each function's change from the profile BASE" },
	{ "inline", 'i', 'i', NULL, "samples in inlined code to the inlined function" },
	{ "full-names", 0, 'N', NULL, "function names whole in text, however long" },
	{ "tid", 0, 'I', "TID[,TID...]", "only the samples of those threads" },
	{ "comm", 0, 'C', "NAME", "only threads whose name matches NAME (fnmatch)" },
	{ "threshold", 't', 't', "PERCENT", "leave out rows below PERCENT of the samples" },
	{ "format", 'f', 'f', "text|csv|json", "text (the default), CSV or JSON" },
	{ "exe", 'e', 'e', "PROGRAM", "the program profiled, if no longer where it was" },
	{ "symfs", 0, 'S', "DIR", "look objects up under DIR first" },
	{ "help", 'h', 'h', NULL, "this list" },
	{ NULL, 0, 0, NULL, NULL },
};

/* Options that cannot go together: one line, and 1. */
static int conflicts(const struct opts *o, const struct options *opt)
{
	static const int views[] = { 'l', 'O', 'a', 'T', 'q', 'H', 'K', 'E', 'W', 0 };
	static const int inl[] = { 'i', 'O', 'a', 'T', 'q', 'H', 'K', 'E', 'W', 0 };
	static const int thr[] = { 't', 'a', 'H', 'K', 'E', 0 };
	static const int html_tid[] = { 'H', 'I', 0 }, html_comm[] = { 'H', 'C', 0 };
	if (opts_exclusive(o, views, "one view at a time; give one")
	    || opts_exclusive(o, inl, "--inline is of the functions and lines of the flat "
				      "profile")
	    || opts_exclusive(o, html_tid, "the page is of every thread")
	    || opts_exclusive(o, html_comm, "the page is of every thread")
	    || opts_exclusive(o, thr, "--threshold leaves out rows of the flat profile, "
				      "--lines, --objects, --threads and --callgraph"))
		return 1;
	if (opt->annotate && opt->fmt != FMT_TEXT) {
		error_line("report: --annotate and --format %s: the annotation is text only",
			   opt->fmt == FMT_CSV ? "csv" : "json");
		return 1;
	}
	if (opt->html && opts_given(o, 'f')) {
		error_line("report: --html and --format: the page is HTML; give one");
		return 1;
	}
	if (opt->callgraph && opt->fmt == FMT_CSV) {
		error_line("report: --callgraph and --format csv: the call graph is text or json");
		return 1;
	}
	if ((opt->callers || opt->callees || opt->tree) && opt->fmt == FMT_CSV) {
		error_line("report: --%s and --format csv: it is text or json",
			   opt->callers ? "callers" : opt->callees ? "callees" : "tree");
		return 1;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct opts o = { .cmd = "report", .operands = "[FILE...]",
			  .about = "Print the profile of FILEs, by default those of the last profil "
				   "run.", .v = report_opts };
	struct options opt = { BY_FUNCTION, FMT_TEXT, 0, 0.0, NULL, 0, NULL, 0, 0, NULL, NULL, 0 };
	struct thread_filter filter = { NULL, 0, NULL };
	const char *exe = NULL, *tids = NULL, *diff = NULL, *v;
	int c;
	optind = 0;	/* all of getopt's state afresh */
	while ((c = opts_next(&o, argc, argv, &v)) != -1) {
		char *end;
		switch (c) {
		case 'D': diff = v; break;
		case 'e': exe = v; objfind_exe(v); break;
		case 'S':
			if (objfind_symfs(v) != 0)
				return 2;
			break;
		case 'T': opt.threads = 1; break;
		case 'N': opt.full_names = 1; break;
		case 'C': filter.comm = v; break;
		case 'I': tids = v; break;
		case 'l': opt.by = BY_LINE; break;
		case 'O': opt.by = BY_OBJECT; break;
		case 'i': opt.inlines = 1; break;
		case 'q': opt.callgraph = 1; break;
		case 'a': opt.annotate = v; break;
		case 'H': opt.html = v; break;
		case 'K': opt.callers = v; break;
		case 'E': opt.callees = v; break;
		case 'W': opt.tree = 1; break;
		case 't':
			errno = 0;
			opt.threshold = strtod(v, &end);
			if (errno || end == v || *end || !(opt.threshold >= 0 && opt.threshold <= 100)) {
				error_line("--threshold '%s': not a percentage from 0 to 100", v);
				return 2;
			}
			break;
		case 'f':
			if (strcmp(v, "text") == 0)
				opt.fmt = FMT_TEXT;
			else if (strcmp(v, "csv") == 0)
				opt.fmt = FMT_CSV;
			else if (strcmp(v, "json") == 0)
				opt.fmt = FMT_JSON;
			else {
				error_line("--format '%s': not one of text, csv, json", v);
				return 2;
			}
			break;
		case 'h':
			opts_help(&o, stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (conflicts(&o, &opt) || (diff && diff_conflicts(&o)))
		return 2;
	if (tids && thread_filter_tids(&filter, tids) != 0)
		return 2;
	if (diff) {
		int st = diff_command(diff, argc - optind, argv + optind, exe, &filter,
				      (enum diff_fmt)opt.fmt, opt.threshold, opt.html);
		free((void *)filter.tids);
		return st;
	}
	char **files = input_files(argc - optind, argv + optind);
	if (!files) {
		free((void *)filter.tids);
		return 1;
	}
	if (opt.html && output_refused("--html", opt.html, files, exe, NULL)) {
		free_files(files);
		free((void *)filter.tids);
		return 2;
	}
	if (opt.html) {
		int st = html_report(opt.html, files, exe);
		free_files(files);
		free((void *)filter.tids);
		return st;
	}
	struct model m = { 0 };
	m.exe = exe;
	if (filter.ntids || filter.comm)
		m.filter = &filter;
	int status = 0;
	for (char **f = files; *f && !status; f++)
		if (model_add_file(&m, *f) != 0)
			status = 1;
	free_files(files);
	struct symbols **syms = xmalloc((m.nobjects + 1) * sizeof *syms);
	memset(syms, 0, (m.nobjects + 1) * sizeof *syms);
	if (!status) {
		model_finish(&m);
		origins_warn(&m.origins, "summed into one profile");
		if (!opt.threads && rows_open_symbols(&m, syms) != 0)
			status = 1;
	}
	if (!status && opt.threads) {
		print_threads(&m, &opt);
	} else if (!status && opt.annotate) {
		status = annotate(&m, syms, opt.annotate);
	} else if (!status && opt.callgraph) {
		struct callgraph g;
		callgraph_build(&g, &m, syms);
		if (opt.fmt == FMT_JSON)
			callgraph_json(&g, opt.threshold);
		else
			callgraph_print(&g, opt.threshold);
		callgraph_free(&g);
	} else if (!status && (opt.callers || opt.callees || opt.tree)) {
		struct stacks s;
		stacks_build(&s, &m, syms);
		if (opt.tree)	/* perf's default for its call graphs */
			status = stacks_print_tree(&m, &s, opts_given(&o, 't') ? opt.threshold : 0.5,
						   opt.fmt == FMT_JSON, opt.full_names);
		else
			status = stacks_print_neighbours(&m, &s, opt.callers ? opt.callers : opt.callees,
							 !opt.callers, opt.fmt == FMT_JSON,
							 opt.full_names);
		stacks_free(&s);
	} else if (!status) {
		struct rows r = { 0 };
		rows_collect(&m, syms, opt.by, opt.inlines, &r);
		if (opt.by == BY_FUNCTION && m.narcs) {
			struct callgraph g;
			callgraph_build(&g, &m, syms);
			rows_calls(&r, &g);
			callgraph_free(&g);
		}
		uint64_t *totals = NULL;
		if (opt.by == BY_FUNCTION && stacks_present(&m)) {
			struct stacks s;
			stacks_build(&s, &m, syms);
			totals = stacks_row_totals(&s, &r, opt.inlines);
			stacks_free(&s);
		}
		print_rows(&m, &r, &opt, totals);
		free(totals);
		rows_free(&r);
	}
	for (size_t i = 0; i < m.nobjects; i++)
		symbols_close(syms[i]);
	free(syms);
	model_free(&m);
	free((void *)filter.tids);
	if (fflush(stdout) != 0) {
		error_line("standard output: %s", strerror(errno));
		return 1;
	}
	return status;
}
