/* Runtime configuration: defaults and checks. */
#include "config.h"

#include "log.h"

#include <string.h>

int fwdioi_config_resolve(const fwdio_config_t *in, fwdio_config_t *out)
{
    if (in)
        *out = *in;
    else
        memset(out, 0, sizeof *out);
    if (out->callback_mode != FWDIO_CALLBACKS_ON_POLL &&
        out->callback_mode != FWDIO_CALLBACKS_ON_PROGRESS)
        return FWDIO_EINVAL;
    if (out->poll_min_us == 0)
        out->poll_min_us = 20;
    if (out->poll_max_us == 0)
        out->poll_max_us = 2000;
    if (out->poll_max_us < out->poll_min_us)
        out->poll_max_us = out->poll_min_us;

    /* The environment and the config file were applied by the caller. */
    if (out->writer_buffer == 0)
        out->writer_buffer = FWDIO_DEFAULT_WRITER_BUFFER;
    if (out->staging_buffer == 0)
        out->staging_buffer = FWDIO_DEFAULT_STAGING_BUFFER;
    if (out->watchdog == 0)
        out->watchdog = FWDIO_DEFAULT_WATCHDOG;
    if (out->max_message_size == 0)
        out->max_message_size = (size_t)8 << 20;
    if (out->max_message_size > ((size_t)1 << 30) || out->max_message_size < 4096)
        return FWDIO_EINVAL;
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
    return FWDIO_OK;
}
