/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdlj: a Lennard-Jones molecular-dynamics code (velocity Verlet, cell lists,
 * spatial decomposition with atom migration, periodic cubic box) that writes
 * a DCD trajectory frame every K steps and a checkpoint every C steps without
 * stopping, through fwdio, MPI-IO collectives or rank 0, and reports what the
 * output cost. Deterministic for a given seed and rank count; --restart
 * continues from the newest valid checkpoint (read through fwdio with
 * --output fwdio) on any number of ranks: on the rank count that wrote it,
 * it reproduces an uninterrupted run bit for bit; on another, it starts from
 * exactly the checkpoint's state and continues physically (forces summed in
 * another order).
 *
 *   mpirun -np 8 mdlj --atoms 50000 --steps 200 --every 10 --output fwdio \
 *       --dcd run.dcd --checkpoint run.ckpt [--restart] [--seed X] [--verify]
 */
#include "atoms.h"
#include "ckpt_format.h"
#include "domain.h"
#include "exchange.h"
#include "force.h"
#include "lattice.h"
#include "options.h"
#include "output.h"
#include "restart.h"
#include "dcd.h"

#include "app_util.h"
#include "fwdio.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Everything one rank simulates. */
struct sim {
    md_domain_t dom;
    md_atoms_t atoms;
    md_exchange_t ex;
    md_cells_t cells;
    int64_t natoms;
    int64_t step;
    double potential; /* this rank's share, from the last force computation */
};

static void die(const char *fmt, const char *arg)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        fprintf(stderr, "mdlj: ");
        fprintf(stderr, fmt, arg);
        fputc('\n', stderr);
    }
    MPI_Finalize();
    exit(2);
}

/*
 * Rank 0: can checkpoints be created next to `base`? Each checkpoint would
 * otherwise fail on its own, after the steps before it were computed.
 */
static int checkpoint_dir_writable(const char *base)
{
    char dir[4096];
    const char *slash = strrchr(base, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == base ? 1 : (int)(slash - base), base);
    if (access(dir, W_OK | X_OK) == 0)
        return 1;
    fprintf(stderr, "mdlj: cannot create checkpoints in %s: %s\n", dir, strerror(errno));
    return 0;
}

