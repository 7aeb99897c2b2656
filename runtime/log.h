/* Logging: silent unless FWDIO_VERBOSE asks (1 = warnings, 2 = info, 3 = debug). */
#ifndef FWDIOI_LOG_H
#define FWDIOI_LOG_H

enum { FWDIOI_LOG_WARN = 1, FWDIOI_LOG_INFO = 2, FWDIOI_LOG_DEBUG = 3 };

int fwdioi_log_level(void);
void fwdioi_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** A configuration error the user must see: always printed, once per call. */
void fwdioi_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
