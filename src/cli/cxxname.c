/*
 * cxxname.c - reading demangled names (see cxxname.h).
 *
 * A demangled name is scanned once, counting the depth of '<' and '(':
 * only what is outside both is the name's own.  "operator<", "operator()"
 * and the like are skipped whole, so that their brackets count for
 * nothing.
 */
#include <ctype.h>
#include <string.h>

#include "cxxname.h"

static int word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* If n + i starts the keyword "operator", the index past the operator
 * it names ("operator<<", "operator()", "operator new[]", "operator
 * double"); else i. */
static size_t skip_operator(const char *n, size_t i)
{
	if (strncmp(n + i, "operator", 8) != 0 || (i && word_char(n[i - 1])) || word_char(n[i + 8]))
		return i;
	size_t j = i + 8;
	if ((n[j] == '(' && n[j + 1] == ')') || (n[j] == '[' && n[j + 1] == ']'))
		return j + 2;
	if (n[j] == ' ' && (word_char(n[j + 1]))) {	/* new, delete, a conversion */
		j++;
		while (word_char(n[j]) || n[j] == ':' || n[j] == '*' || n[j] == '&')
			j++;
		if (n[j] == '[' && n[j + 1] == ']')
			j += 2;
		return j;
	}
	while (n[j] && strchr("<>=!+-*/%^&|~,", n[j]))
		j++;
	if (n[j] == ' ' && n[j + 1] == '<')	/* "operator< <int>" */
		j++;
	return j;
}

static const char anon_ns[] = "(anonymous namespace)";

size_t cxxname_span(const char *n, size_t *start)
{
	int angle = 0, paren = 0;
	size_t i = 0;
	*start = 0;
	while (n[i]) {
		size_t j = skip_operator(n, i);
		if (j != i) {
			i = j;
			continue;
		}
		char c = n[i];
		if (!angle && !paren && strncmp(n + i, anon_ns, sizeof anon_ns - 1) == 0) {
			i += sizeof anon_ns - 1;
			continue;
		}
		if (c == '(' && !angle && !paren)
			break;	/* the parameters */
		if (c == ' ' && !angle && !paren) {
			if (n[i + 1] == '[')
				break;	/* " [clone .cold]" */
			*start = i + 1;	/* what came before was the return type */
		}
		angle += c == '<' ? 1 : c == '>' && angle ? -1 : 0;
		paren += c == '(' ? 1 : c == ')' && paren ? -1 : 0;
		i++;
	}
	return i;
}

int cxxname_matches(const char *name, const char *want)
{
	size_t start, end = cxxname_span(name, &start), wl = strlen(want);
	if (strcmp(name, want) == 0 || strcmp(name + start, want) == 0
	    || (end - start == wl && memcmp(name + start, want, wl) == 0))
		return 1;
	if (end <= start || name[end - 1] != '>')
		return 0;
	/* Without the template arguments the name ends with. */
	size_t k = end;
	int depth = 0;
	while (k-- > start) {
		depth += name[k] == '>' ? 1 : name[k] == '<' ? -1 : 0;
		if (!depth)
			break;
	}
	return !depth && k > start && k - start == wl && memcmp(name + start, want, wl) == 0;
}

/* name with the inside of each outermost <...> (and, with parens, of
 * each (...) outside them) as "...", into buf. */
static void collapse(const char *n, int parens, char *buf, size_t len)
{
	size_t o = 0;
	int angle = 0, paren = 0;
#define PUT(c) do { if (o + 1 < len) buf[o++] = (c); } while (0)
	for (size_t i = 0; n[i];) {
		size_t j = skip_operator(n, i);
		if (j != i) {
			for (; i < j; i++)
				if (!angle && !paren)
					PUT(n[i]);
			continue;
		}
		char c = n[i];
		if (!angle && !paren && strncmp(n + i, anon_ns, sizeof anon_ns - 1) == 0) {
			for (size_t k = 0; k < sizeof anon_ns - 1; k++)
				PUT(anon_ns[k]);
			i += sizeof anon_ns - 1;
			continue;
		}
		int opens = c == '<' || (parens && c == '(');
		int closes = c == '>' || (parens && c == ')');
		int outside = !angle && !paren;
		if (opens && outside) {
			PUT(c);
			if (n[i + 1] != (c == '<' ? '>' : ')')) {
				PUT('.');
				PUT('.');
				PUT('.');
			}
		}
		if (c == '<')
			angle++;
		else if (c == '(' && parens)
			paren++;
		else if (c == '>' && angle)
			angle--;
		else if (c == ')' && paren)
			paren--;
		if (outside && !opens)
			PUT(c);
		else if (closes && !angle && !paren)
			PUT(c);
		i++;
	}
#undef PUT
	buf[o] = 0;
}

const char *cxxname_short(const char *name, size_t max, char *buf, size_t len)
{
	if (strlen(name) <= max || !len)
		return name;
	collapse(name, 0, buf, len);
	if (strlen(buf) > max)
		collapse(name, 1, buf, len);
	return buf;
}
