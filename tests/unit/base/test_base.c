/*
 * The base layer: status strings, error details, configuration parsing and
 * loading, hex and hashing, and the containers.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "base/base.h"
#include "base/base_bitmap.h"
#include "base/base_list.h"
#include "base/base_strmap.h"
#include "base/base_vec.h"
#include "test.h"

static void test_status_strings(void)
{
    T_STREQ(shoal_strerror(SHOAL_OK), "success");
    T_STREQ(shoal_err_name(SHOAL_OK), "SHOAL_OK");
    T_STREQ(shoal_err_name(SHOAL_ERR_RANK), "SHOAL_ERR_RANK");
    T_STREQ(shoal_strerror(SHOAL_ERR_RANK), "rank out of range");
    T_STREQ(shoal_err_name(SHOAL_ERR_PEER_DEAD), "SHOAL_ERR_PEER_DEAD");
    T_STREQ(shoal_strerror(12345), "unknown status");
    T_STREQ(shoal_err_name(-1000), "SHOAL_ERR_UNKNOWN");
    /* Every code has a distinct name and description, all negative. */
#define CHECK(name, value, text)                                             \
    T_ASSERT((value) <= 0);                                                  \
    T_STREQ(shoal_err_name(value), "SHOAL_" #name);                          \
    T_STREQ(shoal_strerror(value), text);
    SHOAL_ERROR_LIST(CHECK)
#undef CHECK
    T_ASSERT(SHOAL_ERR_IS_LINK_FAILURE(SHOAL_ERR_PEER_DEAD));
    T_ASSERT(SHOAL_ERR_IS_LINK_FAILURE(SHOAL_ERR_PEER_UNREACHABLE));
    T_ASSERT(!SHOAL_ERR_IS_LINK_FAILURE(SHOAL_ERR_RANK));
}

static void test_error_detail(void)
{
    base_err_clear();
    T_STREQ(shoal_error_detail(), "");
    T_EQ(base_err(SHOAL_ERR_RANK, "rank %d of %d", 9, 4), SHOAL_ERR_RANK);
    T_STREQ(shoal_error_detail(), "rank 9 of 4");
    /* Wrapping the previous detail in a new one. */
    base_err(SHOAL_ERR_BOOT, "outer (%s): %s", "x", shoal_error_detail());
    T_STREQ(shoal_error_detail(), "outer (x): rank 9 of 4");
}

static int64_t parse(const char *name, const char *text, int expect_ok)
{
    const base_config_var_t *v = base_config_find(name);
    int64_t out = -1;

    T_ASSERT(v != NULL);
    int status = base_config_parse(v, text, &out);
    if (expect_ok && status != SHOAL_OK)
        T_FAIL("%s=%s refused: %s", name, text, shoal_error_detail());
    if (!expect_ok && status != SHOAL_ERR_CONFIG)
        T_FAIL("%s=%s accepted (%lld)", name, text, (long long)out);
    return out;
}

static void test_config_parse(void)
{
    /* enums: case-insensitive, index of the choice */
    T_EQ(parse("SHOAL_WAIT", "adaptive", 1), 0);
    T_EQ(parse("SHOAL_WAIT", "POLL", 1), 1);
    T_EQ(parse("SHOAL_WAIT", "block", 1), 2);
    parse("SHOAL_WAIT", "spin", 0);
    parse("SHOAL_WAIT", "", 0);
    parse("SHOAL_WAIT", "poll,block", 0);
    /* integers with range */
    T_EQ(parse("SHOAL_SHM_CELLS", "2", 1), 2);
    T_EQ(parse("SHOAL_SHM_CELLS", " 64 ", 1), 64);
    parse("SHOAL_SHM_CELLS", "1", 0);
    parse("SHOAL_SHM_CELLS", "100000", 0);
    parse("SHOAL_SHM_CELLS", "12x", 0);
    parse("SHOAL_SHM_CELLS", "", 0);
    parse("SHOAL_SHM_CELLS", "99999999999999999999999", 0);
    /* sizes with suffixes */
    T_EQ(parse("SHOAL_SHM_BULK", "4096", 1), 4096);
    T_EQ(parse("SHOAL_SHM_BULK", "64k", 1), 65536);
    T_EQ(parse("SHOAL_SHM_BULK", "1M", 1), 1 << 20);
    T_EQ(parse("SHOAL_SHM_BULK", "2MiB", 1), 2 << 20);
    parse("SHOAL_SHM_BULK", "1k", 0);  /* below 4k */
    parse("SHOAL_SHM_BULK", "2g", 0);  /* above 1g */
    parse("SHOAL_SHM_BULK", "-4k", 0);
    parse("SHOAL_SHM_BULK", "4 parsecs", 0);
    /* durations: bare numbers are microseconds */
    T_EQ(parse("SHOAL_WAIT_SPIN", "50", 1), 50000);
    T_EQ(parse("SHOAL_WAIT_SPIN", "50us", 1), 50000);
    T_EQ(parse("SHOAL_WAIT_SPIN", "2ms", 1), 2000000);
    T_EQ(parse("SHOAL_WAIT_SPIN", "1.5s", 1), 1500000000);
    T_EQ(parse("SHOAL_WAIT_SPIN", "250ns", 1), 250);
    parse("SHOAL_WAIT_SPIN", "5 minutes", 0);
    parse("SHOAL_PEER_CHECK", "0", 0); /* below 1ms */
    /* every default parses */
    size_t n;
    const base_config_var_t *vars = base_config_vars(&n);
    T_ASSERT(n > 5);
    for (size_t i = 0; i < n; i++) {
        int64_t v;
        T_OK(base_config_parse(&vars[i], vars[i].defval, &v));
        T_ASSERT(vars[i].doc[0] != '\0');
        T_ASSERT(strncmp(vars[i].name, "SHOAL_", 6) == 0);
    }
}

