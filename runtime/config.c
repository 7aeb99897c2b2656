/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime configuration: defaults and checks. */
#include "config.h"

#include "log.h"
#include "node_memory.h"
#include "runtime.h"

#include <string.h>
#include <unistd.h>

int fwdioi_config_check(const fwdio_config_t *c, fwdioi_origins_t *why)
{
    char from[FWDIOI_ORIGIN_LEN];
    if (c->callback_mode != FWDIO_CALLBACKS_ON_POLL &&
        c->callback_mode != FWDIO_CALLBACKS_ON_PROGRESS)
        return fwdioi_refuse(why,
                             "callback_mode %d%s is not a callback mode: poll (%d) or "
                             "progress (%d)",
                             (int)c->callback_mode,
                             fwdioi_origin(why, "callback_mode", from, sizeof from),
                             FWDIO_CALLBACKS_ON_POLL, FWDIO_CALLBACKS_ON_PROGRESS);
    if (c->max_message_size != 0 && (c->max_message_size < FWDIOI_MAX_MESSAGE_MIN ||
                                     c->max_message_size > FWDIOI_MAX_MESSAGE_MAX))
        return fwdioi_refuse(why,
                             "max_message_size %zu%s is out of range: %zu (4K) to %zu (1G), or 0 "
                             "for the default (8M)",
                             c->max_message_size,
                             fwdioi_origin(why, "max_message_size", from, sizeof from),
                             FWDIOI_MAX_MESSAGE_MIN, FWDIOI_MAX_MESSAGE_MAX);
    if (c->poll_spin_us > FWDIOI_MAX_POLL_SPIN_US)
        return fwdioi_refuse(why,
                             "poll_spin_us %u%s is out of range: at most %u (100 ms), 1 for no "
                             "spinning, or 0 for the default (%u where the node has a CPU "
                             "for every rank, else off)",
                             c->poll_spin_us, fwdioi_origin(why, "poll_spin_us", from, sizeof from),
                             FWDIOI_MAX_POLL_SPIN_US, FWDIO_AUTO_POLL_SPIN_US);
    for (size_t i = 0; i < sizeof c->reserved / sizeof c->reserved[0]; i++)
        if (c->reserved[i])
            return fwdioi_refuse(why, "fwdio_config_t.reserved[%zu] is not 0: initialise the "
                                      "struct with fwdio_config_init() or zeros before setting "
                                      "fields",
                                 i);
    return FWDIO_OK;
}

int fwdioi_config_resolve(const fwdio_config_t *in, int ranks_on_node, fwdio_config_t *out)
{
    if (in)
        *out = *in;
    else
        memset(out, 0, sizeof *out);
    int rc = fwdioi_config_check(out, NULL);
    if (rc != FWDIO_OK)
        return rc;
    if (out->poll_min_us == 0)
        out->poll_min_us = 20;
    if (out->poll_max_us == 0)
        out->poll_max_us = 2000;
    if (out->poll_max_us < out->poll_min_us)
        out->poll_max_us = out->poll_min_us;
    if (out->poll_background_us == 0)
        out->poll_background_us = FWDIOI_DEFAULT_POLL_BACKGROUND_US;
    if (out->poll_background_us < out->poll_min_us)
        out->poll_background_us = out->poll_min_us;
    if (out->poll_background_us > out->poll_max_us)
        out->poll_background_us = out->poll_max_us;
    /* poll_spin_us 0 stays 0: chosen per node (fwdioi_rt_choose_spin). */

    /* The environment and the config file were applied by the caller. */
    if (out->writer_buffer == 0)
        out->writer_buffer = FWDIO_DEFAULT_WRITER_BUFFER;
    /* By default a share of the node's staging, so that a node's staging
     * does not grow with its ranks; combine_size and shared_buffer below
     * follow it, which is why the topology comes first. */
    if (out->staging_buffer == 0)
        out->staging_buffer = fwdioi_default_staging_buffer(fwdioi_node_memory(), ranks_on_node);
    /* Budgets too small to work with are raised (reported by
     * fwdioi_config_report_clamps). */
    if (out->writer_buffer < FWDIOI_MIN_WRITER_BUFFER)
        out->writer_buffer = FWDIOI_MIN_WRITER_BUFFER;
    if (out->staging_buffer < FWDIOI_MIN_STAGING_BUFFER)
        out->staging_buffer = FWDIOI_MIN_STAGING_BUFFER;
    if (out->watchdog == 0)
        out->watchdog = FWDIO_DEFAULT_WATCHDOG;
    if (out->files_in_flight == 0)
        out->files_in_flight = FWDIO_DEFAULT_FILES_IN_FLIGHT;
    if (out->node_buffer_idle == 0)
        out->node_buffer_idle = FWDIO_DEFAULT_NODE_BUFFER_IDLE;
    if (out->local_wait_ms == 0)
        out->local_wait_ms = FWDIO_DEFAULT_LOCAL_WAIT_MS;
    if (out->max_message_size == 0)
        out->max_message_size = (size_t)8 << 20;
    size_t cap = out->writer_buffer / 4;
    if (cap < ((size_t)64 << 10))
        cap = (size_t)64 << 10;
    if (out->max_message_size > cap)
        out->max_message_size = cap;
    /* Combining: 1 is off; otherwise room for a header, a piece and some data,
     * and no larger than any other message. */
    if (out->combine_size == 0)
        out->combine_size = FWDIO_DEFAULT_COMBINE_SIZE;
    if (out->combine_size > 1 && out->combine_size < FWDIOI_COMBINE_MIN)
        out->combine_size = FWDIOI_COMBINE_MIN;
    if (out->combine_size > out->max_message_size)
        out->combine_size = out->max_message_size;
    /* An open message's buffer is combine_size bytes, and its data count as
     * staged: no larger than the staging budget. */
    if (out->combine_size > out->staging_buffer)
        out->combine_size = out->staging_buffer;
    /* The node-shared area (1: off) holds at least one message of any size;
     * by default every message the staging budget admits (its data, plus one
     * message's headers and headroom: the budget counts data only). */
    if (out->shared_buffer == 0)
        out->shared_buffer = out->staging_buffer + out->max_message_size + FWDIOI_MESSAGE_HEADROOM;
    if (out->shared_buffer > 1 &&
        out->shared_buffer < out->max_message_size + FWDIOI_MESSAGE_HEADROOM)
        out->shared_buffer = out->max_message_size + FWDIOI_MESSAGE_HEADROOM;
    /* The node's budget (1: off): by default a small part of the node's memory. */
    if (out->node_buffer == 0)
        out->node_buffer = fwdioi_default_node_buffer(fwdioi_node_memory());
    if (out->node_buffer > 1 && out->node_buffer < FWDIOI_MIN_NODE_BUFFER)
        out->node_buffer = FWDIOI_MIN_NODE_BUFFER;
    return FWDIO_OK;
}

