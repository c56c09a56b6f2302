//! The crash points and the network's faults on an object store whose conditional create is
//! atomic (MinIO): a coordinator (`paimon-wire commit`) reaches the store through
//! `scripts/services/fault-proxy`, which forwards real requests and, on the requests a rule
//! names, applies them and drops the answer, answers `503 SlowDown`, drops them before the
//! store sees them, answers past the client's timeout, or holds them while the test kills the
//! coordinator.
//!
//! Every case must end exactly once: a reported success is one snapshot of the commit's user
//! and identifier holding the payload's rows; a reported failure is one readable paragraph,
//! and then the same commit run again commits the payload once (or finds it committed). The
//! table never has a second snapshot of one commit, and every row is there once.
//!
//! Through a REST catalog (`PAIMON_WIRE_FAULT_CATALOG=rest`) the proxy stands in front of the
//! catalog server instead, and the snapshot is published by the server
//! (`POST …/tables/T/commit`): the same outcomes are required of that request's faults.
//!
//! Ignored by default: `scripts/test-s3-minio` (MinIO) and `scripts/test-rest` (Paimon's REST
//! catalog server) start the server and the proxy and run them with
//! - `PAIMON_WIRE_FAULT_WAREHOUSE`: an `s3://` warehouse reached through the proxy, or the REST
//!   catalog's warehouse name;
//! - `PAIMON_WIRE_FAULT_OPTIONS_FILE`: its catalog options (the proxy's endpoint and the keys,
//!   with short `s3.retry.*` and `s3.connection.timeout` so that the cases stay quick; or
//!   `metastore=rest` with the proxy's `uri` and the token);
//! - `PAIMON_WIRE_FAULT_RULES`, `PAIMON_WIRE_FAULT_EVENTS`: the proxy's rules and events files.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{self, read_table_with_options, run, success};

/// Rows in each payload.
const ROWS: u64 = 40;
const USER: &str = "fault-test-job";

/// What publishes a snapshot: an object store's conditional create, or a REST catalog server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Publisher {
    ObjectStore,
    RestCatalog,
}

impl Publisher {
    fn from_env() -> Publisher {
        match std::env::var("PAIMON_WIRE_FAULT_CATALOG").as_deref() {
            Ok("rest") => Publisher::RestCatalog,
            _ => Publisher::ObjectStore,
        }
    }

    /// A rule on the request that publishes the snapshot: the conditional create of
    /// `snapshot-N` (not the `LATEST` hint), or the REST commit.
    fn rule(self, fault: &str, times: i64) -> Value {
        match self {
            Publisher::ObjectStore => on_snapshot_put(fault, times),
            Publisher::RestCatalog => json!({"method": "POST", "path": "/tables/[^/]+/commit$",
                                             "fault": fault, "times": times, "delay_s": 4}),
        }
    }
}

/// The warehouse, options and proxy files the environment names, and a table of this run.
struct FaultStore {
    warehouse: String,
    options_file: String,
    table: String,
    rules: PathBuf,
    events: PathBuf,
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("set {name} (scripts/test-s3-minio does)"))
}

impl FaultStore {
    fn from_env(test: &str) -> FaultStore {
        FaultStore {
            warehouse: env("PAIMON_WIRE_FAULT_WAREHOUSE"),
            options_file: env("PAIMON_WIRE_FAULT_OPTIONS_FILE"),
            table: format!("{test}_{}.events", std::process::id()),
            rules: env("PAIMON_WIRE_FAULT_RULES").into(),
            events: env("PAIMON_WIRE_FAULT_EVENTS").into(),
        }
    }

    fn args(&self) -> [&str; 6] {
        [
            "--warehouse",
            &self.warehouse,
            "--table",
            &self.table,
            "--options-file",
            &self.options_file,
        ]
    }

    /// Creates the table (no rules in force).
    fn create_table(&self) {
        self.set_rules(&json!([]));
        let mut args = vec!["demo", "--rows", "0"];
        args.extend(self.args());
        success(&run(&args, None));
    }

