/* SPDX-License-Identifier: BSD-3-Clause */
#include "local/local_room.h"

fwdioi_local_room_t fwdioi_local_room_choose(const fwdioi_local_room_in_t *in)
{
    if (in->wait_ms == FWDIOI_ROOM_NEVER_WAIT)
        return FWDIOI_ROOM_OFF;
    if (in->bytes > in->limit)
        return FWDIOI_ROOM_NEVER;
    /* what stays counted whatever drains end and evictions free: files
     * failed but not yet freed, copies no rank may evict for this one */
    uint64_t freeable = in->pending + in->kept;
    uint64_t stays = in->used > freeable ? in->used - freeable : 0;
    if (freeable == 0 || stays > in->limit - in->bytes)
        return FWDIOI_ROOM_NOTHING;
    if (in->waited_ms >= in->wait_ms)
        return FWDIOI_ROOM_TIMED_OUT;
    return FWDIOI_ROOM_WAIT;
}

const char *fwdioi_local_room_why(fwdioi_local_room_t r)
{
    switch (r) {
    case FWDIOI_ROOM_WAIT: return "waiting for room";
    case FWDIOI_ROOM_OFF: return "local_wait is off";
    case FWDIOI_ROOM_NEVER: return "larger than local_capacity: it can never fit";
    case FWDIOI_ROOM_NOTHING: return "no drain in flight or eviction can make room for it";
    case FWDIOI_ROOM_TIMED_OUT: return "no room within local_wait";
    }
    return "?";
}
