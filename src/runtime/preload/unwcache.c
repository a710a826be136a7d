/*
 * unwcache.c - unwind tables kept in the run's directory (unwcache.h).
 *
 * A short process spent most of what profiling cost it (2 ms of 3) on
 * building the unwind table of libc from its .eh_frame, the same table
 * in every process of the run.  The first process to build an object's
 * table leaves it in PROFIL_RUN_DIR/.unwind under the object's build ID
 * and the place of its .eh_frame_hdr; the others map it (libc's 170 KiB
 * of rows shared in the page cache, not 30 000 rows interpreted).  The
 * files are never written in place (a new one is linked whole), so a
 * mapping never sees one change.  An object without a
 * build ID is built every time.  A table is written whole or not at all
 * (outfile.c), and one whose head does not add up is ignored and built.
 * Its rows are not read through at load: that was 0.4 M instructions
 * and every page of libc's table touched, in each process, for a check
 * the lookup makes of the one row it uses (an index past the rules is
 * NOINFO, table.c); rows out of order give wrong rules, never a read
 * outside the table.
 *
 * Runs under table.c's update lock, outside signal handlers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/outfile.h"
#include "preload/unwcache.h"
#include "unwind/table.h"

#define MAGIC "PRUNWT1"	/* 8 bytes with its NUL */

/* The file: this head, then the table as cfi.c lays it out in one
   block (row pcs, rules, row rules). */
struct head {
	char magic[8];
	uint32_t nrows, nrules;
	uint64_t lo_off, hi_off;	/* from the object's load bias */
	uint64_t bytes;
};

static char dir[4096];

/* The table's file name for the object, or 0 if it cannot be kept. */
static int name_of(const struct dl_phdr_info *info, char *out, size_t size)
{
	const ElfW(Phdr) *eh = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			eh = &info->dlpi_phdr[i];
	uint8_t id[64];
	uint32_t len = 0;
	object_build_id(info, id, &len);
	if (!eh || len < 8 || !dir[0])
		return 0;
	/* By hand: snprintf per byte was a tenth of a short process's
	   instructions in libprofil. */
	static const char digits[] = "0123456789abcdef";
	char hex[2 * sizeof id + 1];
	for (uint32_t i = 0; i < len; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 15];
	}
	hex[2 * len] = '\0';
	int n = snprintf(out, size, "%s/%s-%llx-%llx", dir, hex,
			 (unsigned long long)eh->p_vaddr, (unsigned long long)eh->p_memsz);
	return n > 0 && (size_t)n < size;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		ssize_t r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static void tail_name(char *dst, size_t size, const char *name)
{
	const char *tail = name ? name : "";
	size_t n = strlen(tail);
	if (n >= size)
		tail += n - (size - 1);
	strcpy(dst, tail);
}

/*
 * The table read in: mapped from the file where no library was ever
 * closed (no hole of a dlclose for the mapping to take, which would send
 * the library opened again elsewhere, table.c), so that the run's
 * processes share libc's 170 KiB of rows in the page cache rather than
 * each copy them into fresh pages; read into malloc's memory otherwise.
 */
static void *read_table(const struct dl_phdr_info *info, int fd, uint64_t size, size_t *mapped)
{
	*mapped = 0;
	if (info->dlpi_subs == 0) {
		void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			*mapped = size;
			return m;
		}
	}
	uint8_t *mem = malloc(size + 8);
	if (mem && read_all(fd, mem, size) != 0) {
		free(mem);
		mem = NULL;
	}
	return mem;
}

static int load(const void *arg, struct unwind_object *out)
{
	const struct dl_phdr_info *info = arg;
	char path[sizeof dir + 256];
	if (!name_of(info, path, sizeof path))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	struct stat st;
	size_t mapped = 0;
	uint8_t *mem = NULL;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(struct head)
	    || st.st_size > (off_t)1 << 32
	    || !(mem = read_table(info, fd, (uint64_t)st.st_size, &mapped)))
		goto fail;
	struct head h;
	memcpy(&h, mem, sizeof h);
	if (memcmp(h.magic, MAGIC, 8) || !h.nrows || !h.nrules || h.nrules > 65536
	    || h.nrows > (1u << 28)
	    || h.bytes != (uint64_t)h.nrows * 6 + (uint64_t)h.nrules * sizeof(struct unwind_rule)
	    || (uint64_t)st.st_size != sizeof h + h.bytes)
		goto fail;
	const uint32_t *rp = (const uint32_t *)(mem + sizeof h);
	const struct unwind_rule *rr = (const struct unwind_rule *)(rp + h.nrows);
	const uint16_t *ri = (const uint16_t *)(rr + h.nrules);
	if (h.hi_off != h.lo_off + rp[h.nrows - 1] + 1)
		goto fail;
	close(fd);
	memset(out, 0, sizeof *out);
	out->lo = info->dlpi_addr + h.lo_off;
	out->hi = info->dlpi_addr + h.hi_off;
	out->row_pc = rp;
	out->rules = rr;
	out->row_rule = ri;
	out->nrows = h.nrows;
	out->nrules = h.nrules;
	out->bias = info->dlpi_addr;
	out->bytes = h.bytes;
	out->mapped = mapped;
	tail_name(out->name, sizeof out->name, info->dlpi_name);
	if (!mapped) {
		/* unwind_table_free frees row_pc: the head goes. */
		memmove(mem, mem + sizeof h, h.bytes);
		out->row_pc = (const uint32_t *)mem;
		out->rules = (const struct unwind_rule *)(out->row_pc + h.nrows);
		out->row_rule = (const uint16_t *)(out->rules + h.nrules);
	}
	return 0;
fail:
	if (mapped)
		munmap(mem, mapped);
	else
		free(mem);
	close(fd);
	return -1;
}

static void save(const void *arg, const struct unwind_object *o)
{
	const struct dl_phdr_info *info = arg;
	char path[sizeof dir + 256];
	if (!o->nrows || !name_of(info, path, sizeof path))
		return;
	/* cfi.c's block: row pcs, rules, row rules, contiguous. */
	if ((const void *)o->rules != (const void *)(o->row_pc + o->nrows)
	    || (const void *)o->row_rule != (const void *)(o->rules + o->nrules)
	    || o->bytes != (size_t)o->nrows * 6 + o->nrules * sizeof *o->rules)
		return;
	struct head h = { MAGIC, o->nrows, o->nrules, o->lo - info->dlpi_addr,
			  o->hi - info->dlpi_addr, o->bytes };
	char *buf = malloc(sizeof h + o->bytes);
	if (!buf)
		return;
	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, o->row_pc, o->bytes);
	int saved = errno;
	if (outfile_write(AT_FDCWD, path, buf, sizeof h + o->bytes) != 0 && errno == ENOENT
	    && mkdir(dir, 0700) == 0)
		outfile_write(AT_FDCWD, path, buf, sizeof h + o->bytes);
	errno = saved;	/* a table not kept is no error: the next process builds it */
	free(buf);
}

static const struct unwind_cache cache = { load, save };

void unwcache_start(void)
{
	const char *run = secure_getenv("PROFIL_RUN_DIR");
	if (!run || run[0] != '/')
		return;
	int n = snprintf(dir, sizeof dir, "%s/%s", run, UNWCACHE_DIR);
	if (n <= 0 || (size_t)n >= sizeof dir) {
		dir[0] = '\0';
		return;
	}
	unwind_tables_set_cache(&cache);
}
