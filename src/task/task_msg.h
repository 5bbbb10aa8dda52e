/*
 * The task runtime's messages between workers, over the active-message
 * layer: a message is a byte string of any length, cut into medium
 * requests of one handler and put together again on arrival (messages of
 * one sender arrive whole and in order).  Sending never waits for the
 * receiver: what does not fit now is queued and sent by task_msg_flush, so
 * a stopped worker cannot stop the one sending to it.  Messages to this
 * rank go straight to its inbox.  Handlers only queue; the runtime's loop
 * takes messages with task_msg_next outside any handler.
 */
#ifndef SHOAL_TASK_MSG_H
#define SHOAL_TASK_MSG_H

#include <stddef.h>
#include <stdint.h>

int task_msg_init(void);
void task_msg_fini(void);
/* Queues msg (malloc'd; taken over, freed once sent) for dest. */
int task_msg_send(int dest, uint8_t *msg, size_t len);
/* Sends what the channels take now; drops what is queued for dead ranks. */
int task_msg_flush(void);
/* 1 and the oldest message that arrived (malloc'd; free it), or 0. */
int task_msg_next(int *src_p, uint8_t **msg_p, size_t *len_p);
/* 1 when a message waits in the inbox. */
int task_msg_waiting(void);
/* 1 when messages wait to be sent. */
int task_msg_queued(void);

/* The most messages that have waited to go to one rank at once (a
 * receiver slower than this rank): SHOAL_LOG=info reports it. */
size_t task_msg_most_queued(void);
/* 1 when the active-message layer found rank dead, or the launcher said
 * it let it go (task_msg_poll_gone). */
int task_msg_dead(int rank);
/* Takes the launcher's notices of ranks it let go (shoalrun, when a host
 * of expendable workers is lost: a link that is only silent, which no
 * wire notices), without waiting: they count as dead from then on. */
void task_msg_poll_gone(void);

#endif /* SHOAL_TASK_MSG_H */
