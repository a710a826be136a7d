/*
 * html.c - profil report --html FILE: one page, with no external file,
 * that shows the profile of every process given and of their sum.
 *
 * The page is src/cli/html/page.html with its style, its script and the
 * data (html_data.c) put in place of its @STYLE@, @SCRIPT@ and @DATA@
 * markers.  It is written to a temporary file beside FILE and renamed
 * over it once complete, so that a failure leaves no half page.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/profile.h"
#include "cli.h"
#include "html.h"
#include "jsonout.h"
#include "rows.h"

struct process {
	struct model m;
	struct symbols **syms;
	const char *file;	/* NULL for the sum of every file */
};

/*
 * Read the files into the sum, procs[0], and each into its own view,
 * procs[1 + i], if there are several: each file is read once for both.
 * -1 after one line if one cannot be read.
 */
static int open_view(struct process *p);

static int load(struct process *procs, char **files, size_t nfiles, const char *exe)
{
	size_t n = nfiles > 1 ? nfiles + 1 : 1;
	for (size_t i = 0; i < n; i++) {
		memset(&procs[i], 0, sizeof procs[i]);
		procs[i].m.exe = exe;
		procs[i].file = i ? files[i - 1] : nfiles == 1 ? files[0] : NULL;
	}
	for (size_t i = 0; i < nfiles; i++)
		if (model_add_file2(&procs[0].m, n > 1 ? &procs[1 + i].m : NULL, files[i]) != 0)
			return -1;
	return open_view(&procs[0]);
}

/* The model finished, the symbols of its objects open: shared with the
 * sum's (symbols.c), which has them all. */
static int open_view(struct process *p)
{
	model_finish(&p->m);
	p->syms = xmalloc((p->m.nobjects + 1) * sizeof *p->syms);
	memset(p->syms, 0, (p->m.nobjects + 1) * sizeof *p->syms);
	return rows_open_symbols(&p->m, p->syms);
}

static void unload(struct process *p)
{
	for (size_t i = 0; p->syms && i < p->m.nobjects; i++)
		symbols_close(p->syms[i]);
	free(p->syms);
	p->syms = NULL;
	model_free(&p->m);
}

static const char *program(const struct model *m)
{
	for (size_t i = 0; i < m->nobjects; i++)
		if (m->objects[i].flags & PROFILE_SEG_MAIN)
			return m->objects[i].path;
	return m->command[0] ? m->command : "?";
}

/* What the header says that a reader should not miss. */
static void warnings(FILE *f, const struct model *m)
{
	char w[512];
	int n = 0;
	fputs(",\"warn\":[", f);
#define WARN(...) do { snprintf(w, sizeof w, __VA_ARGS__); \
		       fputs(n++ ? "," : "", f); json_string(f, w, 1); } while (0)
	if (m->lost) {
		char by[400];
		lost_describe(m, by, sizeof by);
		WARN("%" PRIu64 " samples lost (%.2f%% of those taken): %s", m->lost,
		     m->taken ? 100.0 * m->lost / m->taken : 0.0, by);
	}
	if (m->hz_asked)
		WARN("rate %u Hz asked, %u Hz used: the %s backend's limit here", m->hz_asked,
		     m->hz, backend_name(m->backend));
	if (m->saturated)
		WARN("%" PRIu64 " samples not counted: their counters were full", m->saturated);
	if (m->threads_unsampled)
		WARN("%" PRIu64 " threads could not be sampled", m->threads_unsampled);
	if (m->no_kernel)
		WARN("the %s backend did not see time spent in the kernel", backend_name(m->backend));
	if (origins_mixed(&m->origins)) {
		char d[64];
		WARN("the files are %s, summed in this view",
		     origins_describe(&m->origins, d, sizeof d));
	}
	char running[320], killed[320];
	unfinished_notes(m, running, killed, sizeof running);
	if (*running)
		WARN("%s", running);
	if (*killed)
		WARN("%s", killed);
	if (m->gmon_unrecorded)
		WARN("gmon.out without a .stats beside it: CPU time and samples outside "
		     "the text not recorded");
#undef WARN
	putc(']', f);
}

static void header(FILE *f, const struct model *m)
{
	fputs("\"head\":{\"program\":", f);
	json_string(f, program(m), 1);
	char *c = model_command_line(m);
	fputs(",\"command\":", f);
	json_string(f, c, 1);
	free(c);
	fprintf(f, ",\"pid\":%d,\"ppid\":%d,\"start_ms\":%.0f,\"end_ms\":%.0f,\"backend\":\"%s\""
		",\"hz\":%u,\"observed_hz\":%.1f,\"samples\":%" PRIu64 ",\"counted\":%" PRIu64
		",\"taken\":%" PRIu64
		",\"outside\":%" PRIu64 ",\"saturated\":%" PRIu64 ",\"lost\":%" PRIu64
		",\"system\":%" PRIu64 ",\"cpu_s\":%.6f,\"each_s\":%.9f,\"threads\":%" PRIu64
		",\"threads_unsampled\":%" PRIu64 ",\"threads_fallback\":%" PRIu64
		",\"files\":%u,\"gmon\":%d,\"system_files\":%u,\"no_kernel\":%d",
		m->pid, m->ppid, m->start_ns / 1e6, m->end_ns / 1e6, backend_name(m->backend),
		m->hz, m->cpu_ns ? m->observed * 1e9 / m->cpu_ns : 0.0, model_samples(m), m->counted,
		m->taken,
		m->outside, m->saturated, m->lost, m->system, m->cpu_ns / 1e9,
		model_seconds_each(m), m->threads, m->threads_unsampled, m->threads_fallback,
		m->nfiles, m->gmon_files && m->gmon_files == m->nfiles, m->system_files,
		m->no_kernel);
	lost_json(f, m);
	putc('}', f);
}

