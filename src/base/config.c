/*
 * Configuration: the SHOAL_* registry (config_vars.h), value parsing and the
 * load from the environment.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base.h"

extern char **environ;

base_config_t base_cfg;

static const base_config_var_t config_vars[] = {
#define BASE_CONFIG_VAR(name, type, def, extra, scope, doc)                  \
    {"SHOAL_" #name, BASE_CONFIG_##type, def, extra, doc, scope},
#include "config_vars.h"
#undef BASE_CONFIG_VAR
};

static int config_loaded;

const base_config_var_t *base_config_vars(size_t *count_p)
{
    *count_p = BASE_ARRAY_SIZE(config_vars);
    return config_vars;
}

const base_config_var_t *base_config_find(const char *name)
{
    for (size_t i = 0; i < BASE_ARRAY_SIZE(config_vars); i++)
        if (strcmp(config_vars[i].name, name) == 0)
            return &config_vars[i];
    return NULL;
}

const char *base_config_current(const base_config_var_t *var)
{
    const char *v = getenv(var->name);
    return v != NULL ? v : var->defval;
}

/* ---- number parsing ------------------------------------------------------ */

/* Parse "<digits><unit>" where unit scales the number; returns 0 or -1. */
static int parse_scaled(const char *text, int64_t *out, int is_duration)
{
    char *end;
    double scale = 1;

    while (isspace((unsigned char)*text))
        text++;
    if (*text == '\0')
        return -1;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || v < 0 || v != v)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (is_duration) {
        if (*end == '\0' || strcasecmp(end, "us") == 0)
            scale = 1e3;
        else if (strcasecmp(end, "ns") == 0)
            scale = 1;
        else if (strcasecmp(end, "ms") == 0)
            scale = 1e6;
        else if (strcasecmp(end, "s") == 0)
            scale = 1e9;
        else
            return -1;
    } else {
        if (*end == '\0' || strcasecmp(end, "b") == 0)
            scale = 1;
        else if (strcasecmp(end, "k") == 0 || strcasecmp(end, "kb") == 0 ||
                 strcasecmp(end, "kib") == 0)
            scale = 1024.0;
        else if (strcasecmp(end, "m") == 0 || strcasecmp(end, "mb") == 0 ||
                 strcasecmp(end, "mib") == 0)
            scale = 1024.0 * 1024;
        else if (strcasecmp(end, "g") == 0 || strcasecmp(end, "gb") == 0 ||
                 strcasecmp(end, "gib") == 0)
            scale = 1024.0 * 1024 * 1024;
        else
            return -1;
    }
    v *= scale;
    if (v > (double)INT64_MAX)
        return -1;
    *out = (int64_t)v;
    return 0;
}

static int parse_int(const char *text, int64_t *out)
{
    char *end;

    while (isspace((unsigned char)*text))
        text++;
    if (*text == '\0')
        return -1;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int parse_number(base_config_type_t type, const char *text,
                        int64_t *out)
{
    switch (type) {
    case BASE_CONFIG_INT:
        return parse_int(text, out);
    case BASE_CONFIG_SIZE:
        return parse_scaled(text, out, 0);
    case BASE_CONFIG_DURATION:
        return parse_scaled(text, out, 1);
    default:
        return -1;
    }
}

static int check_range(const base_config_var_t *var, const char *text,
                       int64_t v)
{
    char lo_text[64], hi_text[64];
    const char *colon = strchr(var->extra, ':');
    int64_t lo, hi;

    if (colon == NULL || (size_t)(colon - var->extra) >= sizeof(lo_text))
        return SHOAL_OK;
    memcpy(lo_text, var->extra, (size_t)(colon - var->extra));
    lo_text[colon - var->extra] = '\0';
    snprintf(hi_text, sizeof(hi_text), "%s", colon + 1);
    if (parse_number(var->type, lo_text, &lo) != 0 ||
        parse_number(var->type, hi_text, &hi) != 0)
        return SHOAL_OK;
    if (v < lo || v > hi)
        return base_err(SHOAL_ERR_CONFIG,
                        "%s=%s is out of range: accepted %s to %s", var->name,
                        text, lo_text, hi_text);
    return SHOAL_OK;
}

static int parse_enum(const base_config_var_t *var, const char *text,
                      int64_t *out)
{
    const char *p = var->extra;
    int64_t index = 0;

    while (*p != '\0') {
        size_t len = strcspn(p, "|");
        if (strlen(text) == len && strncasecmp(p, text, len) == 0) {
            *out = index;
            return SHOAL_OK;
        }
        p += len;
        if (*p == '|')
            p++;
        index++;
    }
    return base_err(SHOAL_ERR_CONFIG, "%s=%s is not valid: expected one of %s",
                    var->name, text, var->extra);
}

static int parse_bool(const base_config_var_t *var, const char *text,
                      int64_t *out)
{
    static const char *const yes[] = {"1", "yes", "on", "true", "y"};
    static const char *const no[] = {"0", "no", "off", "false", "n"};

    for (size_t i = 0; i < BASE_ARRAY_SIZE(yes); i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *out = 1;
            return SHOAL_OK;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *out = 0;
            return SHOAL_OK;
        }
    }
    return base_err(SHOAL_ERR_CONFIG,
                    "%s=%s is not a boolean: expected 1/0, yes/no, on/off or "
                    "true/false",
                    var->name, text);
}

