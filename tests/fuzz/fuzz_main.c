/*
 * Replays a corpus through a fuzz target without libFuzzer, so every build
 * runs the seeds (and any crash input committed next to them):
 *   fuzz_<target>_replay DIR_OR_FILE...
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;

    if (f == NULL || fstat(fileno(f), &st) != 0) {
        perror(path);
        if (f != NULL)
            fclose(f);
        return -1;
    }
    uint8_t *buf = malloc((size_t)st.st_size + 1);
    size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (buf == NULL)
        return -1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int replay(const char *path, int *count)
{
    struct stat st;
    char child[4096];

    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int status = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
        status |= replay(child, count);
    }
    closedir(d);
    return status;
}

int main(int argc, char **argv)
{
    int count = 0, status = 0;

    for (int i = 1; i < argc; i++)
        status |= replay(argv[i], &count);
    printf("replayed %d inputs\n", count);
    /* An empty corpus would make this test pass without testing. */
    return status != 0 || count == 0;
}
