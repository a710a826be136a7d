/*
 * satadd.c - the fault table of satadd_x86_64.S and satadd_aarch64.S,
 * and a plain C version for machines without one (it counts just as well but cannot survive a
 * buffer unmapped under it).
 * Async-signal-safe and lock-free.
 */
#include "sinks/satadd.h"

#if defined(__x86_64__) || defined(__aarch64__)

extern const char satadd_fault_begin[], satadd_fault_end[];
extern const char satadd_fault_fixup[];

bool satadd_recovers(void)
{
	return true;
}

uintptr_t satadd_fixup(uintptr_t pc)
{
	if (pc >= (uintptr_t)satadd_fault_begin && pc < (uintptr_t)satadd_fault_end)
		return (uintptr_t)satadd_fault_fixup;
	return 0;
}

#else

bool satadd_recovers(void)
{
	return false;
}

uintptr_t satadd_fixup(uintptr_t pc)
{
	(void)pc;
	return 0;
}

int64_t satadd16(uint16_t *counter, uint32_t w)
{
	uint16_t old = __atomic_load_n(counter, __ATOMIC_RELAXED), new;
	do {
		uint32_t sum = (uint32_t)old + w;
		new = sum > 0xffff ? 0xffff : (uint16_t)sum;
	} while (!__atomic_compare_exchange_n(counter, &old, new, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return new - old;
}

int64_t satadd32(uint32_t *counter, uint32_t w)
{
	uint32_t old = __atomic_load_n(counter, __ATOMIC_RELAXED), new;
	do {
		uint64_t sum = (uint64_t)old + w;
		new = sum > 0xffffffffu ? 0xffffffffu : (uint32_t)sum;
	} while (!__atomic_compare_exchange_n(counter, &old, new, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return (int64_t)new - old;
}

int64_t satstore64(uint64_t *slot, uint64_t v)
{
	__atomic_store_n(slot, v, __ATOMIC_RELAXED);
	return 0;
}

int64_t satload64(const uint64_t *p, uint64_t *out)
{
	*out = __atomic_load_n(p, __ATOMIC_RELAXED);
	return 0;
}

int64_t satcas64(uint64_t *p, uint64_t expected, uint64_t desired)
{
	return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED);
}

int64_t satxadd64(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
	return 0;
}

#endif