int base_config_parse(const base_config_var_t *var, const char *text,
                      int64_t *out)
{
    static const char *const unit_help[] = {
        [BASE_CONFIG_INT] = "an integer",
        [BASE_CONFIG_SIZE] = "a size such as 4096, 64k or 1m",
        [BASE_CONFIG_DURATION] = "a time such as 500us, 20ms or 2s",
    };
    int64_t v;

    if (text == NULL)
        return base_err(SHOAL_ERR_CONFIG, "%s: no value", var->name);
    switch (var->type) {
    case BASE_CONFIG_ENUM:
        return parse_enum(var, text, out);
    case BASE_CONFIG_BOOL:
        return parse_bool(var, text, out);
    case BASE_CONFIG_STRING:
        return SHOAL_OK;
    case BASE_CONFIG_INT:
    case BASE_CONFIG_SIZE:
    case BASE_CONFIG_DURATION:
        if (parse_number(var->type, text, &v) != 0)
            return base_err(SHOAL_ERR_CONFIG, "%s=%s is not valid: expected %s",
                            var->name, text, unit_help[var->type]);
        if (check_range(var, text, v) != SHOAL_OK)
            return SHOAL_ERR_CONFIG;
        *out = v;
        return SHOAL_OK;
    }
    return base_err(SHOAL_ERR_INTERNAL, "%s: unknown type", var->name);
}

/* ---- loading ------------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[64];

    if (lb >= BASE_ARRAY_SIZE(row))
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = (toupper((unsigned char)a[i - 1]) ==
                           toupper((unsigned char)b[j - 1]))
                              ? 0
                              : 1;
            size_t best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static void warn_unknown_variables(void)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        char name[128];
        size_t len = strcspn(*e, "=");

        if (strncmp(*e, "SHOAL_", 6) != 0 || len >= sizeof(name))
            continue;
        memcpy(name, *e, len);
        name[len] = '\0';
        if (base_config_find(name) != NULL)
            continue;
        const char *best = NULL;
        size_t best_d = SIZE_MAX;
        for (size_t i = 0; i < BASE_ARRAY_SIZE(config_vars); i++) {
            size_t d = edit_distance(name, config_vars[i].name);
            if (d < best_d) {
                best_d = d;
                best = config_vars[i].name;
            }
        }
        if (best != NULL && best_d <= 3)
            base_warn("config", "%s is not a Shoal variable; did you mean %s?",
                      name, best);
        else
            base_warn("config",
                      "%s is not a Shoal variable (shoal-info --config lists "
                      "them)",
                      name);
    }
}

/* Store one parsed value into its base_cfg field. */
static void config_store(base_config_t *cfg, size_t index, int64_t v,
                         const char *text)
{
    size_t i = 0;

#define BASE_CONFIG_STORE_INT(field) cfg->field = v
#define BASE_CONFIG_STORE_SIZE(field) cfg->field = v
#define BASE_CONFIG_STORE_BOOL(field) cfg->field = v
#define BASE_CONFIG_STORE_ENUM(field) cfg->field = v
#define BASE_CONFIG_STORE_DURATION(field) cfg->field = v
#define BASE_CONFIG_STORE_STRING(field) cfg->field = text
#define BASE_CONFIG_VAR(name, type, def, extra, scope, doc)                  \
    if (i++ == index) {                                                      \
        BASE_CONFIG_STORE_##type(name);                                      \
        return;                                                              \
    }
#include "config_vars.h"
#undef BASE_CONFIG_VAR
    (void)v;
    (void)text;
}

int base_config_load(int force)
{
    base_config_t cfg;
    int status = SHOAL_OK;

    if (config_loaded && !force)
        return SHOAL_OK;
    memset(&cfg, 0, sizeof(cfg));
    for (size_t i = 0; i < BASE_ARRAY_SIZE(config_vars); i++) {
        const base_config_var_t *var = &config_vars[i];
        const char *text = getenv(var->name);
        int64_t v = 0;

        if (text == NULL || base_config_parse(var, text, &v) != SHOAL_OK) {
            if (text != NULL) {
                /* Say every bad value; the detail keeps the last one. */
                base_error("config", "%s; using the default %s",
                           shoal_error_detail(), var->defval);
                status = SHOAL_ERR_CONFIG;
            }
            text = var->defval;
            if (base_config_parse(var, text, &v) != SHOAL_OK)
                base_fatal("default of %s does not parse", var->name);
        }
        config_store(&cfg, i, v, text);
    }
    /* Under SHOAL_FT one timeout rules (docs/FT.md): a wire's silence
     * timeout that was not set becomes SHOAL_FT_TIMEOUT + 2 s, whatever
     * launched the rank; the 2 s keep a wire from taking a stopped rank
     * for dead before the stop watch does. */
    if (cfg.FT && cfg.FT_TIMEOUT > 0) {
        int64_t wire = cfg.FT_TIMEOUT + 2000000000ll;
        if (getenv("SHOAL_TCP_DEAD_TIMEOUT") == NULL)
            cfg.TCP_DEAD_TIMEOUT = wire;
        if (getenv("SHOAL_UDP_DEAD_TIMEOUT") == NULL)
            cfg.UDP_DEAD_TIMEOUT = wire;
    }
    base_cfg = cfg;
    base_log_level = (int)base_cfg.LOG;
    if (!config_loaded)
        warn_unknown_variables();
    config_loaded = 1;
    return status;
}
