/*
 * The command line: shoalrun [options] program [args...].  Options stop at
 * the first word that is not one (or at "--"), so the program's own options
 * are never taken for ours.  Every mistake is reported with what was wrong
 * and a hint, before anything is started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shoal/version.h"
#include "shoalrun.h"

/* After "Usage: <name> -n N [options] program [args...]". */
static const char usage_text[] =
    "Start N ranks of program on this machine, or on the hosts given, and\n"
    "serve them PMI-1.\n"
    "\n"
    "Options:\n"
    "  -n, -np N             number of ranks (1 to 4096; required on one\n"
    "                        host but for task programs, one per CPU;\n"
    "                        with hosts, default one per slot)\n"
    "  --host LIST           hosts to place ranks on, in blocks: a:4,b:4\n"
    "                        (host[=address][:slots]; localhost or this\n"
    "                        machine's name runs ranks here; repeatable)\n"
    "  --hostfile FILE       the same from a file: lines \"host slots=N\" or\n"
    "                        \"host:N\"; # starts a comment\n"
    "  --oversubscribe       with hosts: allow more ranks than slots\n"
    "  --rsh CMD             remote-exec command for the other hosts, split\n"
    "                        into words (default SHOAL_RSH, ssh); it gets\n"
    "                        the host name and the daemon's command\n"
    "  --fanout K            daemons each daemon starts (default\n"
    "                        SHOAL_FANOUT, 32)\n"
    "  --timeout S           stop the job after S seconds (fractions allowed)\n"
    "  --ft                  fault-tolerant run: a rank's death does not\n"
    "                        end the job; the others are told and may go on\n"
    "                        (ULFM, docs/FT.md; sets SHOAL_FT=1); also\n"
    "                        Hydra's -disable-auto-cleanup and Open MPI's\n"
    "                        --with-ft ulfm (--with-ft no: a run without\n"
    "                        fault tolerance, even with SHOAL_FT=1 set)\n"
    "  --initial-errhandler NAME\n"
    "                        the ranks' initial error handler (MPI 4.0):\n"
    "                        mpi_errors_are_fatal (the default),\n"
    "                        mpi_errors_abort or mpi_errors_return; MPI_Init\n"
    "                        sets it on MPI_COMM_WORLD and MPI_COMM_SELF\n"
    "                        (sets SHOAL_MPI_INITIAL_ERRHANDLER)\n"
    "  --checkpoint-dir DIR  MPIX_Checkpoint writes checkpoints to DIR\n"
    "                        (docs/FT.md; sets SHOAL_CKPT_DIR)\n"
    "  --restart DIR         restart from the newest complete checkpoint\n"
    "                        of DIR, which later checkpoints go to too\n"
    "                        (sets SHOAL_CKPT_DIR and SHOAL_CKPT_RESTART)\n"
    "  --restart-on-failure[=N]\n"
    "                        when a rank dies (a signal shoalrun did not\n"
    "                        send, a host lost), stop the job and start it\n"
    "                        again from the newest complete checkpoint of\n"
    "                        its directory, or from the beginning before\n"
    "                        the first; at most N times (default 3)\n"
    "  --checkpoint-every S  ask the ranks for a checkpoint every S seconds\n"
    "                        (one host); the program takes it in its next\n"
    "                        MPIX_Checkpoint_if_requested call, and so for\n"
    "                        SIGUSR1 to shoalrun, which is not passed on\n"
    "                        with a checkpoint directory (docs/FT.md)\n"
    "  --tag-output          prefix each output line with [rank]\n"
    "  --bind-to core|none|auto\n"
    "                        pin rank i to the i-th CPU of shoalrun's mask\n"
    "                        (core), leave placement to the kernel (none), or\n"
    "                        use the measured default, which is core\n"
    "                        (auto, the default; also SHOAL_BIND_TO)\n"
    "  --noise SPEC          make ranks unresponsive on purpose, to test code\n"
    "                        that tolerates descheduled ranks (repeatable;\n"
    "                        default SHOAL_NOISE, specs separated by ';'):\n"
    "                          rank=R,stop=T1,every=T2[,random][,start=T3]\n"
    "                            stop the ranks for T1 once every T2 (random:\n"
    "                            at random times, every T2 on average), after\n"
    "                            a delay of T3 (0)\n"
    "                          rank=R,busy[=N][,duty=PCT][,sched=rr]\n"
    "                            start N (1) processes spinning PCT% (100) of\n"
    "                            the time on each rank's CPU; sched=rr: they\n"
    "                            and the rank take turns in SCHED_RR time\n"
    "                            slices (a woken rank waits; needs root)\n"
    "                        R: 3, 1+2, 0-3, 0-1+5 or all; T: 500us, 5ms, 1s\n"
    "  --noise-report        print what --noise did (also SHOAL_LOG=info)\n"
    "  -h, --help            show this help\n"
    "  --version             show the version\n"
    "\n"
    "Accepted for mpiexec/mpirun compatibility (shoalrun is also installed\n"
    "under those names):\n"
    "  -x VAR=VALUE, -genv VAR VALUE, -env VAR VALUE\n"
    "                        set VAR in the ranks' environment (-x VAR alone:\n"
    "                        nothing to do, ranks inherit every variable)\n"
    "  -bind-to core|none|auto    same as --bind-to\n"
    "  --allow-run-as-root, -genvall, -envall\n"
    "                        ignored: shoalrun always does what they ask\n"
    "  -hosts LIST           same as --host (also -host, -H)\n"
    "  -f FILE, -hostfile FILE   same as --hostfile\n"
    "  -ppn N                with hosts: N slots on every host\n"
    "\n"
    "Exit status:\n"
    "  0     every rank exited with 0\n"
    "  N     the first rank to fail exited with N, or called PMI abort with N\n"
    "  128+S the first rank to fail was killed by signal S\n"
    "  1     a rank that initialized MPI (PMI) exited without finalizing, or\n"
    "        left the others waiting in a PMI barrier\n"
    "  2     bad command line\n"
    "  124   the job exceeded --timeout\n"
    "  125   shoalrun could not start or run the job\n"
    "  126   the program is not executable\n"
    "  127   the program was not found\n"
    "\n"
    "When a rank fails after finalizing, or exits 0 without finalizing, the\n"
    "others get SHOAL_EXIT_GRACE (default 5s) to exit on their own before\n"
    "they are stopped.\n"
    "\n"
    "See docs/LAUNCHING.md for signals, cleanup and running under other "
    "launchers.\n";

