/*
 * Proving the job's secret: SipHash-2-4 (base_siphash) as a MAC over the
 * handshake's nonces and ranks.  The secret never crosses the wire; each side shows a hash
 * only the holder of the secret can compute, over a nonce the other side
 * chose fresh, so a recorded handshake cannot be replayed.
 */
#include <string.h>

#include "tcp.h"


void tcp_auth_mac(const uint8_t secret[TCP_SECRET], char role,
                  const uint8_t ni[TCP_NONCE], const uint8_t na[TCP_NONCE],
                  uint32_t initiator, uint32_t acceptor, uint8_t mac[TCP_MAC])
{
    uint8_t msg[1 + 2 * TCP_NONCE + 8];
    uint64_t h[2];

    msg[0] = (uint8_t)role;
    memcpy(msg + 1, ni, TCP_NONCE);
    memcpy(msg + 1 + TCP_NONCE, na, TCP_NONCE);
    for (int i = 0; i < 4; i++) {
        msg[1 + 2 * TCP_NONCE + i] = (uint8_t)(initiator >> (8 * i));
        msg[1 + 2 * TCP_NONCE + 4 + i] = (uint8_t)(acceptor >> (8 * i));
    }
    h[0] = base_siphash(secret, msg, sizeof(msg));
    h[1] = base_siphash(secret + 16, msg, sizeof(msg));
    for (int i = 0; i < 8; i++) {
        mac[i] = (uint8_t)(h[0] >> (8 * i));
        mac[8 + i] = (uint8_t)(h[1] >> (8 * i));
    }
}

int tcp_auth_equal(const uint8_t a[TCP_MAC], const uint8_t b[TCP_MAC])
{
    uint8_t d = 0;

    for (unsigned i = 0; i < TCP_MAC; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}