static void process_label(FILE *f, const struct process *p, size_t nfiles)
{
	char label[512];
	const char *base = p->m.command[0] ? base_name(p->m.command) : "";
	if (!p->file)
		snprintf(label, sizeof label, "all %zu processes", nfiles);
	else if (p->m.pid > 0)
		snprintf(label, sizeof label, "%s [%d]", base, p->m.pid);
	else
		snprintf(label, sizeof label, "%s (%s)", base[0] ? base : "?", base_name(p->file));
	json_string(f, label, 1);
}

/* The views: the sum, then each file's, if there are several, each
 * unloaded once written.  -1 after one line if the symbols of one
 * cannot be had. */
static int data(FILE *f, FILE *stacks, struct page *pg, struct process *procs, size_t n)
{
	fputs("{\"v\":1,\"procs\":[", f);
	for (size_t i = 0; i < n; i++) {
		struct process *p = &procs[i];
		if (i && open_view(p) != 0)
			return -1;
		fputs(i ? ",{\"label\":" : "{\"label\":", f);
		process_label(f, p, n > 1 ? n - 1 : 1);
		putc(',', f);
		header(f, &p->m);
		warnings(f, &p->m);
		putc(',', f);
		fputs(i ? "," : "[", stacks);
		page_process(pg, f, stacks, &p->m, p->syms);
		putc('}', f);
		if (i)
			unload(p);
	}
	fputs("],", f);
	page_shared(pg, f);
	putc('}', f);
	return 0;
}

/* The template with its markers filled in.  The stacks are a block of
 * their own after the data, made with it (they share its strings). */
static int page(FILE *f, struct page *pg, struct process *procs, size_t n)
{
	static const char *const marks[] = { "@TITLE@", "@STYLE@", "@DATA@", "@SCRIPT@", "@STACKS@" };
	const char *t = html_asset_page;
	char *stacks = NULL;
	size_t len = 0;
	FILE *sf = open_memstream(&stacks, &len);
	if (!sf) {
		error_line("out of memory");
		exit(2);
	}
	for (;;) {
		const char *at = NULL;
		size_t which = 0;
		for (size_t i = 0; i < 5; i++) {
			const char *p = strstr(t, marks[i]);
			if (p && (!at || p < at))
				at = p, which = i;
		}
		if (!at) {
			fputs(t, f);
			break;
		}
		fwrite(t, 1, (size_t)(at - t), f);
		t = at + strlen(marks[which]);
		if (which == 0) {
			fputs("profil: ", f);
			html_escape(f, base_name(program(&procs[0].m)), SIZE_MAX);
		} else if (which == 1) {
			fputs(html_asset_style, f);
			fputs(html_asset_flame_style, f);
		} else if (which == 2) {
			if (data(f, sf, pg, procs, n) != 0) {
				fclose(sf);
				free(stacks);
				return -1;
			}
			putc(']', sf);
			if (fflush(sf) != 0) {
				error_line("out of memory");
				exit(2);
			}
		} else if (which == 4) {
			fwrite(stacks, 1, len, f);
		} else {
			fputs(html_asset_flame_script, f);	/* page.js calls it */
			fputs(html_asset_script, f);
		}
	}
	fclose(sf);
	free(stacks);
	return 0;
}

int html_report(const char *out, char **files, const char *exe)
{
	size_t nfiles = 0;
	while (files[nfiles])
		nfiles++;
	/* Made beside the page and renamed over it: the page is whole or absent. */
	char *tmp = xmalloc(strlen(out) + 16);
	sprintf(tmp, "%s.XXXXXX", out);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		error_line("--html '%s': cannot write there: %s", out, strerror(errno));
		free(tmp);
		return 1;
	}
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	FILE *f = fdopen(fd, "w");

	/* The sum first; then each file, if there are several. */
	size_t n = nfiles > 1 ? nfiles + 1 : 1;
	struct process *procs = xmalloc(n * sizeof *procs);
	int status = load(procs, files, nfiles, exe) != 0;
	/* The objects are known now: their files are not outputs either. */
	if (!status && output_refused("--html", out, files, exe, &procs[0].m))
		status = 2;
	if (!status)
		origins_warn(&procs[0].m.origins, "summed in the page's view of all files");
	if (!status && !model_samples(&procs[0].m)) {
		error_line("--html: %s%s: no samples, no page written", files[0],
			   nfiles > 1 ? " and the other files" : "");
		status = 1;
	}
	if (!status) {
		struct page *pg = page_new();
		if (page(f, pg, procs, n) != 0)
			status = 1;
		page_free(pg);
	}
	for (size_t i = 0; i < n; i++)
		unload(&procs[i]);
	free(procs);
	if (!status && (fflush(f) != 0 || ferror(f) || fsync(fd) != 0)) {
		error_line("--html '%s': %s", out, strerror(errno ? errno : EIO));
		status = 1;
	}
	if (fclose(f) != 0 && !status) {
		error_line("--html '%s': %s", out, strerror(errno));
		status = 1;
	}
	if (!status && rename(tmp, out) != 0) {
		error_line("--html '%s': %s", out, strerror(errno));
		status = 1;
	}
	if (status)
		unlink(tmp);
	free(tmp);
	return status;
}
