/*
 * attach_maps.c - the objects of an attached process and the counting
 * of its samples into them.
 *
 * An executable mapping becomes a segment laid out as libprofil's own
 * (src/runtime/preload/preload.c): the PT_LOAD range of the object it
 * maps, one counter per 2 bytes, the load bias, the build ID, the path
 * as the target sees it.  The object itself is read through
 * /proc/PID/map_files (what is mapped, even deleted or replaced since)
 * or else /proc/PID/root (the target's mount namespace), never through
 * profil's own view of the path; with stacks, its unwind table is built
 * from that same file (attach_unwind.c).
 */
#define _GNU_SOURCE
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/bins.h"
#include "attach.h"
#include "cli.h"

/* What an ELF file's executable PT_LOAD that a mapping covers says. */
struct range {
	uint64_t vaddr, memsz, offset;
	uint8_t build_id[64];
	uint32_t build_id_len;
};

/* The executable PT_LOAD of fd that the mapping of len bytes at file
   offset pgoff holds: 0, or -1. */
static int elf_range(int fd, uint64_t pgoff, uint64_t len, struct range *r)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -1;
	int found = -1;
	size_t n;
	if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &n) == 0) {
		for (size_t i = 0; i < n && found; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD
			    || !(ph.p_flags & PF_X) || !ph.p_memsz)
				continue;
			/* The mapping starts at the page that holds p_offset. */
			if (ph.p_offset < pgoff || ph.p_offset >= pgoff + len)
				continue;
			r->vaddr = ph.p_vaddr;
			r->memsz = ph.p_memsz;
			r->offset = ph.p_offset;
			found = 0;
		}
	}
	if (found == 0) {
		const void *id;
		ssize_t idlen = dwelf_elf_gnu_build_id(elf, &id);
		r->build_id_len = 0;
		if (idlen > 0 && (size_t)idlen <= sizeof r->build_id) {
			memcpy(r->build_id, id, (size_t)idlen);
			r->build_id_len = (uint32_t)idlen;
		}
	}
	elf_end(elf);
	return found;
}

static int open_object(pid_t pid, uint64_t start, uint64_t end, const char *path)
{
	char name[PATH_MAX + 64];
	snprintf(name, sizeof name, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || path[0] != '/')
		return fd;
	snprintf(name, sizeof name, "/proc/%d/root%s", (int)pid, path);
	return open(name, O_RDONLY | O_CLOEXEC);
}

static struct attach_obj *new_obj(struct attach_proc *p, uint64_t start, uint64_t length,
				  int user_only)
{
	uint64_t n = bins_count_for_range(start, start + length, BINS_SCALE_ONE);
	struct attach_obj *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	/* calloc of this size maps fresh pages: untouched ones cost nothing. */
	o->counts = calloc(n ? n : 1, sizeof *o->counts);
	o->system = user_only ? NULL : calloc(n ? n : 1, sizeof *o->system);
	if (!o->counts || (!user_only && !o->system)) {
		free(o->counts);
		free(o->system);
		free(o);
		return NULL;
	}
	o->head.size = profile_segment_size(n, 4);
	o->head.start = start;
	o->head.ncounters = n;
	o->head.scale = BINS_SCALE_ONE;
	o->head.width = 4;
	o->head.length = length;
	p->objs = xrealloc(p->objs, (p->nobjs + 1) * sizeof *p->objs);
	p->objs[p->nobjs++] = o;
	return o;
}

void attach_map_add(const struct attach_config *c, struct attach_proc *p, uint64_t start,
		    uint64_t len, uint64_t pgoff, const char *path)
{
	struct range r = { 0 };
	uint64_t seg_start, bias;
	int flags = 0, fd = -1;
	if (strcmp(path, "[vdso]") == 0) {
		/* No file: the mapping itself, named as libprofil names it. */
		r.memsz = len;
		seg_start = start;
		bias = start;
		flags = PROFILE_SEG_VDSO;
	} else if (path[0] != '/') {
		return;	/* anonymous or [vsyscall]: samples there are outside */
	} else {
		fd = open_object(p->pid, start, start + len, path);
		if (fd < 0)
			return;
		if (elf_range(fd, pgoff, len, &r) != 0) {
			close(fd);
			return;
		}
		bias = start + (r.offset - pgoff) - r.vaddr;
		seg_start = bias + r.vaddr;
		if (strcmp(path, p->exe) == 0)
			flags = PROFILE_SEG_MAIN;
	}
	/* Known already (the maps read at the start, then the record of the
	   same mapping); a mapping over another unmaps what it covers. */
	for (size_t i = 0; i < p->nobjs; i++) {
		struct attach_obj *o = p->objs[i];
		if (o->unmapped)
			continue;
		if (o->head.start == seg_start && o->head.length == r.memsz
		    && strcmp(o->head.path, path) == 0) {
			if (fd >= 0)
				close(fd);
			return;
		}
		if (o->head.start < start + len && start < o->head.start + o->head.length) {
			o->unmapped = 1;
			attach_unwind_changed(p);
		}
	}
	struct attach_obj *o = new_obj(p, seg_start, r.memsz, c->user_only);
	if (!o) {
		if (fd >= 0)
			close(fd);
		return;
	}
	o->head.bias = bias;
	o->head.vaddr = r.vaddr;
	o->head.file_offset = r.offset;
	o->head.flags = (uint32_t)flags;
	memcpy(o->head.build_id, r.build_id, r.build_id_len);
	o->head.build_id_len = r.build_id_len;
	snprintf(o->head.path, sizeof o->head.path, "%s", path);
	if (c->stack_copy)
		attach_unwind_object(p, o, fd);
	if (fd >= 0)
		close(fd);
}

