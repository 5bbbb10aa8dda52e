/*
 * shoalrun without -n on one host: a program of the task runtime
 * (docs/TASK.md) gets one worker per CPU this process may run on, as the
 * dissertation's one task per workstation; any other program still needs
 * -n.  A task program is recognized by the name of the runtime's entry
 * point, shoal_task_run, among the symbol names of its file (SHOAL_TASK_MAIN
 * calls it, so the dynamic linker must find it by name).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shoalrun.h"

/* 1 when the file at path holds the NUL-terminated name "shoal_task_run"
 * (in a string table: preceded by a NUL too), else 0. */
static int is_task_program(const char *path)
{
    static const char name[] = "\0shoal_task_run"; /* with its final NUL */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    int found = 0;

    if (fd < 0)
        return 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (size_t)st.st_size >= sizeof(name)) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
                       0);
        if (m != MAP_FAILED) {
            found = memmem(m, (size_t)st.st_size, name, sizeof(name)) !=
                    NULL;
            munmap(m, (size_t)st.st_size);
        }
    }
    close(fd);
    return found;
}

int shoalrun_task_default_ranks(const char *path)
{
    cpu_set_t set;
    long n;

    if (!is_task_program(path))
        return 0;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        n = CPU_COUNT(&set);
    else
        n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > SHOALRUN_MAX_RANKS ? SHOALRUN_MAX_RANKS : (int)n;
}