static int usage_error(int *exit_p, const char *fmt, ...) BASE_PRINTF(2, 3);

static int usage_error(int *exit_p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n",
            shoalrun_name, msg, shoalrun_name);
    *exit_p = SHOALRUN_EXIT_USAGE;
    return 1;
}

static int parse_nranks(const char *text, int *out, int *exit_p)
{
    char *end;

    errno = 0;
    long v = strtol(text, &end, 10);
    if (text[0] == '\0' || *end != '\0')
        return usage_error(exit_p, "-n '%s' is not a number of ranks", text);
    if ((errno == ERANGE && v > 0) || v > SHOALRUN_MAX_RANKS)
        return usage_error(exit_p, "-n %s: too many ranks (at most %d)", text,
                           SHOALRUN_MAX_RANKS);
    if (v <= 0)
        return usage_error(exit_p, "-n %s: a job needs at least 1 rank", text);
    *out = (int)v;
    return 0;
}

/* --timeout S, --checkpoint-every S: seconds, fractions allowed. */
static int parse_seconds(const char *opt, const char *text, double *out,
                         int *exit_p)
{
    char *end;

    errno = 0;
    double v = strtod(text, &end);
    if (text[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) ||
        v <= 0 || v > 1e8)
        return usage_error(exit_p,
                           "%s '%s' is not a number of seconds above 0", opt,
                           text);
    *out = v;
    return 0;
}

