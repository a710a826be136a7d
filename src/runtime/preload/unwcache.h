/*
 * unwcache.h - unwind tables kept in the run's directory, so that each
 * object's table is built once per run rather than once per process.
 */
#ifndef PROFIL_UNWCACHE_H
#define PROFIL_UNWCACHE_H

#include <link.h>
#include <stdint.h>

/* Where the tables go, inside PROFIL_RUN_DIR (profil run removes it). */
#define UNWCACHE_DIR ".unwind"

/* Hand table.c the cache when PROFIL_RUN_DIR names the run's directory. */
void unwcache_start(void);

/* The object's GNU build ID (preload.c), *len 0 if it has none. */
void object_build_id(const struct dl_phdr_info *info, uint8_t id[64], uint32_t *len);

#endif
