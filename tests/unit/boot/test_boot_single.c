/*
 * boot without a launcher (singleton): put, fence, get through the real
 * boot_init, the launcher rules it keeps, and backend selection from the
 * environment.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "test.h"

extern char **environ;

/* Drop every launcher variable the test runner might have set. */
static void clean_env(void)
{
    static const char *const prefixes[] = {"PMI_", "PMIX_", "SLURM_",
                                           "MPI_LOCAL", "SHOAL_BOOT"};
    int again = 1;

    while (again) {
        again = 0;
        for (char **e = environ; *e != NULL && !again; e++)
            for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++) {
                if (strncmp(*e, prefixes[i], strlen(prefixes[i])) != 0)
                    continue;
                char name[128];
                size_t n = strcspn(*e, "=");
                snprintf(name, sizeof(name), "%.*s", (int)n, *e);
                unsetenv(name);
                again = 1; /* environ changed under us */
                break;
            }
    }
}

static void reload(void)
{
    T_OK(base_config_load(1));
}

static void test_single(void)
{
    const boot_info_t *in, *again;
    char buf[32];
    size_t len;

    clean_env();
    reload();
    T_OK(boot_init(&in));
    T_EQ(in->rank, 0);
    T_EQ(in->size, 1);
    T_EQ(in->local_rank, 0);
    T_EQ(in->local_size, 1);
    T_EQ(in->local_ranks[0], 0);
    T_STREQ(in->backend, "single");
    T_ASSERT(strncmp(in->shm_prefix, "shoal-", 6) == 0);
    T_ERR(boot_init(&again), SHOAL_ERR_ALREADY);

    T_OK(boot_put("a", "hello", 5));
    /* Like under a launcher: not even our own put before the fence. */
    T_ERR(boot_get(0, "a", buf, sizeof(buf), &len), SHOAL_ERR_NOT_FOUND);
    T_OK(boot_fence());
    T_OK(boot_get(0, "a", buf, sizeof(buf), &len));
    T_EQ(len, 5);
    T_ASSERT(memcmp(buf, "hello", 5) == 0);
    T_ERR(boot_put("a", "again", 5), SHOAL_ERR_ALREADY);
    T_ERR(boot_get(1, "a", buf, sizeof(buf), &len), SHOAL_ERR_RANK);
    T_OK(boot_barrier());
    T_OK(boot_fini());
}

static void test_single_big(void)
{
    static unsigned char in_buf[20000], out[20000];
    const boot_info_t *in;
    size_t len;

    for (size_t i = 0; i < sizeof(in_buf); i++)
        in_buf[i] = (unsigned char)(i * 31 + 7);
    clean_env();
    reload();
    T_OK(boot_init(&in));
    T_OK(boot_put("big", in_buf, sizeof(in_buf)));
    T_OK(boot_fence());
    T_OK(boot_get(0, "big", out, sizeof(out), &len));
    T_EQ(len, sizeof(in_buf));
    T_ASSERT(memcmp(in_buf, out, len) == 0);
    T_OK(boot_fini());
}

static void test_not_init(void)
{
    char buf[4];
    size_t len;

    T_ERR(boot_put("a", "x", 1), SHOAL_ERR_NOT_INIT);
    T_ERR(boot_get(0, "a", buf, sizeof(buf), &len), SHOAL_ERR_NOT_INIT);
    T_ERR(boot_fence(), SHOAL_ERR_NOT_INIT);
    T_ERR(boot_barrier(), SHOAL_ERR_NOT_INIT);
    T_ERR(boot_fini(), SHOAL_ERR_NOT_INIT);
}

static void test_select(void)
{
    const boot_info_t *in;

    /* Forced single wins over a launcher's variables. */
    clean_env();
    setenv("PMI_FD", "999", 1);
    setenv("SHOAL_BOOT", "single", 1);
    reload();
    T_OK(boot_init(&in));
    T_STREQ(in->backend, "single");
    T_OK(boot_fini());
    /* PMI_FD that is not open: a clear refusal, not a hang. */
    setenv("SHOAL_BOOT", "auto", 1);
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "2", 1);
    reload();
    T_ERR(boot_init(&in), SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "not an open file") != NULL);
    setenv("PMI_FD", "x", 1);
    T_ERR(boot_init(&in), SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "PMI_FD=x") != NULL);
    setenv("PMI_FD", "0", 1);
    setenv("PMI_RANK", "2", 1);
    T_ERR(boot_init(&in), SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "PMI_RANK=2") != NULL);
    /* srun --mpi=none with one task is a singleton after all. */
    clean_env();
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_STEP_NUM_TASKS", "1", 1);
    reload();
    T_OK(boot_init(&in));
    T_OK(boot_fini());
    setenv("SLURM_STEP_NUM_TASKS", "4", 1);
    T_ERR(boot_init(&in), SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "srun --mpi=pmi2") != NULL);
    clean_env();
    reload();
}

int main(int argc, char **argv)
{
    static const t_case_t cases[] = {
        {"single", test_single},
        {"single_big", test_single_big},
        {"not_init", test_not_init},
        {"select", test_select},
    };
    return T_RUN(cases, argc, argv);
}