/* Ghosts and forces for the current positions. */
static void compute_forces(struct sim *s)
{
    exchange_ghosts(&s->dom, &s->ex, &s->atoms);
    s->potential = force_compute(&s->cells, &s->dom, &s->atoms);
    if (isnan(s->potential)) {
        fprintf(stderr, "mdlj: rank %d: out of memory for the cell lists\n", s->dom.rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* One velocity-Verlet step. */
static void step_once(struct sim *s, double dt)
{
    md_atoms_t *a = &s->atoms;
    for (size_t i = 0; i < 3 * a->n; i++) {
        a->v[i] += 0.5 * dt * a->f[i];
        a->x[i] += dt * a->v[i];
    }
    exchange_migrate(&s->dom, &s->ex, a);
    compute_forces(s);
    for (size_t i = 0; i < 3 * a->n; i++)
        a->v[i] += 0.5 * dt * a->f[i];
    s->step++;
}

struct energies {
    double kinetic, potential, temperature; /* per atom, per atom, reduced */
};

/* Collective: energies per atom; ends the job if atoms were lost. */
static struct energies measure(const struct sim *s)
{
    double local[3] = {0.0, s->potential, (double)s->atoms.n}, total[3];
    for (size_t i = 0; i < 3 * s->atoms.n; i++)
        local[0] += 0.5 * s->atoms.v[i] * s->atoms.v[i];
    MPI_Allreduce(local, total, 3, MPI_DOUBLE, MPI_SUM, s->dom.cart);
    if ((int64_t)total[2] != s->natoms) {
        if (s->dom.rank == 0)
            fprintf(stderr, "mdlj: step %" PRId64 ": %.0f atoms, expected %" PRId64 "\n", s->step,
                    total[2], s->natoms);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double n = (double)s->natoms;
    double dof = s->natoms > 1 ? 3.0 * (n - 1.0) : 3.0;
    return (struct energies){total[0] / n, total[1] / n, 2.0 * total[0] / dof};
}

static void print_thermo(const struct sim *s, struct energies e, int header)
{
    if (s->dom.rank != 0)
        return;
    if (header)
        printf("%10s %12s %14s %14s %14s\n", "step", "temperature", "potential/N", "kinetic/N",
               "total/N");
    printf("%10" PRId64 " %12.6f %14.8f %14.8f %14.8f\n", s->step, e.temperature, e.potential,
           e.kinetic, e.potential + e.kinetic);
    fflush(stdout);
}

static md_snapshot_t snapshot_of(const struct sim *s)
{
    return (md_snapshot_t){.step = s->step, .n = s->atoms.n, .id = s->atoms.id,
                           .x = s->atoms.x, .v = s->atoms.v};
}

/* die() once fwdio runs: its threads must stop before MPI does. */
static void die_rt(fwdio_runtime_t *rt, const char *fmt, const char *arg)
{
    if (rt)
        fwdio_finalize(rt);
    die(fmt, arg);
}

/* The initial state: a restart's checkpoint (of step max_step at most; read
 * through `rt` when not NULL; *load_time: seconds finding and loading it on
 * this rank), or a fresh lattice. Returns the box side. */
static double set_up(struct sim *s, const md_options_t *opt, fwdio_runtime_t *rt,
                     int64_t max_step, md_restart_t *resumed, double *load_time)
{
    double box, t0 = MPI_Wtime();
    *load_time = 0.0;
    if (opt->restart) {
        if (restart_find(MPI_COMM_WORLD, rt, opt->writers, opt->checkpoint_path, max_step,
                         resumed) != 0)
            die_rt(rt, "%s", "cannot restart");
        if (opt->atoms_given && resumed->info.natoms != opt->atoms) {
            restart_free(resumed);
            die_rt(rt, "%s", "--atoms differs from the checkpoint's atom count");
        }
        s->natoms = resumed->info.natoms;
        s->step = resumed->info.step;
        box = resumed->info.box;
        *load_time = MPI_Wtime() - t0;
    } else {
        s->natoms = opt->atoms;
        s->step = 0;
        box = lattice_box_side(opt->atoms, opt->density);
    }
    if (domain_create(MPI_COMM_WORLD, box, opt->cutoff, &s->dom) != 0) {
        restart_free(resumed);
        if (rt)
            fwdio_finalize(rt);
        MPI_Finalize();
        exit(2);
    }
    if (cells_init(&s->cells, &s->dom) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (opt->restart) {
        t0 = MPI_Wtime();
        if (restart_load(&s->dom, resumed, &s->atoms) != 0)
            die_rt(rt, "%s", "cannot load the checkpoint");
        *load_time += MPI_Wtime() - t0;
    } else {
        md_lattice_t lat;
        if (lattice_create(&lat, opt->atoms, opt->density) != 0 ||
            lattice_fill(&lat, opt->seed, opt->temperature, &s->dom, &s->atoms) != 0) {
            fprintf(stderr, "mdlj: out of memory building the lattice\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        lattice_destroy(&lat);
    }
    compute_forces(s);
    return box;
}

struct run_report {
    double time_max;      /* time to solution: first step to output complete, slowest rank */
    double blocked_max, blocked_mean, final_wait_max;
    double ckpt_local_max, ckpt_copy_max; /* local-copy: seconds over all checkpoints, slowest rank */
    uint64_t frame_calls_max, frame_calls_total, ckpt_calls_max, ckpt_calls_total;
    uint64_t frame_msgs_max, frame_msgs_total, ckpt_msgs_max, ckpt_msgs_total;
    double cpu_sum; /* CPU seconds of every rank's process so far (all its threads), summed */
};

static struct run_report summarise(MPI_Comm comm, double elapsed, const md_output_report_t *rep)
{
    int nranks;
    MPI_Comm_size(comm, &nranks);
    struct run_report r;
    double dmax[5] = {elapsed, rep->blocked, rep->final_wait, rep->ckpt_local, rep->ckpt_copy};
    double dmax_out[5];
    MPI_Allreduce(dmax, dmax_out, 5, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&rep->blocked, &r.blocked_mean, 1, MPI_DOUBLE, MPI_SUM, comm);
    r.time_max = dmax_out[0];
    r.blocked_max = dmax_out[1];
    r.final_wait_max = dmax_out[2];
    r.ckpt_local_max = dmax_out[3];
    r.ckpt_copy_max = dmax_out[4];
    r.blocked_mean /= nranks;
    uint64_t counts[4] = {rep->frame_extents, rep->ckpt_extents, rep->frame_messages,
                          rep->ckpt_messages};
    uint64_t cmax[4], csum[4];
    MPI_Allreduce(counts, cmax, 4, MPI_UINT64_T, MPI_MAX, comm);
    MPI_Allreduce(counts, csum, 4, MPI_UINT64_T, MPI_SUM, comm);
    r.frame_calls_max = cmax[0];
    r.frame_calls_total = csum[0];
    r.ckpt_calls_max = cmax[1];
    r.ckpt_calls_total = csum[1];
    r.frame_msgs_max = cmax[2];
    r.frame_msgs_total = csum[2];
    r.ckpt_msgs_max = cmax[3];
    r.ckpt_msgs_total = csum[3];
    /* Each rank's own count: a launcher that does not reap the ranks (Open
     * MPI's daemons under an rsh agent detach from mpirun) cannot report
     * their CPU through getrusage(RUSAGE_CHILDREN), so mdlj_compare adds this. */
    double cpu = app_process_cpu_s();
    MPI_Allreduce(&cpu, &r.cpu_sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    return r;
}

static double per(uint64_t v, int64_t n)
{
    return n > 0 ? (double)v / (double)n : 0.0;
}

static void print_report(const md_options_t *opt, int nranks, int64_t natoms, int64_t steps,
                         struct energies e0, struct energies e1, const struct run_report *r,
                         const md_output_report_t *rep)
{
    double before = e0.kinetic + e0.potential, after = e1.kinetic + e1.potential;
    printf("mdlj: total energy per atom %.8f -> %.8f (relative change %.2e)\n", before, after,
           before != 0.0 ? (after - before) / fabs(before) : 0.0);
    printf("mdlj: time to solution %.3f s (%" PRId64 " steps); output calls blocked a rank "
           "%.3f s at most, %.3f s on average (%.1f%% of the time), final wait %.3f s\n",
           r->time_max, steps, r->blocked_max, r->blocked_mean,
           r->time_max > 0 ? 100.0 * r->blocked_mean / r->time_max : 0.0, r->final_wait_max);
    if (opt->output == MD_OUT_LOCAL_COPY || (opt->output == MD_OUT_FWDIO && opt->local_dir))
        printf("mdlj: checkpoints complete in the node-local directory after %.3f s, at their "
               "paths %.3f s later (%s; all checkpoints, slowest rank)\n",
               r->ckpt_local_max, r->ckpt_copy_max,
               opt->output == MD_OUT_FWDIO ? "fwdio's drain" : "copied by a thread");
    else if (opt->output == MD_OUT_FWDIO && rep->checkpoints > 0)
        printf("mdlj: checkpoints complete at their paths after %.3f s (all checkpoints, "
               "slowest rank)\n", r->ckpt_local_max);
    if (opt->output == MD_OUT_FWDIO || opt->output == MD_OUT_MPIIO ||
        opt->output == MD_OUT_MPIIO_ASYNC)
        printf("mdlj: %s per trajectory frame: %.1f on the busiest rank, %.1f over all ranks; "
               "per checkpoint: %.1f and %.1f\n",
               opt->output == MD_OUT_FWDIO ? "fwdio_write calls" : "file-view blocks",
               per(r->frame_calls_max, rep->frames), per(r->frame_calls_total, rep->frames),
               per(r->ckpt_calls_max, rep->checkpoints), per(r->ckpt_calls_total, rep->checkpoints));
    if (opt->output == MD_OUT_FWDIO)
        printf("mdlj: fwdio messages per trajectory frame: %.1f from the busiest rank, %.1f over "
               "all ranks; per checkpoint: %.1f and %.1f\n",
               per(r->frame_msgs_max, rep->frames), per(r->frame_msgs_total, rep->frames),
               per(r->ckpt_msgs_max, rep->checkpoints), per(r->ckpt_msgs_total, rep->checkpoints));
    /* One line for scripts (bench/mdlj_compare). */
    printf("mdlj: summary mode=%s ranks=%d atoms=%" PRId64 " steps=%" PRId64 " frames=%" PRId64
           " checkpoints=%" PRId64 " checkpoints_ok=%" PRId64 " time=%.6f blocked_max=%.6f "
           "blocked_mean=%.6f final_wait_max=%.6f failures=%d verify_failures=%d "
           "cpu_ranks=%.6f ckpt_local=%.6f ckpt_copy=%.6f\n",
           md_output_mode_name(opt->output), nranks, natoms, steps, rep->frames, rep->checkpoints,
           rep->checkpoints_ok, r->time_max, r->blocked_max, r->blocked_mean, r->final_wait_max,
           rep->failures, rep->verify_failures, r->cpu_sum, r->ckpt_local_max, r->ckpt_copy_max);
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE, rank, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    setvbuf(stdout, NULL, _IOLBF, 0);

    md_options_t opt;
    int parsed = md_options_parse(argc, argv, &opt, rank == 0);
    if (parsed != 0) {
        MPI_Finalize();
        return parsed > 0 ? 0 : 2;
    }
    if (opt.atoms > DCD_MAX_ATOMS)
        die("%s", "at most 536870911 atoms (a DCD coordinate record must fit 2^31 bytes)");
    if (opt.steps > INT32_MAX)
        die("%s", "at most 2^31 - 1 steps (DCD headers hold 32-bit step numbers)");
    if (opt.crash_at > 0 && (opt.checkpoint_every == 0 || opt.crash_at % opt.checkpoint_every))
        die("%s", "--crash-at must name a step that writes a checkpoint");
    if (opt.verify && opt.output == MD_OUT_NONE)
        die("%s", "--verify checks written files: it needs an --output other than none");
    if (opt.dump_loaded && !opt.restart)
        die("%s", "--dump-loaded writes the state a restart loaded: it needs --restart");
    int writable = 1;
    if (rank == 0 && opt.output != MD_OUT_NONE && opt.checkpoint_every > 0)
        writable = checkpoint_dir_writable(opt.checkpoint_path);
    MPI_Bcast(&writable, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!writable)
        die("%s", "no place for the checkpoints");
    if (opt.output == MD_OUT_FWDIO && provided < MPI_THREAD_MULTIPLE)
        die("%s", "--output fwdio needs MPI_THREAD_MULTIPLE, which this MPI did not grant");

    struct sim s;
    memset(&s, 0, sizeof s);
    atoms_init(&s.atoms);
    exchange_init(&s.ex);
    md_restart_t resumed;
    memset(&resumed, 0, sizeof resumed);
    /* A restart continues the trajectory at --dcd when it is this run's
     * (frames every --every steps from step --every on): the checkpoint must
     * be one the trajectory's complete frames reach. */
    int64_t dcd_frames = -1, dcd_natoms = 0;
    if (opt.restart && opt.every > 0) {
        int64_t v[4] = {-1, 0, 0, 0};
        if (rank == 0 && dcd_read_header(opt.dcd_path, &v[0], &v[1], &v[2], &v[3]) == 0 &&
            (v[1] != opt.every || v[2] != opt.every || v[0] < 0))
            v[0] = -1; /* another run's layout: written anew from the restart */
        MPI_Bcast(v, 4, MPI_INT64_T, 0, MPI_COMM_WORLD);
        dcd_frames = v[0];
        dcd_natoms = v[3];
    }
    int64_t max_step = dcd_frames >= 0 ? (dcd_frames + 1) * opt.every - 1 : INT64_MAX;

    /* Before the restart: with --output fwdio the checkpoint is read through
     * fwdio too (the other modes, which do not start fwdio, pread it). */
    fwdio_runtime_t *rt = NULL;
    if (opt.output == MD_OUT_FWDIO) {
        int rc = fwdio_init(MPI_COMM_WORLD, NULL, &rt);
        if (rc != FWDIO_OK)
            die("fwdio_init: %s", fwdio_strerror(rc));
    }
    double t_load = 0.0;
    double box = set_up(&s, &opt, rt, max_step, &resumed, &t_load);
    int64_t start = s.step;
    const ckpt_info_t *ck = &resumed.info;
    if (dcd_frames >= 0 && dcd_natoms != s.natoms)
        die_rt(rt, "%s",
               "the trajectory at --dcd holds another number of atoms than the checkpoint");
    if (opt.restart && rank == 0) {
        printf("mdlj: restarting from %s (step %" PRId64 "), %" PRId64 " atoms written by %u "
               "ranks, loaded on %d in %.3f s\n",
               resumed.path, start, ck->natoms, ck->nranks, nranks, t_load);
        if (rt)
            printf("mdlj: restart: read through fwdio: %" PRIu64 " bytes asked for by %d ranks, "
                   "%" PRIu64 " bytes read from storage by %d readers\n",
                   resumed.bytes_asked, nranks, resumed.bytes_from_storage, resumed.readers);
        if (ck->nranks != (uint32_t)nranks)
            printf("mdlj: note: the checkpoint was written by %u ranks, this run has %d: it "
                   "starts from the checkpoint's exact state and continues physically, but not "
                   "bit for bit as a run on %u ranks would (forces are summed in another "
                   "order)\n",
                   ck->nranks, nranks, ck->nranks);
        if (ck->dt != opt.dt)
            printf("mdlj: note: the checkpoint ran with dt %g, this run uses %g\n", ck->dt,
                   opt.dt);
    }
    if (opt.dump_loaded && restart_dump(&s.dom, &s.atoms, ck, opt.dump_loaded) != 0)
        die_rt(rt, "%s", "cannot write the loaded state (--dump-loaded)");

    /* Frames at the multiples of --every after the start, up to --steps; a
     * continued trajectory keeps the frames before (kept), and its frame 0
     * is at step --every. */
    int64_t first_frame = 0, nframes = 0, kept = 0;
    if (opt.every > 0 && opt.steps > start) {
        first_frame = (start / opt.every + 1) * opt.every;
        nframes = opt.steps / opt.every - start / opt.every;
        if (dcd_frames >= 0) {
            kept = start / opt.every;
            first_frame = opt.every;
            nframes += kept;
        }
    }
    md_output_params_t op = {
        .mode = opt.output,
        .comm = MPI_COMM_WORLD,
        .rt = rt,
        .dcd_path = nframes > 0 ? opt.dcd_path : NULL,
        .dcd = {.natoms = s.natoms, .nframes = nframes, .first_step = first_frame,
                .interval = opt.every, .dt = opt.dt, .box = box,
                .seed = opt.restart ? ck->seed : opt.seed, .kept = kept},
        .ckpt_base = opt.checkpoint_every > 0 ? opt.checkpoint_path : NULL,
        .ckpt = {.natoms = s.natoms, .box = box, .dt = opt.dt, .cutoff = opt.cutoff,
                 .seed = opt.restart ? ck->seed : opt.seed, .nranks = (uint32_t)nranks},
        .resumed_from = opt.restart ? start : -1,
        .writers = opt.writers,
        .local_dir = opt.local_dir,
        .verify = opt.verify,
        .crash_at = opt.crash_at,
    };
    md_output_t *out = NULL;
    if (output_create(&out, &op) != 0) {
        if (rt)
            fwdio_finalize(rt); /* its threads must stop before MPI does */
        die("%s", "cannot set up the output");
    }

    if (rank == 0) {
        printf("mdlj: %" PRId64 " atoms, box %.4f, density %.4f, %d ranks (%d x %d x %d), "
               "steps %" PRId64 " -> %" PRId64 ", dt %g\n",
               s.natoms, box, (double)s.natoms / (box * box * box), nranks, s.dom.dims[0],
               s.dom.dims[1], s.dom.dims[2], start, opt.steps, opt.dt);
        printf("mdlj: output %s: %" PRId64 " trajectory frames (every %" PRId64 " steps)%s%s, "
               "checkpoints every %" PRId64 " steps%s%s\n",
               md_output_mode_name(opt.output), nframes, opt.every, nframes ? " to " : "",
               nframes ? opt.dcd_path : "", opt.checkpoint_every,
               opt.checkpoint_every ? " to " : "", opt.checkpoint_every ? opt.checkpoint_path : "");
    }
    struct energies e0 = measure(&s);
    print_thermo(&s, e0, 1);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    while (s.step < opt.steps) {
        step_once(&s, opt.dt);
        md_snapshot_t snap = snapshot_of(&s);
        if (opt.every > 0 && s.step % opt.every == 0)
            output_frame(out, &snap, (s.step - first_frame) / opt.every);
        if (opt.checkpoint_every > 0 && s.step % opt.checkpoint_every == 0)
            output_checkpoint(out, &snap);
        output_poll(out);
        if ((opt.thermo > 0 && s.step % opt.thermo == 0) || s.step == opt.steps)
            print_thermo(&s, measure(&s), 0);
    }
    md_output_report_t rep;
    output_finish(out, &rep);
    double elapsed = MPI_Wtime() - t0 - rep.verify_time;
    struct run_report r = summarise(MPI_COMM_WORLD, elapsed, &rep);

    struct energies e1 = measure(&s);
    if (rank == 0)
        print_report(&opt, nranks, s.natoms, opt.steps - start, e0, e1, &r, &rep);
    output_destroy(out);
    if (rt)
        fwdio_finalize(rt);
    cells_free(&s.cells);
    exchange_free(&s.ex);
    atoms_free(&s.atoms);
    domain_destroy(&s.dom);
    MPI_Finalize();
    return rep.failures || rep.verify_failures ? 1 : 0;
}
