/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cost model against the MPI calls fwdio makes (docs/scaling.md): each
 * rank counts its calls with the PMPI shim (tests/util/mpi_counts.c) around
 * one file and around one stream step, and checks them against the model of
 * apps/common/cost_model.c for its own rank: the data messages it sends
 * (MPI_Issend, with their wire bytes) and receives as a writer (matched
 * MPI_Improbe, MPI_Imrecv and its bytes), no control messages, the
 * communicator duplications and the agreements (MPI_Iallreduce,
 * MPI_Iexscan, with the bytes of their buffers). The constants of the
 * protocol the model mirrors (fields of the open check, an error report,
 * the sums beside the bytes per writer, the wire header and piece) are
 * checked with them: a change in the library shows here as a difference in
 * the agreements' or the messages' bytes.
 *
 * Sections (on one node in ctest; the model's N is the job's node count):
 *   file    the node-shared area off: every message to another rank's writer
 *           goes over MPI; block layout, W = P / 2, the runtime's first file
 *   stream  the same runtime: a stream, one step, then the close
 *   area    a second runtime with the area on: messages to writers of the
 *           node go through it, none over MPI; cyclic layout
 */
#define _GNU_SOURCE
#include "cost_model.h"
#include "mpi_counts.h"
#include "test_common.h"

#include <fwdio.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;
static const char *g_report; /* --report FILE: rank 0 appends the sections' sums */
static int g_nodes = 1;      /* nodes of the job (the model's N) */

#define BLOCK ((uint64_t)40 << 10) /* bytes per rank: combined, five stripes */
#define STRIPE ((uint64_t)8 << 10)
#define UNIT ((uint64_t)4 << 10)

static void model_input(cost_input_t *in, int writers, int cyclic, int stream, int area,
                        int first)
{
    memset(in, 0, sizeof *in);
    in->ranks = tc_size;
    in->writers = writers;
    in->nodes = g_nodes;
    in->size = (uint64_t)tc_size * BLOCK;
    in->stripe_size = STRIPE;
    in->write_size = UNIT;
    in->cyclic = cyclic;
    in->stream = stream;
    in->area = area;
    in->first_file = first;
    cost_model_defaults(in);
}

static void expect(const char *what, const char *section, uint64_t got, uint64_t want)
{
    TC_CHECK(got == want, "%s: %s measured %llu, model %llu", section, what,
             (unsigned long long)got, (unsigned long long)want);
}

