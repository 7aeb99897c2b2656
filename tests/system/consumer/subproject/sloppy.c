/* SPDX-License-Identifier: BSD-3-Clause */
/* Code of the parent project with warnings under -Wall -Wextra (an unused
 * variable and parameter): it must build, as fwdio's -Werror is fwdio's own. */
int fwdio_subproject_sloppy(int unused_parameter);

int fwdio_subproject_sloppy(int unused_parameter)
{
    int unused_variable;
    return 0;
}