static int parse_bind(const char *text, int *out, int *exit_p)
{
    static const char *const names[] = {"auto", "core", "none"};

    for (int i = 0; i < 3; i++)
        if (strcmp(text, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return usage_error(exit_p,
                       "--bind-to '%s': expected core, none or auto", text);
}

/* --restart-on-failure[=N]: the value only after '=' (the next word may
 * be the program). */
static int parse_restart_max(const char *arg, int *out, int *exit_p)
{
    const char *eq = strchr(arg, '=');
    char *end;

    if (eq == NULL) {
        *out = SHOALRUN_RESTARTS_DEFAULT;
        return 0;
    }
    long v = strtol(eq + 1, &end, 10);
    if (eq[1] == '\0' || *end != '\0' || v < 1 || v > 1000)
        return usage_error(exit_p, "--restart-on-failure='%s': expected a "
                           "number of restarts, 1 to 1000", eq + 1);
    *out = (int)v;
    return 0;
}

/*
 * The value of an option: "--opt=value" or the next word.  Returns NULL
 * (with the error reported) when there is none.
 */
static const char *option_value(int argc, char **argv, int *i,
                                const char *name, int *exit_p)
{
    const char *eq = strchr(argv[*i], '=');

    if (eq != NULL && strncmp(argv[*i], "--", 2) == 0)
        return eq + 1;
    if (*i + 1 >= argc) {
        usage_error(exit_p, "%s needs a value", name);
        return NULL;
    }
    return argv[++*i];
}

static int is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);

    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

/* Fault tolerance on or off: the ranks read SHOAL_FT from their
 * environment, the launcher base_cfg. */
static int set_ft(int on, int *exit_p)
{
    if (setenv("SHOAL_FT", on ? "1" : "0", 1) != 0)
        return usage_error(exit_p, "cannot set SHOAL_FT");
    base_cfg.FT = on;
    return 0;
}

/* -x VAR=VALUE (Open MPI); a bare VAR is inherited anyway. */
static int parse_export(const char *text, int *exit_p)
{
    const char *eq = strchr(text, '=');

    if (text[0] == '\0' || text[0] == '=')
        return usage_error(exit_p, "-x '%s': expected VAR or VAR=VALUE",
                           text);
    if (eq == NULL)
        return 0;
    char *name = strndup(text, (size_t)(eq - text));
    int rc = name == NULL || setenv(name, eq + 1, 1) != 0;
    free(name);
    if (rc)
        return usage_error(exit_p, "-x '%s': cannot set it: %s", text,
                           strerror(errno));
    return 0;
}

/* -genv VAR VALUE, -env VAR VALUE (MPICH's Hydra): two words. */
static int parse_setenv(int argc, char **argv, int *i, int *exit_p)
{
    const char *opt = argv[*i];

    if (*i + 2 >= argc)
        return usage_error(exit_p, "%s needs a variable and a value", opt);
    const char *name = argv[*i + 1], *value = argv[*i + 2];
    *i += 2;
    if (name[0] == '\0' || strchr(name, '=') != NULL)
        return usage_error(exit_p, "%s '%s': not a variable name", opt, name);
    if (setenv(name, value, 1) != 0)
        return usage_error(exit_p, "%s %s: cannot set it: %s", opt, name,
                           strerror(errno));
    return 0;
}

/* Other launchers' options that ask for what shoalrun does anyway. */
static int parse_compat(int argc, char **argv, int *i, shoalrun_args_t *a,
                        int *exit_p)
{
    static const char *const ignored[] = {"--allow-run-as-root", "-genvall",
                                          "-envall"};
    const char *arg = argv[*i];

    for (size_t k = 0; k < sizeof(ignored) / sizeof(ignored[0]); k++)
        if (strcmp(arg, ignored[k]) == 0)
            return 0;
    if (strcmp(arg, "-x") == 0) {
        const char *v = option_value(argc, argv, i, "-x", exit_p);
        return v == NULL || parse_export(v, exit_p);
    }
    if (strcmp(arg, "-genv") == 0 || strcmp(arg, "-env") == 0)
        return parse_setenv(argc, argv, i, exit_p);
    if (strcmp(arg, "-ppn") == 0) {
        const char *v = option_value(argc, argv, i, "-ppn", exit_p);
        char *end;
        if (v == NULL)
            return 1;
        long n = strtol(v, &end, 10);
        if (v[0] == '\0' || *end != '\0' || n <= 0 || n > SHOALRUN_MAX_RANKS)
            return usage_error(exit_p, "-ppn '%s' is not a number of ranks "
                               "per host", v);
        a->ppn = (int)n; /* with hosts: every host's slots */
        return 0;
    }
    return -1; /* not one of them */
}

/* --noise SPEC: kept until -n is known (a rank list needs it). */
static int add_noise(shoalrun_args_t *a, int argc, const char *spec,
                     int *exit_p)
{
    if (a->noise_specs == NULL)
        a->noise_specs = calloc((size_t)argc, sizeof(*a->noise_specs));
    if (a->noise_specs == NULL)
        return usage_error(exit_p, "out of memory");
    a->noise_specs[a->nnoise_specs++] = spec;
    return 0;
}

static int add_host_spec(shoalrun_args_t *a, int argc, const char *spec,
                         int *exit_p)
{
    if (a->host_specs == NULL)
        a->host_specs = calloc((size_t)argc, sizeof(*a->host_specs));
    if (a->host_specs == NULL)
        return usage_error(exit_p, "out of memory");
    a->host_specs[a->nhost_specs++] = spec;
    return 0;
}

static int parse_fanout(const char *text, int *out, int *exit_p)
{
    char *end;
    long v = strtol(text, &end, 10);

    if (text[0] == '\0' || *end != '\0' || v < 1 || v > 4096)
        return usage_error(exit_p, "--fanout '%s': expected 1 to 4096", text);
    *out = (int)v;
    return 0;
}

/* The options of running across hosts; -1: not one of them. */
static int parse_host_option(int argc, char **argv, int *i, shoalrun_args_t *a,
                             int *exit_p)
{
    const char *arg = argv[*i], *v;

    if (strcmp(arg, "--oversubscribe") == 0 ||
        strcmp(arg, "-oversubscribe") == 0) {
        a->oversubscribe = 1;
        return 0;
    }
    if (is_option(arg, "--host") || strcmp(arg, "-host") == 0 ||
        strcmp(arg, "-hosts") == 0 || strcmp(arg, "-H") == 0) {
        v = option_value(argc, argv, i, "--host", exit_p);
        return v == NULL || add_host_spec(a, argc, v, exit_p);
    }
    if (is_option(arg, "--hostfile") || strcmp(arg, "-hostfile") == 0 ||
        strcmp(arg, "-f") == 0) {
        v = option_value(argc, argv, i, "--hostfile", exit_p);
        if (v != NULL)
            a->hostfile = v;
        return v == NULL;
    }
    if (is_option(arg, "--rsh")) {
        v = option_value(argc, argv, i, "--rsh", exit_p);
        if (v != NULL)
            a->rsh = v;
        return v == NULL;
    }
    if (is_option(arg, "--fanout")) {
        v = option_value(argc, argv, i, "--fanout", exit_p);
        return v == NULL || parse_fanout(v, &a->fanout, exit_p);
    }
    return -1;
}

/* One option at argv[*i]; returns 0 to go on, 1 to exit. */
static int parse_option(int argc, char **argv, int *i, shoalrun_args_t *a,
                        int *exit_p)
{
    const char *arg = argv[*i], *v;

    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        printf("Usage: %s -n N [options] program [args...]\n", shoalrun_name);
        fputs(usage_text, stdout);
        *exit_p = 0;
        return 1;
    }
    if (strcmp(arg, "--version") == 0) {
        printf("%s (Shoal) %s\n", shoalrun_name, SHOAL_VERSION_STRING);
        *exit_p = 0;
        return 1;
    }
    if (strcmp(arg, "--tag-output") == 0) {
        a->tag_output = 1;
        return 0;
    }
    if (strcmp(arg, "-n") == 0 || strcmp(arg, "-np") == 0 ||
        is_option(arg, "--np") || is_option(arg, "--n")) {
        v = option_value(argc, argv, i, arg, exit_p);
        return v == NULL || parse_nranks(v, &a->nranks, exit_p);
    }
    if (is_option(arg, "--timeout")) {
        v = option_value(argc, argv, i, "--timeout", exit_p);
        return v == NULL ||
               parse_seconds("--timeout", v, &a->timeout_s, exit_p);
    }
    if (is_option(arg, "--bind-to") || strcmp(arg, "-bind-to") == 0) {
        v = option_value(argc, argv, i, "--bind-to", exit_p);
        return v == NULL || parse_bind(v, &a->bind, exit_p);
    }
    if (is_option(arg, "--noise")) {
        v = option_value(argc, argv, i, "--noise", exit_p);
        return v == NULL || add_noise(a, argc, v, exit_p);
    }
    if (is_option(arg, "--with-ft")) {
        /* Open MPI 5's spelling, with the values its launcher (PRRTE)
         * takes: ulfm, mpi, yes, true, 1 mean --ft; no, false, 0 a run
         * without fault tolerance (a death ends the job), also when
         * SHOAL_FT=1 is in the environment. */
        v = option_value(argc, argv, i, "--with-ft", exit_p);
        if (v == NULL)
            return 1;
        if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0 ||
            strcmp(v, "0") == 0)
            return set_ft(0, exit_p);
        if (strcmp(v, "ulfm") != 0 && strcmp(v, "mpi") != 0 &&
            strcmp(v, "yes") != 0 && strcmp(v, "true") != 0 &&
            strcmp(v, "1") != 0)
            return usage_error(exit_p,
                               "--with-ft %s: known are ulfm, mpi, yes, "
                               "true, 1 (they mean --ft) and no, false, 0 "
                               "(no fault tolerance)",
                               v);
        arg = "--ft";
    }
    if (is_option(arg, "--initial-errhandler") ||
        strcmp(arg, "-initial-errhandler") == 0) {
        /* MPI 4.0's mpiexec key (sections 9.3 and 11.8.4): the ranks'
         * MPI_Init installs it (SHOAL_MPI_INITIAL_ERRHANDLER). */
        static const char *const names[] = {
            "mpi_errors_are_fatal", "mpi_errors_abort", "mpi_errors_return"};
        v = option_value(argc, argv, i, "--initial-errhandler", exit_p);
        if (v == NULL)
            return 1;
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            if (strcasecmp(v, names[k]) == 0) {
                if (setenv("SHOAL_MPI_INITIAL_ERRHANDLER", names[k], 1) != 0)
                    return usage_error(exit_p, "--initial-errhandler: "
                                               "cannot set "
                                               "SHOAL_MPI_INITIAL_ERRHANDLER");
                return 0;
            }
        return usage_error(exit_p,
                           "--initial-errhandler %s: known are "
                           "mpi_errors_are_fatal, mpi_errors_abort and "
                           "mpi_errors_return",
                           v);
    }
    if (strcmp(arg, "--ft") == 0 || strcmp(arg, "-disable-auto-cleanup") == 0 ||
        strcmp(arg, "--disable-auto-cleanup") == 0) {
        /* Hydra's and Open MPI's names for it too, so programs' run
         * lines work unchanged. */
        return set_ft(1, exit_p);
    }
    if (is_option(arg, "--checkpoint-dir") || is_option(arg, "--restart")) {
        /* Checkpoint/restart (docs/FT.md): the ranks read the variables. */
        int restart = is_option(arg, "--restart");
        const char *opt = restart ? "--restart" : "--checkpoint-dir";
        v = option_value(argc, argv, i, opt, exit_p);
        if (v == NULL)
            return 1;
        if (v[0] == '\0')
            return usage_error(exit_p, "%s: the directory is empty", opt);
        if (setenv("SHOAL_CKPT_DIR", v, 1) != 0 ||
            (restart && setenv("SHOAL_CKPT_RESTART", "1", 1) != 0))
            return usage_error(exit_p, "%s: cannot set SHOAL_CKPT_*", opt);
        a->ckpt_dir = v;
        a->ckpt_restart |= restart;
        return 0;
    }
    if (is_option(arg, "--restart-on-failure"))
        return parse_restart_max(arg, &a->restart_max, exit_p);
    if (is_option(arg, "--checkpoint-every")) {
        v = option_value(argc, argv, i, "--checkpoint-every", exit_p);
        return v == NULL || parse_seconds("--checkpoint-every", v,
                                          &a->ckpt_every_s, exit_p);
    }
    if (strcmp(arg, "--noise-report") == 0) {
        a->noise_report = 1;
        return 0;
    }
    int host = parse_host_option(argc, argv, i, a, exit_p);
    if (host >= 0)
        return host;
    int compat = parse_compat(argc, argv, i, a, exit_p);
    if (compat >= 0)
        return compat;
    return usage_error(exit_p, "unknown option '%s'", arg);
}