    /// Writes payload `index` (rows `index*ROWS..`) with a real worker process.
    fn write_payload(&self, dir: &tempfile::TempDir, index: u32) -> String {
        let payload = common::path_in(dir, &format!("payload-{index}.bin"));
        let (index_arg, workers, rows) = (index.to_string(), "64", (ROWS * 64).to_string());
        let mut args = vec!["worker"];
        args.extend(self.args());
        args.extend([
            "--commit-user",
            USER,
            "--index",
            &index_arg,
            "--workers",
            workers,
            "--rows",
            &rows,
            "--partitions",
            "2",
            "--output",
            &payload,
        ]);
        success(&run(&args, None));
        payload
    }

    /// Replaces the proxy's rules (atomically: the proxy may read the file at any moment).
    fn set_rules(&self, rules: &Value) {
        let temporary = self.rules.with_extension("tmp");
        std::fs::write(&temporary, rules.to_string()).unwrap();
        std::fs::rename(&temporary, &self.rules).unwrap();
    }

    /// The proxy's events file's length, to read what comes after it.
    fn events_mark(&self) -> usize {
        std::fs::read(&self.events).map_or(0, |bytes| bytes.len())
    }

    /// The events after `mark` that applied a fault.
    fn faults_since(&self, mark: usize) -> Vec<Value> {
        let bytes = std::fs::read(&self.events).unwrap_or_default();
        String::from_utf8_lossy(&bytes[mark.min(bytes.len())..])
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| !event["fault"].is_null())
            .collect()
    }

    /// `paimon-wire commit` of `payload` under `identifier`, started (not waited for).
    fn spawn_commit(&self, payload: &str, identifier: i64) -> std::process::Child {
        Command::new(env!("CARGO_BIN_EXE_paimon-wire"))
            .arg("commit")
            .args(self.args())
            .args(["--commit-user", USER, "--identifier"])
            .arg(identifier.to_string())
            .args(["--version", "14", payload])
            // The default a user gets: no backtraces in messages.
            .env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LIB_BACKTRACE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("paimon-wire runs")
    }

    fn commit(&self, payload: &str, identifier: i64) -> Output {
        self.spawn_commit(payload, identifier)
            .wait_with_output()
            .unwrap()
    }

    /// Snapshots as (commit identifier, id) of [`USER`], and the table's row count.
    fn state(&self) -> (Vec<(i64, i64)>, usize) {
        let options = paimon_wire::warehouse::parse_options_file(
            &std::fs::read_to_string(&self.options_file).unwrap(),
        )
        .unwrap();
        let (table, batches) = read_table_with_options(&self.warehouse, &self.table, &options);
        let snapshots = common::block_on(async {
            let manager = table.snapshot_manager();
            let mut snapshots = Vec::new();
            for id in manager.list_all_ids().await.unwrap() {
                let snapshot = manager.get_snapshot(id).await.unwrap();
                assert_eq!(snapshot.commit_user(), USER);
                snapshots.push((snapshot.commit_identifier(), id));
            }
            snapshots
        });
        (snapshots, batches.iter().map(|b| b.num_rows()).sum())
    }
}

/// Asserts the table holds exactly one snapshot per identifier in `1..=identifier` and
/// `identifier × ROWS` rows.
fn committed_once(store: &FaultStore, identifier: i64, case: &str) {
    let (snapshots, rows) = store.state();
    let identifiers: Vec<i64> = snapshots
        .iter()
        .map(|(identifier, _)| *identifier)
        .collect();
    assert_eq!(
        identifiers,
        (1..=identifier).collect::<Vec<_>>(),
        "{case}: one snapshot per commit, in order: {snapshots:?}"
    );
    assert_eq!(rows, identifier as usize * ROWS as usize, "{case}: rows");
}

/// A failed commit's message: one paragraph, no panic, no backtrace.
fn readable_failure(out: &Output, case: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !stderr.contains("panicked") && !stderr.to_lowercase().contains("backtrace"),
        "{case}: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{case}: one paragraph: {stderr}"
    );
    stderr.trim_end().to_string()
}

/// One fault case: `rules` in force during the commit of identifier `identifier`.
struct Case {
    name: &'static str,
    rules: Value,
    /// Whether the coordinator must report success (a transient fault the retries absorb).
    must_succeed: bool,
    /// What a failure's message must name (the cause the store or the network gave).
    cause: &'static str,
}

/// A rule on the snapshot's conditional create (`snapshot-N`, not the `LATEST` hint).
fn on_snapshot_put(fault: &str, times: i64) -> Value {
    json!({"method": "PUT", "path": "/snapshot/snapshot-[0-9]+$", "fault": fault,
           "times": times, "delay_s": 4})
}

