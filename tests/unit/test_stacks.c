/*
 * The command's model of call stacks (src/cli/stacks.c, stackviews.c),
 * from a stack table made here around this program's own functions:
 * pcs resolved to functions (return addresses at pc - 1), the same stack
 * in two slots added up, a recursive function counted once per stack in
 * its total, callers and callees with their samples, a stack not
 * complete ended by "[truncated]", the tree, a thread filter, and the
 * frame a signal interrupted looked up at its pc, not the byte before.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cli/model.h"
#include "../../src/cli/stacks.h"
#include "../../src/cli/symbols.h"
#include "../../src/format/profile.h"

/* The functions the made-up stacks pass through: main -> a -> c,
   main -> b -> c, main -> r -> r -> r. */
volatile int sink;
__attribute__((noinline)) void st_c(void) { for (int i = 0; i < 3; i++) sink += i; }
__attribute__((noinline)) void st_a(void) { for (int i = 0; i < 3; i++) sink += i; st_c(); }
__attribute__((noinline)) void st_b(void) { for (int i = 0; i < 5; i++) sink += i; st_c(); }
__attribute__((noinline)) void st_r(int n) { sink += n; if (n) st_r(n - 1); }
__attribute__((noinline)) void st_main(void) { st_a(); st_b(); st_r(2); }

struct text {
	uint64_t bias, vaddr, length;
};

static int main_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct text *t = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			*t = (struct text){ info->dlpi_addr, ph->p_vaddr, ph->p_memsz };
			return 1;
		}
	}
	return 0;
}

/* A return address into f: past a five-byte call at its start.  Not
   the byte after the start, which only a signal trampoline's unwind
   entry gives (stacks.c names that frame [signal handler called]). */
#define IN(f) ((uint64_t)(uintptr_t)(f) + 5)
#define AT(f) ((uint64_t)(uintptr_t)(f))

struct made {
	struct profile_header h;
	struct profile_segment seg;
	struct profile_seg_view view;
	struct profile_thread threads[2];
	struct profile_ext ext;
	struct profile_stack slots[8];
	uint64_t frames[64];
	struct profile p;
	struct profile_extent whole;
	struct model m;
	struct symbols *syms[2];
	struct stacks s;
	char path[PATH_MAX];
};

static void add_stack(struct made *x, size_t slot, uint32_t count, uint8_t stop,
		      const uint64_t *pcs, uint16_t depth)
{
	uint32_t at = (uint32_t)x->p.nframes;
	memcpy(x->frames + at, pcs, depth * sizeof *pcs);
	x->p.nframes += depth;
	x->slots[slot] = (struct profile_stack){ .hash = slot + 1, .count = count, .frames = at,
						  .entry = 1, .depth = depth, .stop = stop,
						  .ready = 1 };
	x->ext.stacks += count;
	x->ext.stop[stop]++;
}