static void test_config_load(void)
{
    unsetenv("SHOAL_WAIT");
    T_OK(base_config_load(1));
    T_EQ(base_cfg.WAIT, 0);
    T_EQ(base_cfg.SHM_CELLS, 128);
    setenv("SHOAL_WAIT", "block", 1);
    setenv("SHOAL_SHM_CELLS", "8", 1);
    T_OK(base_config_load(1));
    T_EQ(base_cfg.WAIT, 2);
    T_EQ(base_cfg.SHM_CELLS, 8);
    T_STREQ(base_config_current(base_config_find("SHOAL_WAIT")), "block");
    /* A bad value fails the load, names the variable, keeps the default. */
    setenv("SHOAL_SHM_CELLS", "lots", 1);
    T_ERR(base_config_load(1), SHOAL_ERR_CONFIG);
    T_ASSERT(strstr(shoal_error_detail(), "SHOAL_SHM_CELLS") != NULL);
    T_EQ(base_cfg.SHM_CELLS, 128);
    unsetenv("SHOAL_SHM_CELLS");
    unsetenv("SHOAL_WAIT");
    /* Unknown SHOAL_ names are only warned about. */
    setenv("SHOAL_WAITT", "poll", 1);
    T_OK(base_config_load(1));
    unsetenv("SHOAL_WAITT");
}

static void test_hex(void)
{
    unsigned char data[5] = {0x00, 0x7f, 0x80, 0xff, 0x12}, back[5];
    char text[11];

    base_hex_encode(data, 5, text);
    T_STREQ(text, "007f80ff12");
    T_EQ(base_hex_decode(text, 10, back, sizeof(back)), 5);
    T_ASSERT(memcmp(data, back, 5) == 0);
    T_EQ(base_hex_decode("0g", 2, back, sizeof(back)), -1);
    T_EQ(base_hex_decode("abc", 3, back, sizeof(back)), -1);
    T_EQ(base_hex_decode("00112233445566", 14, back, sizeof(back)), -1);
    T_ASSERT(base_hash64("a", 1) != base_hash64("b", 1));
    T_ASSERT(base_cpu_count() >= 1);
}

typedef struct item {
    base_list_t link;
    int value;
} item_t;

static void test_list(void)
{
    base_list_t head;
    item_t items[4];

    base_list_init(&head);
    T_ASSERT(base_list_empty(&head));
    T_ASSERT(base_list_pop_front(&head) == NULL);
    for (int i = 0; i < 4; i++) {
        items[i].value = i;
        base_list_push_back(&head, &items[i].link);
    }
    T_EQ(base_list_length(&head), 4);
    base_list_remove(&items[1].link);
    base_list_push_front(&head, &items[1].link);
    int expect[] = {1, 0, 2, 3};
    for (int i = 0; i < 4; i++) {
        base_list_t *e = base_list_pop_front(&head);
        T_EQ(BASE_CONTAINER_OF(e, item_t, link)->value, expect[i]);
    }
    T_ASSERT(base_list_empty(&head));
}

static void test_vec(void)
{
    base_vec_t v;

    base_vec_init(&v, sizeof(int));
    for (int i = 0; i < 1000; i++)
        T_OK(base_vec_push(&v, &i));
    T_EQ(v.len, 1000);
    for (int i = 0; i < 1000; i++)
        T_EQ(*(int *)base_vec_at(&v, (size_t)i), i);
    base_vec_fini(&v);
    T_EQ(v.len, 0);
}