/// A rule on manifest and manifest-list writes.
fn on_manifest_put(fault: &str, times: i64) -> Value {
    json!({"method": "PUT", "path": "/manifest/manifest-[^/]+$", "fault": fault,
           "times": times, "delay_s": 4})
}

/// A fault once: the retries (of the S3 client, or of the commit) absorb it.
fn once(name: &'static str, rule: Value) -> Case {
    Case {
        name,
        rules: json!([rule]),
        must_succeed: true,
        cause: "",
    }
}

/// A fault on every attempt: the commit may fail (then naming `cause`) or find that it
/// published after all; either way exactly once.
fn repeated(name: &'static str, rule: Value, cause: &'static str) -> Case {
    Case {
        name,
        rules: json!([rule]),
        must_succeed: false,
        cause,
    }
}

/// The cases through a REST catalog: the server's commit, and the catalog call before it.
fn rest_cases() -> Vec<Case> {
    let commit = |fault, times| Publisher::RestCatalog.rule(fault, times);
    vec![
        once(
            "REST commit applied, answer lost",
            commit("apply_then_drop", 1),
        ),
        once("REST commit applied, 503", commit("apply_then_503", 1)),
        once(
            "REST commit dropped before the server",
            commit("drop_before", 1),
        ),
        repeated(
            "REST table lookup answered 503",
            json!({"method": "GET", "path": "/tables/[^/]+$", "fault": "apply_then_503",
                   "times": -1}),
            "Service unavailable",
        ),
        repeated(
            "every REST commit dropped before the server",
            commit("drop_before", -1),
            "http post failed",
        ),
        repeated(
            "every REST commit applied, every answer lost",
            commit("apply_then_drop", -1),
            "http post failed",
        ),
    ]
}

/// The cases on an object store.
fn object_store_cases() -> Vec<Case> {
    vec![
        once(
            "snapshot PUT applied, answer lost",
            on_snapshot_put("apply_then_drop", 1),
        ),
        once(
            "snapshot PUT applied, 503 SlowDown",
            on_snapshot_put("apply_then_503", 1),
        ),
        once(
            "snapshot PUT dropped before the store",
            on_snapshot_put("drop_before", 1),
        ),
        once(
            "snapshot PUT answered past the timeout",
            on_snapshot_put("slow", 1),
        ),
        once(
            "manifest PUT applied, answer lost",
            on_manifest_put("apply_then_drop", 1),
        ),
        once(
            "manifest PUT applied, 503 SlowDown",
            on_manifest_put("apply_then_503", 1),
        ),
        once(
            "manifest PUT dropped before the store",
            on_manifest_put("drop_before", 1),
        ),
        once(
            "manifest PUT answered past the timeout",
            on_manifest_put("slow", 1),
        ),
        once(
            "snapshot GET answer lost",
            json!({"method": "GET", "path": "/snapshot/", "fault": "apply_then_drop"}),
        ),
        once(
            "listing answered 503 SlowDown",
            json!({"method": "GET", "query": "list-type=2", "fault": "apply_then_503"}),
        ),
        once(
            "HEAD answered past the timeout",
            json!({"method": "HEAD", "fault": "slow", "delay_s": 4}),
        ),
        once(
            "manifest GET dropped",
            json!({"method": "GET", "path": "/manifest/", "fault": "drop_before"}),
        ),
        Case {
            name: "several faults in a row on one snapshot PUT, then success",
            rules: json!([
                on_snapshot_put("apply_then_503", 1),
                on_snapshot_put("apply_then_drop", 2)
            ]),
            must_succeed: true,
            cause: "",
        },
        repeated(
            "every snapshot PUT dropped before the store",
            on_snapshot_put("drop_before", -1),
            "connection closed before message completed",
        ),
        repeated(
            "every snapshot PUT applied, every answer lost",
            on_snapshot_put("apply_then_drop", -1),
            "connection closed before message completed",
        ),
        repeated(
            "every manifest PUT answered 503 SlowDown",
            on_manifest_put("apply_then_503", -1),
            "SlowDown",
        ),
    ]
}

