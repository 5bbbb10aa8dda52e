/*
 * The channel between a worker and a copy it forked (one run of a job in a
 * child process): a SOCK_SEQPACKET socket pair, one message per packet.  A
 * message larger than TASK_CHAN_INLINE travels in a memfd passed with the
 * packet, so a packet never waits for room in the middle of a message and
 * a diff of any size is one send.
 */
#ifndef SHOAL_TASK_CHAN_H
#define SHOAL_TASK_CHAN_H

#include <stddef.h>
#include <stdint.h>

#define TASK_CHAN_INLINE 16384

/* fds[0] for the worker (non-blocking), fds[1] for the copy. */
int task_chan_pair(int fds[2]);
/* Sends a message; SHOAL_ERR_AGAIN when a non-blocking socket is full,
 * SHOAL_ERR_PEER_DEAD when the other side is gone. */
int task_chan_send(int fd, const void *msg, size_t len);
/* 1 and a message (malloc'd; free it), 0 when none waits (non-blocking
 * socket), SHOAL_ERR_PEER_DEAD at the end, or another error. */
int task_chan_recv(int fd, uint8_t **msg_p, size_t *len_p);

/* Blocking and without allocation (a signal handler may call it): the
 * next message into buf[0..cap).  1 and *len_p, SHOAL_ERR_PEER_DEAD, or
 * SHOAL_ERR_PROTOCOL for a message that does not fit (it is lost). */
int task_chan_recv_into(int fd, void *buf, size_t cap, size_t *len_p);

#endif /* SHOAL_TASK_CHAN_H */
