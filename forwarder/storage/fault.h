/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection (FWDIO_FAULT): rules that make the calls of sysio.c fail,
 * write short, write nothing or run slowly, so tests and benchmarks can
 * reach every storage error path without a broken disk. The grammar is
 * documented in include/fwdio.h ("Fault injection"):
 *
 *   FWDIO_FAULT="pwrite:eio:nth=3:rank=1;fdatasync:enospc:path=ckpt"
 *
 * fwdio_init reads the variable and installs the rules for its rank
 * (fwdioi_fault_configure); they stay in force, process-wide, until the next
 * fwdio_init. sysio.c asks fwdioi_fault_on_path / fwdioi_fault_on_fd before
 * each call, from any thread; the rules and their counters are kept under one
 * mutex, taken only while some rule is installed.
 *
 * Built with FWDIO_FAULT_INJECTION=0 (CMake option FWDIO_FAULT_INJECTION=OFF),
 * fwdioi_fault_armed() is a constant 0, so sysio.c calls the system directly,
 * and fwdioi_fault_configure refuses a set FWDIO_FAULT.
 */
#ifndef FWDIOI_FAULT_H
#define FWDIOI_FAULT_H

#include "storage/syscall.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#ifndef FWDIO_FAULT_INJECTION
#define FWDIO_FAULT_INJECTION 1
#endif

enum { FWDIOI_FAULT_MAX_RULES = 16, FWDIOI_FAULT_MAX_PATH = 256 };

typedef enum fwdioi_fault_kind {
    FWDIOI_FAULT_NONE = 0, /* do the call (after any delay) */
    FWDIOI_FAULT_ERROR,    /* fail with errno `err`, without doing the call */
    FWDIOI_FAULT_SHORT,    /* pwrite: write half the bytes asked (at least 1) */
    FWDIOI_FAULT_STALL,    /* pwrite: write nothing and return 0 */
    FWDIOI_FAULT_SLOW      /* a rule's effect only: sleep delay_ms, then do the call */
} fwdioi_fault_kind_t;

/** What to do to one call: the first firing rule's kind, after the delay of
 *  every firing slow rule. `rule` is that rule's 1-based index, or 0. */
typedef struct fwdioi_fault {
    fwdioi_fault_kind_t kind; /* NONE, ERROR, SHORT or STALL */
    int err;
    unsigned delay_ms;
    int rule;
} fwdioi_fault_t;

typedef struct fwdioi_fault_rule {
    fwdioi_syscall_t call;
    fwdioi_fault_kind_t kind;
    int err;                          /* FWDIOI_FAULT_ERROR */
    unsigned delay_ms;                /* FWDIOI_FAULT_SLOW */
    int rank;                         /* -1: every rank */
    uint64_t first, last;             /* fires on matching calls first..last (1-based); last 0: no end */
    char path[FWDIOI_FAULT_MAX_PATH]; /* "": any path, else a substring it must contain */
    uint64_t calls;                   /* matching calls so far */
} fwdioi_fault_rule_t;

typedef struct fwdioi_fault_rules {
    int rank; /* of this process, in the fwdio_init communicator */
    int n;
    fwdioi_fault_rule_t rule[FWDIOI_FAULT_MAX_RULES];
} fwdioi_fault_rules_t;

/**
 * Parse `spec` into `out` for a process of rank `rank`. NULL or blank: no
 * rules. Returns 0, or -1 with a one-line reason in `why`.
 */
int fwdioi_fault_parse(const char *spec, int rank, fwdioi_fault_rules_t *out, char *why,
                       size_t why_len);

/**
 * Count the call against every rule it matches (call, rank, and `path` or
 * `path2` containing the rule's path; NULL paths match only rules without
 * one) and say what to do. Does not sleep.
 */
fwdioi_fault_t fwdioi_fault_decide(fwdioi_fault_rules_t *rules, fwdioi_syscall_t call,
                                   const char *path, const char *path2);

/**
 * Install the rules of `spec` (the value of FWDIO_FAULT, may be NULL) for
 * `rank`, replacing the previous ones and their counters. FWDIO_OK, or
 * FWDIO_EINVAL with the reason on stderr (also when the build has no fault
 * injection and `spec` is set). fwdio_init's thread.
 */
int fwdioi_fault_configure(const char *spec, int rank);

extern atomic_int fwdioi_fault_installed;

/** Non-zero while rules are installed; the one check on the path of every call. */
static inline int fwdioi_fault_armed(void)
{
#if FWDIO_FAULT_INJECTION
    return atomic_load_explicit(&fwdioi_fault_installed, memory_order_relaxed);
#else
    return 0;
#endif
}

/**
 * The installed rules' verdict on `call` of `path` (and `path2`, the target of
 * a rename), after sleeping any delay. Logged at FWDIO_VERBOSE=2 when a rule
 * fires. Any thread.
 */
fwdioi_fault_t fwdioi_fault_on_path(fwdioi_syscall_t call, const char *path, const char *path2);

/** fwdioi_fault_on_path for a call on a descriptor, by the path it was opened
 *  with. For FWDIOI_CALL_CLOSE the descriptor is forgotten. */
fwdioi_fault_t fwdioi_fault_on_fd(fwdioi_syscall_t call, int fd);

/** Remember the path of a descriptor sysio opened while rules are installed
 *  (path rules match by it). */
void fwdioi_fault_fd_opened(int fd, const char *path);

#endif
