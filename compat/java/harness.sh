#!/usr/bin/env bash
# Run the harness against one Paimon release, building it first if needed.
#   compat/java/harness.sh RELEASE COMMAND [ARGS...]
#   compat/java/harness.sh RELEASE --build-only
# The build (harness.jar + the release's jars in lib/) is cached in compat/java/target/RELEASE/
# and redone only when pom.xml or src/ changed. Maven uses the default local repository
# ~/.m2/repository unless M2_REPO names another one. HARNESS_EXTRA_CLASSPATH (jars separated by
# ':') is appended to the classpath: scripts/test-s3-java puts the paimon-s3 file system plugin
# there for s3:// warehouses.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 2 ] || { echo "usage: $0 RELEASE COMMAND [ARGS...] | $0 RELEASE --build-only" >&2; exit 2; }
rel=$1; shift
out="$here/target/$rel"
repo="${M2_REPO:-$HOME/.m2/repository}"
mvn=(mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$repo")

needs_build() {
    [ -f "$out/harness.jar" ] || return 0
    [ -n "$(find "$here/pom.xml" "$here/src" -newer "$out/harness.jar" -print -quit)" ]
}

mkdir -p "$here/target"
exec 9>"$here/target/.build-$rel.lock"
flock 9   # concurrent callers (e.g. parallel tests) wait for one build
if needs_build; then
    if ! cut -f1 "$here/releases.tsv" | grep -qx -- "$rel"; then
        echo "unknown release $rel (see $here/releases.tsv)" >&2; exit 2
    fi
    if [ "$rel" = 2.0.0 ]; then
        # POM parents of 2.0.0 are not on Maven Central: fetch this jar alone (see pom.xml)
        jar="$repo/org/apache/paimon/paimon-flink-2.0/2.0.0/paimon-flink-2.0-2.0.0.jar"
        [ -f "$jar" ] || "${mvn[@]}" dependency:get -Dartifact=org.apache.paimon:paimon-flink-2.0:2.0.0 \
            -Dtransitive=false >&2
        mvn+=(-Dpaimon.flink20.jar="$jar")
    fi
    rm -rf "$out"
    "${mvn[@]}" -f "$here/pom.xml" -Dpaimon.version="$rel" package >&2
fi
flock -u 9
[ "$1" = --build-only ] && exit 0
exec java -XX:ErrorFile="${TMPDIR:-/tmp}/paimon-wire-hs_err_%p.log" -cp "$out/harness.jar:$out/lib/*${HARNESS_EXTRA_CLASSPATH:+:$HARNESS_EXTRA_CLASSPATH}" \
    org.paimonwire.compat.Harness "$@"
