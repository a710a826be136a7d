/*
 * rates.h - the fastest sampling rate each backend is given here.
 *
 * Shared by the runtime, which lowers a rate above its backend's limit
 * as it starts, and by profil run, which refuses such a -F before it
 * runs anything.  Async-signal-safe (open, read, close through syscall;
 * no allocation), though nothing calls it from a handler.
 */
#ifndef PROFIL_RATES_H
#define PROFIL_RATES_H

/*
 * The perf backend above this rate costs the program more than it
 * measures, and the cost feeds itself: a task-clock event counts the
 * time its own interrupts and our drains take, so at a cost of c per
 * sample a rate F takes 1/(1 - c F) times the program's CPU.  Measured
 * on the project's 2-core virtual machine at load 4-5 (gzip -9 on 8 MB,
 * 0.42 s bare, profil run's CPU with stacks; research/sampling-cost.md
 * has the quiet figures, 4.4% at 10 kHz): 0.45 s at 1 kHz, 0.54-0.80 s
 * at 10 kHz, 0.9-1.5 s at 20 kHz, 24 s at 50 kHz, and at 100 kHz no
 * end in 10 minutes.  10 kHz keeps a loaded machine's cost under about
 * a third and five times away from the runaway.
 */
#define RATE_PERF_DELIVERS 10000u

/* kernel.perf_event_max_sample_rate: a period event faster than it is
   throttled.  0 if it cannot be read. */
unsigned rate_kernel_max(void);

/* The perf backend's limit here: the lower of the two. */
unsigned rate_perf_max(void);

#endif
