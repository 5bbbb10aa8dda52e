/* The library's objects in a checkpoint image (ckpt_objs.c). */
#ifndef SHOAL_MPI_CKPT_OBJS_H
#define SHOAL_MPI_CKPT_OBJS_H

#include <stddef.h>
#include <stdint.h>

struct shoal_mpi_request;

/* The records of this process's live communicators (but the one of
 * context skip_ctx), groups and datatypes: *buf_p (malloc'd, or NULL when
 * there are none) of *len_p bytes.  MPI_SUCCESS or MPI_ERR_NO_MEM. */
int ckpt_objs_save(uint32_t skip_ctx, uint8_t **buf_p, size_t *len_p);
/* Check the records and make their objects again at their addresses: 1,
 * or 0 with why set and nothing made.  moved: why the handles would name
 * nothing here (the program loaded elsewhere), or NULL. */
int ckpt_objs_load(const uint8_t *p, uint64_t len, const char *moved,
                   char *why, size_t whylen);
void ckpt_objs_commit(void);
/* The regions' bytes as a restart reads them (from a region's start):
 * the objects whose handles are there come back, and what they hold. */
void ckpt_objs_scan_reset(void);
void ckpt_objs_scan(const void *p, size_t n);
int ckpt_objs_held(const void *obj); /* the scans so far saw its address */
/* The receives posted here (but on the communicator of context skip_ctx)
 * that a checkpoint carries: on a communicator it carries, into a
 * registered region (ckpt.c). */
long ckpt_objs_posted(uint32_t skip_ctx);
/* An ack from src_world (MPI_ACK_RESTORED) of a synchronous send a
 * restart brought back, named by its address in the job before: that
 * request, once (NULL when no such send came back here: the program did
 * not keep its handle). */
struct shoal_mpi_request *ckpt_objs_sync_claim(uint64_t addr, int src_world);
int ckpt_region_of(const void *p, size_t n, uint32_t *idx, uint64_t *off);
void *ckpt_region_at(uint32_t idx, uint64_t off, size_t n); /* the restart goes on: counts as they were */
void ckpt_objs_undo(void);   /* the candidate was refused: unmake them */

#endif