/* The file execv will run, or the errno explaining why there is none. */
static int check_file(const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0)
        return EACCES;
    return 0;
}

/* Search PATH like execvp: the first executable wins; EACCES if only
 * non-executable files were found. */
static int search_path(const char *name, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    int err = ENOENT;

    if (path == NULL || path[0] == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path != '\0') {
        size_t n = strcspn(path, ":");
        int len = snprintf(out, cap, "%.*s%s%s", (int)n, path,
                           n == 0 ? "" : "/", name);
        if (len > 0 && (size_t)len < cap) {
            int e = check_file(n == 0 ? name : out);
            if (e == 0) {
                if (n == 0)
                    snprintf(out, cap, "./%s", name);
                return 0;
            }
            if (e == EACCES || e == EISDIR)
                err = EACCES;
        }
        path += n + (path[n] == ':');
    }
    return err;
}

/* Finds a->argv[0] into a->path; 0 or an errno value. */
static int find_program(shoalrun_args_t *a)
{
    const char *prog = a->argv[0];
    int err;

    if (prog[0] == '\0')
        err = ENOENT;
    else if (strchr(prog, '/') != NULL) {
        err = check_file(prog);
        if (err == 0 && strlen(prog) >= sizeof(a->path))
            err = ENAMETOOLONG;
        if (err == 0)
            strcpy(a->path, prog);
    } else
        err = search_path(prog, a->path, sizeof(a->path));
    return err;
}

