/*
 * MPI_T's life, control variables, enumerations and categories.
 *
 * Control variable i is the i-th SHOAL_* variable of the registry
 * (src/base/config_vars.h, docs/CONFIG.md), with the value in effect in
 * this process.  Integers, sizes and durations (nanoseconds) are
 * MPI_COUNT, booleans MPI_INT, enumerations MPI_INT with an MPI_T_enum of
 * their choices, strings MPI_CHAR.  All are MPI_T_SCOPE_READONLY: the
 * library reads them once, at start-up, so a write could change nothing
 * (MPI_T_ERR_CVAR_SET_NEVER).
 *
 * Categories: one per prefix of the names (SHOAL_SHM_* is "SHM", SHOAL_TCP_*
 * "TCP", ...) holding those control variables, and "AM_COUNTERS" holding the
 * performance variables.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpit/mpit.h"

/* Where each variable's value is in base_cfg, in registry order. */
static const size_t cvar_off[] = {
#define BASE_CONFIG_VAR(name, type, def, extra, scope, doc)                  \
    offsetof(base_config_t, name),
#include "base/config_vars.h"
#undef BASE_CONFIG_VAR
};
#define NCVARS ((int)(sizeof(cvar_off) / sizeof(cvar_off[0])))

struct shoal_mpi_t_enum {
    const char *name; /* the variable's */
    int n;
    char **items;
};

struct shoal_mpi_t_cvar_handle {
    uint32_t magic;
    int index;
};
#define MPIT_MAGIC_CVAR 0x43766172u /* "Cvar" */

typedef struct category {
    char name[32];
    int n;      /* its control variables */
    int *cvars; /* their indices */
} category_t;

static struct {
    int refs;
    const base_config_var_t *vars;
    struct shoal_mpi_t_enum *enums; /* [NCVARS]; n 0 for non-enums */
    category_t *cats;
    int ncats; /* the cvar categories; "AM" comes after them */
} t;

int mpit_ready(void)
{
    return __atomic_load_n(&t.refs, __ATOMIC_ACQUIRE) > 0;
}

void mpit_str(const char *s, char *out, int *len)
{
    int need = (int)strlen(s) + 1;

    if (out != NULL && len != NULL && *len > 0)
        snprintf(out, (size_t)*len, "%s", s);
    if (len != NULL)
        *len = need;
}

/* ---- life ----------------------------------------------------------------------- */

static void enum_free(struct shoal_mpi_t_enum *e)
{
    for (int i = 0; i < e->n; i++)
        free(e->items[i]);
    free(e->items);
    e->items = NULL;
    e->n = 0;
}

/* Split "a|b|c" into e's items. */
static int enum_make(struct shoal_mpi_t_enum *e, const char *name,
                     const char *extra)
{
    int n = 1;

    for (const char *p = extra; *p; p++)
        n += *p == '|';
    e->name = name;
    e->items = calloc((size_t)n, sizeof(char *));
    if (e->items == NULL)
        return -1;
    const char *p = extra;
    for (int i = 0; i < n; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar != NULL ? (size_t)(bar - p) : strlen(p);
        e->items[i] = strndup(p, len);
        if (e->items[i] == NULL)
            return -1;
        e->n = i + 1;
        p = bar != NULL ? bar + 1 : p + len;
    }
    return 0;
}

/* The category of "SHOAL_SHM_CELLS": "SHM". */
static void prefix_of(const char *var, char *out, size_t cap)
{
    const char *p = var + strlen("SHOAL_");
    size_t len = strcspn(p, "_");

    if (len >= cap)
        len = cap - 1;
    memcpy(out, p, len);
    out[len] = '\0';
}

static void tables_free(void)
{
    for (int i = 0; t.enums != NULL && i < NCVARS; i++)
        enum_free(&t.enums[i]);
    free(t.enums);
    for (int i = 0; i < t.ncats; i++)
        free(t.cats[i].cvars);
    free(t.cats);
    t.enums = NULL;
    t.cats = NULL;
    t.ncats = 0;
}

