# SPDX-License-Identifier: BSD-3-Clause
import sys
import numpy as np
from mpi4py import MPI
import h5py
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
path = sys.argv[1]
rows = 50
with h5py.File(path, "w", driver="mpio", comm=comm, track_order=False) as f:
    d = f.create_dataset("x", (rows * size, 32), dtype="f8", track_times=False)
    with d.collective:
        d[rank * rows:(rank + 1) * rows, :] = np.arange(rows * 32, dtype="f8").reshape(rows, 32) + rank * 1e4
    f.attrs["ranks"] = size
with h5py.File(path, "r", driver="mpio", comm=comm) as f:
    x = f["x"][...]
    want = np.vstack([np.arange(rows * 32, dtype="f8").reshape(rows, 32) + r * 1e4 for r in range(size)])
    ok = np.array_equal(x, want) and f.attrs["ranks"] == size
bad = comm.allreduce(0 if ok else 1)
if rank == 0:
    print("h5py_client: %s: %s" % (path, "every value right" if bad == 0 else "WRONG VALUES"))
sys.exit(1 if bad else 0)
