#!/usr/bin/env bash
# Print Java's canonical JSON for a payload: compat/java/dump.sh RELEASE VERSION FILE.bin
# (RELEASE from releases.tsv; 2.0.0 reads every version 1..12.)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 RELEASE VERSION FILE.bin" >&2; exit 2; }
exec "$(dirname "${BASH_SOURCE[0]}")/harness.sh" "$1" dump --version "$2" "$3"
