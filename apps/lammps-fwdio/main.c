/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lammps-fwdio: LAMMPS's Lennard-Jones melt driven through the LAMMPS C
 * library, with its snapshots forwarded through fwdio from a fix external
 * callback into LAMMPS's own `dump custom` text format (byte for byte) and a
 * binary layout; optionally beside LAMMPS's own dump custom and dump
 * custom/mpiio of the same run, and timed. See README.md in this directory.
 *
 *   mpirun -np 8 lammps-fwdio --atoms N --steps S --every K --dump PATH
 *                             [--binary PATH] [--native PATH] [--mpiio PATH]
 */
#define _POSIX_C_SOURCE 200809L

#include "app_util.h"
#include "dump_binary.h"
#include "dump_text.h"
#include "forward.h"
#include "fwdio.h"
#include "melt.h"
#include "options.h"
#include "outputs.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The fwdio files: the two dumps and the idle reference (an empty file kept
 * open through the run: fwdio running, nothing written). */
enum { OUT_TEXT, OUT_BINARY, OUT_IDLE, N_OUTPUTS };

/* Everything a run measures; printed by rank 0. */
typedef struct run_times {
    double run;      /* the LAMMPS `run` command */
    double close;    /* closing the dumps and waiting for the fwdio files */
    double total;    /* time to solution: both, between two barriers */
    double callback; /* inside the forwarding callback, the most of any rank */
    double cpu;      /* CPU seconds of every rank's process so far (all threads), summed */
    double drain;    /* with --local-dir: from the end of `total` until every fwdio dump
                        is drained to its path (0 without) */
} run_times_t;

static size_t text_header_len(int64_t step, const void *arg)
{
    const lfw_melt_t *m = arg;
    return lfw_text_header(NULL, 0, step, m->natoms, &m->box);
}

static size_t binary_header_len(int64_t step, const void *arg)
{
    (void)step;
    (void)arg;
    return LFW_BIN_HEADER_SIZE;
}

