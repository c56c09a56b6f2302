#!/usr/bin/env bash
# Check payloads written by the Rust codec with real Paimon releases.
#
#   compat/java/check-rust-payloads.sh [--dump-to OUTDIR] DIR
#
# DIR holds <release>/v<V>-seed<S>-n<N>.bin (or ...-n<N>-large.bin for the "large" shape), where
# <release> is a release of releases.tsv, optionally prefixed "paimon-" (e.g. 2.0.0 or
# paimon-2.0.0). Each file must be a CommitMessageSerializer list payload of version V holding the
# harness's messages for (seed S, count N, shape). The release's harness deserializes it at V and
# compares it with CommitMessageImpl.equals against the regenerated messages (projected onto what
# version V carries when V is older than the version the release writes).
#
# Prints "PASS|FAIL <release> <version> <file>" per file (details on stderr) and exits 1 if any
# failed. One JVM per release (plus one per release and version with --dump-to, which also writes
# Java's canonical JSON of each file to OUTDIR/<release>/<name>.json).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dump_to=
if [ "${1:-}" = --dump-to ]; then dump_to=$2; shift 2; fi
[ $# -eq 1 ] || { echo "usage: $0 [--dump-to OUTDIR] DIR" >&2; exit 2; }
dir=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run_batch RELEASE BATCH OUT: verify, verdict lines to stdout and OUT, the rest to stderr
run_batch() {
    local rc=0
    "$here/harness.sh" "$1" verify --batch "$2" > "$3" || rc=1
    grep -E '^(PASS|FAIL) ' "$3" || true
    grep -vE '^(PASS|FAIL) ' "$3" >&2 || true
    return $rc
}
# has_verdict OUT VERSION FILE
has_verdict() {
    awk -v v="$2" -v f="$3" '($1 == "PASS" || $1 == "FAIL") && $3 == v && substr($0, index($0, $4)) == f {found=1} END {exit !found}' "$1"
}

known=$(grep -v '^#' "$here/releases.tsv" | cut -f1)
failed=0
checked=0
for rdir in "$dir"/*/; do
    [ -d "$rdir" ] || continue
    rname=$(basename "$rdir")
    rel=${rname#paimon-}
    files=()
    while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$rdir" -maxdepth 1 -name '*.bin' -print0 | sort -z)
    [ ${#files[@]} -gt 0 ] || continue
    if ! grep -qx -- "$rel" <<< "$known"; then
        for f in "${files[@]}"; do echo "FAIL $rel ? $f (unknown release)"; done
        failed=1; continue
    fi
    batch="$tmp/$rel.batch"
    : > "$batch"
    for f in "${files[@]}"; do
        b=$(basename "$f")
        if [[ "$b" =~ ^v([0-9]+)-seed(-?[0-9]+)-n([0-9]+)(-large)?\.bin$ ]]; then
            shape=normal; [ -n "${BASH_REMATCH[4]}" ] && shape=large
            echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]} $shape $f" >> "$batch"
        else
            echo "FAIL $rel ? $f (name is not v<V>-seed<S>-n<N>[-large].bin)"
            failed=1
        fi
    done
    [ -s "$batch" ] || continue
    checked=$((checked + $(wc -l < "$batch")))
    # A malformed row can crash the JVM (Paimon reads rows with unchecked Unsafe accesses). Files
    # left without a verdict by a crash are retried one JVM each; a file that crashes its own JVM
    # fails. Verdict lines go to stdout, everything else the JVM prints to stderr.
    run_batch "$rel" "$batch" "$tmp/$rel.out" || failed=1
    : > "$tmp/$rel.retry"
    while read -r v s n shape f; do
        has_verdict "$tmp/$rel.out" "$v" "$f" || echo "$v $s $n $shape $f" >> "$tmp/$rel.retry"
    done < "$batch"
    while read -r v s n shape f; do
        echo "$v $s $n $shape $f" > "$tmp/one"
        run_batch "$rel" "$tmp/one" "$tmp/one.out" || failed=1
        if ! has_verdict "$tmp/one.out" "$v" "$f"; then
            echo "FAIL $rel $v $f (the JVM crashed reading it)"
            failed=1
        fi
    done < "$tmp/$rel.retry"
    if [ -n "$dump_to" ]; then
        mkdir -p "$dump_to/$rname"
        for v in $(cut -d' ' -f1 "$batch" | sort -un); do
            mapfile -t vfiles < <(awk -v v="$v" '$1 == v {print $5}' "$batch")
            "$here/harness.sh" "$rel" dump --version "$v" --out-dir "$dump_to/$rname" "${vfiles[@]}" \
                || failed=1
        done
    fi
done
[ "$checked" -gt 0 ] || { echo "no payloads found under $dir" >&2; exit 1; }
exit $failed