#[test]
#[ignore = "needs MinIO behind scripts/services/fault-proxy: run by scripts/test-s3-minio"]
fn every_network_fault_between_coordinator_and_store_ends_exactly_once() {
    let store = FaultStore::from_env("faults");
    let dir = tempfile::tempdir().unwrap();
    store.create_table();
    let cases = match Publisher::from_env() {
        Publisher::ObjectStore => object_store_cases(),
        Publisher::RestCatalog => rest_cases(),
    };
    let mut report = Vec::new();
    for (index, case) in cases.into_iter().enumerate() {
        let identifier = index as i64 + 1;
        let payload = store.write_payload(&dir, index as u32);
        let mark = store.events_mark();
        store.set_rules(&case.rules);
        let started = Instant::now();
        let out = store.commit(&payload, identifier);
        let took = started.elapsed();
        store.set_rules(&json!([]));
        let faults = store.faults_since(mark).len();
        assert!(faults > 0, "{}: no request matched the rules", case.name);
        let outcome = if out.status.success() {
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                stdout.contains("committed snapshot") || stdout.contains("already committed"),
                "{}: {stdout}",
                case.name
            );
            committed_once(&store, identifier, case.name);
            "committed".to_string()
        } else {
            assert!(
                !case.must_succeed,
                "{}: a fault the retries absorb failed the commit: {}",
                case.name,
                String::from_utf8_lossy(&out.stderr)
            );
            let message = readable_failure(&out, case.name);
            assert!(
                message.contains(case.cause),
                "{}: the message does not name the cause {:?}: {message}",
                case.name,
                case.cause
            );
            let (snapshots, _) = store.state();
            let published = snapshots.iter().filter(|(i, _)| *i == identifier).count();
            assert!(published <= 1, "{}: {snapshots:?}", case.name);
            // The same commit again, faults gone: commits once, or finds the commit.
            let rerun = success(&store.commit(&payload, identifier));
            let expected = if published == 0 {
                "committed snapshot"
            } else {
                "already committed"
            };
            assert!(
                rerun.contains(expected),
                "{}: rerun said {rerun}",
                case.name
            );
            committed_once(&store, identifier, case.name);
            format!(
                "failed (exit {:?}, {}), rerun {expected}: {message}",
                out.status.code(),
                if published == 0 {
                    "nothing published"
                } else {
                    "snapshot published"
                }
            )
        };
        report.push(format!(
            "{:<62} {faults:>2} fault(s), {:>5.1} s: {outcome}",
            case.name,
            took.as_secs_f64()
        ));
    }
    eprintln!("{}", report.join("\n"));
}

/// Waits until the proxy holds a request of a rule added after `mark`.
fn wait_for_hold(store: &FaultStore, mark: usize, fault: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if store
            .faults_since(mark)
            .iter()
            .any(|event| event["fault"] == fault)
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the proxy never held a request ({fault})");
}

#[test]
#[ignore = "needs MinIO behind scripts/services/fault-proxy: run by scripts/test-s3-minio"]
fn a_coordinator_killed_at_each_crash_point_on_an_object_store_commits_exactly_once_on_rerun() {
    use std::os::unix::process::ExitStatusExt;

    let store = FaultStore::from_env("crash");
    let dir = tempfile::tempdir().unwrap();
    store.create_table();
    // before-publish: the snapshot's conditional create (or the REST commit) is held before
    // it reaches the store (the server); after-publish: it was applied, the answer is held.
    for (index, (point, fault)) in [
        ("before-publish", "hold_before"),
        ("after-publish", "hold_after"),
    ]
    .into_iter()
    .enumerate()
    {
        let identifier = index as i64 + 1;
        let payload = store.write_payload(&dir, index as u32);
        let mark = store.events_mark();
        store.set_rules(&json!([Publisher::from_env().rule(fault, 1)]));
        let mut child = store.spawn_commit(&payload, identifier);
        wait_for_hold(&store, mark, fault);
        child.kill().unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.signal(), Some(9), "{point}: killed");
        store.set_rules(&json!([]));
        let (snapshots, _) = store.state();
        let published = snapshots.iter().any(|(i, _)| *i == identifier);
        assert_eq!(
            published,
            point == "after-publish",
            "{point}: {snapshots:?}"
        );
        let rerun = success(&store.commit(&payload, identifier));
        let expected = if published {
            "already committed"
        } else {
            "committed snapshot"
        };
        assert!(rerun.contains(expected), "{point}: {rerun}");
        committed_once(&store, identifier, point);
        eprintln!("{point}: killed while the proxy held the publishing request; rerun: {expected}");
    }
}

