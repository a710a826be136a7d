/*
 * jsonout.c - JSON strings (see jsonout.h).
 */
#include <stddef.h>

#include "jsonout.h"

/* Bytes of the UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned min;
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0)
		n = 2, c &= 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		n = 3, c &= 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		n = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and what is past U+10FFFF are not UTF-8 */
	if (c < min || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return n;
}

void json_string(FILE *f, const char *s, int html)
{
	const unsigned char *p = (const unsigned char *)s;
	putc('"', f);
	while (*p) {
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			putc('\\', f);
			putc(c, f);
		} else if (c < 0x20 || (html && c == '<')) {
			fprintf(f, "\\u%04x", c);
		} else if (html && c >= 0x80) {
			size_t n = utf8_len(p);
			if (!n) {
				fputs("\\ufffd", f);
				n = 1;
			} else {
				fwrite(p, 1, n, f);
			}
			p += n;
			continue;
		} else {
			putc(c, f);
		}
		p++;
	}
	putc('"', f);
}
