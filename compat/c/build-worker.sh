#!/usr/bin/env bash
# Builds the C worker of the table checks (compat/c/worker.c) against the static C library.
#   compat/c/build-worker.sh OUT       (needs `cargo build --lib -p paimon-wire-ffi` first)
# It links libpaimon_wire.a with the libraries its Rust dependencies need, and reuses the Arrow
# C Data helpers of the C library's own tests. CARGO_TARGET_DIR is honoured.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUT" >&2; exit 2; }
target_dir=${CARGO_TARGET_DIR:-$root/target}
"${CC:-cc}" -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wno-unused-function -O1 \
    -I "$root/crates/paimon-wire-ffi/include" -I "$root/crates/paimon-wire-ffi/tests/c" \
    "$root/compat/c/worker.c" "$target_dir/debug/libpaimon_wire.a" \
    -ldl -lssl -lcrypto -lgcc_s -lutil -lrt -lpthread -lm -lc -Wl,--gc-sections -o "$1"
