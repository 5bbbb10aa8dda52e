/*
 * The boot value codec (hex, chunks) over a fake store, the process-mapping
 * parser, local ranks, node ids and the /dev/shm prefix.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/base_strmap.h"
#include "boot/boot_internal.h"
#include "test.h"

/* ---- a fake store that checks what the codec hands it -------------------- */

typedef struct fake {
    base_strmap_t map;
    size_t room;  /* value characters per put (independent of key length) */
    int puts;
} fake_t;

static int fake_put(void *ctx, const char *key, const char *value)
{
    fake_t *f = ctx;
    void *old = NULL;

    if (strlen(value) > f->room)
        T_FAIL("codec put %zu characters under %s, room is %zu",
               strlen(value), key, f->room);
    if (strlen(key) > 63 || value[0] == '\0')
        T_FAIL("codec put a bad key or an empty value: %s", key);
    for (const char *p = value; *p; p++)
        if (*p <= ' ' || *p > '~')
            T_FAIL("codec put byte 0x%02x in a value", (unsigned char)*p);
    T_OK(base_strmap_put(&f->map, key, strdup(value), &old));
    free(old);
    f->puts++;
    return SHOAL_OK;
}

static int fake_get(void *ctx, const char *key, char *value, size_t cap)
{
    fake_t *f = ctx;
    const char *v = base_strmap_get(&f->map, key);

    if (v == NULL)
        return SHOAL_ERR_NOT_FOUND;
    T_ASSERT(strlen(v) < cap);
    strcpy(value, v);
    return SHOAL_OK;
}

static size_t fake_room(void *ctx, size_t keylen)
{
    return ((fake_t *)ctx)->room;
}

static fake_t fake;
static boot_kvs_t kvs = {&fake, fake_put, fake_get, fake_room, 63};

static void fake_reset(size_t room)
{
    const char *k;
    void *v;

    for (size_t i = 0; base_strmap_next(&fake.map, &i, &k, &v);)
        free(v);
    base_strmap_fini(&fake.map);
    base_strmap_init(&fake.map);
    fake.room = room;
    fake.puts = 0;
}

static void fake_raw(const char *key, const char *value)
{
    void *old = NULL;

    T_OK(base_strmap_put(&fake.map, key, strdup(value), &old));
    free(old);
}

/* ---- codec --------------------------------------------------------------- */

static void round_trip(size_t room, size_t len)
{
    unsigned char *in = malloc(len + 1), *out = malloc(len + 1);
    size_t got = 12345;

    T_ASSERT(in != NULL && out != NULL);
    fake_reset(room);
    for (size_t i = 0; i < len; i++)
        in[i] = (unsigned char)(rand() & 0xff);
    T_OK(boot_kvs_put(&kvs, 3, "addr", in, len));
    T_OK(boot_kvs_get(&kvs, 3, "addr", out, len, &got));
    T_EQ(got, len);
    T_ASSERT(len == 0 || memcmp(in, out, len) == 0);
    /* One put when it fits, chunks + header otherwise. */
    if (1 + 2 * len <= room)
        T_EQ(fake.puts, 1);
    else
        T_EQ(fake.puts, (int)((2 * len + (room & ~1u) - 1) / (room & ~1u)) + 1);
    free(in);
    free(out);
}

static void test_round_trip(void)
{
    static const size_t rooms[] = {40, 101, 985};
    static const size_t lens[] = {0, 1, 19, 20, 21, 50, 492, 493, 1000,
                                  5000, 100000};

    for (size_t r = 0; r < BASE_ARRAY_SIZE(rooms); r++)
        for (size_t l = 0; l < BASE_ARRAY_SIZE(lens); l++)
            round_trip(rooms[r], lens[l]);
}

