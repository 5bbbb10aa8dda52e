/*
 * The tool information interface (MPI_T): control variables (SHOAL_*
 * settings, read before MPI_Init too), their enumerations and
 * categories, performance variables (the active-message counters) that
 * count this rank's messages, and the error classes of misuse.  Run with
 * SHOAL_SHM_CELLS=256 in the environment (the test reads it back).
 */
#include <string.h>

#include "mpitest.h"

#define T_OK(call)                                                           \
    do {                                                                     \
        int t_rc_ = (call);                                                  \
        if (t_rc_ != MPI_SUCCESS)                                            \
            MT_FAIL("%s returned %d", #call, t_rc_);                         \
    } while (0)
#define T_ERR(cls, call)                                                     \
    do {                                                                     \
        int t_rc_ = (call);                                                  \
        if (t_rc_ != (cls))                                                  \
            MT_FAIL("%s returned %d, want %d (%s)", #call, t_rc_, (cls),     \
                    #cls);                                                   \
    } while (0)

static int cvar(const char *name)
{
    int i = -1;
    T_OK(MPI_T_cvar_get_index(name, &i));
    return i;
}

static void check_cvars(void)
{
    int n = 0, i, len, verb, bind, scope, count;
    char name[128], desc[1024];
    MPI_Datatype dt;
    MPI_T_enum en;
    MPI_T_cvar_handle h;

    T_OK(MPI_T_cvar_get_num(&n));
    MT_CHECK(n > 20, "%d control variables", n);
    /* SHOAL_SHM_CELLS: a count, set to 256 by the test's environment. */
    i = cvar("SHOAL_SHM_CELLS");
    len = sizeof(name);
    int dlen = sizeof(desc);
    T_OK(MPI_T_cvar_get_info(i, name, &len, &verb, &dt, &en, desc, &dlen,
                             &bind, &scope));
    MT_CHECK(strcmp(name, "SHOAL_SHM_CELLS") == 0 &&
                 len == (int)strlen(name) + 1,
             "name %s len %d", name, len);
    MT_CHECK(dt == MPI_COUNT && en == MPI_T_ENUM_NULL, "type or enum");
    MT_CHECK(bind == MPI_T_BIND_NO_OBJECT && scope == MPI_T_SCOPE_READONLY,
             "bind %d scope %d", bind, scope);
    MT_CHECK(strstr(desc, "shared-memory") != NULL, "desc %s", desc);
    T_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    MT_CHECK(count == 1, "count %d", count);
    MPI_Count v = 0;
    T_OK(MPI_T_cvar_read(h, &v));
    MT_CHECK(v == 256, "SHOAL_SHM_CELLS reads %lld", (long long)v);
    T_ERR(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(h, &v));
    T_OK(MPI_T_cvar_handle_free(&h));
    MT_CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset");

    /* SHOAL_LOG: an enumeration, "warn" (index 1) by default. */
    i = cvar("SHOAL_LOG");
    T_OK(MPI_T_cvar_get_info(i, NULL, NULL, NULL, &dt, &en, NULL, NULL,
                             NULL, NULL));
    MT_CHECK(dt == MPI_INT && en != MPI_T_ENUM_NULL, "SHOAL_LOG's type");
    int items = 0, value = -1;
    len = 0; /* a query of the length only */
    T_OK(MPI_T_enum_get_info(en, &items, NULL, &len));
    MT_CHECK(items == 5 && len == (int)strlen("SHOAL_LOG") + 1,
             "items %d len %d", items, len);
    len = 3; /* cut to two characters and a terminator */
    T_OK(MPI_T_enum_get_item(en, 4, &value, name, &len));
    MT_CHECK(value == 4 && strcmp(name, "tr") == 0 &&
                 len == (int)strlen("trace") + 1,
             "item 4: %d %s %d", value, name, len);
    T_ERR(MPI_T_ERR_INVALID_ITEM,
          MPI_T_enum_get_item(en, 5, &value, name, &len));
    T_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    int lv = -1;
    T_OK(MPI_T_cvar_read(h, &lv));
    MT_CHECK(lv == 1, "SHOAL_LOG reads %d", lv);
    T_OK(MPI_T_cvar_handle_free(&h));

    /* A string: its count is its length with the terminator. */
    i = cvar("SHOAL_TCP_IF");
    T_OK(MPI_T_cvar_get_info(i, NULL, NULL, NULL, &dt, NULL, NULL, NULL,
                             NULL, NULL));
    MT_CHECK(dt == MPI_CHAR, "SHOAL_TCP_IF's type");
    T_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    char s[64] = "x";
    T_OK(MPI_T_cvar_read(h, s));
    MT_CHECK(count == (int)strlen(s) + 1, "count %d for \"%s\"", count, s);
    T_OK(MPI_T_cvar_handle_free(&h));

    T_ERR(MPI_T_ERR_INVALID_INDEX,
          MPI_T_cvar_get_info(n, name, &len, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL));
    T_ERR(MPI_T_ERR_INVALID_NAME, MPI_T_cvar_get_index("SHOAL_NOPE", &i));
    T_ERR(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL,
                                                    &v));
}

static void check_categories(void)
{
    int n = 0, c = -1, ncv = 0, npv = 0, ncat = -1, len = 64, np = 0;
    char name[64];

    T_OK(MPI_T_category_get_num(&n));
    MT_CHECK(n >= 3, "%d categories", n);
    T_OK(MPI_T_category_get_index("SHM", &c));
    T_OK(MPI_T_category_get_info(c, name, &len, NULL, NULL, &ncv, &npv,
                                 &ncat));
    MT_CHECK(strcmp(name, "SHM") == 0 && ncv >= 3 && npv == 0 && ncat == 0,
             "SHM: %s %d %d %d", name, ncv, npv, ncat);
    int *idx = malloc(sizeof(int) * (size_t)ncv), found = 0;
    T_OK(MPI_T_category_get_cvars(c, ncv, idx));
    for (int i = 0; i < ncv; i++)
        found |= idx[i] == cvar("SHOAL_SHM_CELLS");
    MT_CHECK(found, "SHOAL_SHM_CELLS is not in SHM");
    free(idx);
    T_OK(MPI_T_category_get_index("AM_COUNTERS", &c));
    T_OK(MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &ncv, &npv,
                                 NULL));
    T_OK(MPI_T_pvar_get_num(&np));
    MT_CHECK(ncv == 0 && npv == np && np > 0, "AM: %d cvars %d pvars of %d",
             ncv, npv, np);
    T_ERR(MPI_T_ERR_INVALID_INDEX,
          MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL));
    T_ERR(MPI_T_ERR_INVALID_NAME, MPI_T_category_get_index("NOPE", &c));
    /* No events or event sources. */
    T_OK(MPI_T_event_get_num(&n));
    MT_CHECK(n == 0, "%d events", n);
    T_OK(MPI_T_source_get_num(&n));
    MT_CHECK(n == 0, "%d sources", n);
    T_ERR(MPI_T_ERR_INVALID_NAME, MPI_T_event_get_index("x", &c));
    MPI_Count ts;
    T_ERR(MPI_T_ERR_INVALID_INDEX, MPI_T_source_get_timestamp(0, &ts));
}

