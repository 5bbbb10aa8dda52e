/* The checkpoint directory's layout: see ckpt_dir.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mpi/core/ckpt_dir.h"

const uint8_t ckpt_dir_key[16] = {'s', 'h', 'o', 'a', 'l', '-', 'c', 'k',
                                  'p', 't', '-', 'k', 'e', 'y', '-', '1'};

uint64_t ckpt_dir_prog_id(const char *name)
{
    return base_siphash(ckpt_dir_key, name, strlen(name));
}

int ckpt_dir_epochs(const char *dir, uint64_t *ep, int max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (d == NULL || max <= 0) {
        if (d != NULL)
            closedir(d);
        return 0;
    }
    while ((e = readdir(d)) != NULL) {
        char *end;
        if (strncmp(e->d_name, "ckpt.", 5) != 0)
            continue;
        errno = 0;
        uint64_t v = strtoull(e->d_name + 5, &end, 10);
        if (errno != 0 || *end != '\0' || end == e->d_name + 5 || v == 0)
            continue;
        if (n < max) {
            ep[n++] = v;
        } else { /* keep the largest */
            int lo = 0;
            for (int i = 1; i < n; i++)
                if (ep[i] < ep[lo])
                    lo = i;
            if (v > ep[lo])
                ep[lo] = v;
        }
    }
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort, descending */
        for (int j = i; j > 0 && ep[j] > ep[j - 1]; j--) {
            uint64_t t = ep[j];
            ep[j] = ep[j - 1];
            ep[j - 1] = t;
        }
    return n;
}

int ckpt_dir_complete(const char *dir, uint64_t epoch, int *ranks,
                      uint64_t *prog)
{
    char path[4200], line[256];
    unsigned long long e, p;
    int size;
    FILE *f;

    snprintf(path, sizeof(path), "%s/ckpt.%" PRIu64 "/COMPLETE", dir, epoch);
    f = fopen(path, "re");
    if (f == NULL)
        return 0;
    int ok = fgets(line, sizeof(line), f) != NULL &&
             sscanf(line, "shoal-checkpoint 1 epoch=%llu ranks=%d prog=%llx",
                    &e, &size, &p) == 3;
    fclose(f);
    if (!ok || e != epoch)
        return -1;
    *ranks = size;
    *prog = p;
    return 1;
}