static void test_small_buffer(void)
{
    char big[3000], out[100];
    size_t len = 0;

    memset(big, 'q', sizeof(big));
    fake_reset(200);
    T_OK(boot_kvs_put(&kvs, 0, "big", big, sizeof(big)));
    T_ERR(boot_kvs_get(&kvs, 0, "big", out, sizeof(out), &len),
          SHOAL_ERR_TOO_LARGE);
    T_EQ(len, sizeof(big)); /* the caller learns how much to allocate */
    T_OK(boot_kvs_put(&kvs, 0, "mid", big, 60));
    T_ERR(boot_kvs_get(&kvs, 0, "mid", out, 59, &len), SHOAL_ERR_TOO_LARGE);
    T_EQ(len, 60);
    T_ERR(boot_kvs_get(&kvs, 1, "big", out, sizeof(out), &len),
          SHOAL_ERR_NOT_FOUND);
}

static void test_bad_keys(void)
{
    char key[64];

    fake_reset(500);
    T_ERR(boot_kvs_put(&kvs, 0, "", "x", 1), SHOAL_ERR_INVALID);
    T_ERR(boot_kvs_put(&kvs, 0, "a b", "x", 1), SHOAL_ERR_INVALID);
    T_ERR(boot_kvs_put(&kvs, 0, "a.b", "x", 1), SHOAL_ERR_INVALID);
    memset(key, 'k', 33);
    key[33] = '\0';
    T_ERR(boot_kvs_put(&kvs, 0, key, "x", 1), SHOAL_ERR_INVALID);
    key[32] = '\0';
    T_OK(boot_kvs_put(&kvs, 0, key, "x", 1));
    /* A launcher with short keys. */
    boot_kvs_t narrow = kvs;
    narrow.key_max = 20;
    T_ERR(boot_kvs_put(&narrow, 0, key, "x", 1), SHOAL_ERR_TOO_LARGE);
    T_ERR(boot_kvs_put(&kvs, 0, "huge", key, (size_t)BOOT_VALUE_MAX + 1),
          SHOAL_ERR_TOO_LARGE);
}

static void test_corrupt(void)
{
    char out[64];
    size_t len;

    fake_reset(500);
    fake_raw("shoal-0-a", "zzz");
    T_ERR(boot_kvs_get(&kvs, 0, "a", out, sizeof(out), &len),
          SHOAL_ERR_PROTOCOL);
    fake_raw("shoal-0-a", "v0g");
    T_ERR(boot_kvs_get(&kvs, 0, "a", out, sizeof(out), &len),
          SHOAL_ERR_PROTOCOL);
    fake_raw("shoal-0-a", "v012");
    T_ERR(boot_kvs_get(&kvs, 0, "a", out, sizeof(out), &len),
          SHOAL_ERR_PROTOCOL);
    fake_raw("shoal-0-a", "c2:3");
    fake_raw("shoal-0-a.0", "aabb");
    T_ERR(boot_kvs_get(&kvs, 0, "a", out, sizeof(out), &len),
          SHOAL_ERR_PROTOCOL); /* chunk 1 missing */
    fake_raw("shoal-0-a.1", "ccdd");
    T_ERR(boot_kvs_get(&kvs, 0, "a", out, sizeof(out), &len),
          SHOAL_ERR_PROTOCOL); /* 4 bytes where 3 were announced */
    fake_raw("shoal-0-a.1", "cc");
    T_OK(boot_kvs_get(&kvs, 0, "a", out, sizeof(out), &len));
    T_EQ(len, 3);
    fake_raw("shoal-0-a", "c0:0");
    T_ERR(boot_kvs_get(&kvs, 0, "a", out, sizeof(out), &len),
          SHOAL_ERR_PROTOCOL);
    fake_raw("shoal-0-a", "c1:x");
    T_ERR(boot_kvs_get(&kvs, 0, "a", out, sizeof(out), &len),
          SHOAL_ERR_PROTOCOL);
}

/* ---- process mapping ----------------------------------------------------- */

static void expect_mapping(const char *text, int size, const int *want)
{
    int got[16];

    T_OK(boot_mapping_parse(text, size, got));
    for (int r = 0; r < size; r++)
        if (got[r] != want[r])
            T_FAIL("%s: rank %d on node %d, expected %d", text, r, got[r],
                   want[r]);
}

