#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every source file fwdio owns says its licence in its first comment line
# (ctest licence_spdx): "SPDX-License-Identifier: BSD-3-Clause" on line 1,
# or on line 2 after a "#!" line. The owned files: those git tracks or would
# track (untracked, not ignored; without git, every file below the root but
# build*/ and bench/results/) named *.c, *.h, *.h.in, CMakeLists.txt,
# *.cmake, *.cmake.in, *.sh or *.py, and the scripts without an extension
# under scripts/, bench/ and .ci/.
#
#   tests/licence_check.sh [ROOT]      (default: the checkout holding it)
#
# Exit status 0 when every file has the line, 1 with the list of those that
# lack it.
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"
want='SPDX-License-Identifier: BSD-3-Clause'

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t all < <(git ls-files --cached --others --exclude-standard)
else
    mapfile -t all < <(find . -type f -not -path './build*' -not -path './bench/results/*' \
        -not -path './.git/*' | sed 's|^\./||' | sort)
fi

owned() {
    local f=$1 base=${1##*/}
    case $f in
    *.c | *.h | *.h.in | CMakeLists.txt | */CMakeLists.txt | *.cmake | *.cmake.in | *.sh | *.py)
        return 0 ;;
    scripts/* | bench/* | .ci/*)
        [[ $base != *.* ]] ;;
    *) return 1 ;;
    esac
}

checked=0
missing=()
for f in "${all[@]}"; do
    owned "$f" || continue
    [[ -f $f ]] || continue # deleted in the work tree, not yet in the index
    checked=$((checked + 1))
    first=$(sed -n 1p "$f")
    line=$first
    [[ $first == '#!'* ]] && line=$(sed -n 2p "$f")
    [[ $line == *"$want"* ]] || missing+=("$f")
done

if ((${#missing[@]})); then
    printf 'licence_check: %d of %d owned source files lack "%s" as their first comment line:\n' \
        "${#missing[@]}" "$checked" "$want"
    printf '  %s\n' "${missing[@]}"
    printf 'add it as line 1 (line 2 after a #! line): "/* %s */" in C, "# %s" elsewhere\n' \
        "$want" "$want"
    exit 1
fi
printf 'licence_check: all %d owned source files carry "%s"\n' "$checked" "$want"
