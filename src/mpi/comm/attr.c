/*
 * Attribute caching on communicators and datatypes: keyvals, set/get/
 * delete, copying on duplication and deletion on free; the predefined
 * attributes of MPI_COMM_WORLD; the deprecated MPI-1 names.
 *
 * Keyvals live in a process-wide table guarded by mpi_obj_lock.  A keyval
 * is referenced by its user handle and by every attribute set with it, so
 * MPI_Comm_free_keyval leaves attributes working until they are deleted.
 * User callbacks run without the lock held: they may call MPI.
 * An object's attribute list holds the newest attribute first; deletion
 * walks it in that order (reverse order of setting).
 */
#include <stdlib.h>

#include "mpi/comm/comm.h"
#include "mpi/core/errhandler.h"
#include "mpi/core/ft.h"

#define KEYVAL_FIRST 16 /* below: predefined keys (MPI_TAG_UB...) */

typedef struct keyval {
    int kind; /* MPI_ATTR_COMM or MPI_ATTR_TYPE; 0 for a free slot */
    int refs;
    int freed;
    MPI_Comm_copy_attr_function *comm_copy;
    MPI_Comm_delete_attr_function *comm_delete;
    MPI_Type_copy_attr_function *type_copy;
    MPI_Type_delete_attr_function *type_delete;
    void *extra;
} keyval_t;

static keyval_t *keyvals;
static int nkeyvals;

/* ---- predefined callbacks --------------------------------------------------- */

#define EXPORT __attribute__((visibility("default")))