/* Collective: 1 if any rank passes a non-zero value. */
static int any_rank(int value)
{
    int any = 0;
    MPI_Allreduce(&value, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

/* Rank 0 checks what it can before LAMMPS starts (LAMMPS aborts the job on a
 * bad dump path, with its message only in its screen/log output). */
static int check_paths(const lfw_options_t *o, int rank)
{
    const char *all[] = {o->native, o->mpiio, o->dump, o->binary, o->idle};
    const char *names[] = {"--native", "--mpiio", "--dump", "--binary", "--idle"};
    int bad = 0;
    for (int i = 0; i < 5 && rank == 0; i++) {
        if (!all[i])
            continue;
        if (!*all[i]) {
            fprintf(stderr, "lammps-fwdio: %s: empty path\n", names[i]);
            bad = 1;
        }
        for (int j = 0; j < i; j++)
            if (all[j] && !strcmp(all[i], all[j])) {
                fprintf(stderr, "lammps-fwdio: %s and %s name the same file %s\n", names[j],
                        names[i], all[i]);
                bad = 1;
            }
    }
    for (int i = 0; i < 2 && rank == 0; i++) { /* the LAMMPS dumps */
        if (!all[i] || !*all[i])
            continue;
        const char *problem = lfw_melt_dump_path_problem(all[i]);
        int fd = problem ? -1 : open(all[i], O_WRONLY | O_CREAT, 0644);
        if (problem || fd < 0) {
            fprintf(stderr, "lammps-fwdio: %s %s: %s\n", names[i], all[i],
                    problem ? problem : strerror(errno));
            bad = 1;
        } else {
            close(fd);
        }
    }
    return any_rank(bad) ? -1 : 0;
}

/* Print the forwarding problem of the lowest rank that had one (the others
 * are mostly the same one seen elsewhere); 0 if no rank had any. */
static int report_forwarding(const lfw_forward_t *fw, int rank, int nranks)
{
    int mine = fw->failed ? rank : nranks, first = nranks;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == rank)
        fprintf(stderr, "lammps-fwdio: rank %d: forwarding stopped: %s\n", rank, fw->error);
    return first < nranks ? -1 : 0;
}

static void print_report(const lfw_options_t *o, const lfw_melt_t *m, const lfw_text_format_t *fmt,
                         const lfw_output_t *out, const run_times_t *t, uint64_t write_calls,
                         int nranks, int ok)
{
    int64_t snapshots = o->steps / o->every + 1;
    printf("lammps-fwdio: melt of %" PRId64 " atoms (%d^3 fcc cells), %" PRId64
           " steps on %d ranks, a snapshot every %" PRId64 " steps (%" PRId64 " snapshots)\n",
           m->natoms, m->cells, o->steps, nranks, o->every, snapshots);
    if (o->lammps_format)
        printf("lammps-fwdio: text format: LAMMPS's default (\"%%d %%d %%g %%g %%g\", unsorted)%s%s\n",
               o->delete_at ? ", atoms deleted after the first part of the run" : "",
               o->append ? ", appended to the existing dumps" : "");
    else
        printf("lammps-fwdio: text format \"%s\", %zu bytes per atom line\n", fmt->line,
               fmt->line_len);
    for (int i = 0; i < OUT_IDLE; i++) {
        struct stat st;
        if (out[i].path && out[i].stream && stat(out[i].path, &st) == 0)
            printf("lammps-fwdio: fwdio %s %s (a stream, LAMMPS's own format): %lld bytes\n",
                   out[i].what, out[i].path, (long long)st.st_size);
        else if (out[i].path)
            printf("lammps-fwdio: fwdio %s %s: %" PRIu64 " bytes\n", out[i].what, out[i].path,
                   out[i].size);
    }
    if (o->idle)
        printf("lammps-fwdio: fwdio running, the empty file %s open through the run\n", o->idle);
    if (o->native)
        printf("lammps-fwdio: LAMMPS dump custom %s\n", o->native);
    if (o->mpiio)
        printf("lammps-fwdio: LAMMPS dump custom/mpiio %s\n", o->mpiio);
    printf("lammps-fwdio: time to solution %.3f s (run %.3f s, closing outputs %.3f s)",
           t->total, t->run, t->close);
    if (o->local_dir)
        printf("; drained to their paths %.3f s later", t->drain);
    if (out[OUT_TEXT].path || out[OUT_BINARY].path)
        printf("; in the fwdio callback at most %.3f s per rank, %" PRIu64
               " fwdio_write calls in all",
               t->callback, write_calls);
    printf("\n");
    if (!ok) {
        printf("lammps-fwdio: FAILED: the outputs are not whole (see the messages above)\n");
        fflush(stdout);
        return;
    }
    /* One line of key=value pairs for scripts (bench/lammps_compare). */
    printf("lammps-fwdio-result: atoms=%" PRId64 " steps=%" PRId64 " every=%" PRId64
           " ranks=%d fwdio_text=%d fwdio_binary=%d fwdio_idle=%d native=%d mpiio=%d"
           " time_to_solution=%.6f run=%.6f close=%.6f callback_max=%.6f cpu_ranks=%.6f"
           " drain=%.6f\n",
           m->natoms, o->steps, o->every, nranks, out[OUT_TEXT].path != NULL,
           out[OUT_BINARY].path != NULL, o->idle != NULL, o->native != NULL, o->mpiio != NULL,
           t->total, t->run,
           t->close, t->callback, t->cpu, t->drain);
    fflush(stdout);
}

/* fwdio_init and the layout and size of each fwdio file; 0, or -1 on every
 * rank (message from rank 0). */
static int start_fwdio(const lfw_options_t *o, const lfw_melt_t *melt, const lfw_text_format_t *fmt,
                       lfw_output_t *out, fwdio_runtime_t **rt, int rank)
{
    int frc = fwdio_init(MPI_COMM_WORLD, NULL, rt);
    if (frc != FWDIO_OK) {
        if (rank == 0)
            fprintf(stderr, "lammps-fwdio: fwdio_init: %s\n", fwdio_strerror(frc));
        *rt = NULL;
        return -1;
    }
    int bad = 0;
    if (o->dump && o->lammps_format) { /* a stream; --append keeps what is there */
        out[OUT_TEXT].stream = 1;
        unsigned long long keep = 0;
        struct stat st;
        if (o->append && rank == 0 && stat(o->dump, &st) == 0)
            keep = (unsigned long long)st.st_size;
        MPI_Bcast(&keep, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        out[OUT_TEXT].append_start = keep;
    } else if (o->dump)
        bad |= lfw_layout_init(&out[OUT_TEXT].layout, o->steps, o->every, melt->natoms,
                               fmt->line_len, text_header_len, melt);
    if (o->binary)
        bad |= lfw_layout_init(&out[OUT_BINARY].layout, o->steps, o->every, melt->natoms,
                               LFW_BIN_RECORD_SIZE, binary_header_len, NULL);
    if (any_rank(bad != 0)) {
        if (rank == 0)
            fprintf(stderr, "lammps-fwdio: out of memory laying out the dumps\n");
        return -1;
    }
    for (int i = 0; i < OUT_IDLE; i++)
        if (out[i].path && !out[i].stream)
            out[i].size = lfw_layout_size(&out[i].layout);
    return 0;
}

/* Set up, run and time one melt with the outputs the options ask for. */
static int run_melt(const lfw_options_t *o, int rank, int nranks)
{
    lfw_melt_t melt;
    lfw_text_format_t fmt;
    lfw_output_t out[N_OUTPUTS] = {{.what = "text dump", .path = o->dump},
                                   {.what = "binary dump", .path = o->binary},
                                   {.what = "idle reference file", .path = o->idle}};
    lfw_forward_t fw = {.rank = rank};
    fwdio_runtime_t *rt = NULL;
    run_times_t t = {0};
    int forwarding = o->dump || o->binary;
    int use_fwdio = forwarding || o->idle;
    int rc = -1;

    if (lfw_melt_open(&melt, MPI_COMM_WORLD, o))
        goto done;
    if (lfw_text_format_init(&fmt, melt.natoms, melt.ntypes, &melt.box, o->precision)) {
        if (rank == 0)
            fprintf(stderr, "lammps-fwdio: no text format for %" PRId64 " atoms in this box\n",
                    melt.natoms);
        goto done;
    }
    /* LAMMPS's dumps in the text dump's format: the fixed format line, or
     * LAMMPS's own default */
    const char *line = o->lammps_format ? NULL : fmt.line;
    if ((o->native &&
         lfw_melt_add_dump(&melt, "native", "custom", o->every, o->native, line, o->append)) ||
        (o->mpiio &&
         lfw_melt_add_dump(&melt, "mpiio", "custom/mpiio", o->every, o->mpiio, line, o->append)))
        goto done;

    if (use_fwdio && start_fwdio(o, &melt, &fmt, out, &rt, rank))
        goto done;
    if (forwarding) {
        fw = (lfw_forward_t){.lmp = melt.lmp, .rank = rank, .natoms = melt.natoms,
                             .ntypes = melt.ntypes, .box = melt.box, .fmt = &fmt,
                             .text = {.layout = &out[OUT_TEXT].layout},
                             .binary = {.layout = &out[OUT_BINARY].layout},
                             .lammps_format = o->lammps_format, .last_step = -1};
        app_lent_pool_init(&fw.bufs, rt);
        lfw_melt_add_callback(&melt, "fwdio", o->every, lfw_forward_callback, &fw);
    }

    app_quiet_barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int open_failed = 0;
    out[OUT_TEXT].local_dir = out[OUT_BINARY].local_dir = o->local_dir;
    for (int i = 0; i < N_OUTPUTS; i++)
        if (out[i].path && lfw_output_open(&out[i], rt, o->writers, rank) != FWDIO_OK)
            open_failed = 1;
    fw.text.file = out[OUT_TEXT].file;
    fw.binary.file = out[OUT_BINARY].file;
    if (open_failed) /* a bad argument, the same on every rank: nothing was started */
        goto done;

    if (o->delete_at) { /* the atom count drops part way */
        lfw_melt_run(&melt, o->delete_at);
        lfw_melt_delete_sphere(&melt);
        lfw_melt_run(&melt, o->steps - o->delete_at);
    } else {
        lfw_melt_run(&melt, o->steps);
    }
    double t1 = MPI_Wtime();
    if (o->native)
        lfw_melt_remove_dump(&melt, "native");
    if (o->mpiio)
        lfw_melt_remove_dump(&melt, "mpiio");
    for (int i = 0; i < N_OUTPUTS; i++)
        if (out[i].file)
            lfw_output_close(&out[i]);
    int bad_output = 0;
    for (int i = 0; i < N_OUTPUTS; i++)
        if (out[i].file && lfw_output_wait(&out[i], MPI_COMM_WORLD, rank))
            bad_output = 1;
    app_quiet_barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    /* With the node-local tier, complete means in the nodes' stores: the
     * dumps reach their paths when drained, which the run does not wait
     * for (fwdio_finalize does); timed apart. */
    double drain = 0;
    if (o->local_dir) {
        for (int i = 0; i < N_OUTPUTS; i++)
            if (out[i].file && !bad_output && fwdio_drain_wait(out[i].file) != FWDIO_OK) {
                if (rank == 0)
                    fprintf(stderr, "lammps-fwdio: %s %s: drain failed: %s\n", out[i].what,
                            out[i].path, fwdio_file_error(out[i].file));
                bad_output = 1;
            }
        app_quiet_barrier(MPI_COMM_WORLD);
        drain = MPI_Wtime() - t2;
    }

    t = (run_times_t){.run = t1 - t0, .close = t2 - t1, .total = t2 - t0, .drain = drain};
    MPI_Reduce(&fw.seconds, &t.callback, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    unsigned long long calls = fw.write_calls, all_calls = 0;
    MPI_Reduce(&calls, &all_calls, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    /* Each rank's own count: under an rsh agent Open MPI's daemons detach
     * from mpirun, whose getrusage(RUSAGE_CHILDREN) then misses the ranks. */
    double cpu = app_process_cpu_s();
    MPI_Reduce(&cpu, &t.cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    int bad_forwarding = report_forwarding(&fw, rank, nranks);
    rc = bad_output || bad_forwarding ? -1 : 0;
    if (rank == 0)
        print_report(o, &melt, &fmt, out, &t, all_calls, nranks, rc == 0);

done:
    for (int i = 0; i < N_OUTPUTS; i++)
        lfw_output_free(&out[i]);
    lfw_forward_free(&fw);
    lfw_melt_close(&melt);
    if (rt)
        fwdio_finalize(rt);
    return rc;
}

int main(int argc, char **argv)
{
    int provided, rank, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    lfw_options_t o;
    int parsed = lfw_options_parse(argc, argv, &o, rank == 0);
    int rc = parsed < 0 ? 2 : 0;
    if (parsed == 0) {
        if (check_paths(&o, rank))
            rc = 2;
        else
            rc = run_melt(&o, rank, nranks) ? 1 : 0;
    }
    MPI_Finalize();
    return rc;
}
