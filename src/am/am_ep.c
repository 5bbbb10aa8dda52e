/*
 * Endpoints: handler tables and segments.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "am.h"

/* Keep am.neps just past the last endpoint in use. */
static void set_ep(int index, shoal_ep_t *ep)
{
    am.eps[index] = ep;
    am.neps = 0;
    for (int i = 0; i < SHOAL_MAX_ENDPOINTS; i++)
        if (am.eps[i] != NULL)
            am.neps = i + 1;
}

static int install_handlers(shoal_ep_t *ep, const shoal_handler_entry_t *t,
                            size_t n, const char *fn)
{
    if (n > 0 && t == NULL)
        return base_err(SHOAL_ERR_INVALID, "%s: %zu handlers but the table "
                        "is NULL", fn, n);
    /* Check everything before changing anything. */
    for (size_t i = 0; i < n; i++) {
        if (t[i].index >= SHOAL_AM_MAX_HANDLERS)
            return base_err(SHOAL_ERR_HANDLER,
                            "%s: handler index %u out of range [0, %d)", fn,
                            t[i].index, SHOAL_AM_MAX_HANDLERS);
        if (t[i].flags & ~(SHOAL_HANDLER_REQUEST | SHOAL_HANDLER_REPLY))
            return base_err(SHOAL_ERR_INVALID,
                            "%s: handler %u has unknown flags 0x%x", fn,
                            t[i].index, t[i].flags);
    }
    for (size_t i = 0; i < n; i++) {
        am_handler_t *h = &ep->handlers[t[i].index];
        h->fn = t[i].fn;
        h->name = t[i].name;
        h->place = NULL;
        /* flags == 0 means "not registered": one test on the fast path. */
        h->flags = t[i].fn == NULL ? 0
                   : t[i].flags    ? t[i].flags
                                   : SHOAL_HANDLER_REQUEST | SHOAL_HANDLER_REPLY;
    }
    return SHOAL_OK;
}

void am_set_place(shoal_ep_t *ep, unsigned handler, am_place_fn_t fn)
{
    if (ep != NULL && handler < SHOAL_AM_MAX_HANDLERS)
        ep->handlers[handler].place = fn;
}

static void unpublish(unsigned index)
{
    wire_shm_ops.publish_segment(index, NULL, 0);
    for (int i = 0; i < am.nnet; i++)
        am.net[i].ops->publish_segment(index, NULL, 0);
}

static int attach_segment(shoal_ep_t *ep, void *base, size_t size,
                          const char *fn)
{
    if (base == NULL && size > 0)
        return base_err(SHOAL_ERR_INVALID, "%s: segment of %zu bytes at NULL",
                        fn, size);
    ep->seg = size > 0 ? base : NULL;
    ep->seg_size = ep->seg != NULL ? size : 0;
    int status =
        wire_shm_ops.publish_segment(ep->index, ep->seg, ep->seg_size);
    for (int i = 0; i < am.nnet && status == SHOAL_OK; i++)
        status = am.net[i].ops->publish_segment(ep->index, ep->seg,
                                                ep->seg_size);
    return status;
}

