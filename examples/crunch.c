/*
 * crunch.c - a small program that does real work and profiles itself.
 *
 * It makes a few megabytes of records, sorts them, hashes them, and
 * compresses and decompresses them with a small LZ77 coder, part of it
 * in two threads at once.  profil() counts samples of every thread over
 * the program's own text; at the end the counters are mapped back to
 * functions with dladdr() (the program is linked with -rdynamic, so its
 * global functions are in the dynamic symbol table) and printed as a
 * flat profile, hottest first.  It uses only the public API (profil.h).
 *
 * Build and run from the top of the tree: make example
 * Against the installed library:
 *	cc -O2 -rdynamic crunch.c $(pkg-config --cflags --libs profil) && ./a.out
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <profil.h>

#define RECORDS 400000
#define RECORD_SIZE 32

/* The work is kept out of line so that the profile can name each part. */
#define WORK __attribute__((noinline))

/* Where the program's text starts and ends (from the linker). */
extern char __executable_start[], etext[];

/*
 * With scale 0x8000 profil(2) counts the pc into counter
 * (pc - offset) / 2 * 0x8000 / 0x10000: counter i holds the samples at
 * offset + 4 * i to offset + 4 * i + 3.
 */
#define SCALE 0x8000u
#define BYTES_PER_COUNTER 4

struct record {
	char key[RECORD_SIZE];
};

/* xorshift64*: fast, deterministic data. */
uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Records of words from a small vocabulary, so that they compress. */
WORK void make_records(struct record *r, size_t n, uint64_t seed)
{
	static const char *words[] = { "alpha", "bravo", "delta", "echo", "kilo",
				       "lima", "oscar", "papa", "tango", "zulu" };
	for (size_t i = 0; i < n; i++) {
		char *p = r[i].key;
		size_t left = RECORD_SIZE - 1;
		while (left > 6) {
			const char *w = words[next_random(&seed) % 10];
			size_t len = strlen(w);
			if (len + 1 > left)
				break;
			memcpy(p, w, len);
			p[len] = ' ';
			p += len + 1;
			left -= len + 1;
		}
		memset(p, '.', left);
		r[i].key[RECORD_SIZE - 1] = '\0';
	}
}

WORK int record_less(const struct record *a, const struct record *b)
{
	return memcmp(a->key, b->key, RECORD_SIZE) < 0;
}

/* Bottom-up merge sort into tmp and back. */
WORK void merge_sort(struct record *r, struct record *tmp, size_t n)
{
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = record_less(&r[j], &r[i]) ? r[j++] : r[i++];
			while (i < mid)
				tmp[k++] = r[i++];
			while (j < hi)
				tmp[k++] = r[j++];
		}
		memcpy(r, tmp, n * sizeof *r);
	}
}

/* FNV-1a over a byte range, many rounds to give the hash some weight. */
WORK uint64_t fnv1a(const void *data, size_t len, int rounds)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (int round = 0; round < rounds; round++)
		for (const unsigned char *p = data, *end = p + len; p < end; p++)
			h = (h ^ *p) * 0x100000001b3ull;
	return h;
}

/*
 * LZ77 with a hash of 4-byte prefixes: a literal run is a byte L
 * (0..127) followed by L + 1 bytes; a match is 128 + (length - 4) then a
 * 2-byte distance.
 */
WORK size_t lz_compress(const unsigned char *in, size_t n, unsigned char *out)
{
	enum { HASH_BITS = 14, MIN_MATCH = 4, MAX_MATCH = 131, WINDOW = 65535 };
	static __thread uint32_t last[1 << HASH_BITS];
	memset(last, 0, sizeof last);
	size_t i = 0, o = 0, literal_start = 0;
	while (i + MIN_MATCH <= n) {
		uint32_t v;
		memcpy(&v, in + i, 4);
		uint32_t h = (v * 2654435761u) >> (32 - HASH_BITS);
		size_t cand = last[h];
		last[h] = (uint32_t)i + 1;
		size_t len = 0;
		if (cand && i - (cand - 1) <= WINDOW) {
			cand--;
			while (len < MAX_MATCH && i + len < n && in[cand + len] == in[i + len])
				len++;
		}
		if (len < MIN_MATCH) {
			i++;
			continue;
		}
		while (literal_start < i) {	/* flush pending literals */
			size_t run = i - literal_start > 128 ? 128 : i - literal_start;
			out[o++] = (unsigned char)(run - 1);
			memcpy(out + o, in + literal_start, run);
			o += run;
			literal_start += run;
		}
		size_t dist = i - cand;
		out[o++] = (unsigned char)(128 + len - MIN_MATCH);
		out[o++] = (unsigned char)(dist & 0xff);
		out[o++] = (unsigned char)(dist >> 8);
		i += len;
		literal_start = i;
	}
	while (literal_start < n) {
		size_t run = n - literal_start > 128 ? 128 : n - literal_start;
		out[o++] = (unsigned char)(run - 1);
		memcpy(out + o, in + literal_start, run);
		o += run;
		literal_start += run;
	}
	return o;
}