void attach_maps_read(const struct attach_config *c, struct attach_proc *p)
{
	char name[64];
	snprintf(name, sizeof name, "/proc/%d/maps", (int)p->pid);
	FILE *f = fopen(name, "re");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end, pgoff;
		char perms[8];
		int at = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end,
			   perms, &pgoff, &at) < 4 || !at || !strchr(perms, 'x'))
			continue;
		char *path = line + at;
		path[strcspn(path, "\n")] = '\0';
		attach_map_add(c, p, start, end - start, pgoff, path);
	}
	free(line);
	fclose(f);
}

void attach_maps_exec(struct attach_proc *p)
{
	for (size_t i = 0; i < p->nobjs; i++)
		p->objs[i]->unmapped = 1;
	attach_unwind_changed(p);
	/* Another program now: the file is named after it, and its
	   records, which follow, name its main executable. */
	char path[64], exe[PATH_MAX];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)p->pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	memcpy(p->exe, exe, (size_t)n + 1);
	const char *base = strrchr(p->exe, '/');
	snprintf(p->name, sizeof p->name, "%.255s", base ? base + 1 : p->exe);
}

/* The thread's own count of (object, counter), for its table entry. */
static void thread_pc(struct attach_thread *t, size_t obj, uint64_t index, int system)
{
	if (t->used * 2 >= t->npcs) {
		size_t n = t->npcs ? t->npcs * 2 : 256;
		struct attach_pc *v = calloc(n, sizeof *v);
		if (!v)
			return;	/* unplaced: in the thread's samples only */
		for (size_t i = 0; i < t->npcs; i++) {
			if (!t->pcs[i].key)
				continue;
			size_t k = (size_t)(t->pcs[i].key * UINT64_C(0x9e3779b97f4a7c15) >> 20) & (n - 1);
			while (v[k].key)
				k = (k + 1) & (n - 1);
			v[k] = t->pcs[i];
		}
		free(t->pcs);
		t->pcs = v;
		t->npcs = n;
	}
	uint64_t key = (uint64_t)(obj + 1) << 32 | index;
	size_t k = (size_t)(key * UINT64_C(0x9e3779b97f4a7c15) >> 20) & (t->npcs - 1);
	while (t->pcs[k].key && t->pcs[k].key != key)
		k = (k + 1) & (t->npcs - 1);
	if (!t->pcs[k].key) {
		t->pcs[k].key = key;
		t->used++;
	}
	if (t->pcs[k].count < UINT32_MAX)
		t->pcs[k].count++;
	if (system && t->pcs[k].system < UINT32_MAX)
		t->pcs[k].system++;
}

static int find(struct attach_proc *p, uint64_t pc, size_t *obj, uint64_t *index)
{
	if (p->last < p->nobjs) {
		struct attach_obj *o = p->objs[p->last];
		if (!o->unmapped && bins_index(pc, o->head.start, o->head.scale, o->head.ncounters, index)
		    && pc - o->head.start < o->head.length) {
			*obj = p->last;
			return 1;
		}
	}
	for (size_t i = p->nobjs; i-- > 0;) {
		struct attach_obj *o = p->objs[i];
		if (!o->unmapped && pc >= o->head.start && pc - o->head.start < o->head.length
		    && bins_index(pc, o->head.start, o->head.scale, o->head.ncounters, index)) {
			*obj = p->last = i;
			return 1;
		}
	}
	return 0;
}

int attach_count(struct attach_thread *t, uint64_t pc, int system)
{
	struct attach_proc *p = t->proc;
	size_t i;
	uint64_t index;
	if (!find(p, pc, &i, &index)) {
		p->outside++;
		p->rescan_maps = 1;
		if (system)
			p->system++;
		return 0;
	}
	struct attach_obj *o = p->objs[i];
	if (o->counts[index] == UINT32_MAX) {
		p->saturated++;
		p->system += !!system;
		return 0;
	}
	o->counts[index]++;
	p->counted++;
	t->samples++;
	if (system) {
		o->system[index]++;
		p->system++;
		t->system++;
	}
	thread_pc(t, i, index, system);
	return 1;
}

void attach_proc_free(struct attach_proc *p)
{
	for (size_t i = 0; i < p->nobjs; i++) {
		free(p->objs[i]->counts);
		free(p->objs[i]->system);
		free(p->objs[i]);
	}
	free(p->objs);
	for (size_t i = 0; i < p->nthreads; i++) {
		free(p->threads[i]->pcs);
		free(p->threads[i]);
	}
	free(p->threads);
	mstacks_free(&p->stacks);
	attach_unwind_free(p);
}
