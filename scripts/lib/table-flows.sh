# The whole-table flows of COMPATIBILITY.md's table section (sourced by scripts/java-interop on a
# local warehouse and scripts/test-s3-java on S3): for an append table with partitions and a
# primary-key table with 2 fixed buckets,
#   rust + C workers -> java coordinator   a Rust worker (compat/rust, the paimon crate) and a C
#                                          worker (compat/c/worker.c on libpaimon_wire) write at
#                                          v12; Java's CommitMessageSerializer + StreamTableCommit
#                                          commit
#   java workers -> rust coordinator       Java's TableWrite.prepareCommit, serialized by Java
#                                          (v12); `paimon-wire commit` commits
# Two rounds each (the second updates keys of the first on the primary-key table), each
# identifier committed twice (the second commits nothing), then Java and Rust each read every row
# exactly once.
#
# Also the helpers both scripts use: run and recommit_commits_nothing.
#
# The caller defines record SECTION SUBJECT CHECK STATUS COUNT DETAIL, and the variables H
# (compat/java/harness.sh), TABLE_RELEASE, RUST (paimon-wire-compat), CLI (paimon-wire),
# C_WORKER, COMMIT_USER, work, log.
# shellcheck shell=bash

# run LABEL CMD...: runs CMD, appends its output to $log, sets $last_out; on failure prints the
# tail of the output (without log4j noise and Java stack frames). Returns CMD's status.
run() {
    local label=$1; shift
    local out rc
    out=$("$@" 2>&1); rc=$?
    last_out=$out
    printf '$ %s\n%s\n' "$*" "$out" >> "$log"
    if [ $rc -ne 0 ]; then
        printf '  %s failed (exit %d):\n' "$label" $rc
        # A Rust test's panic message comes before its summary, out of reach of the tail.
        printf '%s\n' "$out" | grep -A 4 "panicked at" | head -n 15 | sed 's/^/    /'
        printf '%s\n' "$out" | grep -v '^log4j:' | grep -v '^[[:space:]]*at ' | tail -n 8 | sed 's/^/    /'
    fi
    return $rc
}

# recommit_commits_nothing LABEL T ROUND CMD...: CMD commits identifier ROUND of table T a second
# time; it must succeed and report the identifier already committed. Sets ok=0 otherwise.
recommit_commits_nothing() {
    local label=$1 t=$2 round=$3; shift 3
    if run "$label" "$@"; then
        grep -q 'already committed' <<< "$last_out" || { ok=0; echo "  $t: recommitting identifier $round committed again"; }
    else
        ok=0
    fi
}

# expected_rows KIND: the rows both rounds leave, as the readers print them
expected_rows() {
    local kind=$1
    {
        if [ "$kind" = pk ]; then
            for ((i = 0; i < 20; i++)); do printf '%d\tp%d\tu%d\n' $i $((i % 3)) $i; done
            for ((i = 20; i < 120; i++)); do printf '%d\tp%d\tv%d\n' $i $((i % 3)) $i; done
        else
            for ((i = 0; i < 120; i++)); do printf '%d\tp%d\tv%d\n' $i $((i % 3)) $i; done
            for ((i = 0; i < 20; i++)); do printf '%d\tp%d\tu%d\n' $i $((i % 3)) $i; done
        fi
    } | sort -t$'\t' -k1,1n -k2 | sed '1i rows '"$([ "$kind" = pk ] && echo 120 || echo 140)"
}

# check_reads SUBJECT FLOW KIND TABLE WAREHOUSE OPTION_ARGS...: Java and Rust read exactly the
# expected rows
check_reads() {
    local subject=$1 flow=$2 kind=$3 table=$4 warehouse=$5 ok=1
    shift 5
    expected_rows "$kind" > "$work/expected-$table.txt"
    "$H" "$TABLE_RELEASE" read --warehouse "$warehouse" --table "db.$table" "$@" > "$work/java-read-$table.txt" 2>> "$log"
    "$RUST" read --warehouse "$warehouse" --table "db.$table" "$@" > "$work/rust-read-$table.txt" 2>> "$log"
    local reader
    for reader in java rust; do
        # the readers sort by id; ties (the append table's updated ids) by line
        if ! diff <(head -n 1 "$work/$reader-read-$table.txt"; tail -n +2 "$work/$reader-read-$table.txt" | sort -t$'\t' -k1,1n -k2) \
                "$work/expected-$table.txt" > "$work/$reader-read-$table.diff"; then
            ok=0
            printf '  %s read of db.%s differs from the expected rows:\n' "$reader" "$table"
            head -n 6 "$work/$reader-read-$table.diff" | sed 's/^/    /'
        fi
    done
    local rows
    rows=$(head -n 1 "$work/expected-$table.txt" | cut -d' ' -f2)
    if [ $ok = 1 ]; then
        record table "$subject" "$flow" pass "$rows" "Java and Rust each read every row once"
    else
        record table "$subject" "$flow" FAIL "$rows" "see above"
    fi
}