/* signal: slot 7 holds a stack through a signal trampoline too. */
static void make_with(struct made *x, const struct thread_filter *filter, int signal)
{
	memset(x, 0, sizeof *x);
	struct text t = { 0, 0, 0 };
	assert_int_equal(dl_iterate_phdr(main_text, &t), 1);
	assert_non_null(realpath("/proc/self/exe", x->path));
	snprintf(x->seg.path, sizeof x->seg.path, "%.3000s", x->path);
	x->seg.bias = t.bias;
	x->seg.vaddr = t.vaddr;
	x->seg.length = t.length;
	x->view.head = &x->seg;
	snprintf(x->h.command, sizeof x->h.command, "test_stacks");
	x->h.pid = 1;
	x->threads[1] = (struct profile_thread){ .tid = 100, .owner = 1, .comm = "worker",
						 .samples = 82 };
	/* The "file" is this struct, data throughout (no holes), as
	   profile_open describes what it read. */
	x->p.map = x;
	x->p.map_size = sizeof *x;
	x->whole = (struct profile_extent){ 0, sizeof *x };
	x->p.extents = &x->whole;
	x->p.nextents = 1;
	x->p.header = &x->h;
	x->p.segs = &x->view;
	x->p.nsegs = 1;
	x->p.threads = x->threads;
	x->p.nthreads = 2;
	x->p.counted = 82;
	x->p.ext = &x->ext;
	x->p.stacks = x->slots;
	x->p.nstacks = 8;
	x->p.frames = x->frames;
	x->ext.stacks_at = 1;	/* stacks on */
	add_stack(x, 0, 30, PROFILE_STOP_COMPLETE, (uint64_t[]){ AT(st_c), IN(st_a), IN(st_main) }, 3);
	add_stack(x, 1, 10, PROFILE_STOP_COMPLETE, (uint64_t[]){ AT(st_c), IN(st_b), IN(st_main) }, 3);
	/* The same stack again, as two threads writing it at once leave it. */
	add_stack(x, 2, 3, PROFILE_STOP_COMPLETE, (uint64_t[]){ AT(st_c), IN(st_a), IN(st_main) }, 3);
	add_stack(x, 3, 5, PROFILE_STOP_COMPLETE,
		  (uint64_t[]){ AT(st_r), IN(st_r), IN(st_r), IN(st_main) }, 4);
	add_stack(x, 4, 2, PROFILE_STOP_NO_CFI, (uint64_t[]){ AT(st_c) }, 1);
	/* A pc in no segment: JIT or anonymous code. */
	add_stack(x, 5, 30, PROFILE_STOP_COMPLETE, (uint64_t[]){ 16, IN(st_main) }, 2);
	/* A slot not ready: skipped. */
	x->slots[6] = (struct profile_stack){ .hash = 7, .count = 99, .entry = 1, .depth = 1 };
	/* A handler (st_c) called by a signal that interrupted st_b at its
	   very first byte: the trampoline's frame is a return address at
	   the byte after a function's start (st_r's, standing for
	   __restore_rt), and the frame outside it the interrupted pc
	   itself, to be looked up where it is, not at the byte before. */
	if (signal)
		add_stack(x, 7, 4, PROFILE_STOP_COMPLETE,
			  (uint64_t[]){ AT(st_c), AT(st_r) + 1, AT(st_b), IN(st_main) }, 4);
	x->m.filter = filter;
	size_t objs[2];
	objs[0] = (size_t)(model_object(&x->m, x->path, NULL, 0, t.bias) - x->m.objects);
	objs[1] = SIZE_MAX;	/* no perf map */
	model_range(&x->m.objects[objs[0]], t.vaddr, t.length, 0);
	size_t rows = x->m.nthread_rows;
	model_add_threads(&x->m, &x->p, objs);
	stacks_add_file(&x->m, &x->p, objs, rows);
	model_finish(&x->m);
	char why[512];
	x->syms[0] = symbols_open(&x->m.objects[0], why, sizeof why);
	assert_non_null(x->syms[0]);
	stacks_build(&x->s, &x->m, x->syms);
}

static void make(struct made *x, const struct thread_filter *filter)
{
	make_with(x, filter, 0);
}

static void unmake(struct made *x)
{
	stacks_free(&x->s);
	symbols_close(x->syms[0]);
	model_free(&x->m);
}

static size_t func(const struct made *x, const char *name)
{
	const struct object *o = strcmp(name, STACK_TRUNCATED) == 0
						 || strcmp(name, MODEL_ANON_NAME) == 0
					 ? NULL : &x->m.objects[0];
	size_t f = stacks_func(&x->s, o, name);
	if (f == SIZE_MAX)
		fail_msg("no function %s in the stacks", name);
	return f;
}

static uint64_t edge(const struct stack_edge *e, size_t n, size_t f)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].func == f)
			return e[i].count;
	return 0;
}