/// Waits until a snapshot of [`USER`] carries `identifier` (a late request landed).
fn wait_for_snapshot(store: &FaultStore, identifier: i64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if store.state().0.iter().any(|(i, _)| *i == identifier) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the late snapshot of identifier {identifier} never landed");
}

#[test]
#[ignore = "needs MinIO behind scripts/services/fault-proxy: run by scripts/test-s3-minio"]
fn a_snapshot_the_store_applies_after_the_commit_gave_up_keeps_its_files_through_abort() {
    use paimon_wire::coordinator::{open_table_with_options, Binding, Coordinator};
    use paimon_wire::SerializerVersion;

    if Publisher::from_env() == Publisher::RestCatalog {
        // The catalog server publishes; its commit request is the REST case's, and a request
        // the server applies late is the same story. This case drives the object store's.
        return;
    }
    let store = FaultStore::from_env("late");
    let dir = tempfile::tempdir().unwrap();
    store.create_table();
    let raw = std::fs::read(store.write_payload(&dir, 0)).unwrap();
    // As a Doris backend hands it to its frontend.
    let framed = paimon_wire::dpcm::frame(SerializerVersion::V14, &raw).unwrap();
    let options = paimon_wire::warehouse::parse_options_file(
        &std::fs::read_to_string(&store.options_file).unwrap(),
    )
    .unwrap();
    // One runtime for the coordinator's calls, entered step by step: the table's state is
    // read between them by `store.state()`, which runs a runtime of its own.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let coordinator = runtime.block_on(async {
        let table = open_table_with_options(&store.warehouse, &store.table, &options)
            .await
            .unwrap()
            // One attempt: with retries, a later attempt could find the snapshot once the
            // test lets it land, and this case is about a commit that gave up before that.
            .copy_with_options([("commit.max-retries".to_string(), "0".to_string())].into());
        Coordinator::bind(table, Binding::append(USER))
            .await
            .unwrap()
    });
    assert!(
        coordinator.outcome_horizon() >= Duration::from_secs(60),
        "an object store's default horizon"
    );
    let messages = coordinator
        .deserialize(SerializerVersion::V14, &framed)
        .unwrap();

    // Every conditional create of a snapshot is held past the client's timeout (2 s, with
    // the S3 client's own retries), then applied whether or not the client waits.
    let mark = store.events_mark();
    store.set_rules(&json!([on_snapshot_put("late_apply", -1)]));
    let error = runtime
        .block_on(coordinator.commit(messages.clone(), 1))
        .expect_err("every snapshot PUT is held: the commit cannot hear back");
    assert!(error.outcome_unknown(), "{error}");
    assert!(
        !store.faults_since(mark).is_empty(),
        "no snapshot PUT was held"
    );
    assert!(
        store.state().0.is_empty(),
        "nothing landed while the requests were held"
    );

    // The engine aborts after the error: nothing may be deleted while a request of the
    // commit can still land.
    let refusal = runtime
        .block_on(coordinator.abort(&messages))
        .expect_err("abort under an unknown outcome");
    assert!(refusal.outcome_unknown(), "{refusal}");

    // The store applies the held requests now: the first creates the snapshot, the others
    // find it there.
    store.set_rules(&json!([]));
    wait_for_snapshot(&store, 1);
    committed_once(&store, 1, "late snapshot");

    // Even the explicit override keeps every file of a snapshot it can see.
    let report = runtime
        .block_on(coordinator.abort_despite_unknown_outcome(&messages))
        .unwrap();
    assert!(report.deleted.is_empty(), "{report:?}");
    committed_once(&store, 1, "late snapshot after the override's abort");

    // A rerun of the commit finds it.
    let rerun = success(&store.commit(&common::path_in(&dir, "payload-0.bin"), 1));
    assert!(rerun.contains("already committed"), "{rerun}");
    committed_once(&store, 1, "rerun");
    eprintln!(
        "late publication: commit failed with its outcome unknown, abort deleted nothing, the \
         late snapshot read back whole, the rerun said already committed"
    );
}
