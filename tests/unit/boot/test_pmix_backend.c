/*
 * The pmix backend against a stand-in libpmix.so.2 (fake_pmix.c, found
 * through LD_LIBRARY_PATH set by CTest): detection from PMIX_*, rank, size
 * and job id, locality from PMIX_LOCAL_PEERS, put/fence/get with chunked
 * values and PMIX_COLLECT_DATA, not-found without waiting, abort and
 * finalize, and the refusals: server unreachable, a size of the wrong
 * type, nonsense local peers, SHOAL_BOOT=pmix without a PMIx launcher, and
 * (case "incomplete", with a library that lacks PMIx_Fence) a library
 * that is not a PMIx client.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "boot/boot.h"
#include "boot/boot_internal.h"
#include "test.h"

typedef struct fake_state {
    int inits, finalizes, fences, collects, commits, aborts, abort_code;
    char abort_msg[256];
} fake_state_t;

static fake_state_t *fake(void)
{
    fake_state_t *(*get)(void);
    void *p = dlsym(RTLD_DEFAULT, "fake_pmix_state");

    T_ASSERT(p != NULL);
    memcpy(&get, &p, sizeof(p));
    return get();
}

/* A PMIx launcher's environment, with the fake in mode and rank. */
static void pmix_env(const char *mode, const char *rank)
{
    setenv("PMIX_NAMESPACE", "fake-namespace.7", 1);
    setenv("PMIX_RANK", rank, 1);
    setenv("FAKE_PMIX_MODE", mode, 1);
    setenv("FAKE_PMIX_RANK", rank, 1);
    unsetenv("SHOAL_BOOT");
    unsetenv("PMI_FD");
    unsetenv("PMI_PORT");
    T_OK(base_config_load(1));
}

static void test_exchange(void)
{
    const boot_info_t *in;
    unsigned char big[5000], back[5000];
    size_t len = 0;

    pmix_env("ok", "1");
    T_OK(boot_init(&in));
    T_STREQ(in->backend, "pmix");
    T_EQ(in->rank, 1);
    T_EQ(in->size, 4);
    T_STREQ(in->jobid, "fake-namespace.7");
    /* PMIX_LOCAL_PEERS "3,1": sorted, and we are the first. */
    T_EQ(in->local_size, 2);
    T_EQ(in->local_ranks[0], 1);
    T_EQ(in->local_ranks[1], 3);
    T_EQ(in->local_rank, 0);
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (unsigned char)(i * 31 + 7);
    T_OK(boot_put("big", big, sizeof(big)));
    T_OK(boot_put("small", "hi;there", 8));
    /* Not visible before the fence, and a miss does not wait. */
    T_ERR(boot_get(1, "small", back, sizeof(back), &len), SHOAL_ERR_NOT_FOUND);
    T_OK(boot_fence());
    T_ASSERT(fake()->commits >= 1 && fake()->collects >= 1);
    T_OK(boot_get(1, "big", back, sizeof(back), &len));
    T_EQ(len, sizeof(big));
    T_ASSERT(memcmp(back, big, sizeof(big)) == 0);
    T_OK(boot_get(1, "small", back, sizeof(back), &len));
    T_EQ(len, 8);
    T_ASSERT(memcmp(back, "hi;there", 8) == 0);
    T_ERR(boot_get(2, "small", back, sizeof(back), &len), SHOAL_ERR_NOT_FOUND);
    T_OK(boot_barrier());
    const boot_backend_t *be = boot_backend();
    be->abort(be->kvs.ctx, 5, "stop now");
    T_EQ(fake()->aborts, 1);
    T_EQ(fake()->abort_code, 5);
    T_STREQ(fake()->abort_msg, "stop now");
    int before = fake()->finalizes;
    T_OK(boot_fini());
    T_EQ(fake()->finalizes, before + 1);
}

static void test_local_rank(void)
{
    const boot_info_t *in;

    pmix_env("ok", "3");
    T_OK(boot_init(&in));
    T_EQ(in->rank, 3);
    T_EQ(in->local_rank, 1);
    T_EQ(in->local_size, 2);
    T_OK(boot_fini());
}

/* boot_init must fail with code and say text. */
static void refused(const char *mode, int code, const char *text)
{
    const boot_info_t *in;

    pmix_env(mode, "1");
    T_ERR(boot_init(&in), code);
    T_ASSERT(strstr(shoal_error_detail(), text) != NULL);
}

static void test_unreachable(void)
{
    refused("unreach", SHOAL_ERR_BOOT, "cannot be reached");
}

static void test_bad_type(void)
{
    refused("badtype", SHOAL_ERR_PROTOCOL, "not an integer");
}

static void test_bad_peers(void)
{
    refused("badpeers", SHOAL_ERR_PROTOCOL, "not a list of ranks");
}

static void test_forced_without_launcher(void)
{
    const boot_info_t *in;

    pmix_env("ok", "1");
    unsetenv("PMIX_NAMESPACE");
    unsetenv("PMIX_RANK");
    setenv("SHOAL_BOOT", "pmix", 1);
    T_OK(base_config_load(1));
    T_ERR(boot_init(&in), SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "SHOAL_BOOT=pmix") != NULL);
    unsetenv("SHOAL_BOOT");
}

/* Run alone, with the library that lacks PMIx_Fence. */
static void test_incomplete(void)
{
    char detail[256];

    refused("ok", SHOAL_ERR_BOOT, "lacks PMIx_Fence");
    T_ASSERT(strstr(shoal_error_detail(), "apt-get install libpmix2") != NULL);
    T_EQ(boot_pmix_available(detail, sizeof(detail)), 0);
}

int main(int argc, char **argv)
{
    static const t_case_t cases[] = {
        {"exchange", test_exchange},
        {"local_rank", test_local_rank},
        {"unreachable", test_unreachable},
        {"bad_type", test_bad_type},
        {"bad_peers", test_bad_peers},
        {"forced_without_launcher", test_forced_without_launcher},
    };
    static const t_case_t incomplete[] = {
        {"incomplete", test_incomplete},
    };

    if (argc > 1 && strcmp(argv[1], "incomplete") == 0)
        return T_RUN(incomplete, argc, argv);
    return T_RUN(cases, argc, argv);
}
