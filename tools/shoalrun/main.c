/* shoalrun: see shoalrun.h for the pieces and docs/LAUNCHING.md for use. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shoalrun.h"

const char *shoalrun_name = "shoalrun";

void shoalrun_say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    int n = snprintf(line, sizeof(line), "%.64s: ", shoalrun_name);
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    n += m;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

/* With 0, 1 or 2 closed, our own pipes would take those numbers and a
 * rank's dup2 onto them would go wrong. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 &&
            open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) < 0)
            return;
}

int main(int argc, char **argv)
{
    shoalrun_args_t args;
    int code;

    ensure_std_fds();
    if (argc > 0 && argv[0] != NULL && argv[0][0] != '\0') {
        const char *slash = strrchr(argv[0], '/');
        if (slash == NULL || slash[1] != '\0')
            shoalrun_name = slash != NULL ? slash + 1 : argv[0];
    }
    base_log_set_prefix(shoalrun_name);
    /* Like shoal_init: a bad SHOAL_* value (already reported) stops us. */
    if (base_config_load(0) != SHOAL_OK) {
        shoalrun_say("fix the SHOAL_* value above (shoal-info --config "
                     "lists them)");
        return SHOALRUN_EXIT_USAGE;
    }
    if (argc > 1 && strcmp(argv[1], "--daemon") == 0)
        return shoalrun_daemon_main(argc, argv);
    if (!shoalrun_args_parse(argc, argv, &args, &code))
        code = shoalrun_restart_run(&args);
    shoalrun_args_fini(&args);
    return code;
}
