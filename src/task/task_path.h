/*
 * Job identities.  A job is named by its path from the root job: one level
 * per nesting, each level the parent's block number (its how-many-th
 * parbegin), the routine's index in the block, and the job's sibling id
 * (0..width-1) within the routine.  Copies of a parent run the same code
 * on the same memory, so they name their children the same: the path is
 * what lets the coordinator merge the "spawn block" reports of every copy,
 * and what keys a job's random stream and its lock requests.
 *
 * Encoding: three canonical LEB128 integers a level (task_varint.h), root
 * first; the root is the empty string.  Canonical means equal paths have
 * equal bytes, so equality, hashing and prefix (ancestor) tests work on
 * bytes.  A chain of 1000 nested single jobs takes 3000 bytes.
 */
#ifndef SHOAL_TASK_PATH_H
#define SHOAL_TASK_PATH_H

#include <stddef.h>
#include <stdint.h>

/* Bounds the decoder accepts (a path comes from other processes). */
#define TASK_PATH_MAX_BYTES 65536u
#define TASK_PATH_MAX_INDEX UINT32_MAX

typedef struct task_path {
    uint8_t *bytes; /* owned; NULL for the root */
    uint32_t len;   /* bytes */
    uint32_t depth; /* levels; 0 for the root */
} task_path_t;

typedef struct task_path_level {
    uint32_t block;   /* the parent's parbegin count, from 0 */
    uint32_t routine; /* the routine's index in its block, from 0 */
    uint32_t id;      /* sibling id within the routine, 0..width-1 */
} task_path_level_t;

#define TASK_PATH_ROOT ((task_path_t){NULL, 0, 0})

/* child = parent + (block, routine, id).  SHOAL_ERR_NOMEM, or
 * SHOAL_ERR_TOO_LARGE past TASK_PATH_MAX_BYTES. */
int task_path_child(const task_path_t *parent, uint32_t block,
                    uint32_t routine, uint32_t id, task_path_t *child);
/* parent of p (SHOAL_ERR_INVALID for the root). */
int task_path_parent(const task_path_t *p, task_path_t *parent);
int task_path_copy(const task_path_t *p, task_path_t *out);
void task_path_free(task_path_t *p);

/* Reads an encoded path (len bytes, as p->bytes holds them) into out;
 * SHOAL_ERR_PROTOCOL with a detail when it is not a canonical path. */
int task_path_decode(const uint8_t *in, size_t len, task_path_t *out);
/* Level i (0 = the root's child) of p; SHOAL_ERR_INVALID past the depth. */
int task_path_level(const task_path_t *p, uint32_t i, task_path_level_t *lv);

/*
 * Order of the job tree, depth first: an ancestor before its descendants,
 * siblings by (block, routine, id) as numbers.  Diffs of a sibling set are
 * merged in this order.  Returns <0, 0, >0.
 */
int task_path_cmp(const task_path_t *a, const task_path_t *b);
int task_path_equal(const task_path_t *a, const task_path_t *b);
/* 1 when a is a proper ancestor of b. */
int task_path_is_ancestor(const task_path_t *a, const task_path_t *b);
uint64_t task_path_hash(const task_path_t *p);

/*
 * Text for messages: "/" for the root, else "/b.r[i]" a level, e.g.
 * "/0.1[5]/2.0[0]".  Writes at most cap bytes with the NUL (cut short
 * with "..." when it does not fit); returns the length of the whole text.
 */
size_t task_path_format(const task_path_t *p, char *buf, size_t cap);

#endif /* SHOAL_TASK_PATH_H */