EXPORT int shoal_mpi_null_copy_fn(MPI_Comm c, int k, void *e, void *in,
                                  void *out, int *flag)
{
    (void)c, (void)k, (void)e, (void)in, (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

EXPORT int shoal_mpi_dup_fn(MPI_Comm c, int k, void *e, void *in, void *out,
                            int *flag)
{
    (void)c, (void)k, (void)e;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

EXPORT int shoal_mpi_null_delete_fn(MPI_Comm c, int k, void *v, void *e)
{
    (void)c, (void)k, (void)v, (void)e;
    return MPI_SUCCESS;
}

EXPORT int shoal_mpi_type_null_copy_fn(MPI_Datatype t, int k, void *e,
                                       void *in, void *out, int *flag)
{
    (void)t, (void)k, (void)e, (void)in, (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

EXPORT int shoal_mpi_type_dup_fn(MPI_Datatype t, int k, void *e, void *in,
                                 void *out, int *flag)
{
    (void)t, (void)k, (void)e;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

EXPORT int shoal_mpi_type_null_delete_fn(MPI_Datatype t, int k, void *v,
                                         void *e)
{
    (void)t, (void)k, (void)v, (void)e;
    return MPI_SUCCESS;
}

/* ---- keyval table ------------------------------------------------------------- */

/* Grow the table so that slot k exists (free slots have kind 0); called
 * with the lock held.  MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int table_hold(int k)
{
    int n = nkeyvals < KEYVAL_FIRST ? 2 * KEYVAL_FIRST : nkeyvals;

    if (k < nkeyvals)
        return MPI_SUCCESS;
    while (n <= k)
        n *= 2;
    keyval_t *t = realloc(keyvals, (size_t)n * sizeof(*t));
    if (t == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = nkeyvals; i < n; i++)
        t[i].kind = 0;
    keyvals = t;
    nkeyvals = n;
    return MPI_SUCCESS;
}

static int keyval_new(keyval_t *proto, int *keyval_p)
{
    int k;

    pthread_mutex_lock(&mpi_obj_lock);
    for (k = KEYVAL_FIRST; k < nkeyvals; k++)
        if (keyvals[k].kind == 0)
            break;
    if (table_hold(k) != MPI_SUCCESS) {
        pthread_mutex_unlock(&mpi_obj_lock);
        return MPI_ERR_NO_MEM;
    }
    keyvals[k] = *proto;
    keyvals[k].refs = 1;
    keyvals[k].freed = 0;
    pthread_mutex_unlock(&mpi_obj_lock);
    *keyval_p = k;
    return MPI_SUCCESS;
}

/* Called with the lock held. */
static keyval_t *keyval_get(int k, int kind)
{
    if (k < KEYVAL_FIRST || k >= nkeyvals || keyvals[k].kind != kind)
        return NULL;
    return &keyvals[k];
}

/* Called with the lock held. */
static void keyval_unref(int k)
{
    if (--keyvals[k].refs == 0)
        keyvals[k].kind = 0;
}

/* A copy of keyval k's entry, taken under the lock; 0 if invalid. */
static int keyval_snapshot(int k, int kind, int live, keyval_t *out)
{
    keyval_t *kv;

    pthread_mutex_lock(&mpi_obj_lock);
    kv = keyval_get(k, kind);
    if (kv != NULL && !(live && kv->freed))
        *out = *kv;
    else
        kv = NULL;
    pthread_mutex_unlock(&mpi_obj_lock);
    return kv != NULL;
}

static int call_delete(int kind, void *obj, const keyval_t *kv, int k,
                       void *val)
{
    if (kind == MPI_ATTR_COMM)
        return kv->comm_delete != NULL
                   ? kv->comm_delete((MPI_Comm)obj, k, val, kv->extra)
                   : MPI_SUCCESS;
    return kv->type_delete != NULL
               ? kv->type_delete((MPI_Datatype)obj, k, val, kv->extra)
               : MPI_SUCCESS;
}

static int call_copy(int kind, void *obj, const keyval_t *kv, int k,
                     void *in, void **out, int *flag)
{
    *flag = 0;
    if (kind == MPI_ATTR_COMM)
        return kv->comm_copy != NULL
                   ? kv->comm_copy((MPI_Comm)obj, k, kv->extra, in, out, flag)
                   : MPI_SUCCESS;
    return kv->type_copy != NULL
               ? kv->type_copy((MPI_Datatype)obj, k, kv->extra, in, out, flag)
               : MPI_SUCCESS;
}

/* ---- lists ---------------------------------------------------------------------- */

int mpi_attr_copy_all(int kind, void *from_obj, mpi_attr_t *from,
                      mpi_attr_t **to)
{
    mpi_attr_t **tail = to;

    while (*tail != NULL)
        tail = &(*tail)->next;
    for (mpi_attr_t *a = from; a != NULL; a = a->next) {
        keyval_t kv;
        void *out = NULL;
        int flag = 0, rc;

        if (!keyval_snapshot(a->keyval, kind, 0, &kv))
            continue;
        rc = call_copy(kind, from_obj, &kv, a->keyval, a->val, &out, &flag);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!flag)
            continue;
        *tail = malloc(sizeof(**tail));
        if (*tail == NULL)
            return MPI_ERR_NO_MEM;
        (*tail)->next = NULL;
        (*tail)->keyval = a->keyval;
        (*tail)->val = out;
        tail = &(*tail)->next;
        pthread_mutex_lock(&mpi_obj_lock);
        keyvals[a->keyval].refs++;
        pthread_mutex_unlock(&mpi_obj_lock);
    }
    return MPI_SUCCESS;
}

/*
 * Run the delete callback of the attribute at *link; on success unlink and
 * free it.  The callback may set attributes on the same object, so the
 * link is looked up again before unlinking.
 */
static int delete_one(int kind, void *obj, mpi_attr_t **list,
                      mpi_attr_t **link)
{
    mpi_attr_t *a = *link;
    keyval_t kv;
    int rc = MPI_SUCCESS;

    if (keyval_snapshot(a->keyval, kind, 0, &kv))
        rc = call_delete(kind, obj, &kv, a->keyval, a->val);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&mpi_obj_lock);
    for (link = list; *link != NULL && *link != a; link = &(*link)->next)
        ;
    if (*link == a)
        *link = a->next;
    keyval_unref(a->keyval);
    pthread_mutex_unlock(&mpi_obj_lock);
    free(a);
    return MPI_SUCCESS;
}

int mpi_attr_delete_all(int kind, void *obj, mpi_attr_t **list)
{
    while (*list != NULL) {
        int rc = delete_one(kind, obj, list, list);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static mpi_attr_t **find(mpi_attr_t **list, int k)
{
    while (*list != NULL && (*list)->keyval != k)
        list = &(*list)->next;
    return list;
}

/* ---- predefined attributes ------------------------------------------------------ */

static int pre_tag_ub = 0x7fffffff, pre_host = MPI_PROC_NULL,
           pre_io = MPI_ANY_SOURCE, pre_wtime_global = 0, pre_universe,
           pre_appnum = 0, pre_ft;

static void *predefined(int k)
{
    switch (k) {
    case MPI_TAG_UB:
        return &pre_tag_ub;
    case MPI_HOST:
        return &pre_host;
    case MPI_IO:
        return &pre_io;
    case MPI_WTIME_IS_GLOBAL:
        return &pre_wtime_global;
    case MPI_UNIVERSE_SIZE:
        pre_universe = mpi.world_size;
        return &pre_universe;
    case MPI_LASTUSEDCODE:
        return mpi_errh_lastused();
    case MPI_APPNUM:
        return &pre_appnum;
    case MPIX_FT:
        pre_ft = mpi_ft.on != 0;
        return &pre_ft;
    default:
        return NULL;
    }
}

/* ---- the generic calls ------------------------------------------------------------ */

typedef struct attr_obj {
    int kind;
    void *obj;
    mpi_attr_t **list;
    MPI_Comm err_comm; /* where errors are reported */
    const char *fn;
} attr_obj_t;

static int bad_keyval(const attr_obj_t *o, int k)
{
    return mpi_error(o->err_comm, MPI_ERR_KEYVAL, o->fn,
                     "keyval %d is not a %s keyval (or was freed)", k,
                     o->kind == MPI_ATTR_COMM ? "communicator" : "datatype");
}

static int attr_set(const attr_obj_t *o, int k, void *val)
{
    mpi_attr_t **link, *a;
    keyval_t kv;
    int rc;

    if (!keyval_snapshot(k, o->kind, 1, &kv))
        return bad_keyval(o, k);
    pthread_mutex_lock(&mpi_obj_lock);
    a = *find(o->list, k);
    pthread_mutex_unlock(&mpi_obj_lock);
    if (a != NULL) {
        /* Replacing a value deletes the old one first. */
        rc = call_delete(o->kind, o->obj, &kv, k, a->val);
        if (rc != MPI_SUCCESS)
            return mpi_error(o->err_comm, rc, o->fn,
                             "the delete callback of keyval %d returned %d",
                             k, rc);
        a->val = val;
        return MPI_SUCCESS;
    }
    a = malloc(sizeof(*a));
    if (a == NULL)
        return mpi_error(o->err_comm, MPI_ERR_NO_MEM, o->fn, "no memory");
    a->keyval = k;
    a->val = val;
    pthread_mutex_lock(&mpi_obj_lock);
    keyvals[k].refs++;
    link = o->list;
    a->next = *link;
    *link = a;
    pthread_mutex_unlock(&mpi_obj_lock);
    return MPI_SUCCESS;
}

static int attr_get(const attr_obj_t *o, int k, void *val, int *flag)
{
    keyval_t kv;
    mpi_attr_t *a;

    if (val == NULL || flag == NULL)
        return mpi_error(o->err_comm, MPI_ERR_ARG, o->fn,
                         "attribute_val or flag is NULL");
    if (o->kind == MPI_ATTR_COMM && predefined(k) != NULL) {
        *(void **)val = predefined(k);
        *flag = 1;
        return MPI_SUCCESS;
    }
    /* A freed keyval lives on while attached (MPI 4.0 7.7.2): its
     * attributes can still be read and deleted, only not set anew. */
    if (!keyval_snapshot(k, o->kind, 0, &kv))
        return bad_keyval(o, k);
    pthread_mutex_lock(&mpi_obj_lock);
    a = *find(o->list, k);
    *flag = a != NULL;
    if (a != NULL)
        *(void **)val = a->val;
    pthread_mutex_unlock(&mpi_obj_lock);
    return MPI_SUCCESS;
}

static int attr_delete(const attr_obj_t *o, int k)
{
    mpi_attr_t **link;
    keyval_t kv;
    int rc;

    if (!keyval_snapshot(k, o->kind, 0, &kv)) /* freed: see attr_get */
        return bad_keyval(o, k);
    pthread_mutex_lock(&mpi_obj_lock);
    link = find(o->list, k);
    pthread_mutex_unlock(&mpi_obj_lock);
    if (*link == NULL)
        return MPI_SUCCESS;
    rc = delete_one(o->kind, o->obj, o->list, link);
    if (rc != MPI_SUCCESS)
        return mpi_error(o->err_comm, rc, o->fn,
                         "the delete callback of keyval %d returned %d", k,
                         rc);
    return MPI_SUCCESS;
}

static int keyval_free(int *keyval, int kind, const char *fn)
{
    keyval_t *kv;

    MPI_CHECK_INIT(fn);
    if (keyval == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "keyval is NULL");
    pthread_mutex_lock(&mpi_obj_lock);
    kv = keyval_get(*keyval, kind);
    if (kv == NULL || kv->freed) {
        pthread_mutex_unlock(&mpi_obj_lock);
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, fn,
                         "keyval %d is not a live %s keyval", *keyval,
                         kind == MPI_ATTR_COMM ? "communicator" : "datatype");
    }
    kv->freed = 1;
    keyval_unref(*keyval);
    pthread_mutex_unlock(&mpi_obj_lock);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* ---- communicators ----------------------------------------------------------------- */

static int comm_obj(MPI_Comm comm, const char *fn, attr_obj_t *o)
{
    MPI_COMM_CHECK(comm, fn);
    *o = (attr_obj_t){MPI_ATTR_COMM, comm, &comm->attrs, comm, fn};
    return MPI_SUCCESS;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                            MPI_Comm_delete_attr_function *delete_fn,
                            int *keyval, void *extra_state)
{
    keyval_t kv = {MPI_ATTR_COMM, 0, 0, copy_fn, delete_fn, NULL, NULL,
                   extra_state};
    int rc;

    MPI_CHECK_INIT("MPI_Comm_create_keyval");
    if (keyval == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                         "MPI_Comm_create_keyval", "keyval is NULL");
    rc = keyval_new(&kv, keyval);
    if (rc != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, rc, "MPI_Comm_create_keyval",
                         "no memory");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_create_keyval)

int PMPI_Comm_free_keyval(int *keyval)
{
    return keyval_free(keyval, MPI_ATTR_COMM, "MPI_Comm_free_keyval");
}
SHOAL_MPI_WEAK(Comm_free_keyval)

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    attr_obj_t o;
    int rc;

    MPI_CHECK_INIT("MPI_Comm_set_attr");
    rc = comm_obj(comm, "MPI_Comm_set_attr", &o);
    return rc != MPI_SUCCESS ? rc : attr_set(&o, keyval, attribute_val);
}
SHOAL_MPI_WEAK(Comm_set_attr)

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val,
                       int *flag)
{
    attr_obj_t o;
    int rc;

    MPI_CHECK_INIT("MPI_Comm_get_attr");
    rc = comm_obj(comm, "MPI_Comm_get_attr", &o);
    return rc != MPI_SUCCESS ? rc : attr_get(&o, keyval, attribute_val, flag);
}
SHOAL_MPI_WEAK(Comm_get_attr)

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    attr_obj_t o;
    int rc;

    MPI_CHECK_INIT("MPI_Comm_delete_attr");
    rc = comm_obj(comm, "MPI_Comm_delete_attr", &o);
    return rc != MPI_SUCCESS ? rc : attr_delete(&o, keyval);
}
SHOAL_MPI_WEAK(Comm_delete_attr)

/* ---- datatypes ---------------------------------------------------------------------- */

static int type_obj(MPI_Datatype type, const char *fn, attr_obj_t *o)
{
    if (type == NULL || type->magic != MPI_MAGIC_DT)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_TYPE, fn,
                         "invalid datatype %p", (void *)type);
    *o = (attr_obj_t){MPI_ATTR_TYPE, type, &type->attrs, MPI_COMM_WORLD, fn};
    return MPI_SUCCESS;
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
                            MPI_Type_delete_attr_function *delete_fn,
                            int *keyval, void *extra_state)
{
    keyval_t kv = {MPI_ATTR_TYPE, 0, 0, NULL, NULL, copy_fn, delete_fn,
                   extra_state};
    int rc;

    MPI_CHECK_INIT("MPI_Type_create_keyval");
    if (keyval == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                         "MPI_Type_create_keyval", "keyval is NULL");
    rc = keyval_new(&kv, keyval);
    if (rc != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, rc, "MPI_Type_create_keyval",
                         "no memory");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_create_keyval)

int PMPI_Type_free_keyval(int *keyval)
{
    return keyval_free(keyval, MPI_ATTR_TYPE, "MPI_Type_free_keyval");
}
SHOAL_MPI_WEAK(Type_free_keyval)

int PMPI_Type_set_attr(MPI_Datatype datatype, int keyval, void *attribute_val)
{
    attr_obj_t o;
    int rc;

    MPI_CHECK_INIT("MPI_Type_set_attr");
    rc = type_obj(datatype, "MPI_Type_set_attr", &o);
    return rc != MPI_SUCCESS ? rc : attr_set(&o, keyval, attribute_val);
}
SHOAL_MPI_WEAK(Type_set_attr)

int PMPI_Type_get_attr(MPI_Datatype datatype, int keyval, void *attribute_val,
                       int *flag)
{
    attr_obj_t o;
    int rc;

    MPI_CHECK_INIT("MPI_Type_get_attr");
    rc = type_obj(datatype, "MPI_Type_get_attr", &o);
    return rc != MPI_SUCCESS ? rc : attr_get(&o, keyval, attribute_val, flag);
}
SHOAL_MPI_WEAK(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype datatype, int keyval)
{
    attr_obj_t o;
    int rc;

    MPI_CHECK_INIT("MPI_Type_delete_attr");
    rc = type_obj(datatype, "MPI_Type_delete_attr", &o);
    return rc != MPI_SUCCESS ? rc : attr_delete(&o, keyval);
}
SHOAL_MPI_WEAK(Type_delete_attr)

/* ---- deprecated MPI-1 names ---------------------------------------------------------- */

int PMPI_Keyval_create(MPI_Copy_function *copy_fn,
                       MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
SHOAL_MPI_WEAK(Keyval_create)

int PMPI_Keyval_free(int *keyval)
{
    return keyval_free(keyval, MPI_ATTR_COMM, "MPI_Keyval_free");
}
SHOAL_MPI_WEAK(Keyval_free)

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}
SHOAL_MPI_WEAK(Attr_put)

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
SHOAL_MPI_WEAK(Attr_get)

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return PMPI_Comm_delete_attr(comm, keyval);
}
SHOAL_MPI_WEAK(Attr_delete)

/* ---- checkpoints (core/ckpt_objs.c) --------------------------------------------- */

/* Keyvals are table slots: a restart puts each back in the slot its
 * number names, with the callbacks it had (whose addresses a restarted
 * process keeps: core/ckpt_fixed.c). */
int mpi_keyval_slots(void)
{
    return nkeyvals;
}

int mpi_keyval_save(int k, mpi_keyval_rec_t *r)
{
    int used;

    pthread_mutex_lock(&mpi_obj_lock);
    used = k >= KEYVAL_FIRST && k < nkeyvals && keyvals[k].kind != 0;
    if (used)
        *r = (mpi_keyval_rec_t){
            .kind = keyvals[k].kind, .freed = keyvals[k].freed,
            .comm_copy = (uint64_t)(uintptr_t)keyvals[k].comm_copy,
            .comm_delete = (uint64_t)(uintptr_t)keyvals[k].comm_delete,
            .type_copy = (uint64_t)(uintptr_t)keyvals[k].type_copy,
            .type_delete = (uint64_t)(uintptr_t)keyvals[k].type_delete,
            .extra = (uint64_t)(uintptr_t)keyvals[k].extra};
    pthread_mutex_unlock(&mpi_obj_lock);
    return used;
}

/* Slot k again as r says, referenced by its handle unless freed (the
 * attributes put back add theirs); MPI_ERR_OTHER when the program made
 * a keyval there first, MPI_ERR_KEYVAL when r is not one. */
int mpi_keyval_restore(int k, const mpi_keyval_rec_t *r)
{
    int rc = MPI_SUCCESS;

    if (k < KEYVAL_FIRST || k > (1 << 24) ||
        (r->kind != MPI_ATTR_COMM && r->kind != MPI_ATTR_TYPE))
        return MPI_ERR_KEYVAL;
    pthread_mutex_lock(&mpi_obj_lock);
    if (table_hold(k) != MPI_SUCCESS) {
        pthread_mutex_unlock(&mpi_obj_lock);
        return MPI_ERR_NO_MEM;
    }
    if (keyvals[k].kind != 0) {
        rc = MPI_ERR_OTHER;
    } else {
        keyvals[k] = (keyval_t){
            .kind = r->kind, .refs = !r->freed, .freed = r->freed != 0,
            .comm_copy = (MPI_Comm_copy_attr_function *)(uintptr_t)
                             r->comm_copy,
            .comm_delete = (MPI_Comm_delete_attr_function *)(uintptr_t)
                               r->comm_delete,
            .type_copy = (MPI_Type_copy_attr_function *)(uintptr_t)
                             r->type_copy,
            .type_delete = (MPI_Type_delete_attr_function *)(uintptr_t)
                               r->type_delete,
            .extra = (void *)(uintptr_t)r->extra};
        /* A freed keyval lives while an attribute uses it: kept until
         * mpi_keyval_restore_done. */
        if (r->freed)
            keyvals[k].refs = 1 << 30;
    }
    pthread_mutex_unlock(&mpi_obj_lock);
    return rc;
}

/* The attributes are back: a freed keyval none of them uses goes. */
void mpi_keyval_restore_done(void)
{
    pthread_mutex_lock(&mpi_obj_lock);
    for (int k = KEYVAL_FIRST; k < nkeyvals; k++)
        if (keyvals[k].kind != 0 && keyvals[k].refs >= 1 << 30) {
            keyvals[k].refs -= 1 << 30;
            if (keyvals[k].refs == 0)
                keyvals[k].kind = 0;
        }
    pthread_mutex_unlock(&mpi_obj_lock);
}

/* Attribute (k, val) at the end of list (restored in their order);
 * MPI_ERR_KEYVAL when k is not a keyval of kind here. */
int mpi_attr_restore(mpi_attr_t **list, int kind, int k, void *val)
{
    mpi_attr_t *a = malloc(sizeof(*a));

    if (a == NULL)
        return MPI_ERR_NO_MEM;
    a->next = NULL;
    a->keyval = k;
    a->val = val;
    pthread_mutex_lock(&mpi_obj_lock);
    if (keyval_get(k, kind) == NULL || *find(list, k) != NULL) {
        pthread_mutex_unlock(&mpi_obj_lock);
        free(a);
        return MPI_ERR_KEYVAL;
    }
    *find(list, -1) = a; /* the end (keyvals are never -1) */
    keyvals[k].refs++;
    pthread_mutex_unlock(&mpi_obj_lock);
    return MPI_SUCCESS;
}