static int resolve_program(shoalrun_args_t *a, int *exit_p)
{
    const char *prog = a->argv[0];
    int err = find_program(a);

    if (err == 0)
        return 0;
    shoalrun_say("cannot execute '%s': %s", prog, strerror(err));
    *exit_p = err == ENOENT || err == ENOTDIR ? SHOALRUN_EXIT_NOTFOUND
                                              : SHOALRUN_EXIT_NOEXEC;
    return 1;
}

/* SHOAL_NOISE: specs separated by ';' (empty ones, as after a final ';',
 * are skipped). */
static int parse_noise_env(shoalrun_args_t *a, int *exit_p)
{
    char *text = strdup(base_cfg.NOISE), *save = NULL;
    int stop = 0;

    if (text == NULL)
        return usage_error(exit_p, "out of memory");
    for (char *spec = strtok_r(text, ";", &save); spec != NULL && !stop;
         spec = strtok_r(NULL, ";", &save))
        if (spec[strspn(spec, " \t")] != '\0' &&
            shoalrun_noise_parse(spec, a->nranks, a->noise) != SHOAL_OK)
            stop = usage_error(exit_p, "SHOAL_NOISE: '%s': %s", spec,
                               shoal_error_detail());
    free(text);
    return stop;
}

/* The noise plans of every rank: from --noise, else from SHOAL_NOISE. */
static int parse_noise(shoalrun_args_t *a, int *exit_p)
{
    a->noise = calloc((size_t)a->nranks, sizeof(*a->noise));
    if (a->noise == NULL)
        return usage_error(exit_p, "out of memory");
    if (a->nnoise_specs == 0 && parse_noise_env(a, exit_p))
        return 1;
    for (int k = 0; k < a->nnoise_specs; k++)
        if (shoalrun_noise_parse(a->noise_specs[k], a->nranks, a->noise) !=
            SHOAL_OK)
            return usage_error(exit_p, "--noise '%s': %s", a->noise_specs[k],
                               shoal_error_detail());
    for (int r = 0; r < a->nranks; r++)
        if (a->noise[r].stop_ns != 0 || a->noise[r].busy != 0)
            return 0;
    free(a->noise); /* all specs empty: no noise */
    a->noise = NULL;
    return 0;
}