static int tables_make(void)
{
    size_t count;

    t.vars = base_config_vars(&count);
    if ((int)count != NCVARS)
        return -1;
    t.enums = calloc((size_t)NCVARS, sizeof(*t.enums));
    t.cats = calloc((size_t)NCVARS, sizeof(*t.cats));
    if (t.enums == NULL || t.cats == NULL)
        return -1;
    for (int i = 0; i < NCVARS; i++) {
        char pre[32];
        int c;

        if (t.vars[i].type == BASE_CONFIG_ENUM &&
            enum_make(&t.enums[i], t.vars[i].name, t.vars[i].extra) != 0)
            return -1;
        prefix_of(t.vars[i].name, pre, sizeof(pre));
        for (c = 0; c < t.ncats; c++)
            if (strcmp(t.cats[c].name, pre) == 0)
                break;
        if (c == t.ncats) {
            snprintf(t.cats[c].name, sizeof(t.cats[c].name), "%s", pre);
            t.cats[c].cvars = malloc((size_t)NCVARS * sizeof(int));
            if (t.cats[c].cvars == NULL)
                return -1;
            t.ncats++;
        }
        t.cats[c].cvars[t.cats[c].n++] = i;
    }
    return 0;
}

int PMPI_T_init_thread(int required, int *provided)
{
    if (provided == NULL || required < MPI_THREAD_SINGLE ||
        required > MPI_THREAD_MULTIPLE)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&mpi_obj_lock);
    int rc = MPI_SUCCESS;
    if (t.refs == 0) {
        /* The values in effect: the environment's (read once). */
        if (base_config_load(0) != SHOAL_OK || tables_make() != 0) {
            tables_free();
            rc = MPI_T_ERR_CANNOT_INIT;
        }
    }
    if (rc == MPI_SUCCESS)
        __atomic_add_fetch(&t.refs, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mpi_obj_lock);
    /* Every call locks what it shares: any level is fine. */
    *provided = required;
    return rc;
}
SHOAL_MPI_WEAK(T_init_thread)

int PMPI_T_finalize(void)
{
    MPIT_CHECK();
    pthread_mutex_lock(&mpi_obj_lock);
    if (__atomic_sub_fetch(&t.refs, 1, __ATOMIC_ACQ_REL) == 0)
        tables_free();
    pthread_mutex_unlock(&mpi_obj_lock);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_finalize)

/* ---- enumerations ----------------------------------------------------------------- */

static int enum_ok(MPI_T_enum e)
{
    return e != NULL && t.enums != NULL && e >= t.enums &&
           e < t.enums + NCVARS && e->n > 0;
}

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name,
                         int *name_len)
{
    MPIT_CHECK();
    if (!enum_ok(enumtype))
        return MPI_T_ERR_INVALID_HANDLE;
    if (num == NULL)
        return MPI_T_ERR_INVALID;
    *num = enumtype->n;
    mpit_str(enumtype->name, name, name_len);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value,
                         char *name, int *name_len)
{
    MPIT_CHECK();
    if (!enum_ok(enumtype))
        return MPI_T_ERR_INVALID_HANDLE;
    if (index < 0 || index >= enumtype->n)
        return MPI_T_ERR_INVALID_ITEM;
    if (value == NULL)
        return MPI_T_ERR_INVALID;
    *value = index; /* the variable's value is its choice's index */
    mpit_str(enumtype->items[index], name, name_len);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_enum_get_item)

/* ---- control variables ------------------------------------------------------------ */

int PMPI_T_cvar_get_num(int *num_cvar)
{
    MPIT_CHECK();
    if (num_cvar == NULL)
        return MPI_T_ERR_INVALID;
    *num_cvar = NCVARS;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_cvar_get_num)