void fwdioi_config_report_clamps(const fwdio_config_t *in, const fwdio_config_t *resolved)
{
    if (in->writer_buffer != 0 && in->writer_buffer < resolved->writer_buffer)
        fwdioi_report("writer_buffer %zu raised to %zu: a writer needs room for several "
                      "messages (at least 64 KiB each) and the record of the units it is "
                      "assembling",
                      in->writer_buffer, resolved->writer_buffer);
    if (in->staging_buffer != 0 && in->staging_buffer < resolved->staging_buffer)
        fwdioi_report("staging_buffer %zu raised to %zu: writes are cut into messages no larger "
                      "than the staging budget, and smaller messages cost more to send than "
                      "their bytes",
                      in->staging_buffer, resolved->staging_buffer);
    if (in->combine_size > 1 && resolved->combine_size < in->combine_size &&
        resolved->combine_size == resolved->staging_buffer)
        fwdioi_report("combine_size %zu lowered to staging_buffer (%zu): the bytes of an open "
                      "combined message count against the staging budget",
                      in->combine_size, resolved->combine_size);
    if (in->shared_buffer > 1 && resolved->shared_buffer > in->shared_buffer)
        fwdioi_report("shared_buffer %zu raised to %zu: the node-shared area holds at least one "
                      "message of max_message_size and its headroom",
                      in->shared_buffer, resolved->shared_buffer);
    if (in->node_buffer > 1 && resolved->node_buffer > in->node_buffer)
        fwdioi_report("node_buffer %zu raised to %zu: the node-shared area holds at least a "
                      "few combined messages",
                      in->node_buffer, resolved->node_buffer);
}

size_t fwdioi_default_node_buffer(uint64_t node_memory)
{
    uint64_t share = node_memory / 64;
    if (node_memory == 0 || share > FWDIO_DEFAULT_NODE_BUFFER_CAP)
        share = FWDIO_DEFAULT_NODE_BUFFER_CAP;
    if (share < FWDIOI_MIN_NODE_BUFFER)
        share = FWDIOI_MIN_NODE_BUFFER;
    return (size_t)share;
}

size_t fwdioi_default_staging_buffer(uint64_t node_memory, int ranks_on_node)
{
    uint64_t node = node_memory / 32;
    if (node_memory == 0 || node > FWDIO_DEFAULT_NODE_STAGING_CAP)
        node = FWDIO_DEFAULT_NODE_STAGING_CAP;
    uint64_t share = ranks_on_node > 0 ? node / (uint64_t)ranks_on_node : node;
    if (share > FWDIO_DEFAULT_STAGING_BUFFER)
        share = FWDIO_DEFAULT_STAGING_BUFFER;
    if (share < FWDIO_MIN_DEFAULT_STAGING_BUFFER)
        share = FWDIO_MIN_DEFAULT_STAGING_BUFFER;
    return (size_t)share;
}

unsigned fwdioi_spin_choice(unsigned configured, int ranks_on_node, int node_cpus)
{
    if (configured != 0)
        return configured;
    return ranks_on_node > 0 && node_cpus >= ranks_on_node ? FWDIO_AUTO_POLL_SPIN_US : 1u;
}
