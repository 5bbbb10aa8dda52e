/*
 * Fortran integer handles: MPI_X_c2f gives an object a small integer,
 * MPI_X_f2c turns it back.  One table per kind of handle; index 0 is the
 * null handle and the predefined objects come next in a fixed order, so
 * their integers are the same in every process and every run.  Other
 * objects get the next index the first time they are converted; a hash
 * from address to index keeps c2f cheap.  Entries are never reused: an
 * integer keeps naming the same address.
 */
#include <stdlib.h>

#include "mpi/mpi_impl.h"

typedef struct handle_table {
    void **ptrs; /* index -> object */
    int n, cap;
    int *hash;   /* open addressing over ptrs indices, -1 empty */
    int hcap;    /* power of two, >= 4 * n */
} handle_table_t;

enum { H_COMM, H_TYPE, H_GROUP, H_REQUEST, H_OP, H_INFO, H_ERRH, H_FILE,
       H_MESSAGE, H_SESSION, H_KINDS };

static handle_table_t tables[H_KINDS];
static int tables_ready;

static size_t hash_ptr(const void *p, int hcap)
{
    uintptr_t x = (uintptr_t)p;

    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (size_t)(hcap - 1);
}

static int rehash(handle_table_t *t, int hcap)
{
    int *h = malloc((size_t)hcap * sizeof(int));

    if (h == NULL)
        return -1;
    for (int i = 0; i < hcap; i++)
        h[i] = -1;
    for (int i = 1; i < t->n; i++) {
        size_t s = hash_ptr(t->ptrs[i], hcap);
        while (h[s] >= 0)
            s = (s + 1) & (size_t)(hcap - 1);
        h[s] = i;
    }
    free(t->hash);
    t->hash = h;
    t->hcap = hcap;
    return 0;
}

/* Slot 0 (the null handle) and the hash exist before any lookup. */
static int table_open(handle_table_t *t)
{
    if (t->cap > 0)
        return 0;
    t->ptrs = malloc(64 * sizeof(void *));
    if (t->ptrs == NULL)
        return -1;
    t->cap = 64;
    t->ptrs[0] = NULL;
    t->n = 1;
    return rehash(t, 256);
}

/* Index of p, adding it when new; -1 when out of memory.  Lock held. */
static int table_index(handle_table_t *t, void *p)
{
    size_t s;

    if (p == NULL)
        return 0;
    if (table_open(t) < 0)
        return -1;
    for (s = hash_ptr(p, t->hcap); t->hash[s] >= 0;
         s = (s + 1) & (size_t)(t->hcap - 1))
        if (t->ptrs[t->hash[s]] == p)
            return t->hash[s];
    if (t->n == t->cap) {
        void **ptrs = realloc(t->ptrs, 2 * (size_t)t->cap * sizeof(void *));
        if (ptrs == NULL)
            return -1;
        t->ptrs = ptrs;
        t->cap *= 2;
    }
    t->ptrs[t->n] = p;
    t->hash[s] = t->n++;
    if (4 * t->n > t->hcap && rehash(t, 2 * t->hcap) < 0)
        return -1;
    return t->n - 1;
}

/* Predefined objects first, in a fixed order.  Lock held. */
static void tables_init(void)
{
    if (tables_ready)
        return;
    tables_ready = 1;
    table_index(&tables[H_COMM], MPI_COMM_WORLD);
    table_index(&tables[H_COMM], MPI_COMM_SELF);
    table_index(&tables[H_GROUP], MPI_GROUP_EMPTY);
    for (int i = 1; i < SHOAL_MPI_NPREDEF_TYPES; i++)
        table_index(&tables[H_TYPE], MPI_DT_PREDEF_AT(i));
    for (int i = 1; i < SHOAL_MPI_NPREDEF_OPS; i++)
        table_index(&tables[H_OP], &shoal_mpi_op_predef[i]);
    for (int i = 1; i <= 3; i++)
        table_index(&tables[H_ERRH], &shoal_mpi_errh_predef[i]);
    table_index(&tables[H_INFO], MPI_INFO_ENV);
}

static MPI_Fint c2f(int kind, void *p)
{
    int i;

    pthread_mutex_lock(&mpi_obj_lock);
    tables_init();
    i = table_index(&tables[kind], p);
    pthread_mutex_unlock(&mpi_obj_lock);
    return i < 0 ? -1 : (MPI_Fint)i;
}

static void *f2c(int kind, MPI_Fint f)
{
    void *p = NULL;

    pthread_mutex_lock(&mpi_obj_lock);
    tables_init();
    if (f > 0 && f < tables[kind].n)
        p = tables[kind].ptrs[f];
    pthread_mutex_unlock(&mpi_obj_lock);
    return p;
}

void mpi_handle_fini(void)
{
    pthread_mutex_lock(&mpi_obj_lock);
    for (int k = 0; k < H_KINDS; k++) {
        free(tables[k].ptrs);
        free(tables[k].hash);
        tables[k] = (handle_table_t){NULL, 0, 0, NULL, 0};
    }
    tables_ready = 0;
    pthread_mutex_unlock(&mpi_obj_lock);
}

/* The conversions may run at any time; they only touch the tables. */
#define HANDLE_PAIR(Name, type, kind)                                        \
    MPI_Fint PMPI_##Name##_c2f(type h)                                       \
    {                                                                        \
        return c2f(kind, (void *)h);                                         \
    }                                                                        \
    SHOAL_MPI_WEAK(Name##_c2f)                                               \
    type PMPI_##Name##_f2c(MPI_Fint f)                                       \
    {                                                                        \
        return (type)f2c(kind, f);                                           \
    }                                                                        \
    SHOAL_MPI_WEAK(Name##_f2c)

HANDLE_PAIR(Comm, MPI_Comm, H_COMM)
HANDLE_PAIR(Type, MPI_Datatype, H_TYPE)
HANDLE_PAIR(Group, MPI_Group, H_GROUP)
HANDLE_PAIR(Request, MPI_Request, H_REQUEST)
HANDLE_PAIR(Op, MPI_Op, H_OP)
HANDLE_PAIR(Info, MPI_Info, H_INFO)
HANDLE_PAIR(Errhandler, MPI_Errhandler, H_ERRH)
HANDLE_PAIR(File, MPI_File, H_FILE)
HANDLE_PAIR(Message, MPI_Message, H_MESSAGE)
HANDLE_PAIR(Session, MPI_Session, H_SESSION)
