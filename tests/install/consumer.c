/*
 * A program written the way a user of the installed library writes one:
 * only installed headers, only exported functions.  Built by
 * check-install.sh through pkg-config and through find_package(Shoal).
 */
#include <stdio.h>
#include <string.h>

#include <shoal.h>
#include <shoal/errors.h>
#include <shoal/version.h>

int main(void)
{
    const char *ok = shoal_strerror(SHOAL_OK);

    printf("shoal %s: %s\n", SHOAL_VERSION_STRING, ok);
    if (strcmp(ok, "success") != 0 ||
        strcmp(shoal_err_name(SHOAL_ERR_NOMEM), "SHOAL_ERR_NOMEM") != 0) {
        fprintf(stderr, "consumer: unexpected status strings\n");
        return 1;
    }
    return 0;
}