static void test_mapping(void)
{
    static const int all0[8] = {0};
    static const int pairs[4] = {0, 0, 1, 1};
    static const int uneven[5] = {0, 0, 0, 1, 1};
    static const int cyclic[5] = {0, 1, 0, 1, 0};
    static const int two_blocks[6] = {5, 7, 7, 5, 7, 7};

    /* Hydra: no hosts, -ppn 2, -hosts localhost:4 (all one node). */
    expect_mapping("(vector,(0,1,1))", 4, all0);
    expect_mapping("(vector,(0,1,2))", 8, all0);
    expect_mapping("(vector,(0,1,4))", 4, all0);
    /* Slurm: 2 nodes of 2, and an uneven 3 + 2. */
    expect_mapping("(vector,(0,2,2))", 4, pairs);
    expect_mapping("(vector,(0,1,3),(1,1,2))", 5, uneven);
    /* Repeated cyclically until every rank has a node. */
    expect_mapping("(vector,(0,2,1))", 5, cyclic);
    expect_mapping("(vector,(5,1,1),(7,1,2))", 6, two_blocks);
    expect_mapping(" ( vector , ( 0 , 2 , 2 ) ) ", 4, pairs);
}

static void test_mapping_malformed(void)
{
    static const char *const bad[] = {
        "", "(vector)", "(vector,)", "(vector,(0,1))", "(vector,(0,0,1))",
        "(vector,(0,1,0))", "(vector,(a,1,1))", "(vector,(0,1,1)",
        "(vector,(0,1,1))x", "(vector,(0,1,1),)", "(vector,(-1,1,1))",
        "(vector,(0,1,99999999999))", "(vector;(0,1,1))", "vector,(0,1,1)",
        "(matrix,(0,1,1))",
    };
    int got[4];

    for (size_t i = 0; i < BASE_ARRAY_SIZE(bad); i++)
        if (boot_mapping_parse(bad[i], 4, got) != SHOAL_ERR_PROTOCOL)
            T_FAIL("accepted mapping '%s'", bad[i]);
}

static void test_local_ranks(void)
{
    int nodes[5] = {0, 1, 0, 1, 0};
    int *ranks, lr, ls;

    T_OK(boot_local_ranks(nodes, 5, 2, &ranks, &lr, &ls));
    T_EQ(ls, 3);
    T_EQ(lr, 1);
    T_EQ(ranks[0], 0);
    T_EQ(ranks[1], 2);
    T_EQ(ranks[2], 4);
    free(ranks);
    T_OK(boot_local_ranks(nodes, 5, 3, &ranks, &lr, &ls));
    T_EQ(ls, 2);
    T_EQ(lr, 1);
    T_EQ(ranks[0], 1);
    free(ranks);
}

static void test_node_id_and_prefix(void)
{
    char a[64], b[64], p1[64], p2[64];

    boot_node_id(a, sizeof(a));
    boot_node_id(b, sizeof(b));
    T_EQ(strlen(a), 16);
    T_STREQ(a, b);
    boot_shm_prefix("kvs_1_0", p1, sizeof(p1));
    boot_shm_prefix("kvs_1_1", p2, sizeof(p2));
    T_EQ(strlen(p1), 23);
    T_ASSERT(strncmp(p1, "shoal-", 6) == 0 && p1[22] == '-');
    T_ASSERT(strcmp(p1, p2) != 0);
    boot_shm_prefix("kvs_1_0", p2, sizeof(p2));
    T_STREQ(p1, p2);
}

int main(int argc, char **argv)
{
    static const t_case_t cases[] = {
        {"round_trip", test_round_trip},
        {"small_buffer", test_small_buffer},
        {"bad_keys", test_bad_keys},
        {"corrupt", test_corrupt},
        {"mapping", test_mapping},
        {"mapping_malformed", test_mapping_malformed},
        {"local_ranks", test_local_ranks},
        {"node_id_and_prefix", test_node_id_and_prefix},
    };
    base_strmap_init(&fake.map);
    int rc = T_RUN(cases, argc, argv);
    fake_reset(0);
    return rc;
}
