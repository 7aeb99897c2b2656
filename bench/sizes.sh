# SPDX-License-Identifier: BSD-3-Clause
# fwdio's one size grammar for the benchmark scripts (sourced by bench/sweep
# and bench/seeds), the same as the library's and the tools'
# (runtime/util/parse_size.h): decimal digits, then optionally K, M, G or T
# (powers of 1024, either case) with an optional i after it, then an
# optional B; blanks around are ignored. "4096", "64K", "8MiB", "2G", "1tb".

# size_to_bytes TEXT: prints the bytes; returns 1 (printing nothing) for bad
# text or a size beyond what bash's arithmetic holds.
size_to_bytes() {
    local re='^[[:space:]]*([0-9]+)(([KkMmGgTt])[Ii]?)?[Bb]?[[:space:]]*$' n shift=0
    [[ $1 =~ $re ]] || return 1
    n=$((10#${BASH_REMATCH[1]}))
    case ${BASH_REMATCH[3]^^} in
    K) shift=10 ;;
    M) shift=20 ;;
    G) shift=30 ;;
    T) shift=40 ;;
    esac
    # bash arithmetic is signed 64-bit: no digits past it, nothing shifted out.
    ((${#BASH_REMATCH[1]} <= 18 && n <= (0x7fffffffffffffff >> shift))) || return 1
    printf '%s\n' "$((n << shift))"
}
