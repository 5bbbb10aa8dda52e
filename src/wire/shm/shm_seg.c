/* Creating and mapping the per-rank segments in /dev/shm. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm.h"

int shm_seg_create(const char *name, size_t size, void **base_p)
{
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    void *base;

    if (fd < 0)
        return base_err(SHOAL_ERR_SYSTEM,
                        "cannot create shared-memory segment %s: %s%s", name,
                        strerror(errno),
                        errno == EEXIST ? " (a job with the same name runs?)"
                                        : "");
    if (ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        return base_err(SHOAL_ERR_SYSTEM,
                        "cannot size shared-memory segment %s to %zu bytes: "
                        "%s (is /dev/shm full?)",
                        name, size, strerror(e));
    }
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        int e = errno;
        shm_unlink(name);
        return base_err(SHOAL_ERR_SYSTEM, "cannot map %s (%zu bytes): %s",
                        name, size, strerror(e));
    }
    *base_p = base;
    return SHOAL_OK;
}

int shm_seg_attach(const char *name, void **base_p, size_t *size_p)
{
    int fd = shm_open(name, O_RDWR, 0);
    struct stat st;
    void *base;

    if (fd < 0)
        return base_err(SHOAL_ERR_SYSTEM,
                        "cannot open a peer's shared-memory segment %s: %s",
                        name, strerror(errno));
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(shm_ctrl_t)) {
        close(fd);
        return base_err(SHOAL_ERR_PROTOCOL,
                        "shared-memory segment %s is too small", name);
    }
    base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return base_err(SHOAL_ERR_SYSTEM, "cannot map %s: %s", name,
                        strerror(errno));
    *base_p = base;
    *size_p = (size_t)st.st_size;
    return SHOAL_OK;
}