/* With --host or --hostfile: place the ranks (then --noise, whose plans
 * the daemons get with the job: daemon.c). */
static int parse_hosts(shoalrun_args_t *a, int argc, char **argv, int i,
                       int *exit_p)
{
    if (i >= argc)
        return usage_error(exit_p, "no program to run");
    if (shoalrun_hosts_place(&a->hosts, a->host_specs, a->nhost_specs,
                             a->hostfile, a->ppn, &a->nranks,
                             a->oversubscribe) != SHOAL_OK)
        return usage_error(exit_p, "%s", shoal_error_detail());
    if (parse_noise(a, exit_p))
        return 1;
    a->argv = argv + i;
    return resolve_program(a, exit_p);
}

void shoalrun_args_fini(shoalrun_args_t *a)
{
    free(a->host_specs);
    a->host_specs = NULL;
    shoalrun_hosts_fini(&a->hosts);
    free(a->noise_specs);
    free(a->noise);
    a->noise_specs = NULL;
    a->noise = NULL;
}

int shoalrun_args_parse(int argc, char **argv, shoalrun_args_t *a,
                        int *exit_p)
{
    int i;

    memset(a, 0, sizeof(*a));
    a->bind = (int)base_cfg.BIND_TO;
    a->rsh = base_cfg.RSH;
    a->fanout = (int)base_cfg.FANOUT;
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (parse_option(argc, argv, &i, a, exit_p))
            return 1;
    }
    /* MPIEXEC_TIMEOUT, read by MPICH's and Open MPI's launchers too (test
     * suites such as MPICH's set it): --timeout wins, 0 is none. */
    if (a->timeout_s == 0 && getenv("MPIEXEC_TIMEOUT") != NULL &&
        strcmp(getenv("MPIEXEC_TIMEOUT"), "0") != 0 &&
        parse_seconds("MPIEXEC_TIMEOUT", getenv("MPIEXEC_TIMEOUT"),
                      &a->timeout_s, exit_p))
        return 1;
    if (a->restart_max > 0 && a->ckpt_dir == NULL)
        return usage_error(exit_p, "--restart-on-failure needs a checkpoint "
                           "directory to restart from: add --checkpoint-dir "
                           "DIR (or --restart DIR)");
    if (a->ckpt_every_s > 0 && a->ckpt_dir == NULL)
        return usage_error(exit_p, "--checkpoint-every needs a checkpoint "
                           "directory: add --checkpoint-dir DIR (or "
                           "--restart DIR)");
    if (a->nhost_specs > 0 || a->hostfile != NULL)
        return parse_hosts(a, argc, argv, i, exit_p);
    if (a->nranks == 0 && i < argc) {
        /* A task program gets one worker per CPU (task_default.c). */
        a->argv = argv + i;
        if (find_program(a) == 0)
            a->nranks = shoalrun_task_default_ranks(a->path);
    }
    if (a->nranks == 0)
        return usage_error(exit_p, "missing -n N: how many ranks to start");
    if (i >= argc)
        return usage_error(exit_p, "no program to run");
    if (parse_noise(a, exit_p))
        return 1;
    a->argv = argv + i;
    return resolve_program(a, exit_p);
}