static MPI_Datatype cvar_type(int i)
{
    switch (t.vars[i].type) {
    case BASE_CONFIG_BOOL:
    case BASE_CONFIG_ENUM:
        return MPI_INT;
    case BASE_CONFIG_STRING:
        return MPI_CHAR;
    default:
        return MPI_COUNT;
    }
}

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len,
                         int *verbosity, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    char text[1024];

    MPIT_CHECK();
    if (cvar_index < 0 || cvar_index >= NCVARS)
        return MPI_T_ERR_INVALID_INDEX;
    const base_config_var_t *v = &t.vars[cvar_index];
    mpit_str(v->name, name, name_len);
    if (verbosity != NULL)
        *verbosity = cvar_index == 0 ? MPI_T_VERBOSITY_USER_BASIC
                                     : MPI_T_VERBOSITY_TUNER_DETAIL;
    if (datatype != NULL)
        *datatype = cvar_type(cvar_index);
    if (enumtype != NULL)
        *enumtype = v->type == BASE_CONFIG_ENUM ? &t.enums[cvar_index]
                                                : MPI_T_ENUM_NULL;
    snprintf(text, sizeof(text), "%s (default %s%s%s%s)", v->doc,
             v->defval[0] ? v->defval : "empty",
             v->type == BASE_CONFIG_DURATION ? "; read in nanoseconds" : "",
             v->type == BASE_CONFIG_SIZE ? "; read in bytes" : "",
             strcmp(v->scope, "shoalrun") == 0 ? "; read by the launcher"
                                               : "");
    mpit_str(text, desc, desc_len);
    if (bind != NULL)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope != NULL)
        *scope = MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_cvar_get_info)

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    MPIT_CHECK();
    if (name == NULL || cvar_index == NULL)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < NCVARS; i++)
        if (strcmp(t.vars[i].name, name) == 0) {
            *cvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
SHOAL_MPI_WEAK(T_cvar_get_index)

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle,
                             MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle; /* bound to no object */
    MPIT_CHECK();
    if (cvar_index < 0 || cvar_index >= NCVARS)
        return MPI_T_ERR_INVALID_INDEX;
    if (handle == NULL || count == NULL)
        return MPI_T_ERR_INVALID;
    MPI_T_cvar_handle h = calloc(1, sizeof(*h));
    if (h == NULL)
        return MPI_T_ERR_MEMORY;
    h->magic = MPIT_MAGIC_CVAR;
    h->index = cvar_index;
    if (t.vars[cvar_index].type == BASE_CONFIG_STRING) {
        const char *s =
            *(const char *const *)((const char *)&base_cfg +
                                   cvar_off[cvar_index]);
        *count = (int)strlen(s) + 1;
    } else {
        *count = 1;
    }
    *handle = h;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_cvar_handle_alloc)

static int cvar_handle_ok(MPI_T_cvar_handle h)
{
    return h != NULL && h->magic == MPIT_MAGIC_CVAR;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MPIT_CHECK();
    if (handle == NULL || !cvar_handle_ok(*handle))
        return MPI_T_ERR_INVALID_HANDLE;
    (*handle)->magic = MPI_MAGIC_DEAD;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    MPIT_CHECK();
    if (!cvar_handle_ok(handle))
        return MPI_T_ERR_INVALID_HANDLE;
    if (buf == NULL)
        return MPI_T_ERR_INVALID;
    int i = handle->index;
    const char *field = (const char *)&base_cfg + cvar_off[i];
    switch (t.vars[i].type) {
    case BASE_CONFIG_STRING: {
        const char *s = *(const char *const *)field;
        memcpy(buf, s, strlen(s) + 1);
        break;
    }
    case BASE_CONFIG_BOOL:
    case BASE_CONFIG_ENUM: {
        int v = (int)*(const int64_t *)field;
        memcpy(buf, &v, sizeof(v));
        break;
    }
    default: {
        MPI_Count v = (MPI_Count)*(const int64_t *)field;
        memcpy(buf, &v, sizeof(v));
        break;
    }
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    MPIT_CHECK();
    if (!cvar_handle_ok(handle))
        return MPI_T_ERR_INVALID_HANDLE;
    if (buf == NULL)
        return MPI_T_ERR_INVALID;
    /* The library read it at start-up and never looks again. */
    return MPI_T_ERR_CVAR_SET_NEVER;
}
SHOAL_MPI_WEAK(T_cvar_write)

/* ---- categories ------------------------------------------------------------------- */

int PMPI_T_category_get_num(int *num_cat)
{
    MPIT_CHECK();
    if (num_cat == NULL)
        return MPI_T_ERR_INVALID;
    *num_cat = t.ncats + 1;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_category_get_num)

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len,
                             char *desc, int *desc_len, int *num_cvars,
                             int *num_pvars, int *num_categories)
{
    char text[96];

    MPIT_CHECK();
    if (cat_index < 0 || cat_index > t.ncats)
        return MPI_T_ERR_INVALID_INDEX;
    int am = cat_index == t.ncats;
    mpit_str(am ? MPIT_PVAR_CATEGORY : t.cats[cat_index].name, name,
             name_len);
    if (am)
        snprintf(text, sizeof(text), "the active-message layer's counters");
    else
        snprintf(text, sizeof(text), "the SHOAL_%s_* settings",
                 t.cats[cat_index].name);
    mpit_str(text, desc, desc_len);
    if (num_cvars != NULL)
        *num_cvars = am ? 0 : t.cats[cat_index].n;
    if (num_pvars != NULL)
        *num_pvars = am ? mpit_pvar_count() : 0;
    if (num_categories != NULL)
        *num_categories = 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_category_get_info)

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    MPIT_CHECK();
    if (name == NULL || cat_index == NULL)
        return MPI_T_ERR_INVALID;
    for (int c = 0; c < t.ncats; c++)
        if (strcmp(t.cats[c].name, name) == 0) {
            *cat_index = c;
            return MPI_SUCCESS;
        }
    if (strcmp(name, MPIT_PVAR_CATEGORY) == 0) {
        *cat_index = t.ncats;
        return MPI_SUCCESS;
    }
    return MPI_T_ERR_INVALID_NAME;
}
SHOAL_MPI_WEAK(T_category_get_index)

