/* SPDX-License-Identifier: BSD-3-Clause */
#include "fwdio.h"

const char *fwdio_strerror(int status)
{
    switch (status) {
#define FWDIO_X_TEXT(name, value, text) \
    case value:                         \
        return text;
        FWDIO_STATUS_LIST(FWDIO_X_TEXT)
#undef FWDIO_X_TEXT
    }
    return "unknown fwdio status";
}
