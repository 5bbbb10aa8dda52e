/*
 * The value codec over a backend's string store.  Values are hex (no
 * launcher mangles [0-9a-f]) with a one-letter tag, so a stored value is
 * never empty and a chunked one is recognised: "v<hex>" holds the value,
 * "c<chunks>:<bytes>" says the hex is split over "<key>.0" ... "<key>.<n-1>".
 * Keys are "shoal-<rank>-<key>" so Shoal's keys cannot collide with what a
 * launcher or another library in the same job puts.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "boot/boot_internal.h"

/* Room for the chunk suffix ".<i>" in key length budgets. */
#define CHUNK_SUFFIX_MAX 8

int boot_key_ok(const char *key)
{
    size_t n = strlen(key);

    if (n == 0 || n > BOOT_KEY_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static int full_key(const boot_kvs_t *kvs, int rank, const char *key,
                    char *out, size_t cap)
{
    if (!boot_key_ok(key))
        return base_err(SHOAL_ERR_INVALID,
                        "boot key '%.40s' is not 1..%d characters of "
                        "[A-Za-z0-9_-]",
                        key, BOOT_KEY_MAX);
    int n = snprintf(out, cap, "shoal-%d-%s", rank, key);
    if (n < 0 || (size_t)n >= cap ||
        (size_t)n + CHUNK_SUFFIX_MAX > kvs->key_max)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "boot key 'shoal-%d-%s' is too long for the "
                        "launcher (%zu characters at most)",
                        rank, key, kvs->key_max);
    return SHOAL_OK;
}

/* Put the hex of data[0..len) in chunks of chunk_hex characters. */
static int put_chunks(const boot_kvs_t *kvs, const char *base,
                      const unsigned char *data, size_t len, size_t chunk_hex,
                      size_t nchunks)
{
    char key[160], text[BOOT_TEXT_MAX + 1];
    size_t per = chunk_hex / 2;

    for (size_t i = 0; i < nchunks; i++) {
        size_t off = i * per;
        size_t n = len - off < per ? len - off : per;
        snprintf(key, sizeof(key), "%s.%zu", base, i);
        base_hex_encode(data + off, n, text);
        int status = kvs->put(kvs->ctx, key, text);
        if (status != SHOAL_OK)
            return status;
    }
    return SHOAL_OK;
}

int boot_kvs_put(const boot_kvs_t *kvs, int rank, const char *key,
                 const void *data, size_t len)
{
    char base[128], text[BOOT_TEXT_MAX + 1];
    int status = full_key(kvs, rank, key, base, sizeof(base));

    if (status != SHOAL_OK)
        return status;
    if (len > BOOT_VALUE_MAX)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "boot value of '%s' has %zu bytes, at most %u", key,
                        len, BOOT_VALUE_MAX);
    size_t room = kvs->room(kvs->ctx, strlen(base));
    if (room > BOOT_TEXT_MAX)
        room = BOOT_TEXT_MAX;
    if (1 + 2 * len <= room) {
        text[0] = 'v';
        base_hex_encode(data, len, text + 1);
        return kvs->put(kvs->ctx, base, text);
    }
    size_t chunk_hex = kvs->room(kvs->ctx, strlen(base) + CHUNK_SUFFIX_MAX);
    if (chunk_hex > BOOT_TEXT_MAX)
        chunk_hex = BOOT_TEXT_MAX;
    chunk_hex &= ~(size_t)1;
    if (chunk_hex < 2 || room < 24)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "the launcher's PMI lines leave no room for the "
                        "value of '%s'",
                        base);
    size_t nchunks = (2 * len + chunk_hex - 1) / chunk_hex;
    /* Chunks first: a reader that sees the count finds them all. */
    status = put_chunks(kvs, base, data, len, chunk_hex, nchunks);
    if (status != SHOAL_OK)
        return status;
    snprintf(text, sizeof(text), "c%zu:%zu", nchunks, len);
    return kvs->put(kvs->ctx, base, text);
}

/* Decode hex text into out[0..cap); returns the byte count or -1. */
static long decode(const char *hex, unsigned char *out, size_t cap)
{
    return base_hex_decode(hex, strlen(hex), out, cap);
}

static int bad_value(const char *key)
{
    return base_err(SHOAL_ERR_PROTOCOL,
                    "boot value of '%s' is not in Shoal's encoding", key);
}

static int parse_header(const char *text, size_t *nchunks, size_t *len)
{
    char *end;
    unsigned long long a, b;

    a = strtoull(text, &end, 10);
    if (end == text || *end != ':')
        return -1;
    const char *p = end + 1;
    b = strtoull(p, &end, 10);
    if (end == p || *end != '\0' || a == 0 || a > BOOT_VALUE_MAX ||
        b > BOOT_VALUE_MAX)
        return -1;
    *nchunks = (size_t)a;
    *len = (size_t)b;
    return 0;
}

static int get_chunks(const boot_kvs_t *kvs, const char *base, size_t nchunks,
                      size_t len, unsigned char *out)
{
    char key[160], text[BOOT_TEXT_MAX + 1];
    size_t off = 0;

    for (size_t i = 0; i < nchunks; i++) {
        snprintf(key, sizeof(key), "%s.%zu", base, i);
        int status = kvs->get(kvs->ctx, key, text, sizeof(text));
        if (status == SHOAL_ERR_NOT_FOUND)
            return base_err(SHOAL_ERR_PROTOCOL,
                            "boot value '%s' lacks chunk %zu of %zu", base,
                            i, nchunks);
        if (status != SHOAL_OK)
            return status;
        long n = decode(text, out + off, len - off);
        if (n < 0)
            return bad_value(key);
        off += (size_t)n;
    }
    return off == len ? SHOAL_OK : bad_value(base);
}

int boot_kvs_get(const boot_kvs_t *kvs, int rank, const char *key, void *buf,
                 size_t cap, size_t *len_p)
{
    char base[128], text[BOOT_TEXT_MAX + 1];
    size_t nchunks, len;
    int status = full_key(kvs, rank, key, base, sizeof(base));

    if (status == SHOAL_OK)
        status = kvs->get(kvs->ctx, base, text, sizeof(text));
    if (status == SHOAL_ERR_NOT_FOUND)
        return base_err(SHOAL_ERR_NOT_FOUND,
                        "rank %d has not published '%s' (or no fence since)",
                        rank, key);
    if (status != SHOAL_OK)
        return status;
    if (text[0] == 'v') {
        len = (strlen(text) - 1) / 2;
        *len_p = len;
        if (len > cap)
            goto err_too_large;
        return decode(text + 1, buf, cap) < 0 ? bad_value(base) : SHOAL_OK;
    }
    if (text[0] != 'c' || parse_header(text + 1, &nchunks, &len) != 0)
        return bad_value(base);
    *len_p = len;
    if (len > cap)
        goto err_too_large;
    return get_chunks(kvs, base, nchunks, len, buf);
err_too_large:
    return base_err(SHOAL_ERR_TOO_LARGE,
                    "rank %d's '%s' has %zu bytes; the buffer holds %zu",
                    rank, key, len, cap);
}
