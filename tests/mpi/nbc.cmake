# Nonblocking, persistent and neighbourhood collectives.

# Every collective in both forms, at odd sizes and non-powers of two.
shoal_mpi_test(nbc_coll SOURCES nbc_coll.c NP 1 2 3 4 5 7 8 9)
# Many in flight on several communicators, with point-to-point traffic,
# objects freed while in use, persistent request lifetimes.
shoal_mpi_test(nbc_many SOURCES nbc_many.c NP 1 2 3 5 8 9)
# Neighbourhood collectives on grids and graphs, all three forms.
shoal_mpi_test(nbc_neighbor SOURCES nbc_neighbor.c NP 1 2 3 4 6 9)
shoal_mpi_test(nbc_inter SOURCES nbc_inter.c NP 2 3 5)
shoal_mpi_test(nbc_errors SOURCES nbc_errors.c NP 1 2 3)
# Persistent collectives on several communicators, initialized and
# started in a different order on every rank.
shoal_mpi_test(nbc_persist_order SOURCES nbc_persist_order.c NP 2 3 4 9)
# Persistent collectives started in rank-dependent orders on one
# communicator too (legal: only their initializations are ordered).
shoal_mpi_test(nbc_persist_anyorder SOURCES nbc_persist_anyorder.c NP 2 4 5)
