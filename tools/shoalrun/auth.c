/*
 * Proving the job's secret.  The launcher draws 16 random bytes per job and
 * hands them to each daemon on the remote-exec command's stdin (never in
 * argv or the environment, which other users can read in /proc).  A daemon
 * that connects is sent a fresh nonce and must answer with a MAC of it
 * under the secret; it then checks the parent's MAC of its own nonce, so
 * neither side talks to a stranger.  The MAC is SipHash-2-4 (Aumasson and
 * Bernstein), twice with different domain bytes for 128 bits.
 */
#define _GNU_SOURCE
#include <string.h>

#include "shoalrun.h"


void shoalrun_auth_mac(const unsigned char secret[SHOALRUN_SECRET_LEN],
                       char role, const unsigned char nonce[SHOALRUN_NONCE_LEN],
                       uint32_t node, unsigned char mac[SHOALRUN_MAC_LEN])
{
    unsigned char msg[2 + SHOALRUN_NONCE_LEN + 4];

    msg[1] = (unsigned char)role;
    memcpy(msg + 2, nonce, SHOALRUN_NONCE_LEN);
    for (int i = 0; i < 4; i++)
        msg[2 + SHOALRUN_NONCE_LEN + i] = (unsigned char)(node >> (8 * i));
    for (int half = 0; half < 2; half++) {
        msg[0] = (unsigned char)half;
        uint64_t h = base_siphash(secret, msg, sizeof(msg));
        for (int i = 0; i < 8; i++)
            mac[8 * half + i] = (unsigned char)(h >> (8 * i));
    }
}

int shoalrun_auth_equal(const unsigned char *a, const unsigned char *b,
                        size_t n)
{
    unsigned char d = 0;

    for (size_t i = 0; i < n; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}