int shoal_ep_create(const shoal_ep_params_t *params, shoal_ep_t **ep_p)
{
    const uint64_t known = SHOAL_EP_PARAM_HANDLERS | SHOAL_EP_PARAM_SEGMENT |
                           SHOAL_EP_PARAM_USER_DATA;
    int status = am_check_entry("shoal_ep_create", 0);
    int index = -1;
    shoal_ep_t *ep;

    if (status != SHOAL_OK)
        return status;
    if (ep_p == NULL)
        return base_err(SHOAL_ERR_INVALID, "shoal_ep_create: NULL ep_p");
    if (params != NULL && (params->field_mask & ~known))
        return base_err(SHOAL_ERR_INVALID,
                        "shoal_ep_create: unknown bits 0x%llx in field_mask",
                        (unsigned long long)(params->field_mask & ~known));
    for (int i = 0; i < SHOAL_MAX_ENDPOINTS && index < 0; i++)
        if (am.eps[i] == NULL)
            index = i;
    if (index < 0)
        return base_err(SHOAL_ERR_AGAIN,
                        "shoal_ep_create: all %d endpoints are in use",
                        SHOAL_MAX_ENDPOINTS);
    ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return base_err(SHOAL_ERR_NOMEM, "shoal_ep_create");
    ep->index = (unsigned)index;
    if (params != NULL && (params->field_mask & SHOAL_EP_PARAM_HANDLERS))
        status = install_handlers(ep, params->handlers, params->nhandlers,
                                  "shoal_ep_create");
    if (status == SHOAL_OK && params != NULL &&
        (params->field_mask & SHOAL_EP_PARAM_SEGMENT))
        status = attach_segment(ep, params->segment, params->segment_size,
                                "shoal_ep_create");
    if (status != SHOAL_OK) {
        free(ep);
        return status;
    }
    if (params != NULL && (params->field_mask & SHOAL_EP_PARAM_USER_DATA))
        ep->user_data = params->user_data;
    set_ep(index, ep);
    /* Everyone has its handlers in place before anyone may send. */
    status = am_barrier_run(AM_SYSTEM_EP);
    if (status != SHOAL_OK) {
        set_ep(index, NULL);
        unpublish(ep->index);
        free(ep);
        return status;
    }
    *ep_p = ep;
    return SHOAL_OK;
}

int shoal_ep_destroy(shoal_ep_t *ep)
{
    int status = am_check_entry("shoal_ep_destroy", 0);

    if (status != SHOAL_OK)
        return status;
    if (!am_ep_valid(ep))
        return base_err(SHOAL_ERR_INVALID, "shoal_ep_destroy: not an endpoint");
    status = am_quiesce(ep->index);
    set_ep((int)ep->index, NULL);
    unpublish(ep->index);
    free(ep);
    return status;
}

int shoal_ep_register(shoal_ep_t *ep, const shoal_handler_entry_t *handlers,
                      size_t nhandlers)
{
    int status = am_check_entry("shoal_ep_register", 0);

    if (status != SHOAL_OK)
        return status;
    if (!am_ep_valid(ep))
        return base_err(SHOAL_ERR_INVALID,
                        "shoal_ep_register: not an endpoint");
    return install_handlers(ep, handlers, nhandlers, "shoal_ep_register");
}

int shoal_ep_segment_attach(shoal_ep_t *ep, void *base, size_t size)
{
    int status = am_check_entry("shoal_ep_segment_attach", 0);

    if (status != SHOAL_OK)
        return status;
    if (!am_ep_valid(ep))
        return base_err(SHOAL_ERR_INVALID,
                        "shoal_ep_segment_attach: not an endpoint");
    return attach_segment(ep, base, size, "shoal_ep_segment_attach");
}

int shoal_token_info(const shoal_token_t *token, shoal_token_info_t *info_p)
{
    int status = am_check_entry("shoal_token_info", 1);

    if (status != SHOAL_OK)
        return status;
    if (token == NULL || info_p == NULL || !am.in_handler)
        return base_err(SHOAL_ERR_INVALID,
                        "shoal_token_info: needs the running handler's token "
                        "and an output");
    info_p->source = token->src;
    info_p->ep = token->ep;
    info_p->user_data = token->ep->user_data;
    info_p->is_request = token->is_request;
    return SHOAL_OK;
}

int shoal_segment_alloc(size_t size, void **base_p)
{
    int status = am_check_entry("shoal_segment_alloc", 0);

    if (status != SHOAL_OK)
        return status;
    if (base_p == NULL)
        return base_err(SHOAL_ERR_INVALID, "shoal_segment_alloc: NULL base_p");
    return wire_shm_mem_alloc(size, base_p);
}

int shoal_segment_free(void *base)
{
    int status = am_check_entry("shoal_segment_free", 0);

    if (status != SHOAL_OK)
        return status;
    for (int i = 0; i < SHOAL_MAX_ENDPOINTS; i++)
        if (am.eps[i] != NULL && am.eps[i]->seg == base && base != NULL)
            return base_err(SHOAL_ERR_BUSY,
                            "shoal_segment_free: endpoint %d still uses it; "
                            "attach another segment first",
                            i);
    return wire_shm_mem_free(base);
}