/* The first len members of a category's list, n of them. */
static int list_out(int cat_index, int len, int indices[], int want_pvars)
{
    MPIT_CHECK();
    if (cat_index < 0 || cat_index > t.ncats)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && indices == NULL))
        return MPI_T_ERR_INVALID;
    int am = cat_index == t.ncats;
    int n = am ? (want_pvars ? mpit_pvar_count() : 0)
               : (want_pvars ? 0 : t.cats[cat_index].n);
    for (int i = 0; i < n && i < len; i++)
        indices[i] = am ? i : t.cats[cat_index].cvars[i];
    return MPI_SUCCESS;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return list_out(cat_index, len, indices, 0);
}
SHOAL_MPI_WEAK(T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return list_out(cat_index, len, indices, 1);
}
SHOAL_MPI_WEAK(T_category_get_pvars)

/* No category holds another, and none holds events. */
int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    MPIT_CHECK();
    (void)indices;
    if (cat_index < 0 || cat_index > t.ncats)
        return MPI_T_ERR_INVALID_INDEX;
    return len < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_category_get_categories)

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    MPIT_CHECK();
    if (cat_index < 0 || cat_index > t.ncats)
        return MPI_T_ERR_INVALID_INDEX;
    if (num_events == NULL)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_category_get_num_events)

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    return PMPI_T_category_get_categories(cat_index, len, indices);
}
SHOAL_MPI_WEAK(T_category_get_events)

int PMPI_T_category_changed(int *update_number)
{
    MPIT_CHECK();
    if (update_number == NULL)
        return MPI_T_ERR_INVALID;
    *update_number = 0; /* the lists never change */
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_category_changed)

/* Events (MPI 4.0) and their sources: Shoal raises none yet. */
int PMPI_T_source_get_num(int *num_sources)
{
    MPIT_CHECK();
    if (num_sources == NULL)
        return MPI_T_ERR_INVALID;
    *num_sources = 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_source_get_num)

int PMPI_T_event_get_num(int *num_events)
{
    MPIT_CHECK();
    if (num_events == NULL)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_event_get_num)

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    MPIT_CHECK();
    if (name == NULL || event_index == NULL)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}
SHOAL_MPI_WEAK(T_event_get_index)

int PMPI_T_event_get_info(int event_index, char *name, int *name_len,
                          int *verbosity, MPI_Datatype array_of_datatypes[],
                          MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype,
                          MPI_Info *info, char *desc, int *desc_len,
                          int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity;
    (void)array_of_datatypes, (void)array_of_displacements;
    (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    MPIT_CHECK();
    return MPI_T_ERR_INVALID_INDEX; /* there are none */
}
SHOAL_MPI_WEAK(T_event_get_info)

int PMPI_T_source_get_info(int source_index, char *name, int *name_len,
                           char *desc, int *desc_len,
                           MPI_T_source_order *ordering,
                           MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                           MPI_Info *info)
{
    (void)source_index, (void)name, (void)name_len, (void)desc;
    (void)desc_len, (void)ordering, (void)ticks_per_second, (void)max_ticks;
    (void)info;
    MPIT_CHECK();
    return MPI_T_ERR_INVALID_INDEX;
}
SHOAL_MPI_WEAK(T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    (void)source_index, (void)timestamp;
    MPIT_CHECK();
    return MPI_T_ERR_INVALID_INDEX;
}
SHOAL_MPI_WEAK(T_source_get_timestamp)