/* Peak resident set of this rank, KiB. */
static uint64_t vmhwm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kib = strtoull(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

enum { R_SENT, R_SENT_B, R_RECV, R_RECV_B, R_AR, R_AR_B, R_EX, R_DUP, R_PROBES,
       M_SENT, M_SENT_B, M_RECV, M_RECV_B, M_AR, M_AR_B, M_EX, M_DUP, R_HWM, R_ALL, M_ALL,
       R_N };

/* --report: measured and modelled counts of a section, summed over the ranks
 * and their largest value on a rank, one line appended by rank 0. */
static void report(const char *section, const cost_input_t *in, const mpi_counts_t *d,
                   const cost_rank_t *m, const fwdio_file_stats_t *st)
{
    uint64_t v[R_N] = {
        [R_SENT] = d->calls[MPI_COUNTS_ISSEND], [R_SENT_B] = d->bytes[MPI_COUNTS_ISSEND],
        [R_RECV] = d->calls[MPI_COUNTS_IMRECV], [R_RECV_B] = d->bytes[MPI_COUNTS_IMRECV],
        [R_AR] = d->calls[MPI_COUNTS_IALLREDUCE], [R_AR_B] = d->bytes[MPI_COUNTS_IALLREDUCE],
        [R_EX] = d->calls[MPI_COUNTS_IEXSCAN], [R_DUP] = d->calls[MPI_COUNTS_COMM_IDUP],
        [R_PROBES] = d->calls[MPI_COUNTS_IMPROBE], [M_SENT] = m->mpi_msgs,
        [M_SENT_B] = m->mpi_bytes, [M_RECV] = m->recv_mpi_msgs, [M_RECV_B] = m->recv_mpi_bytes,
        [M_AR] = (uint64_t)m->iallreduce.calls, [M_AR_B] = m->iallreduce.bytes,
        [M_EX] = (uint64_t)m->iexscan.calls, [M_DUP] = (uint64_t)m->idup.calls,
        [R_HWM] = vmhwm_kib(), [R_ALL] = st->messages_sent,
        [M_ALL] = m->mpi_msgs + m->area_msgs + m->self_msgs};
    uint64_t sum[R_N], max[R_N];
    MPI_Reduce(v, sum, R_N, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(v, max, R_N, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (tc_rank != 0)
        return;
    FILE *out = fopen(g_report, "a");
    if (!out) {
        tc_fail("--report %s cannot be opened", g_report);
        return;
    }
    /* P W section (N nodes when more than one) | total msgs meas/model | max sent per rank | max received
     * per writer | total wire bytes | Iallreduce per rank calls, bytes |
     * Iexscan | idup | probes polled (max) | peak RSS MiB (max) | all
     * messages, MPI, area and to itself (fwdio_file_stats) */
#define U(x) (unsigned long long)(x)
    fprintf(out,
            "%d %d %s%s | %llu %llu | %llu %llu | %llu %llu | %llu %llu | %llu %llu %llu %llu | "
            "%llu %llu | %llu %llu | %llu | %llu | %llu %llu\n",
            in->ranks, in->writers, section, g_nodes > 1 ? " (hosts)" : "", U(sum[R_SENT]), U(sum[M_SENT]), U(max[R_SENT]),
            U(max[M_SENT]), U(max[R_RECV]), U(max[M_RECV]), U(sum[R_SENT_B]), U(sum[M_SENT_B]),
            U(max[R_AR]), U(max[M_AR]), U(max[R_AR_B]), U(max[M_AR_B]), U(max[R_EX]),
            U(max[M_EX]), U(max[R_DUP]), U(max[M_DUP]), U(max[R_PROBES]), U(max[R_HWM] >> 10),
            U(sum[R_ALL]), U(sum[M_ALL]));
#undef U
    fclose(out);
}

/* One file (or stream with one step) written by every rank, counted. */
static void run_section(fwdio_runtime_t *rt, const char *section, const cost_input_t *in)
{
    tc_phase("%s", section);
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writers = in->writers;
    o.placement = FWDIO_PLACEMENT_STRIDE;
    o.first_writer = 0;
    o.writer_stride = tc_size / in->writers > 1 ? tc_size / in->writers : 1;
    o.layout = in->cyclic ? FWDIO_LAYOUT_CYCLIC : FWDIO_LAYOUT_BLOCK;
    o.stripe_size = in->stripe_size;
    o.write_size = in->write_size;
    char path[512];
    tc_path(path, sizeof path, section);

    uint8_t *buf = malloc(BLOCK);
    for (uint64_t i = 0; i < BLOCK; i++)
        buf[i] = (uint8_t)(tc_rank * 31 + i);
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_counts_t before, after, d;
    mpi_counts_get(&before);

    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, in->stream ? FWDIO_SIZE_GROWS : in->size, &o, NULL, &f),
              FWDIO_OK, "fwdio_open");
    if (!f) {
        free(buf);
        return;
    }
    TC_EXPECT(fwdio_write(f, buf, BLOCK, (uint64_t)tc_rank * BLOCK), FWDIO_OK, "fwdio_write");
    if (in->stream) {
        TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "fwdio_step_end");
        TC_EXPECT(fwdio_step_wait(f, 0), FWDIO_OK, "fwdio_step_wait");
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    fwdio_file_stats_t st;
    memset(&st, 0, sizeof st);
    TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
    fwdio_file_free(f);
    mpi_counts_get(&after);
    mpi_counts_diff(&before, &after, &d);
    free(buf);

    cost_rank_t m;
    cost_model_rank(in, tc_rank, &m);
    expect("data messages sent (MPI_Issend)", section, d.calls[MPI_COUNTS_ISSEND], m.mpi_msgs);
    expect("wire bytes sent", section, d.bytes[MPI_COUNTS_ISSEND], m.mpi_bytes);
    expect("messages matched (MPI_Improbe)", section, d.calls[MPI_COUNTS_IMPROBE_MATCHED],
           m.recv_mpi_msgs);
    expect("messages received (MPI_Imrecv)", section, d.calls[MPI_COUNTS_IMRECV],
           m.recv_mpi_msgs);
    expect("wire bytes received", section, d.bytes[MPI_COUNTS_IMRECV], m.recv_mpi_bytes);
    /* what MPI does not see: messages by the node-shared area and to itself */
    expect("messages sent (stats)", section, st.messages_sent,
           m.mpi_msgs + m.area_msgs + m.self_msgs);
    expect("data bytes to MPI (stats)", section, st.bytes_to_mpi, m.mpi_data);
    expect("data bytes by the area (stats)", section, st.bytes_shared, m.area_data);
    expect("messages received (stats)", section, st.messages_received, m.recv_msgs);
    expect("bytes received (stats)", section, st.writer_bytes, m.recv_bytes);
    expect("control messages (MPI_Isend)", section, d.calls[MPI_COUNTS_ISEND], m.ctl_msgs);
    expect("MPI_Irecv", section, d.calls[MPI_COUNTS_IRECV], 0);
    expect("MPI_Comm_idup", section, d.calls[MPI_COUNTS_COMM_IDUP], (uint64_t)m.idup.calls);
    expect("MPI_Iallreduce", section, d.calls[MPI_COUNTS_IALLREDUCE],
           (uint64_t)m.iallreduce.calls);
    expect("MPI_Iallreduce bytes", section, d.bytes[MPI_COUNTS_IALLREDUCE], m.iallreduce.bytes);
    expect("MPI_Iexscan", section, d.calls[MPI_COUNTS_IEXSCAN], (uint64_t)m.iexscan.calls);
    expect("MPI_Iexscan bytes", section, d.bytes[MPI_COUNTS_IEXSCAN], m.iexscan.bytes);
    expect("other collectives", section,
           d.calls[MPI_COUNTS_IBARRIER] + d.calls[MPI_COUNTS_IBCAST] +
               d.calls[MPI_COUNTS_IALLGATHER] + d.calls[MPI_COUNTS_IREDUCE_SCATTER] +
               d.calls[MPI_COUNTS_COMM_DUP],
           0);
    if (g_report)
        report(section, in, &d, &m, &st);
    if (!g_report && (tc_rank == 0 || m.is_writer))
        tc_note("%s P=%d W=%d: sent %llu msgs/%llu B (model %llu/%llu), received %llu "
                "(model %llu), Iallreduce %llu/%llu B (model %d/%llu), Iexscan %llu, idup %llu, "
                "probes polled %llu",
                section, in->ranks, in->writers, (unsigned long long)d.calls[MPI_COUNTS_ISSEND],
                (unsigned long long)d.bytes[MPI_COUNTS_ISSEND], (unsigned long long)m.mpi_msgs,
                (unsigned long long)m.mpi_bytes, (unsigned long long)d.calls[MPI_COUNTS_IMRECV],
                (unsigned long long)m.recv_mpi_msgs,
                (unsigned long long)d.calls[MPI_COUNTS_IALLREDUCE],
                (unsigned long long)d.bytes[MPI_COUNTS_IALLREDUCE], m.iallreduce.calls,
                (unsigned long long)m.iallreduce.bytes,
                (unsigned long long)d.calls[MPI_COUNTS_IEXSCAN],
                (unsigned long long)d.calls[MPI_COUNTS_COMM_IDUP],
                (unsigned long long)d.calls[MPI_COUNTS_IMPROBE]);
}

/* --in-flight N: N small files open at once (each rank writes 1 KiB of
 * each), then closed and waited for; the time and the calls per file, to
 * show how a file's cost grows with the files in flight (docs/scaling.md,
 * "Many files in flight"). Checks the agreements per file against the model. */
static void run_in_flight(fwdio_runtime_t *rt, int n, int writers)
{
    tc_phase("in-flight %d", n);
    const uint64_t piece = 1024;
    fwdio_file_t **files = calloc((size_t)n, sizeof *files);
    uint8_t buf[1024];
    memset(buf, tc_rank + 1, sizeof buf);
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writers = writers;
    o.placement = FWDIO_PLACEMENT_STRIDE;
    o.first_writer = 0;
    o.writer_stride = tc_size / writers > 1 ? tc_size / writers : 1;
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_counts_t before, after, d;
    mpi_counts_get(&before);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        char name[64], path[512];
        snprintf(name, sizeof name, "inflight-%d", i);
        tc_path(path, sizeof path, name);
        TC_EXPECT(fwdio_open(rt, path, piece * (uint64_t)tc_size, &o, NULL, &files[i]), FWDIO_OK,
                  "fwdio_open");
        if (files[i])
            TC_EXPECT(fwdio_write(files[i], buf, piece, piece * (uint64_t)tc_rank), FWDIO_OK,
                      "fwdio_write");
    }
    double t1 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        if (files[i])
            TC_EXPECT(fwdio_close(files[i]), FWDIO_OK, "fwdio_close");
    for (int i = 0; i < n; i++)
        if (files[i]) {
            TC_EXPECT(fwdio_wait(files[i]), FWDIO_OK, "fwdio_wait");
            fwdio_file_free(files[i]);
        }
    double t2 = MPI_Wtime();
    mpi_counts_get(&after);
    mpi_counts_diff(&before, &after, &d);
    free(files);
    expect("MPI_Iallreduce (in flight)", "in-flight", d.calls[MPI_COUNTS_IALLREDUCE],
           4 * (uint64_t)n);
    double secs = t2 - t0, most = 0;
    MPI_Reduce(&secs, &most, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    uint64_t probes = d.calls[MPI_COUNTS_IMPROBE], probes_max = 0;
    MPI_Reduce(&probes, &probes_max, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (tc_rank == 0) {
        char line[256];
        snprintf(line, sizeof line,
                 "%d %d in-flight %d | %.3f s (opens and writes %.3f s) | %.1f us per file | "
                 "%llu probes polled (max rank), %.1f per file\n",
                 tc_size, writers, n, most, t1 - t0, 1e6 * most / n,
                 (unsigned long long)probes_max, (double)probes_max / n);
        fputs(line, stdout);
        FILE *out = g_report ? fopen(g_report, "a") : NULL;
        if (out) {
            fputs(line, out);
            fclose(out);
        }
    }
}

/* The job's node count; the model places rank r on node r / ceil(P / N), as
 * a by-slot (block) mapping does: any other mapping fails the test. */
static void find_nodes(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, tc_rank, MPI_INFO_NULL, &node);
    int leader = tc_rank, lead = 0;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    lead = leader == tc_rank;
    MPI_Allreduce(&lead, &g_nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    int per = (tc_size + g_nodes - 1) / g_nodes;
    TC_CHECK(leader == tc_rank / per * per,
             "rank %d is on the node of rank %d: the model expects the ranks mapped by slot "
             "(%d to a node), as mpirun does by default", tc_rank, leader, per);
}

static fwdio_runtime_t *start(size_t shared_buffer)
{
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = g_mode;
    cfg.shared_buffer = shared_buffer;
    cfg.max_message_size = (size_t)1 << 20;
    return tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
}

int main(int argc, char **argv)
{
    unsigned timeout = 120;
    int writers = 0, in_flight = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--report") && i + 1 < argc)
            g_report = argv[++i];
        else if (!strcmp(argv[i], "--in-flight") && i + 1 < argc)
            in_flight = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--writers") && i + 1 < argc)
            writers = (int)tc_parse_long(argv[++i]);
        else if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        else {
            fprintf(stderr, "usage: %s [--callback-mode poll|progress] [--timeout SEC]\n"
                            "  [--writers W (default P/2)] [--report FILE] [--in-flight N]\n"
                            "--in-flight N: only N small files in flight at once, timed\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    find_nodes();
    int W = writers > 0 ? writers : tc_size / 2;
    if (W < 1)
        W = 1;
    if (W > tc_size)
        W = tc_size;
    cost_input_t in;

    if (in_flight > 0) {
        fwdio_runtime_t *r = start(1);
        run_in_flight(r, in_flight, W);
        TC_EXPECT(fwdio_finalize(r), FWDIO_OK, "fwdio_finalize");
        return tc_finish("test_scaling_counts");
    }
    fwdio_runtime_t *rt = start(1); /* the area off */
    model_input(&in, W, 0, 0, 0, 1);
    run_section(rt, "file", &in);
    model_input(&in, W, 1, 1, 0, 0);
    run_section(rt, "stream", &in);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");

    rt = start((size_t)4 << 20); /* the area on, room for the messages */
    model_input(&in, W, 1, 0, 1, 1);
    run_section(rt, "area", &in);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_scaling_counts");
}
