/*
 * The MPI-1 calls that MPI 3.0 removed, kept so that old programs build
 * and run unchanged (MPICH keeps them too): each is its MPI-2 successor
 * under the old name and argument types.  Errors are reported under the
 * successor's name (MPI_Type_hvector's as MPI_Type_create_hvector's).
 *
 *   MPI_Address           MPI_Get_address
 *   MPI_Type_extent       MPI_Type_get_extent's extent
 *   MPI_Type_lb           MPI_Type_get_extent's lb
 *   MPI_Type_ub           lb + extent
 *   MPI_Type_hvector      MPI_Type_create_hvector
 *   MPI_Type_hindexed     MPI_Type_create_hindexed
 *   MPI_Type_struct       MPI_Type_create_struct
 *   MPI_Errhandler_create MPI_Comm_create_errhandler
 *   MPI_Errhandler_set    MPI_Comm_set_errhandler
 *   MPI_Errhandler_get    MPI_Comm_get_errhandler
 *
 * (MPI_Keyval_create, MPI_Attr_put and their kin were deprecated, not
 * removed: src/mpi/comm/attr.c.  The MPI_LB and MPI_UB markers are
 * predefined types: src/mpi/dt.)
 */
#include "mpi/mpi_impl.h"

int PMPI_Address(void *location, MPI_Aint *address)
{
    return PMPI_Get_address(location, address);
}
SHOAL_MPI_WEAK(Address)

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;

    return PMPI_Type_get_extent(datatype, &lb, extent);
}
SHOAL_MPI_WEAK(Type_extent)

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint extent;

    return PMPI_Type_get_extent(datatype, displacement, &extent);
}
SHOAL_MPI_WEAK(Type_lb)

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb = 0, extent = 0;
    int rc = PMPI_Type_get_extent(datatype, &lb, &extent);

    if (rc == MPI_SUCCESS && displacement != NULL)
        *displacement = lb + extent;
    else if (rc == MPI_SUCCESS)
        rc = mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_ub",
                       "displacement is NULL");
    return rc;
}
SHOAL_MPI_WEAK(Type_ub)

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride,
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype,
                                    newtype);
}
SHOAL_MPI_WEAK(Type_hvector)

int PMPI_Type_hindexed(int count, int array_of_blocklengths[],
                       MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, array_of_blocklengths,
                                     array_of_displacements, oldtype,
                                     newtype);
}
SHOAL_MPI_WEAK(Type_hindexed)

int PMPI_Type_struct(int count, int array_of_blocklengths[],
                     MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return PMPI_Type_create_struct(count, array_of_blocklengths,
                                   array_of_displacements, array_of_types,
                                   newtype);
}
SHOAL_MPI_WEAK(Type_struct)

int PMPI_Errhandler_create(MPI_Handler_function *function,
                           MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler(function, errhandler);
}
SHOAL_MPI_WEAK(Errhandler_create)

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}
SHOAL_MPI_WEAK(Errhandler_set)

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
SHOAL_MPI_WEAK(Errhandler_get)
