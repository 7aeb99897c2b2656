/* SPDX-License-Identifier: BSD-3-Clause */
#include "melt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Long enough for any command below with a PATH_MAX path. */
#define COMMAND_MAX 8192

static int world_rank(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* Format and issue one LAMMPS command; -1 if it does not fit the buffer. */
static int command(lfw_melt_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int command(lfw_melt_t *m, const char *fmt, ...)
{
    char text[COMMAND_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof text) {
        if (world_rank() == 0)
            fprintf(stderr, "lammps-fwdio: LAMMPS command too long: %.60s...\n", text);
        return -1;
    }
    lammps_command(m->lmp, text);
    return 0;
}

int lfw_melt_cells_for(int64_t atoms)
{
    int n = 1;
    while (4 * (int64_t)n * n * n < atoms)
        n++;
    return n;
}

int lfw_melt_open(lfw_melt_t *m, MPI_Comm comm, const lfw_options_t *o)
{
    memset(m, 0, sizeof *m);
    char arg0[] = "lammps-fwdio", log_flag[] = "-log", none[] = "none", screen_flag[] = "-screen",
         nocite[] = "-nocite";
    char log_path[COMMAND_MAX];
    snprintf(log_path, sizeof log_path, "%s", o->lammps_log ? o->lammps_log : "none");
    char *args[8];
    int argc = 0;
    args[argc++] = arg0;
    args[argc++] = log_flag;
    args[argc++] = log_path;
    if (!o->lammps_screen) {
        args[argc++] = screen_flag;
        args[argc++] = none;
    }
    args[argc++] = nocite;
    args[argc] = NULL;
    m->lmp = lammps_open(argc, args, comm, NULL);
    if (!m->lmp)
        return -1;

    m->cells = lfw_melt_cells_for(o->atoms);
    int rc = 0;
    rc |= command(m, "units lj");
    rc |= command(m, "atom_style atomic");
    rc |= command(m, "lattice fcc 0.8442");
    rc |= command(m, "region box block 0 %d 0 %d 0 %d", m->cells, m->cells, m->cells);
    rc |= command(m, "create_box 1 box");
    rc |= command(m, "create_atoms 1 box");
    rc |= command(m, "mass 1 1.0");
    /* loop geom: each atom's velocity follows from its position, so the run
     * is the same whatever the number of ranks. */
    rc |= command(m, "velocity all create 3.0 %d loop geom", o->seed);
    rc |= command(m, "pair_style lj/cut 2.5");
    rc |= command(m, "pair_coeff 1 1 1.0 1.0 2.5");
    rc |= command(m, "neighbor 0.3 bin");
    rc |= command(m, "neigh_modify every 20 delay 0 check no");
    rc |= command(m, "fix 1 all nve");
    if (rc)
        return -1;

    m->natoms = (int64_t)lammps_get_natoms(m->lmp);
    m->ntypes = *(int *)lammps_extract_global(m->lmp, "ntypes");
    const double *lo = lammps_extract_global(m->lmp, "boxlo");
    const double *hi = lammps_extract_global(m->lmp, "boxhi");
    for (int d = 0; d < 3; d++) {
        m->box.lo[d] = lo[d];
        m->box.hi[d] = hi[d];
    }
    return 0;
}

const char *lfw_melt_dump_path_problem(const char *path)
{
    static const char *const suffixes[] = {".gz", ".zst", ".bin"};
    if (!*path)
        return "the path is empty";
    if (strpbrk(path, " \t\n\r\"'"))
        return "white space and quotes are not allowed in a LAMMPS dump path";
    if (strpbrk(path, "*%"))
        return "'*' and '%' make LAMMPS write one file per step or per rank";
    if (strpbrk(path, "$#&"))
        return "'$', '#' and '&' have meanings on a LAMMPS command line";
    size_t len = strlen(path);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t n = strlen(suffixes[i]);
        if (len >= n && !strcmp(path + len - n, suffixes[i]))
            return "names ending in .gz, .zst or .bin make LAMMPS write another format";
    }
    return NULL;
}

int lfw_melt_add_dump(lfw_melt_t *m, const char *id, const char *style, int64_t every,
                      const char *path, const char *format_line, int append)
{
    const char *problem = lfw_melt_dump_path_problem(path);
    if (problem) {
        if (world_rank() == 0)
            fprintf(stderr, "lammps-fwdio: cannot use \"%s\" for dump %s: %s\n", path, style,
                    problem);
        return -1;
    }
    if (command(m, "dump %s all %s %lld %s id type x y z", id, style, (long long)every, path) ||
        (format_line && command(m, "dump_modify %s sort id format line \"%s\"", id, format_line)) ||
        (append && command(m, "dump_modify %s append yes", id)))
        return -1;
    return 0;
}

void lfw_melt_delete_sphere(lfw_melt_t *m)
{
    double c[3], r = (m->box.hi[0] - m->box.lo[0]) / 6;
    for (int d = 0; d < 3; d++)
        c[d] = (m->box.lo[d] + m->box.hi[d]) / 2;
    command(m, "region fwdio_hole sphere %.17g %.17g %.17g %.17g units box", c[0], c[1], c[2], r);
    command(m, "delete_atoms region fwdio_hole");
}

void lfw_melt_remove_dump(lfw_melt_t *m, const char *id)
{
    command(m, "undump %s", id);
}

void lfw_melt_add_callback(lfw_melt_t *m, const char *id, int64_t every, FixExternalFnPtr fn,
                           void *ctx)
{
    command(m, "fix %s all external pf/callback %lld %lld", id, (long long)every,
            (long long)every);
    lammps_set_fix_external_callback(m->lmp, id, fn, ctx);
}

void lfw_melt_run(lfw_melt_t *m, int64_t steps)
{
    command(m, "run %lld", (long long)steps);
}

void lfw_melt_close(lfw_melt_t *m)
{
    if (m->lmp)
        lammps_close(m->lmp);
    m->lmp = NULL;
}
