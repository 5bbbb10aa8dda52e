/*
 * Intrusive doubly linked list with a sentinel head.  Embed a base_list_t in
 * the element and recover the element with BASE_CONTAINER_OF.
 */
#ifndef SHOAL_BASE_LIST_H
#define SHOAL_BASE_LIST_H

#include <stddef.h>

typedef struct base_list {
    struct base_list *prev, *next;
} base_list_t;

static inline void base_list_init(base_list_t *head)
{
    head->prev = head->next = head;
}

static inline int base_list_empty(const base_list_t *head)
{
    return head->next == head;
}

static inline void base_list_insert_after(base_list_t *pos, base_list_t *e)
{
    e->prev = pos;
    e->next = pos->next;
    pos->next->prev = e;
    pos->next = e;
}

static inline void base_list_push_back(base_list_t *head, base_list_t *e)
{
    base_list_insert_after(head->prev, e);
}

static inline void base_list_push_front(base_list_t *head, base_list_t *e)
{
    base_list_insert_after(head, e);
}

static inline void base_list_remove(base_list_t *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->prev = e->next = e;
}

static inline base_list_t *base_list_pop_front(base_list_t *head)
{
    base_list_t *e = head->next;

    if (e == head)
        return NULL;
    base_list_remove(e);
    return e;
}

static inline size_t base_list_length(const base_list_t *head)
{
    size_t n = 0;

    for (const base_list_t *e = head->next; e != head; e = e->next)
        n++;
    return n;
}

#define base_list_for_each(pos, head)                                        \
    for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

#endif /* SHOAL_BASE_LIST_H */
