/*
 * gmon_layout.h - the layout of the arc tables, shared by gmon_arcs.c
 * and the assembly fast path of mcount (mcount_x86_64.S), which walks
 * them directly.  gmon_arcs.c checks these against its structures.
 */
#ifndef PROFIL_GMON_LAYOUT_H
#define PROFIL_GMON_LAYOUT_H

/* struct arc */
#define ARC_FROM 0
#define ARC_SELF 8
#define ARC_COUNT 16
#define ARC_NEXT 24

/* struct table */
#define TABLE_MASK 16
#define TABLE_BUCKETS 32

/*
 * The bucket of an arc: ((from << 16 ^ self) * M >> 32) & mask, with M
 * the sign-extended 32-bit multiplier (an imul immediate on x86-64).
 */
#define ARC_HASH_IMM (-1640531535)	/* 0x9e3779b1 */

#endif
