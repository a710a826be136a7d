/*
 * loadmap.c - building the load map of this process (see loadmap.h).
 * Runs in the profiled process, libc only; it allocates, so it is never
 * called from a signal handler.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loadmap.h"

void bytes_put(struct bytes *b, const void *p, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *d = realloc(b->data, cap);
		if (!d) {
			b->failed = 1;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void bytes_put64(struct bytes *b, uint64_t v)
{
	unsigned char le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(v >> (8 * i));
	bytes_put(b, le, 8);
}

void bytes_put32(struct bytes *b, uint32_t v)
{
	unsigned char le[4];
	for (int i = 0; i < 4; i++)
		le[i] = (unsigned char)(v >> (8 * i));
	bytes_put(b, le, 4);
}

void bytes_free(struct bytes *b)
{
	free(b->data);
	*b = (struct bytes){ 0 };
}

struct walk {
	struct bytes *out;
	uint64_t count;
	char exe[LOADMAP_NAME_MAX];
};

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct walk *w = arg;
	/* The program itself has no name here: /proc/self/exe has it. */
	const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : w->exe;
	size_t len = strnlen(name, LOADMAP_NAME_MAX - 1);
	static const unsigned char zeros[8];
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0)
			continue;
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		bytes_put64(w->out, start);
		bytes_put64(w->out, start + ph->p_memsz);
		bytes_put64(w->out, info->dlpi_addr);
		bytes_put64(w->out, ph->p_offset);
		bytes_put32(w->out, (uint32_t)len);
		bytes_put32(w->out, 0);
		bytes_put(w->out, name, len);
		bytes_put(w->out, zeros, (8 - len % 8) % 8);
		w->count++;
	}
	return 0;
}

uint64_t loadmap_build(struct bytes *b)
{
	struct walk w = { .out = b, .count = 0 };
	ssize_t n = readlink("/proc/self/exe", w.exe, sizeof w.exe - 1);
	w.exe[n > 0 ? n : 0] = '\0';
	dl_iterate_phdr(add_object, &w);
	return w.count;
}
