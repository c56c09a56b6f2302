# Shared by the S3 test scripts (sourced): the CLI, a venv with pypaimon, the options file,
# checks that print and count.
# shellcheck shell=bash

root=${root:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
target_dir=${CARGO_TARGET_DIR:-$root/target}
CLI=$target_dir/debug/paimon-wire
S3PROXY=$root/scripts/services/s3proxy
PYPAIMON_READ=$root/scripts/s3/pypaimon-read
failures=0

say() { printf '%s\n' "$*"; }
# long_or LONG SHORT: LONG when PAIMON_WIRE_LONG_TESTS=1 (the long soak runs), else SHORT (CI).
long_or() { if [ "${PAIMON_WIRE_LONG_TESTS:-0}" = 1 ]; then echo "$1"; else echo "$2"; fi; }
pass() { say "  ok    $*"; }
fail() { say "  FAIL  $*"; failures=$((failures + 1)); }

# Never the cloud credential chain: no ambient AWS credentials or profiles, no instance
# metadata probe. Every S3 client here gets the static test keys through its options.
isolate_from_cloud_credentials() {
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
        AWS_DEFAULT_PROFILE AWS_ROLE_ARN AWS_WEB_IDENTITY_TOKEN_FILE AWS_CONTAINER_CREDENTIALS_FULL_URI \
        AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
    export AWS_EC2_METADATA_DISABLED=true
    export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
}

# The Python venv of scripts/test-python, with the pinned pypaimon and pyarrow of
# crates/paimon-wire-py/requirements-test.txt (only those two are installed here).
pypaimon_python() {
    local venv=$target_dir/python-venv
    if [ ! -x "$venv/bin/python" ]; then
        "${PYTHON:-python3}" -m venv "$venv" >&2
    fi
    if ! "$venv/bin/python" -c 'import pypaimon, pyarrow' 2>/dev/null; then
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            $(grep -E '^(pypaimon|pyarrow)==' "$root/crates/paimon-wire-py/requirements-test.txt") >&2
    fi
    echo "$venv/bin/python"
}

# write_options FILE ENDPOINT: the catalog options for the S3Proxy whose env is loaded
# (S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY), readable by this user only.
write_options() {
    local file=$1 endpoint=$2
    (
        umask 077
        cat > "$file" <<EOF
# S3Proxy on $endpoint (static test keys; path-style addressing)
s3.endpoint=$endpoint
s3.region=$S3_REGION
s3.path-style-access=true
s3.access-key=$S3_ACCESS_KEY_ID
s3.secret-key=$S3_SECRET_ACCESS_KEY
EOF
    )
}

# json_field JSON KEY
json_field() {
    python3 -c 'import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else v)' "$1" "$2"
}

# seed_database PATH_IN_BUCKET DB: puts an empty object `PATH/DB.db/.s3proxy-keep`.
# S3Proxy 3.0.0 (filesystem-nio2, also filesystem and transient-nio2) stores the directory
# marker `DB.db/` that a filesystem catalog creates, but does not return it when listing the
# prefix `DB.db/` - real S3 does. opendal checks a directory with exactly that listing, so on
# S3Proxy the paimon crate's create_table would say the database does not exist. An object
# under the prefix makes the listing non-empty. Needs the env of scripts/services/s3proxy;
# ENDPOINT overrides S3_ENDPOINT (a network namespace reaches the server at another address).
seed_database() {
    local path=$1 db=$2 endpoint=${3:-$S3_ENDPOINT}
    curl -sf -o /dev/null --aws-sigv4 "aws:amz:$S3_REGION:s3" \
        --user "$S3_ACCESS_KEY_ID:$S3_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
        -X PUT --data-binary "" "$endpoint/$S3_BUCKET/$path/$db.db/.s3proxy-keep"
}

# start_fault_proxy UPSTREAM DIR: scripts/services/fault-proxy in front of UPSTREAM (http://H:P),
# its files in DIR: rules.json (starts as `[]`), events.jsonl, proxy.port. Sets proxy_pid and
# proxy_endpoint (http://127.0.0.1:PORT); the caller kills proxy_pid when it ends. Returns 1,
# with the proxy's stderr printed, if it does not listen within 10 s.
start_fault_proxy() {
    local upstream=$1 dir=$2
    echo '[]' > "$dir/rules.json"
    "$root/scripts/services/fault-proxy" --listen 127.0.0.1:0 --upstream "$upstream" \
        --rules "$dir/rules.json" --events "$dir/events.jsonl" --port-file "$dir/proxy.port" \
        > "$dir/proxy.out" 2> "$dir/proxy.err" &
    proxy_pid=$!
    local _
    for _ in $(seq 100); do [ -s "$dir/proxy.port" ] && break; sleep 0.1; done
    if [ ! -s "$dir/proxy.port" ]; then
        cat "$dir/proxy.err" >&2
        return 1
    fi
    proxy_endpoint=http://127.0.0.1:$(cat "$dir/proxy.port")
}
