/*
 * moncontrol.h - what the rest of the runtime tells the gmon runtime.
 */
#ifndef PROFIL_MONCONTROL_H
#define PROFIL_MONCONTROL_H

/* Before an exec: write the profile as it is (the image may not come back). */
void gmon_before_exec(void);

/* The calling thread ends (from threads.c). */
void gmon_thread_end(void);

#endif
