/*
 * The static shared section's bounds, from the executable's section
 * headers (task_elf.h).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_elf.h"

static int read_at(int fd, void *buf, size_t len, off_t off)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return base_err(SHOAL_ERR_SYSTEM, "task: reading the program's "
                                              "section headers");
        got += (size_t)n;
    }
    return SHOAL_OK;
}

static int load(int fd, Elf64_Ehdr *eh, Elf64_Shdr **sh_p, char **names_p)
{
    int s = read_at(fd, eh, sizeof(*eh), 0);

    if (s != SHOAL_OK)
        return s;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
        eh->e_shstrndx >= eh->e_shnum)
        return base_err(SHOAL_ERR_UNSUPPORTED,
                        "task: the program is not a 64-bit ELF file with "
                        "section headers");
    Elf64_Shdr *sh = calloc(eh->e_shnum, sizeof(*sh));
    if (sh == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: section headers");
    s = read_at(fd, sh, eh->e_shnum * sizeof(*sh), (off_t)eh->e_shoff);
    const Elf64_Shdr *str = &sh[eh->e_shstrndx];
    char *names = s == SHOAL_OK ? malloc(str->sh_size + 1) : NULL;
    if (s == SHOAL_OK && names == NULL)
        s = base_err(SHOAL_ERR_NOMEM, "task: section names");
    if (s == SHOAL_OK)
        s = read_at(fd, names, str->sh_size, (off_t)str->sh_offset);
    if (s != SHOAL_OK) {
        free(sh);
        free(names);
        return s;
    }
    names[str->sh_size] = '\0';
    *sh_p = sh;
    *names_p = names;
    return SHOAL_OK;
}

static int check(const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                 const char *names, size_t name_max, char **begin_p,
                 char **end_p)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t bias = getauxval(AT_ENTRY) - eh->e_entry;
    const Elf64_Shdr *ld = NULL;

    for (size_t i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_name < name_max &&
            strcmp(names + sh[i].sh_name, ".ldata") == 0)
            ld = &sh[i];
    if (ld == NULL || ld->sh_size == 0)
        return SHOAL_OK;
    uint64_t b = (ld->sh_addr + page - 1) / page * page;
    uint64_t e = (ld->sh_addr + ld->sh_size + page - 1) / page * page;
    for (size_t i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *o = &sh[i];
        if (o == ld || !(o->sh_flags & SHF_ALLOC) || o->sh_size == 0)
            continue;
        if (o->sh_addr < e && o->sh_addr + o->sh_size > b)
            return base_err(SHOAL_ERR_UNSUPPORTED,
                            "task: section %s of the program shares pages "
                            "with the static shared section (.ldata): the "
                            "linker placed it unusually",
                            o->sh_name < name_max ? names + o->sh_name
                                                  : "?");
    }
    *begin_p = (char *)(bias + b);
    *end_p = (char *)(bias + e);
    return SHOAL_OK;
}

int task_elf_shared(char **begin_p, char **end_p)
{
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    char *names = NULL;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

    *begin_p = *end_p = NULL;
    if (fd < 0)
        return base_err(SHOAL_ERR_SYSTEM, "task: open /proc/self/exe: %s",
                        strerror(errno));
    int s = load(fd, &eh, &sh, &names);
    close(fd);
    if (s == SHOAL_OK)
        s = check(&eh, sh, names, sh[eh.e_shstrndx].sh_size, begin_p, end_p);
    free(sh);
    free(names);
    return s;
}
