/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging: silent unless FWDIO_VERBOSE asks (1 = warnings, 2 = info, 3 = debug). */
#ifndef FWDIOI_LOG_H
#define FWDIOI_LOG_H

enum { FWDIOI_LOG_WARN = 1, FWDIOI_LOG_INFO = 2, FWDIOI_LOG_DEBUG = 3 };

int fwdioi_log_level(void);
void fwdioi_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** An MPI call that failed where nothing else can be done about it (freeing
 *  a handle): logged at warning level, with its error string. */
void fwdioi_log_mpi_failure(int mpi_rc, const char *call);
/** A configuration error the user must see: always printed, once per call
 *  (unless the calling thread holds its reports). */
void fwdioi_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Hold the calling thread's reports back until fwdioi_report_release: used by
 * fwdio_init, where the ranks first agree whether the settings are good and
 * then only the lowest rank that refused them says why.
 */
void fwdioi_report_hold(void);
/** Stop holding: print what was held (`print` non-zero) or drop it. */
void fwdioi_report_release(int print);

#endif
