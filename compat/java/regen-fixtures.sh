#!/usr/bin/env bash
# Regenerate the golden fixtures in fixtures/java/ by running the harness against every Paimon
# release listed in compat/java/releases.tsv (real jars from Maven Central), then cross-check them:
# Paimon 2.0.0 (which reads versions 1..12) must decode every fixture to the same canonical JSON
# and to messages equal to the generator's, projected onto what each version carries.
#
#   compat/java/regen-fixtures.sh [RELEASE...]     (default: all releases in releases.tsv)
#
# Per release it writes fixtures/java/paimon-<release>/
#   messages-v<V>.bin/.json      seed $MSG_SEED, $MSG_COUNT messages (message 0 all-empty, 1 full)
#   single-empty-v<V>.bin/.json  seed $EMPTY_SEED, 1 message: all lists empty, empty partition
#   large-v<V>.bin/.json         seed $LARGE_SEED, $LARGE_COUNT messages of ~50 files (shape large)
# and rewrites fixtures/java/MANIFEST.tsv.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
fx="$root/fixtures/java"
H="$here/harness.sh"

MSG_SEED=20240601
MSG_COUNT=20
EMPTY_SEED=7
LARGE_SEED=424242
LARGE_COUNT=3

if [ $# -gt 0 ]; then
    releases=("$@")
else
    mapfile -t releases < <(grep -v '^#' "$here/releases.tsv" | cut -f1)
fi

mkdir -p "$fx"
for rel in "${releases[@]}"; do
    expected=$(awk -F'\t' -v r="$rel" '$1 == r {print $2}' "$here/releases.tsv")
    version=$("$H" "$rel" info | sed -n 's/^release .* writes version \([0-9]*\) .*/\1/p')
    if [ "$version" != "$expected" ]; then
        echo "release $rel writes version '$version', releases.tsv says '$expected'" >&2
        exit 1
    fi
    dir="$fx/paimon-$rel"
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "== $rel (version $version)"
    "$H" "$rel" generate --seed $MSG_SEED --count $MSG_COUNT \
        --out-bin "$dir/messages-v$version.bin" --out-json "$dir/messages-v$version.json"
    "$H" "$rel" generate --seed $EMPTY_SEED --count 1 \
        --out-bin "$dir/single-empty-v$version.bin" --out-json "$dir/single-empty-v$version.json"
    "$H" "$rel" generate --seed $LARGE_SEED --count $LARGE_COUNT --shape large \
        --out-bin "$dir/large-v$version.bin" --out-json "$dir/large-v$version.json"
done

# ---------------------------------------------------------------- manifest
{
    printf '# release\tversion\tseed\tcount\tshape\tfile\tsha256\n'
    while IFS=$'\t' read -r rel version _; do
        [[ "$rel" == \#* ]] && continue
        dir="$fx/paimon-$rel"
        [ -d "$dir" ] || continue
        for kind in messages single-empty large; do
            case $kind in
                messages) seed=$MSG_SEED; count=$MSG_COUNT; shape=normal ;;
                single-empty) seed=$EMPTY_SEED; count=1; shape=normal ;;
                large) seed=$LARGE_SEED; count=$LARGE_COUNT; shape=large ;;
            esac
            for ext in bin json; do
                f="paimon-$rel/$kind-v$version.$ext"
                [ -f "$fx/$f" ] || continue
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rel" "$version" "$seed" "$count" "$shape" \
                    "$f" "$(sha256sum "$fx/$f" | cut -d' ' -f1)"
            done
        done
    done < "$here/releases.tsv"
} > "$fx/MANIFEST.tsv"

# ---------------------------------------------------------------- cross-check with 2.0.0
echo "== cross-check: Paimon 2.0.0 reads every fixture"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
batch="$tmp/batch.txt"
grep -v '^#' "$fx/MANIFEST.tsv" | awk -F'\t' '$6 ~ /\.bin$/ {print $2, $3, $4, $5, dir "/" $6}' dir="$fx" \
    > "$batch"
while IFS=$'\t' read -r rel version _; do
    [[ "$rel" == \#* ]] && continue
    [ -d "$fx/paimon-$rel" ] || continue
    mkdir -p "$tmp/$rel"
    "$H" 2.0.0 dump --version "$version" --out-dir "$tmp/$rel" "$fx/paimon-$rel"/*.bin
    for f in "$fx/paimon-$rel"/*.bin; do
        name=$(basename "$f" .bin)
        if ! cmp -s "$tmp/$rel/$name.json" "$fx/paimon-$rel/$name.json"; then
            echo "JSON MISMATCH: 2.0.0 dump of paimon-$rel/$name.bin differs from $rel's own" >&2
            exit 1
        fi
    done
done < "$here/releases.tsv"
"$H" 2.0.0 verify --batch "$batch"
echo "fixtures written to $fx (manifest: $fx/MANIFEST.tsv)"
