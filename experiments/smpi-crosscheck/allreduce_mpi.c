/* Times one MPI collective under SimGrid's SMPI, as the independent reference for dtsim.
 *
 *   smpicc -O2 -o allreduce_mpi allreduce_mpi.c -lm
 *   smpirun -np P -platform X.xml -hostfile H ... ./allreduce_mpi BYTES [OP [START [REDUCTION]]]
 *
 * BYTES counts as dtsim's --bytes does (nccl-tests' convention): each rank's buffer for
 * allreduce and bcast, each rank's input for reduce_scatter, the gathered total for allgather.
 * It must be a multiple of 4 (MPI_FLOAT elements), and for reduce_scatter and allgather a
 * multiple of 4 * P. OP is allreduce (default), reduce_scatter (MPI_Reduce_scatter_block),
 * allgather or bcast (root 0); the algorithm is chosen with smpirun's --cfg=smpi/<op>:<name>.
 *
 * START is how the ranks start the collective:
 *   common  (default) dtsim starts every rank at the same instant on an idle network. A barrier
 *           alone does not give that (ranks leave it microseconds apart), so after the barrier
 *           every rank sleeps (simulated, smpi_nanosleep) until the same absolute simulated time
 *           kStartSec, then calls the collective.
 *   barrier the usual benchmark: each rank starts right after leaving the barrier.
 * REDUCTION is sum (default: MPI_SUM) or noop (a user-defined commutative MPI_Op that does
 * nothing). SMPI really adds the vectors even with simulate-computation:no, which costs wall
 * time only (64 ranks x 100 MB recursive doubling: 43 s); noop gives the same simulated time.
 * Prints on rank 0:
 *   SMPI_TIME <s>        max over ranks of (end - start); with a common start, start = kStartSec
 *   SMPI_START_SKEW <s>  max - min over ranks of the start time (common start: at most the 1 ns
 *                        rounding of the sleep; 0 in every run of run.sh)
 * Buffers are SMPI_SHARED_MALLOC'ed (one physical copy for all ranks: the values are garbage,
 * the timing is not affected). Run with --cfg=smpi/simulate-computation:no so that the real
 * reductions SMPI performs cost no simulated time, and --cfg=smpi/wtime:0 so that reading the
 * clock costs none either.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Segment [lo, hi) of the vector, in elements. */
struct Segment {
  int lo, hi;
};


static void noop_reduction(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)in, (void)inout, (void)len, (void)type;
}

static const double kStartSec = 0.01; /* well after MPI_Init and the barrier */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) {
      fprintf(stderr, "usage: %s BYTES [OP [common|barrier [sum|noop]]]\n", argv[0]);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long long bytes = atoll(argv[1]);
  const char* op = argc > 2 ? argv[2] : "allreduce";
  const char* start_mode = argc > 3 ? argv[3] : "common";
  const char* reduction = argc > 4 ? argv[4] : "sum";
  const int common = strcmp(start_mode, "common") == 0;
  if (!common && strcmp(start_mode, "barrier") != 0) {
    if (rank == 0) fprintf(stderr, "START must be common or barrier, not %s\n", start_mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Op reduce_op = MPI_SUM;
  if (strcmp(reduction, "noop") == 0) {
    MPI_Op_create(noop_reduction, 1, &reduce_op);
  } else if (strcmp(reduction, "sum") != 0) {
    if (rank == 0) fprintf(stderr, "REDUCTION must be sum or noop, not %s\n", reduction);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int per_rank = strcmp(op, "reduce_scatter") == 0 || strcmp(op, "allgather") == 0;
  const long long unit = per_rank ? 4LL * size : 4;
  if (bytes <= 0 || bytes % unit != 0) {
    if (rank == 0) {
      fprintf(stderr, "BYTES=%lld must be a positive multiple of %lld for %s\n", bytes, unit, op);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int count = (int)(bytes / 4); /* floats in the full vector */
  float* in = (float*)SMPI_SHARED_MALLOC((size_t)bytes);
  float* out = (float*)SMPI_SHARED_MALLOC((size_t)bytes);

  MPI_Barrier(MPI_COMM_WORLD);
  if (common) {
    const double now = MPI_Wtime();
    if (now >= kStartSec) {
      fprintf(stderr, "rank %d left the barrier at %g s, after the common start %g s\n", rank, now,
              kStartSec);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    const double wait = kStartSec - now;
    struct timespec ts = {(time_t)wait, (long)llround((wait - floor(wait)) * 1e9)};
    nanosleep(&ts, NULL);
  }
  const double start = MPI_Wtime();

  if (strcmp(op, "allreduce") == 0) {
    MPI_Allreduce(in, out, count, MPI_FLOAT, reduce_op, MPI_COMM_WORLD);
  } else if (strcmp(op, "reduce_scatter") == 0) {
    MPI_Reduce_scatter_block(in, out, count / size, MPI_FLOAT, reduce_op, MPI_COMM_WORLD);
  } else if (strcmp(op, "allgather") == 0) {
    MPI_Allgather(in, count / size, MPI_FLOAT, out, count / size, MPI_FLOAT, MPI_COMM_WORLD);
  } else if (strcmp(op, "bcast") == 0) {
    MPI_Bcast(in, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
  } else {
    if (rank == 0) fprintf(stderr, "unknown OP %s\n", op);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const double end = MPI_Wtime();

  double mine[3] = {end - start, start, -start};
  double worst[3] = {0, 0, 0};
  MPI_Reduce(mine, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("SMPI_TIME %.9e\n", worst[0]);
    printf("SMPI_START_SKEW %.9e\n", worst[1] + worst[2]);
  }
  SMPI_SHARED_FREE(in);
  SMPI_SHARED_FREE(out);
  if (reduce_op != MPI_SUM) MPI_Op_free(&reduce_op);
  MPI_Finalize();
  return 0;
}
