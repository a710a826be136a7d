/*
 * loadmap.h - the load map of a process, as pcsample files and mon.out
 * carry it: for each executable segment of each loaded object, where it
 * was mapped, its load bias and file offset, and the object's path, so
 * that raw addresses can be turned into functions after the process is
 * gone.  Encoding (little-endian, 8-byte aligned), one record:
 *
 *	u64 start, end		runtime addresses of the segment, end exclusive
 *	u64 bias		runtime address minus link-time address
 *	u64 file_offset		the segment's offset in the file
 *	u32 name_len, u32 0	then name_len bytes of path, zero-padded to 8
 *
 * pcsample(5) and mon.out(5) document it in their files.
 */
#ifndef PROFIL_LOADMAP_H
#define PROFIL_LOADMAP_H

#include <stddef.h>
#include <stdint.h>

#define LOADMAP_NAME_MAX 4096

/* A growing byte buffer (writer side). */
struct bytes {
	unsigned char *data;
	size_t len, cap;
	int failed;		/* an allocation failed: the content is short */
};

void bytes_put(struct bytes *b, const void *p, size_t n);
void bytes_put64(struct bytes *b, uint64_t v);
void bytes_put32(struct bytes *b, uint32_t v);
void bytes_free(struct bytes *b);

/*
 * Append the records of every object loaded in this process to b;
 * return how many.  Not for signal handlers (it allocates).
 */
uint64_t loadmap_build(struct bytes *b);

/* Reader side. */
struct loadmap_entry {
	uint64_t start, end, bias, file_offset;
	char *name;
};

/*
 * Decode n records from [*p, end): advance *p past them and return a
 * malloc'd array, or NULL with *why saying what is wrong.
 */
struct loadmap_entry *loadmap_decode(const unsigned char **p, const unsigned char *end,
				     uint64_t n, const char **why);
void loadmap_free(struct loadmap_entry *e, uint64_t n);

/* Read a whole file into memory (at most 1 GiB); -1 with *why. */
int file_slurp(const char *path, unsigned char **data, size_t *len, const char **why);

/* The entry whose [start, end) holds pc, or NULL. */
const struct loadmap_entry *loadmap_find(const struct loadmap_entry *e, uint64_t n,
					 uint64_t pc);

static inline uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
		| (uint32_t)p[3] << 24;
}

#endif
