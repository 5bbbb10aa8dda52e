/*
 * Where the program's static shared section lies: the large-data section
 * (.ldata) of the running executable, read from its section headers, with
 * a check that no other section of the program shares its pages.
 */
#ifndef SHOAL_TASK_ELF_H
#define SHOAL_TASK_ELF_H

#include <stddef.h>

/* *begin_p..*end_p: the whole pages of .ldata from its first page
 * boundary on (both NULL when the program has none).  SHOAL_ERR_UNSUPPORTED
 * with a detail when another section shares those pages. */
int task_elf_shared(char **begin_p, char **end_p);

#endif /* SHOAL_TASK_ELF_H */
