/*
 * Error handlers and user error codes: a user handler sees the right
 * communicator and code (and is inherited by duplicates), ERRORS_RETURN,
 * get_errhandler returning a reference, Comm_call_errhandler, and
 * Add_error_class/code/string round trips through Error_class and
 * Error_string, MPI_LASTUSEDCODE, removal.
 */
#include "mpitest.h"

static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_code = *code;
    last_comm = *comm;
}

static void user_handler(void)
{
    MPI_Errhandler eh, got;
    MPI_Comm dup;
    int n;

    MT_OK(MPI_Comm_create_errhandler(handler, &eh));
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_OK(MPI_Comm_set_errhandler(dup, eh));
    MT_OK(MPI_Errhandler_free(&eh)); /* the communicator keeps it */
    MT_CHECK(eh == MPI_ERRHANDLER_NULL, "free sets NULL");
    n = MPI_Comm_rank(dup, NULL);
    MT_CHECK(calls == 1 && last_code == n && last_comm == dup,
             "handler: %d calls, code %d (returned %d)", calls, last_code, n);
    {
        int cls;
        MT_OK(MPI_Error_class(n, &cls));
        MT_CHECK(cls == MPI_ERR_ARG, "class %d", cls);
    }
    MT_OK(MPI_Comm_get_errhandler(dup, &got));
    {
        /* a duplicate inherits the handler */
        MPI_Comm d2;
        MT_OK(MPI_Comm_dup(dup, &d2));
        MPI_Group_free(NULL); /* reported on WORLD: ERRORS_RETURN */
        MT_CHECK(calls == 1, "WORLD error went to the user handler");
        MPI_Comm_size(d2, NULL);
        MT_CHECK(calls == 2 && last_comm == d2, "inherited: %d", calls);
        MT_OK(MPI_Comm_free(&d2));
    }
    MT_OK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    MT_CHECK(calls == 3 && last_code == MPI_ERR_OTHER, "call_errhandler");
    MT_OK(MPI_Comm_free(&dup));
    /* got is still valid: attach it elsewhere, then release */
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, got));
    MPI_Comm_size(MPI_COMM_SELF, NULL);
    MT_CHECK(calls == 4 && last_comm == MPI_COMM_SELF, "self handler");
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_OK(MPI_Errhandler_free(&got));
    MT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    MT_CHECK(got == MPI_ERRORS_RETURN, "world handler");
    MT_OK(MPI_Errhandler_free(&got));
    MT_ERR(MPI_ERR_ARG, MPI_Comm_set_errhandler(MPI_COMM_WORLD, NULL));
    MT_ERR(MPI_ERR_COMM, MPI_Comm_set_errhandler(MPI_COMM_NULL,
                                                 MPI_ERRORS_RETURN));
}

/* An attribute copy callback that fails with the code in extra. */
static int copy_fails(MPI_Comm comm, int key, void *extra, void *in, void *out,
                      int *flag)
{
    (void)comm;
    (void)key;
    (void)in;
    (void)out;
    *flag = 0;
    return *(int *)extra;
}

/* MPI_Comm_dup fails with the user's code its copy callback returned, and
 * that code's string is the user's, exactly: no detail appended. */
static void user_code_from_dup(int code, const char *text)
{
    int key, one = 1, rc, len;
    char s[MPI_MAX_ERROR_STRING];
    MPI_Comm dup = MPI_COMM_NULL;

    MT_OK(MPI_Comm_create_keyval(copy_fails, MPI_COMM_NULL_DELETE_FN, &key,
                                 &code));
    MT_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &one));
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MT_CHECK(rc == code, "Comm_dup gave %d, not the callback's %d", rc, code);
    MT_CHECK(dup == MPI_COMM_NULL, "a failed dup made a communicator");
    MT_OK(MPI_Error_string(rc, s, &len));
    MT_CHECK(strcmp(s, text) == 0 && len == (int)strlen(text),
             "string of the user's code: '%s' (%d), not '%s'", s, len, text);
    MT_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
    MT_OK(MPI_Comm_free_keyval(&key));
}

static void user_codes(void)
{
    int cls, code, code2, got, len, *last, flag;
    char s[MPI_MAX_ERROR_STRING];

    MT_OK(MPI_Add_error_class(&cls));
    MT_CHECK(cls > MPI_T_ERR_INVALID, "class %d", cls);
    MT_OK(MPI_Add_error_code(cls, &code));
    MT_OK(MPI_Add_error_code(MPI_ERR_TAG, &code2));
    MT_CHECK(code != cls && code2 != code, "distinct codes");
    MT_OK(MPI_Error_class(code, &got));
    MT_CHECK(got == cls, "class of code %d", got);
    MT_OK(MPI_Error_class(cls, &got));
    MT_CHECK(got == cls, "class of class %d", got);
    MT_OK(MPI_Error_class(code2, &got));
    MT_CHECK(got == MPI_ERR_TAG, "class of code2 %d", got);
    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    MT_CHECK(flag && *last == code2, "LASTUSEDCODE %d", flag ? *last : -1);
    MT_OK(MPI_Error_string(code, s, &len));
    MT_CHECK(len == 0 || s[0] == '\0', "no string yet: '%s'", s);
    MT_OK(MPI_Add_error_string(code, "shoal test failure"));
    MT_OK(MPI_Error_string(code, s, &len));
    MT_CHECK(strstr(s, "shoal test failure") != NULL, "string '%s'", s);
    MT_OK(MPI_Add_error_string(code, "replaced"));
    MT_OK(MPI_Error_string(code, s, &len));
    MT_CHECK(strstr(s, "replaced") != NULL, "replaced '%s'", s);
    user_code_from_dup(code, "replaced");
    MT_OK(MPI_Add_error_string(cls, "the class"));
    user_code_from_dup(cls, "the class");
    MT_ERR(MPI_ERR_ARG, MPI_Add_error_string(MPI_ERR_TAG, "nope"));
    MT_ERR(MPI_ERR_ARG, MPI_Add_error_code(code, &got)); /* not a class */
    /* a user code raised through a handler keeps its class */
    MT_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code));
    MT_ERR(MPI_ERR_OTHER, MPI_Remove_error_class(cls)); /* code attached */
    MT_OK(MPI_Remove_error_string(code));
    MT_OK(MPI_Remove_error_code(code));
    MT_OK(MPI_Remove_error_code(code2));
    MT_OK(MPI_Remove_error_class(cls));
    MT_ERR(MPI_ERR_ARG, MPI_Error_class(code, &got));
    MT_ERR(MPI_ERR_ARG, MPI_Remove_error_code(code));
}

int main(int argc, char **argv)
{
    int rank;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    user_handler();
    user_codes();
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("errh_ops: ok\n");
    return 0;
}