/* The counter of active messages sent counts this rank's sends. */
static void check_pvars(int rank, int size)
{
    MPI_T_pvar_session ses, other;
    MPI_T_pvar_handle h, hother;
    int i = -1, count = 0, cls, ro, cont, at;
    unsigned long long before = 0, after = 0, x = 0;
    MPI_Datatype dt;

    T_OK(MPI_T_pvar_get_index("shoal_am_requests_sent",
                              MPI_T_PVAR_CLASS_COUNTER, &i));
    T_ERR(MPI_T_ERR_INVALID_NAME,
          MPI_T_pvar_get_index("shoal_am_requests_sent",
                               MPI_T_PVAR_CLASS_TIMER, &i));
    T_OK(MPI_T_pvar_get_info(i, NULL, NULL, NULL, &cls, &dt, NULL, NULL,
                             NULL, NULL, &ro, &cont, &at));
    MT_CHECK(cls == MPI_T_PVAR_CLASS_COUNTER &&
                 dt == MPI_UNSIGNED_LONG_LONG && ro && cont && !at,
             "pvar info");
    T_OK(MPI_T_pvar_session_create(&ses));
    T_OK(MPI_T_pvar_session_create(&other));
    T_OK(MPI_T_pvar_handle_alloc(ses, i, NULL, &h, &count));
    T_OK(MPI_T_pvar_handle_alloc(other, i, NULL, &hother, &count));
    MT_CHECK(count == 1, "count %d", count);
    T_OK(MPI_T_pvar_read(ses, h, &before));
    if (size > 1 && rank < 2) {
        for (int k = 0; k < 100; k++) {
            if (rank == 0)
                MT_OK(MPI_Send(&k, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
            else
                MT_OK(MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        }
    }
    T_OK(MPI_T_pvar_read(ses, h, &after));
    if (size > 1 && rank == 0)
        MT_CHECK(after >= before + 100, "requests sent %llu -> %llu",
                 before, after);
    T_ERR(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_start(ses, h));
    T_OK(MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES));
    T_ERR(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_write(ses, h, &x));
    T_ERR(MPI_T_ERR_PVAR_NO_ATOMIC, MPI_T_pvar_readreset(ses, h, &x));
    T_ERR(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(ses, hother, &x));
    T_ERR(MPI_T_ERR_INVALID_HANDLE,
          MPI_T_pvar_read(ses, MPI_T_PVAR_ALL_HANDLES, &x));
    T_OK(MPI_T_pvar_handle_free(ses, &h));
    MT_CHECK(h == MPI_T_PVAR_HANDLE_NULL, "handle not reset");
    T_OK(MPI_T_pvar_session_free(&ses));
    T_OK(MPI_T_pvar_session_free(&other)); /* frees hother with it */
    T_ERR(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_session_free(&ses));
}

int main(int argc, char **argv)
{
    int provided, rank, size, n;

    T_ERR(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
    /* Before MPI_Init, and nested. */
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    check_cvars();
    check_categories();
    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_pvars(rank, size);
    T_OK(MPI_T_finalize());
    T_OK(MPI_T_cvar_get_num(&n)); /* one init is left */
    MT_OK(MPI_Finalize());
    /* After MPI_Finalize too. */
    check_cvars();
    T_OK(MPI_T_finalize());
    T_ERR(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
    if (rank == 0)
        printf("OK mpit: %d ranks\n", size);
    return 0;
}