# table_flows WAREHOUSE [OPTIONS_FILE] [SUBJECT_SUFFIX]: both flows on both table kinds in
# WAREHOUSE (its database `db` must be creatable there), every side with the catalog options of
# OPTIONS_FILE (none if empty). Records one `table` row per kind and flow.
table_flows() {
    local warehouse=$1 options_file=${2:-} suffix=${3:-}
    local opt=() c_opt=()
    if [ -n "$options_file" ]; then
        opt=(--options-file "$options_file"); c_opt=("$options_file")
    fi
    mkdir -p "$work/payloads"
    local kind t ok round p a b
    # round 1: rows 0..40 and 40..100; round 2: ids 0..20 again with values u<i> (updates on the
    # primary-key table, new rows on the append table) and new rows 100..120
    for kind in append pk; do
        # ---- rust + C workers -> java coordinator
        t=rust_$kind
        ok=1
        run "create $t" "$RUST" create-table --warehouse "$warehouse" --table "db.$t" --kind "$kind" "${opt[@]}" || ok=0
        for round in 1 2; do
            p=$work/payloads/$t-$round
            if [ $round = 1 ]; then a=(0:40 v); b=(40:100 v); else a=(0:20 u); b=(100:120 v); fi
            run "$t rust worker 1" "$RUST" write --warehouse "$warehouse" --table "db.$t" --commit-user "$COMMIT_USER" \
                --rows "${a[0]}" --value-prefix "${a[1]}" --version 12 --out "$p-w1.bin" "${opt[@]}" || ok=0
            run "$t C worker 2" "$C_WORKER" "$warehouse" "db.$t" "$COMMIT_USER" "${b[0]%:*}" "${b[0]#*:}" \
                "${b[1]}" 12 "$p-w2.bin" "${c_opt[@]}" || ok=0
            run "$t java commit $round" "$H" "$TABLE_RELEASE" commit --warehouse "$warehouse" --table "db.$t" \
                --commit-user "$COMMIT_USER" --identifier $round --version 12 "${opt[@]}" "$p-w1.bin" "$p-w2.bin" || ok=0
            # the same identifier again commits nothing
            recommit_commits_nothing "$t java recommit $round" "$t" $round "$H" "$TABLE_RELEASE" commit \
                --warehouse "$warehouse" --table "db.$t" --commit-user "$COMMIT_USER" --identifier $round \
                --version 12 "${opt[@]}" "$p-w1.bin" "$p-w2.bin"
        done
        if [ $ok = 1 ]; then check_reads "$kind table$suffix" "rust + C workers -> java coordinator" "$kind" "$t" "$warehouse" "${opt[@]}"
        else record table "$kind table$suffix" "rust + C workers -> java coordinator" FAIL 0 "see above"; fi

        # ---- java workers -> rust coordinator
        t=java_$kind
        ok=1
        run "create $t" "$H" "$TABLE_RELEASE" create-table --warehouse "$warehouse" --table "db.$t" --kind "$kind" "${opt[@]}" || ok=0
        for round in 1 2; do
            p=$work/payloads/$t-$round
            if [ $round = 1 ]; then a=(0:40 v); b=(40:100 v); else a=(0:20 u); b=(100:120 v); fi
            if [ "$kind" = pk ]; then
                # one writer per bucket (the coordinator refuses two writers of one bucket of a
                # primary-key table): both workers see every row and keep their buckets
                rows1="${a[0]}:${a[1]},${b[0]}:${b[1]}"; rows2=$rows1; route1=(--route 0/2); route2=(--route 1/2)
            else
                rows1="${a[0]}:${a[1]}"; rows2="${b[0]}:${b[1]}"; route1=(); route2=()
            fi
            run "$t java worker 1" "$H" "$TABLE_RELEASE" write --warehouse "$warehouse" --table "db.$t" "${opt[@]}" \
                --commit-user "$COMMIT_USER" --identifier $round --rows "$rows1" "${route1[@]}" --out "$p-w1.bin" || ok=0
            run "$t java worker 2" "$H" "$TABLE_RELEASE" write --warehouse "$warehouse" --table "db.$t" "${opt[@]}" \
                --commit-user "$COMMIT_USER" --identifier $round --rows "$rows2" "${route2[@]}" --out "$p-w2.bin" || ok=0
            run "$t rust commit $round" "$CLI" commit --warehouse "$warehouse" --table "db.$t" "${opt[@]}" \
                --commit-user "$COMMIT_USER" --identifier $round --version 12 "$p-w1.bin" "$p-w2.bin" || ok=0
            recommit_commits_nothing "$t rust recommit $round" "$t" $round "$CLI" commit --warehouse "$warehouse" \
                --table "db.$t" "${opt[@]}" --commit-user "$COMMIT_USER" --identifier $round --version 12 \
                "$p-w1.bin" "$p-w2.bin"
        done
        if [ $ok = 1 ]; then check_reads "$kind table$suffix" "java workers -> rust coordinator" "$kind" "$t" "$warehouse" "${opt[@]}"
        else record table "$kind table$suffix" "java workers -> rust coordinator" FAIL 0 "see above"; fi
    done
}
