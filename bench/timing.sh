# Sourced by the bench scripts that time commands: wall time at microsecond resolution from bash
# itself, so that no `date` or `time` process is counted in what is measured.

now() { echo "${EPOCHREALTIME/./}"; }  # microseconds
timed() {  # COMMAND... -> seconds
    local start end
    start=$(now)
    "$@" >/dev/null
    end=$(now)
    printf '%d.%06d\n' $(((end - start) / 1000000)) $(((end - start) % 1000000))
}
