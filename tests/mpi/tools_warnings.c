/*
 * What users write, compiled by tools_test.sh (case warnings) with shoalcc
 * -O2 -Wall -Wextra -Werror: mpi.h must not make ordinary calls warn.  gcc
 * 12 at -O2 warns (-Wstringop-overflow, on by default) when a constant such
 * as (MPI_Status *)1 is passed for a parameter declared as an array
 * (MPI_Status statuses[]), so MPI_STATUSES_IGNORE needs care.  Compiled
 * only, never run.
 */
#include <mpi.h>

int tools_warnings(MPI_Request *req, int n);

int tools_warnings(MPI_Request *req, int n)
{
    int flag = 0, index = 0, outcount = 0, indices[4];
    char buf[8] = {0};

    MPI_Recv(buf, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    MPI_Testall(n, req, &flag, MPI_STATUSES_IGNORE);
    MPI_Waitany(n, req, &index, MPI_STATUS_IGNORE);
    MPI_Waitsome(n, req, &outcount, indices, MPI_STATUSES_IGNORE);
    MPI_Testsome(n, req, &outcount, indices, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(buf, 4, MPI_CHAR, 1, 0, buf + 4, 4, MPI_CHAR, 1, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return flag + index + outcount;
}