static void test_strmap(void)
{
    base_strmap_t m;
    char key[32];
    void *old;

    base_strmap_init(&m);
    T_ASSERT(base_strmap_get(&m, "x") == NULL);
    T_ASSERT(base_strmap_remove(&m, "x") == NULL);
    for (intptr_t i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "key-%ld", (long)i);
        T_OK(base_strmap_put(&m, key, (void *)(i + 1), &old));
        T_ASSERT(old == NULL);
    }
    T_EQ(m.len, 5000);
    T_OK(base_strmap_put(&m, "key-7", (void *)99, &old));
    T_EQ((intptr_t)old, 8);
    /* Remove every other key, then reinsert some: tombstones are reused. */
    for (intptr_t i = 0; i < 5000; i += 2) {
        snprintf(key, sizeof(key), "key-%ld", (long)i);
        T_EQ((intptr_t)base_strmap_remove(&m, key), i == 0 ? 1 : i + 1);
    }
    T_EQ(m.len, 2500);
    for (intptr_t i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "key-%ld", (long)i);
        void *v = base_strmap_get(&m, key);
        if (i % 2 == 0)
            T_ASSERT(v == NULL);
        else
            T_EQ((intptr_t)v, i == 7 ? 99 : i + 1);
    }
    size_t count = 0, it = 0;
    const char *k;
    void *v;
    while (base_strmap_next(&m, &it, &k, &v))
        count++;
    T_EQ(count, 2500);
    for (int round = 0; round < 20; round++) /* churn: never fills up */
        for (intptr_t i = 0; i < 5000; i += 2) {
            snprintf(key, sizeof(key), "key-%ld", (long)i);
            T_OK(base_strmap_put(&m, key, (void *)1, NULL));
            base_strmap_remove(&m, key);
        }
    T_EQ(m.len, 2500);
    base_strmap_fini(&m);
}

static void test_bitmap(void)
{
    uint64_t map[BASE_BITMAP_WORDS(130)] = {0};

    T_EQ(base_bitmap_next_set(map, 130, 0), 130);
    base_bitmap_set(map, 0);
    base_bitmap_set(map, 64);
    base_bitmap_set(map, 129);
    T_EQ(base_bitmap_count(map, 130), 3);
    T_EQ(base_bitmap_next_set(map, 130, 1), 64);
    T_EQ(base_bitmap_next_set(map, 130, 65), 129);
    base_bitmap_clear(map, 64);
    T_ASSERT(!base_bitmap_test(map, 64));
    T_EQ(base_bitmap_next_set(map, 130, 1), 129);
}

/* The test vector of the SipHash paper (appendix A): key 00..0f, message
 * 00..0e; and the lengths around a word boundary agree however the input
 * is aligned. */
static void test_siphash(void)
{
    uint8_t key[16], msg[64 + 1];

    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 65; i++)
        msg[i] = (uint8_t)i;
    T_ASSERT(base_siphash(key, msg, 15) == 0xa129ca6149be45e5ull);
    for (size_t len = 0; len <= 41; len++) {
        uint8_t moved[64];
        memcpy(moved + 1, msg, len);
        T_ASSERT(base_siphash(key, moved + 1, len) ==
                 base_siphash(key, msg, len));
    }
    T_ASSERT(base_siphash(key, msg, 40) != base_siphash(key, msg + 1, 40));
}

/* The checkpoint images' checksum: alignment does not matter, every
 * length from 0 to 100 and every flipped bit of a 100-byte buffer gives
 * another sum, and so does another seed. */
static void test_sum64(void)
{
    uint8_t msg[101], moved[102];
    uint64_t sums[101];

    for (int i = 0; i < 101; i++)
        msg[i] = (uint8_t)(i * 7 + 1);
    for (size_t len = 0; len <= 100; len++) {
        memcpy(moved + 1, msg, len);
        sums[len] = base_sum64(msg, len, 0);
        T_ASSERT(base_sum64(moved + 1, len, 0) == sums[len]);
        for (size_t k = 0; k < len; k++)
            T_ASSERT(sums[k] != sums[len]);
    }
    T_ASSERT(base_sum64(msg, 100, 1) != sums[100]);
    for (int bit = 0; bit < 800; bit++) {
        msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        T_ASSERT(base_sum64(msg, 100, 0) != sums[100]);
        msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
}

static const t_case_t cases[] = {
    {"status_strings", test_status_strings}, {"error_detail", test_error_detail},
    {"config_parse", test_config_parse},     {"config_load", test_config_load},
    {"hex", test_hex},                       {"list", test_list},
    {"vec", test_vec},                       {"strmap", test_strmap},
    {"bitmap", test_bitmap},                 {"siphash", test_siphash},
    {"sum64", test_sum64},
};

int main(int argc, char **argv)
{
    return T_RUN(cases, argc, argv);
}
