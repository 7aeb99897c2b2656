/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI failure injection for tests, through MPI's profiling interface: a
 * program linked with mpi_faults.c (before libmpi; fwdio itself is linked
 * statically into the tests, so its calls come here too) makes one chosen
 * MPI call fail on one chosen rank, returning an error code without doing
 * anything, as configured by the environment variable
 *
 *   MPI_FAULTS_RULE=CALL[:rank=R][:nth=N][:tag=T]
 *
 * CALL is MPI_Iallreduce, MPI_Iexscan, MPI_Comm_idup, MPI_Isend, MPI_Issend, MPI_Improbe,
 * MPI_Irecv or MPI_Imrecv, or MPI_Iallreduce(MPI_BAND): the reductions with
 * MPI_BAND (fwdio's choice of a kept communicator for a file, on the
 * runtime's communicator), and MPI_Iallreduce(step drains): the agreements
 * of a node-local tier stream's step drains (on the communicator fwdio names
 * "fwdio step drains"), both counted apart from MPI_Iallreduce's, so that a
 * file's agreements keep their numbers; rank is the rank in MPI_COMM_WORLD (default: every
 * rank); nth the N-th matching call of the process, counted from 1 (default
 * 1); tag (MPI_Isend, MPI_Issend, MPI_Improbe, MPI_Irecv) counts only calls
 * with that tag. The failing call
 * returns MPI_ERR_OTHER. Unset, every call goes straight to MPI.
 */
#ifndef MPI_FAULTS_RULES_H
#define MPI_FAULTS_RULES_H

/** Number of calls failed so far in this process. */
int mpi_faults_fired(void);

#endif
