/*
 * The checkpoint directory's layout (docs/FT.md "How a checkpoint is
 * taken"), read by the library (ckpt.c) and by shoalrun
 * --restart-on-failure, which looks for the newest complete checkpoint
 * before it restarts a job: DIR/ckpt.<epoch>/ holds rank.<r> images and,
 * once committed, COMPLETE ("shoal-checkpoint 1 epoch=E ranks=P prog=H").
 * Plain file operations, no MPI state.
 */
#ifndef SHOAL_MPI_CKPT_DIR_H
#define SHOAL_MPI_CKPT_DIR_H

#include <stdint.h>

/* The key of the images' checksums and of program identities. */
extern const uint8_t ckpt_dir_key[16];

/* A program's identity in a checkpoint: SipHash of the base name of its
 * argv[0] (what the process's program_invocation_short_name is). */
uint64_t ckpt_dir_prog_id(const char *name);

/* The epochs of DIR's ckpt.<n> directories (complete or not), largest
 * first, at most max of them (the largest); 0 when there are none or DIR
 * cannot be read. */
int ckpt_dir_epochs(const char *dir, uint64_t *ep, int max);

/*
 * DIR/ckpt.<epoch>/COMPLETE: 1 with the checkpoint's rank count and
 * program hash when it is there and well formed for that epoch; 0 when it
 * is missing (a checkpoint cut short); -1 when it is unreadable.
 */
int ckpt_dir_complete(const char *dir, uint64_t epoch, int *ranks,
                      uint64_t *prog);

#endif /* SHOAL_MPI_CKPT_DIR_H */
