/*
 * diff_html.c - the page of report --html --diff: the differential
 * flame graph (diff_flame.c), then one table, a bar for each function's
 * change in seconds (slower red, faster green), with no script, so that
 * it reads the same anywhere it is opened.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "diff.h"

void diff_html(FILE *f, const struct diff *d, double threshold, const char *flame)
{
	double most = 0;
	for (size_t i = 0; i < d->n; i++) {
		double c = fabs(d->v[i].seconds[1] - d->v[i].seconds[0]);
		most = c > most ? c : most;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>profil diff</title>\n<style>\n"
	      "body{font:14px system-ui,sans-serif;margin:1.5em}\n"
	      "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}\n"
	      "td.f,th.f{text-align:left;font-family:monospace}\n"
	      "tr:nth-child(even){background:#f4f4f4}\n"
	      ".bar{width:240px;position:relative;height:12px}\n"
	      ".bar span{position:absolute;top:0;height:12px}\n"
	      ".up{background:#c62828}.down{background:#2e7d32}\n"
	      ".mid{position:absolute;left:120px;top:-2px;height:16px;border-left:1px solid #888}\n"
	      "#flame rect{stroke:#fff;stroke-width:0.5}#flame text{pointer-events:none}\n"
	      "</style></head><body>\n<h1>Diff of two profiles</h1>\n<p>", f);
	for (int t = 0; t < 2; t++) {
		fputs(t ? "<br>new: " : "base: ", f);
		html_escape(f, d->name[t], SIZE_MAX);
		fprintf(f, ", %" PRIu64 " samples, %.3f s of CPU time", d->samples[t], d->cpu[t]);
	}
	fputs("</p>\n", f);
	if (flame)
		fputs(flame, f);
	fputs("<h2>Functions</h2>\n<p>Each function's self time in both profiles, largest change in seconds "
	      "first; &plusmn; is two standard errors of sampling.  Bars: slower in red, "
	      "faster in green.</p>\n<table id=\"diff\">\n<tr><th>base s</th><th>new s</th>"
	      "<th>change s</th><th>&plusmn;</th><th>base %</th><th>new %</th><th>change</th>"
	      "<th></th><th class=\"f\">function</th><th class=\"f\">object</th></tr>\n", f);
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *r = &d->v[i];
		if (r->share[0] < threshold && r->share[1] < threshold)
			continue;
		double c = r->seconds[1] - r->seconds[0];
		double w = most > 0 ? 120.0 * fabs(c) / most : 0;
		fprintf(f, "<tr><td>%.3f</td><td>%.3f</td><td>%+.3f</td><td>%.3f</td>"
			"<td>%.2f</td><td>%.2f</td><td>%+.2f</td><td><div class=\"bar\">"
			"<span class=\"%s\" style=\"left:%.1fpx;width:%.1fpx\"></span>"
			"<i class=\"mid\"></i></div></td><td class=\"f\">",
			r->seconds[0], r->seconds[1], c, r->error, r->share[0], r->share[1],
			r->share[1] - r->share[0], c > 0 ? "up" : "down", c > 0 ? 120.0 : 120.0 - w, w);
		html_escape(f, r->function, SIZE_MAX);
		fputs("</td><td class=\"f\">", f);
		html_escape(f, r->object, SIZE_MAX);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</body></html>\n", f);
}
