/*
 * fds.h - the descriptors libprofil holds stay out of the program's way.
 */
#ifndef PROFIL_FDS_H
#define PROFIL_FDS_H

/*
 * fd if libprofil may hold it for a while, else -1 with errno EMFILE
 * (fd closed): it lies in the top quarter of the soft RLIMIT_NOFILE,
 * which is left to the program.  A negative fd is returned as it is.
 */
int fds_keep(int fd);

/* May libprofil hold fd for a while?  (fds_keep without the close.) */
int fds_may_keep(int fd);

#endif
