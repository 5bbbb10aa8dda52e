/* The same addresses at every start of a process that checkpoints
 * (ckpt_fixed.c). */
#ifndef SHOAL_MPI_CKPT_FIXED_H
#define SHOAL_MPI_CKPT_FIXED_H

#include <stdint.h>

/* Where the program and the library are loaded (an image records them). */
void ckpt_fixed_bases(uint64_t *prog, uint64_t *lib);

#endif
