/*
 * shoal-info: what this Shoal is and what works on this machine.
 *
 *   shoal-info                    version, build, wires and why not
 *   shoal-info --config           every SHOAL_* variable with its value
 *   shoal-info --config=markdown  the same as the table in docs/CONFIG.md
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "am/am.h"
#include "base/base.h"
#include "boot/boot_internal.h"
#include "shoal.h"
#include "wire/wire.h"

static const char *const type_names[] = {
    [BASE_CONFIG_INT] = "integer",   [BASE_CONFIG_SIZE] = "size",
    [BASE_CONFIG_BOOL] = "boolean",  [BASE_CONFIG_ENUM] = "choice",
    [BASE_CONFIG_STRING] = "string", [BASE_CONFIG_DURATION] = "duration",
};

static void print_config_text(void)
{
    size_t n;
    const base_config_var_t *vars = base_config_vars(&n);

    for (size_t i = 0; i < n; i++) {
        const base_config_var_t *v = &vars[i];
        const char *set = getenv(v->name);
        printf("%s=%s%s\n", v->name, base_config_current(v),
               set ? "  (set)" : "");
        printf("    %s. %s, default %s%s%s; read by %s.\n", v->doc,
               type_names[v->type], v->defval, *v->extra ? ", " : "",
               v->type == BASE_CONFIG_ENUM ? v->extra
               : *v->extra                 ? v->extra
                                           : "",
               v->scope);
    }
}

static void print_config_markdown(void)
{
    size_t n;
    const base_config_var_t *vars = base_config_vars(&n);

    printf("| variable | type | default | accepted | read by | meaning |\n");
    printf("|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const base_config_var_t *v = &vars[i];
        char extra[128];
        snprintf(extra, sizeof(extra), "%s", v->extra);
        for (char *p = extra; *p; p++)
            if (*p == '|')
                *p = '/';
        printf("| `%s` | %s | `%s` | %s | %s | %s |\n", v->name,
               type_names[v->type], v->defval, *extra ? extra : "any",
               v->scope, v->doc);
    }
}

/* ---- what works here ---------------------------------------------------------- */

static int probe_shm(char *why, size_t cap)
{
    char name[64];
    int fd;

    snprintf(name, sizeof(name), "/shoal-info-probe-%d", (int)getpid());
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        snprintf(why, cap, "cannot create objects in /dev/shm: %s",
                 strerror(errno));
        return 0;
    }
    close(fd);
    shm_unlink(name);
    snprintf(why, cap, "/dev/shm usable");
    return 1;
}

static int probe_memfd(char *why, size_t cap)
{
    int fd = memfd_create("shoal-info", MFD_CLOEXEC);
    int pidfd;

    if (fd < 0) {
        snprintf(why, cap, "memfd_create: %s", strerror(errno));
        return 0;
    }
    pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    int dup = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    int e = errno;
    close(fd);
    if (pidfd >= 0)
        close(pidfd);
    if (dup < 0) {
        snprintf(why, cap, "pidfd_getfd: %s", strerror(e));
        return 0;
    }
    close(dup);
    snprintf(why, cap, "memfd_create and pidfd_getfd available");
    return 1;
}

static void print_info(void)
{
    char why[160];
    int shm, cma, mem;

    printf("Shoal %s (interface %d.%d)\n", SHOAL_VERSION_STRING,
           SHOAL_VERSION_MAJOR, SHOAL_VERSION_MINOR);
    printf("build: %s\n", SHOAL_BUILD_CONFIG);
    printf("CPUs available: %d\n", base_cpu_count());
    printf("\nwires\n");
    shm = probe_shm(why, sizeof(why));
    printf("  %-22s %-4s %s\n", "shm (shared memory)", shm ? "yes" : "no",
           why);
    cma = wire_shm_cma_probe(why, sizeof(why));
    printf("  %-22s %-4s %s\n", "  single copy (CMA)", cma ? "yes" : "no",
           why);
    mem = probe_memfd(why, sizeof(why));
    printf("  %-22s %-4s %s\n", "  shared segments", mem ? "yes" : "no",
           why);
    /* The network wires SHOAL_WIRES may name, in the am layer's table. */
    for (int i = 0; am_wire_known(i) != NULL; i++) {
        const wire_ops_t *w = am_wire_known(i);
        if (w->probe == NULL)
            continue; /* shared memory, above */
        int ok = w->probe(why, sizeof(why));
        printf("  %-22s %-4s %s\n", w->name, ok ? "yes" : "no", why);
        if (strcmp(w->name, "udp") == 0) {
            ok = wire_udp_xdp_probe(why, sizeof(why));
            printf("  %-22s %-4s %s\n", "  kernel bypass (XDP)",
                   ok ? "yes" : "no", why);
        }
    }
    printf("\nlaunchers (SHOAL_BOOT=auto|pmi1|pmi2|pmix|single)\n");
    printf("  %-22s %-4s %s\n", "shoalrun", "yes",
           "pmi1: PMI-1 over PMI_FD; other hosts with --host");
    printf("  %-22s %-4s %s\n", "Hydra (mpiexec.mpich)", "yes",
           "pmi1: PMI-1 over PMI_FD or PMI_PORT (pmi2 when forced)");
    printf("  %-22s %-4s %s\n", "srun --mpi=pmi2", "yes",
           "pmi2: PMI-2 wire over PMI_FD");
    int pmix = boot_pmix_available(why, sizeof(why));
    printf("  %-22s %-4s pmix: %s%s\n", "mpirun.openmpi", pmix ? "yes" : "no",
           why, pmix ? "" : " (apt-get install libpmix2)");
    printf("  %-22s %-4s %s\n", "srun --mpi=pmix", pmix ? "yes" : "no",
           "pmix: as above");
    printf("  %-22s %-4s %s\n", "none", "yes", "runs as a single rank");
    printf("\n%s\n", "shoal-info --config lists the SHOAL_* variables.");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: shoal-info [--config[=text|markdown]] [--version]\n");
}

int main(int argc, char **argv)
{
    if (base_config_load(0) != SHOAL_OK)
        fprintf(stderr, "shoal-info: %s\n", shoal_error_detail());
    if (argc == 1) {
        print_info();
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--config") == 0 ||
                      strcmp(argv[1], "--config=text") == 0)) {
        print_config_text();
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--config=markdown") == 0) {
        print_config_markdown();
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("%s\n", SHOAL_VERSION_STRING);
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
                      strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