WORK size_t lz_decompress(const unsigned char *in, size_t n, unsigned char *out)
{
	size_t i = 0, o = 0;
	while (i < n) {
		unsigned c = in[i++];
		if (c < 128) {
			memcpy(out + o, in + i, c + 1);
			i += c + 1;
			o += c + 1;
		} else {
			size_t len = c - 128 + 4;
			size_t dist = in[i] | (size_t)in[i + 1] << 8;
			i += 2;
			for (size_t k = 0; k < len; k++, o++)	/* may overlap */
				out[o] = out[o - dist];
		}
	}
	return o;
}

/* One thread's share: compress, decompress and check a slice. */
struct slice {
	const unsigned char *data;
	size_t len;
	size_t packed;
	int ok;
};

void *compress_slice(void *p)
{
	struct slice *s = p;
	unsigned char *packed = malloc(s->len + s->len / 64 + 16);
	unsigned char *back = malloc(s->len);
	s->packed = 0;
	s->ok = 1;
	for (int pass = 0; pass < 8; pass++) {
		s->packed = lz_compress(s->data, s->len, packed);
		size_t n = lz_decompress(packed, s->packed, back);
		s->ok &= n == s->len && memcmp(back, s->data, n) == 0;
	}
	free(packed);
	free(back);
	return NULL;
}

/* Counters back to functions: sum each function's samples. */
struct hot {
	const char *name;
	uint64_t samples;
};

int by_samples(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;
	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

void print_profile(const unsigned short *counters, size_t n, uintptr_t offset)
{
	struct profil_stats st;
	profil_get_stats(&st, sizeof st);
	struct hot hot[256];
	size_t nhot = 0;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		Dl_info info;
		if (!counters[i])
			continue;
		uintptr_t pc = offset + i * BYTES_PER_COUNTER;
		total += counters[i];
		const char *name = dladdr((void *)pc, &info) && info.dli_sname
				   ? info.dli_sname : "(unknown)";
		size_t k = 0;
		while (k < nhot && strcmp(hot[k].name, name) != 0)
			k++;
		if (k == nhot && nhot < 256)
			hot[nhot++] = (struct hot){ name, 0 };
		if (k < nhot)
			hot[k].samples += counters[i];
	}
	qsort(hot, nhot, sizeof hot[0], by_samples);
	double seconds_each = st.taken ? st.cpu_ns / 1e9 / st.taken : 0;
	printf("\nFlat profile (%llu samples, %u a CPU-second asked, each %.3f ms):\n\n",
	       (unsigned long long)total, st.hz, seconds_each * 1e3);
	printf("%7s %10s %9s  %s\n", "% time", "self s", "samples", "function");
	for (size_t k = 0; k < nhot && k < 10; k++)
		printf("%6.2f%% %10.3f %9llu  %s\n", 100.0 * hot[k].samples / total,
		       hot[k].samples * seconds_each, (unsigned long long)hot[k].samples,
		       hot[k].name);
	/* Without -rdynamic the program's functions have no dynamic symbol. */
	if (nhot == 1 && strcmp(hot[0].name, "(unknown)") == 0)
		printf("no function named: link crunch with -rdynamic\n");
	printf("\nsamples taken %llu = counted %llu + outside the program (libc) %llu + dropped %llu\n",
	       (unsigned long long)st.taken, (unsigned long long)st.counted,
	       (unsigned long long)st.outside, (unsigned long long)st.dropped);
	printf("pcs observed %llu, %u a CPU-second; "
	       "%u threads sampled, backend %s\n",
	       (unsigned long long)st.observed, st.achieved_hz, st.threads,
	       st.backend == PROFIL_BACKEND_PERF ? "perf" : "timer");
}

int main(void)
{
	/*
	 * Under `profil run` the whole process is profiled from outside:
	 * a profil() call of our own would take the samples away from it.
	 */
	int outside = getenv("PROFIL_RUN") != NULL;

	uintptr_t offset = (uintptr_t)__executable_start;
	size_t ncounters = ((uintptr_t)etext - offset) / BYTES_PER_COUNTER + 1;
	unsigned short *counters = calloc(ncounters, sizeof *counters);
	if (!counters || (!outside && profil(counters, ncounters * sizeof *counters,
					     offset, SCALE) != 0)) {
		perror("crunch: profil");
		return 1;
	}

	struct record *records = malloc(RECORDS * sizeof *records);
	struct record *tmp = malloc(RECORDS * sizeof *tmp);
	make_records(records, RECORDS, 42);
	merge_sort(records, tmp, RECORDS);
	uint64_t hash = fnv1a(records, RECORDS * sizeof *records, 10);

	/* Two threads compress halves at once. */
	size_t bytes = RECORDS * sizeof *records;
	struct slice halves[2] = {
		{ (unsigned char *)records, bytes / 2, 0, 0 },
		{ (unsigned char *)records + bytes / 2, bytes - bytes / 2, 0, 0 },
	};
	pthread_t threads[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, compress_slice, &halves[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);

	if (!outside)
		profil(counters, ncounters * sizeof *counters, offset, 0);	/* scale 0: off */
	printf("crunch: sorted %d records, hash %016llx, compressed %zu to %zu bytes (%s)\n",
	       RECORDS, (unsigned long long)hash, bytes, halves[0].packed + halves[1].packed,
	       halves[0].ok && halves[1].ok ? "round trip ok" : "ROUND TRIP FAILED");
	if (!outside)
		print_profile(counters, ncounters, offset);
	free(records);
	free(tmp);
	free(counters);
	return halves[0].ok && halves[1].ok ? 0 : 1;
}