static void test_model(void **state)
{
	(void)state;
	struct made *x = malloc(sizeof *x);
	make(x, NULL);
	assert_true(stacks_present(&x->m));
	assert_int_equal(x->m.stacks->files, 1);
	assert_int_equal(x->m.stacks->n, 6);	/* the slot not ready left out */
	assert_int_equal(x->m.stacks->samples, 80);
	assert_int_equal(x->m.stacks->recorded, 80);
	assert_int_equal(x->m.stacks->stop[PROFILE_STOP_NO_CFI], 1);
	/* Resolved: the two slots of main -> a -> c are one stack. */
	assert_int_equal(x->s.n, 5);
	assert_int_equal(x->s.samples, 80);
	assert_int_equal(x->s.v[0].count, 33);
	size_t c = func(x, "st_c"), a = func(x, "st_a"), b = func(x, "st_b"), r = func(x, "st_r");
	size_t mn = func(x, "st_main"), tr = func(x, STACK_TRUNCATED), jit = func(x, MODEL_ANON_NAME);
	assert_int_equal(x->s.v[0].depth, 3);
	assert_int_equal(x->s.v[0].funcs[0], mn);
	assert_int_equal(x->s.v[0].funcs[2], c);
	assert_int_equal(x->s.v[0].thread, 0);
	assert_int_equal(x->m.thread_rows[x->s.v[0].thread].tid, 100);

	uint64_t *total = calloc(x->s.nfuncs, sizeof *total), *self = calloc(x->s.nfuncs, sizeof *self);
	stacks_totals(&x->s, total, self);
	assert_int_equal(total[mn], 78);
	assert_int_equal(self[mn], 0);
	assert_int_equal(total[c], 45);
	assert_int_equal(self[c], 45);
	assert_int_equal(total[r], 5);	/* once per stack, not 15 */
	assert_int_equal(self[r], 5);
	assert_int_equal(total[tr], 2);
	assert_int_equal(total[jit], 30);
	free(total);
	free(self);

	struct stack_edge *e;
	size_t n = stacks_callers(&x->s, c, &e);
	assert_int_equal(n, 3);
	assert_int_equal(e[0].func, a);
	assert_int_equal(e[0].count, 33);
	assert_int_equal(edge(e, n, b), 10);
	assert_int_equal(edge(e, n, tr), 2);
	free(e);
	n = stacks_callers(&x->s, mn, &e);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].func, STACK_ROOT);
	assert_int_equal(e[0].count, 78);
	free(e);
	n = stacks_callers(&x->s, r, &e);	/* itself, and main */
	assert_int_equal(edge(e, n, r), 5);
	assert_int_equal(edge(e, n, mn), 5);
	free(e);
	n = stacks_callees(&x->s, mn, &e);
	assert_int_equal(n, 4);
	assert_int_equal(edge(e, n, a), 33);
	assert_int_equal(edge(e, n, jit), 30);
	assert_int_equal(edge(e, n, b), 10);
	assert_int_equal(edge(e, n, r), 5);
	free(e);
	n = stacks_callees(&x->s, c, &e);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].func, STACK_SELF);
	assert_int_equal(e[0].count, 45);
	free(e);

	struct stack_tree t;
	stacks_tree(&x->s, STACK_ALL_THREADS, 0, &t);
	assert_int_equal(t.v[0].total, 80);
	size_t top = t.v[0].child;	/* main, the hottest root */
	assert_int_equal(t.v[top].func, mn);
	assert_int_equal(t.v[top].total, 78);
	size_t k = t.v[top].child;	/* main's callees, hottest first */
	assert_int_equal(t.v[k].func, a);
	assert_int_equal(t.v[k].total, 33);
	k = t.v[k].next;
	assert_int_equal(t.v[k].func, jit);
	assert_int_equal(t.v[k].self, 30);
	assert_int_equal(t.v[t.v[top].next].func, tr);
	stack_tree_free(&t);
	/* Inverted: c's callers under c. */
	stacks_tree(&x->s, STACK_ALL_THREADS, 1, &t);
	top = t.v[0].child;
	assert_int_equal(t.v[top].func, c);
	assert_int_equal(t.v[top].total, 45);
	assert_int_equal(t.v[t.v[top].child].func, a);
	stack_tree_free(&t);
	unmake(x);
	free(x);
}

static void test_filter(void **state)
{
	(void)state;
	struct made *x = malloc(sizeof *x);
	int32_t keep = 100, other = 5;
	struct thread_filter f = { &keep, 1, NULL };
	make(x, &f);
	assert_int_equal(x->s.samples, 80);
	unmake(x);
	f.tids = &other;
	make(x, &f);
	assert_int_equal(x->s.n, 0);
	assert_int_equal(x->m.stacks->files, 1);	/* stacks on, none kept */
	unmake(x);
	free(x);
}

/* The frame a signal interrupted is its function's, even at its first
   byte: st_main -> st_b -> [signal handler called] -> st_c. */
static void test_signal_frame(void **state)
{
	(void)state;
	struct made *x = malloc(sizeof *x);
	make_with(x, NULL, 1);
	size_t c = func(x, "st_c"), b = func(x, "st_b"), mn = func(x, "st_main");
	size_t sig = func(x, STACK_SIGNAL_NAME);
	int found = 0;
	for (size_t i = 0; i < x->s.n; i++) {
		const struct stack *k = &x->s.v[i];
		if (k->depth == 4 && k->funcs[2] == sig) {
			assert_int_equal(k->funcs[0], mn);
			assert_int_equal(k->funcs[1], b);
			assert_int_equal(k->funcs[3], c);
			assert_int_equal(k->count, 4);
			found = 1;
		}
	}
	assert_true(found);
	const struct stack_loc *locs = &x->m.stacks->locs[x->m.stacks->v[x->m.stacks->n - 1].locs];
	assert_true(stacks_exact_pc(&x->m, x->syms, locs, 0));
	assert_false(stacks_exact_pc(&x->m, x->syms, locs, 1));
	assert_true(stacks_exact_pc(&x->m, x->syms, locs, 2));
	assert_false(stacks_exact_pc(&x->m, x->syms, locs, 3));
	unmake(x);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_signal_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
