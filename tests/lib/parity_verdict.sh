# Sourced by tests/setup16/parity.sh and tests/efi/parity.sh: the verdict on the boot_params two
# boots handed their kernels.
#
# parity_verdict BP_DIFF LOG_A LOG_B ALLOW_FILE KEY KIND [no-allowlist]: boot_params_diff compares
# the pages /init dumped into the two serial logs field by field (the whole diff is printed either
# way), allowing the fields ALLOW_FILE lists: the first word of every line that is not a comment,
# or the second after "KEY:" when KEY (the loader or EFI path) is this one. Prints PASS or FAIL
# naming KEY and ALLOW_FILE; returns boot_params_diff's status (0 pass, 1 a field outside the list).
parity_verdict() {
    local bpdiff=$1 log_a=$2 log_b=$3 allow_file=$4 key=$5 kind=$6 allow= status=0
    if [[ ${7:-} != no-allowlist ]]; then
        allow=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$allow_file" |
            awk -v key="$key" '$1 !~ /:$/ { print $1 } $1 == key ":" { print $2 }' | paste -sd,)
    fi
    "$bpdiff" "$log_a" "$log_b" ${allow:+--allow "$allow"} --labels "stock,$kind ($key)" || status=$?
    local list=${allow_file#"$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/"}
    if [[ $status -eq 0 ]]; then
        echo "parity: PASS: $key: stock and $kind hand over the same boot_params (allowlist: $list)"
    elif [[ $status -eq 1 ]]; then
        echo "parity: FAIL: $key: stock and $kind differ outside $list (logs: $log_a, $log_b)" >&2
    fi
    return $status
}

# setup_data_types LOG: the chain's types the kernel listed (the last "KPACK_SETUP_DATA types="
# line, tests/boot/init.c's), kpack's run report left out.
setup_data_types() {
    local types
    types=$(sed -n 's/^KPACK_SETUP_DATA types=\([^[:space:]]*\).*/\1/p' "$1" | tail -n 1)
    [[ -n $types ]] || { echo "parity: FAIL: no KPACK_SETUP_DATA line in $1" >&2; return 1; }
    tr ',' '\n' <<<"$types" | grep -vx -e 0x6b70616b -e none | paste -sd, || true
}
