//! Concurrent coordinators on one table: K `paimon-wire commit` processes, each with its own
//! payload, start together, round after round. Afterwards every reported success must be a
//! snapshot of the table carrying that process's commit user and identifier, the snapshot
//! count must equal the number of successes, and every row of every successful payload must
//! be in the table exactly once (and no row of a payload that was not committed).
//!
//! Each leg is bounded: `PAIMON_WIRE_RACE_ROUNDS` (default 12, or 25 with
//! `PAIMON_WIRE_LONG_TESTS=1`, the long soak run) rounds of `PAIMON_WIRE_RACE_COMMITTERS`
//! (default 8) processes.
//!
//! The races run on a local warehouse in a temporary directory, or, for the `remote_` tests
//! (ignored by default; `scripts/test-s3-minio` and `scripts/test-rest` run them), on the
//! warehouse `PAIMON_WIRE_RACE_WAREHOUSE` (an `s3://` URI, or a REST catalog's warehouse name)
//! with the catalog options of the file `PAIMON_WIRE_RACE_OPTIONS_FILE`. Each race makes its
//! own table there, `race_<pid>_<n>.events`.

mod common;

use std::collections::BTreeMap;
use std::process::{Child, Command, Output, Stdio};

use arrow_array::Int64Array;
use common::{path_in, read_table_with_options, run, success};

/// Where a race runs: a warehouse, its options file, and the table the race creates.
struct Store {
    warehouse: String,
    options_file: Option<String>,
    table: String,
    /// Keeps a local warehouse's directory until the race ends.
    _dir: Option<tempfile::TempDir>,
}

impl Store {
    /// A new local warehouse in a temporary directory.
    fn local() -> Store {
        let dir = tempfile::tempdir().unwrap();
        Store {
            warehouse: path_in(&dir, "warehouse"),
            options_file: None,
            table: "demo.events".to_string(),
            _dir: Some(dir),
        }
    }

    /// The remote warehouse the environment names, with a table of this race's own.
    fn remote() -> Store {
        static RACES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let warehouse = std::env::var("PAIMON_WIRE_RACE_WAREHOUSE")
            .expect("set PAIMON_WIRE_RACE_WAREHOUSE (and PAIMON_WIRE_RACE_OPTIONS_FILE)");
        let race = RACES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Store {
            warehouse,
            options_file: std::env::var("PAIMON_WIRE_RACE_OPTIONS_FILE").ok(),
            table: format!("race_{}_{race}.events", std::process::id()),
            _dir: None,
        }
    }

    /// `--warehouse W --table T [--options-file F]`.
    fn args(&self) -> Vec<&str> {
        let mut args = vec!["--warehouse", &self.warehouse, "--table", &self.table];
        if let Some(file) = &self.options_file {
            args.extend(["--options-file", file]);
        }
        args
    }

    /// The catalog options of the options file.
    fn options(&self) -> paimon_wire::warehouse::WarehouseOptions {
        self.options_file
            .as_ref()
            .map_or_else(Default::default, |file| {
                paimon_wire::warehouse::parse_options_file(&std::fs::read_to_string(file).unwrap())
                    .unwrap()
            })
    }
}
/// Rows in each payload.
const ROWS_PER_PAYLOAD: u64 = 20;

/// `long` under `PAIMON_WIRE_LONG_TESTS=1` (the long soak run), else `short` (CI's bound).
fn short_or_long(short: u32, long: u32) -> u32 {
    if std::env::var("PAIMON_WIRE_LONG_TESTS").as_deref() == Ok("1") {
        long
    } else {
        short
    }
}

fn env_or(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How one commit process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ended {
    /// Exit 0, `committed snapshot N`.
    Committed(i64),
    /// Exit 0, `... was already committed in snapshot N`: a racing coordinator with the same
    /// commit user, identifier and payload published it.
    AlreadyCommitted(i64),
    /// Exit 1: the identifier is committed with other payloads (rule `identifier-owner`).
    Reused,
    /// Exit 3: lost the race on every allowed attempt; nothing committed.
    Conflict,
    /// Exit 1, the identifier was superseded by a higher one of the same commit user.
    Superseded,
    /// Exit 4, outcome unknown: the publication returned, but no snapshot carries this
    /// commit (a Java 2.0 coordinator's rename on a local filesystem replaced it); the
    /// coordinator refuses to report it committed and asks for a rerun with the same
    /// identifier.
    Displaced,
}

/// One commit process: its payload's row ids, commit user and identifier, and whether it is
/// a Paimon Java 2.0 coordinator (`compat/java/harness.sh 2.0.0 commit`) instead of ours.
struct Committer {
    ids: std::ops::Range<u64>,
    commit_user: String,
    identifier: i64,
    payload: String,
    java: bool,
}

/// The Java harness script, when the Java leg runs (`PAIMON_WIRE_JAVA_HARNESS`).
fn java_harness() -> Option<String> {
    std::env::var("PAIMON_WIRE_JAVA_HARNESS").ok()
}

fn spawn_commit(store: &Store, committer: &Committer, version: &str) -> Child {
    let identifier = committer.identifier.to_string();
    let mut command = if committer.java {
        let mut command = Command::new("bash");
        command.args([
            &java_harness().expect("PAIMON_WIRE_JAVA_HARNESS is set"),
            "2.0.0",
            "commit",
        ]);
        command
    } else {
        let mut command = Command::new(env!("CARGO_BIN_EXE_paimon-wire"));
        command.arg("commit");
        command
    };
    command
        .args(store.args())
        .args([
            "--commit-user",
            &committer.commit_user,
            "--identifier",
            &identifier,
            "--version",
            version,
            &committer.payload,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the commit process starts")
}

/// Waits for every child at once: each output with the moment its process ended.
fn wait_all(children: Vec<Child>) -> Vec<(Output, std::time::Instant)> {
    std::thread::scope(|scope| {
        let waiting: Vec<_> = children
            .into_iter()
            .map(|child| {
                scope.spawn(move || {
                    let out = child.wait_with_output().expect("commit process ends");
                    (out, std::time::Instant::now())
                })
            })
            .collect();
        waiting.into_iter().map(|w| w.join().unwrap()).collect()
    })
}

/// Whether a Java 2.0 coordinator reported its commit.
fn java_ended(out: Output) -> bool {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let committed = out.status.success() && stdout.contains("\ncommitted identifier");
    if !committed {
        eprintln!(
            "java coordinator did not commit: {:?} {stdout} {stderr}",
            out.status
        );
    }
    committed
}

fn ended(out: Output) -> Ended {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) if stdout.contains("was already committed in snapshot ") => {
            let snapshot = stdout
                .split("was already committed in snapshot ")
                .nth(1)
                .and_then(|rest| rest.split(';').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("already committed without a snapshot: {stdout}"));
            Ended::AlreadyCommitted(snapshot)
        }
        Some(0) => {
            let snapshot = stdout
                .lines()
                .find_map(|l| l.strip_prefix("committed snapshot "))
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("exit 0 without a committed snapshot: {stdout}"));
            Ended::Committed(snapshot)
        }
        Some(3) => {
            assert!(stderr.contains("commit conflict"), "{stderr}");
            Ended::Conflict
        }
        Some(1) if stderr.contains("was never committed") => Ended::Superseded,
        Some(1) if stderr.contains("the identifier was reused for other data") => Ended::Reused,
        Some(4) if stderr.contains("no snapshot carries its commit user and identifier") => {
            Ended::Displaced
        }
        other => panic!("commit process ended with {other:?}: {stdout} {stderr}"),
    }
}

/// Snapshot id -> (commit user, commit identifier), and every row id in the table.
fn table_state(store: &Store) -> (BTreeMap<i64, (String, i64)>, Vec<i64>) {
    let (table, batches) =
        read_table_with_options(&store.warehouse, &store.table, &store.options());
    let snapshots = common::block_on(async {
        let manager = table.snapshot_manager();
        let mut snapshots = BTreeMap::new();
        for id in manager.list_all_ids().await.unwrap() {
            let snapshot = manager.get_snapshot(id).await.unwrap();
            snapshots.insert(
                id,
                (
                    snapshot.commit_user().to_string(),
                    snapshot.commit_identifier(),
                ),
            );
        }
        snapshots
    });
    let mut ids = Vec::new();
    for batch in &batches {
        let column = batch
            .column_by_name("id")
            .unwrap()
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        ids.extend(column.values().iter().copied());
    }
    (snapshots, ids)
}

/// Counts of one race.
#[derive(Debug, Default)]
struct RaceCounts {
    committed: usize,
    conflicts: usize,
    superseded: usize,
    /// Ours that found the identifier committed by a racing coordinator with the same payload.
    already_committed: usize,
    /// Ours refused because a racing coordinator committed the identifier with other payloads.
    reused: usize,
    /// Ours whose snapshot a Java coordinator replaced, reported as outcome unknown; each
    /// was rerun with the same identifier after its round, as the error asks.
    displaced: usize,
    /// Reruns of displaced commits that reported their commit (each is then checked like
    /// any reported success).
    rerun_committed: usize,
    /// Java coordinators that reported a commit.
    java_committed: usize,
    /// Java coordinators that failed.
    java_failed: usize,
    /// Reported commits (ours or Java's) whose snapshot is not in the table.
    lost: usize,
}

/// Who takes part in a race.
#[derive(Debug, Clone, Copy)]
struct Race {
    /// A remote warehouse ([`Store::remote`]) instead of a local one.
    remote: bool,
    committers: u32,
    rounds: u32,
    /// Every process commits as one commit user (increasing identifiers) instead of each
    /// having its own.
    shared_user: bool,
    /// The first `java` processes of each round are Paimon Java 2.0 coordinators.
    java: u32,
    /// Every process of a round commits as one commit user with one identifier (an engine's
    /// failover: the old and the new coordinator commit one transaction), each its own payload
    /// (`Some(false)`) or all the same one (`Some(true)`).
    one_identifier: Option<bool>,
}

/// Creates the demo table in a new warehouse, writes `rounds × committers` payloads with
/// disjoint row ids (real worker processes), then runs the rounds and checks the table.
fn race(race: Race) -> RaceCounts {
    let Race {
        remote,
        committers,
        rounds,
        shared_user,
        java,
        one_identifier,
    } = race;
    // Java 2.0 reads payloads up to version 12.
    let version = if java > 0 { "12" } else { "14" };
    let dir = tempfile::tempdir().unwrap();
    let store = if remote {
        Store::remote()
    } else {
        Store::local()
    };
    let mut demo = vec!["demo", "--rows", "0"];
    demo.extend(store.args());
    success(&run(&demo, None));
    let payloads = committers * rounds;
    let total_rows = u64::from(payloads) * ROWS_PER_PAYLOAD;
    let mut plan: Vec<Vec<Committer>> = Vec::new();
    for round in 0..rounds {
        let mut workers = Vec::new();
        let mut round_plan = Vec::new();
        for k in 0..committers {
            let index = round * committers + k;
            let commit_user = if one_identifier.is_some() {
                "race-one".to_string()
            } else if shared_user {
                "race-shared".to_string()
            } else {
                format!("race-{k}")
            };
            // With one identifier and the same payload, every process of the round commits
            // the payload of its first.
            let same_payload = one_identifier == Some(true) && k > 0;
            let writer_index = if same_payload {
                round * committers
            } else {
                index
            };
            let payload = path_in(&dir, &format!("payload-{writer_index}.bin"));
            let first = u64::from(writer_index) * ROWS_PER_PAYLOAD;
            round_plan.push(Committer {
                ids: first..first + ROWS_PER_PAYLOAD,
                commit_user: commit_user.clone(),
                // Identifiers increase per commit user across rounds (and, for the shared
                // user, across the processes of a round too); one identifier per round when
                // the round races for one.
                identifier: if one_identifier.is_some() {
                    i64::from(round) + 1
                } else {
                    i64::from(index) + 1
                },
                payload: payload.clone(),
                java: k < java,
            });
            if same_payload {
                continue;
            }
            workers.push(
                Command::new(env!("CARGO_BIN_EXE_paimon-wire"))
                    .arg("worker")
                    .args(store.args())
                    .args([
                        "--commit-user",
                        &commit_user,
                        "--index",
                        &index.to_string(),
                        "--workers",
                        &payloads.to_string(),
                        "--rows",
                        &total_rows.to_string(),
                        "--partitions",
                        "3",
                        "--version",
                        version,
                        "--output",
                        &payload,
                    ])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
        }
        for worker in workers {
            let out = worker.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "worker failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        plan.push(round_plan);
    }

    let mut counts = RaceCounts::default();
    // Snapshot reported by each of our successful processes, and every reported success.
    let mut ours_reported: BTreeMap<i64, (String, i64)> = BTreeMap::new();
    let mut reported: Vec<&Committer> = Vec::new();
    // A JVM takes seconds to start: Java coordinators get a head start so that both kinds
    // publish at about the same moment. It adapts after each round to how much longer the
    // Java processes took than ours.
    let mut head_start = std::time::Duration::from_millis(u64::from(env_or(
        "PAIMON_WIRE_RACE_JAVA_HEAD_START_MS",
        1500,
    )));
    for round in &plan {
        let started = std::time::Instant::now();
        let mut children = Vec::new();
        for committer in round.iter().filter(|c| c.java) {
            children.push(spawn_commit(&store, committer, version));
        }
        if java > 0 {
            std::thread::sleep(head_start);
        }
        let ours_started = std::time::Instant::now();
        for committer in round.iter().filter(|c| !c.java) {
            children.push(spawn_commit(&store, committer, version));
        }
        let ordered = round
            .iter()
            .filter(|c| c.java)
            .chain(round.iter().filter(|c| !c.java));
        let (mut java_took, mut ours_took) = (None, None);
        let mut displaced = Vec::new();
        for (committer, (out, ended_at)) in ordered.zip(wait_all(children)) {
            if committer.java {
                let took = ended_at - started;
                java_took = Some(java_took.map_or(took, |t: std::time::Duration| t.min(took)));
                if java_ended(out) {
                    counts.java_committed += 1;
                    reported.push(committer);
                } else {
                    counts.java_failed += 1;
                }
                continue;
            }
            let took = ended_at - ours_started;
            ours_took = Some(ours_took.map_or(took, |t: std::time::Duration| t.min(took)));
            match ended(out) {
                Ended::Committed(snapshot) => {
                    counts.committed += 1;
                    let previous = ours_reported.insert(
                        snapshot,
                        (committer.commit_user.clone(), committer.identifier),
                    );
                    // Racing with the same payload, several may report its one snapshot.
                    assert!(
                        previous.is_none() || one_identifier == Some(true),
                        "two processes reported snapshot {snapshot}: {previous:?} and {} {}",
                        committer.commit_user,
                        committer.identifier
                    );
                    reported.push(committer);
                }
                Ended::AlreadyCommitted(snapshot) => {
                    assert_eq!(
                        one_identifier,
                        Some(true),
                        "already committed is reported only to a process with the very \
                         payload its identifier's snapshot holds"
                    );
                    counts.already_committed += 1;
                    ours_reported.insert(
                        snapshot,
                        (committer.commit_user.clone(), committer.identifier),
                    );
                    reported.push(committer);
                }
                Ended::Reused => {
                    assert_eq!(
                        one_identifier,
                        Some(false),
                        "reused only for other payloads"
                    );
                    counts.reused += 1;
                }
                Ended::Conflict => counts.conflicts += 1,
                Ended::Superseded => {
                    assert!(shared_user, "only a shared commit user can be superseded");
                    counts.superseded += 1;
                }
                Ended::Displaced => {
                    assert!(
                        java > 0 && !remote,
                        "only a Java coordinator on a local table replaces a snapshot"
                    );
                    counts.displaced += 1;
                    displaced.push(committer);
                }
            }
        }
        // Outcome unknown: the recovery the error names is a rerun with the same commit
        // user, identifier and payload. Alone on the table now, it must commit the payload
        // once (or find it committed), never lose it.
        for committer in displaced {
            let out = wait_all(vec![spawn_commit(&store, committer, version)])
                .pop()
                .expect("one rerun")
                .0;
            match ended(out) {
                Ended::Committed(snapshot) | Ended::AlreadyCommitted(snapshot) => {
                    counts.rerun_committed += 1;
                    ours_reported.insert(
                        snapshot,
                        (committer.commit_user.clone(), committer.identifier),
                    );
                    reported.push(committer);
                }
                other => panic!(
                    "the rerun of displaced {} {} ended {other:?}",
                    committer.commit_user, committer.identifier
                ),
            }
        }
        if let (Some(java_took), Some(ours_took)) = (java_took, ours_took) {
            // Java publishes about 0.2 s before its JVM exits; sweep the offset around that
            // point from round to round.
            let offset =
                std::time::Duration::from_millis(50 + 100 * (counts.java_committed as u64 % 5));
            head_start = java_took.saturating_sub(ours_took).saturating_sub(offset);
        }
    }

    let (snapshots, mut ids) = table_state(&store);
    let owners: BTreeMap<&(String, i64), i64> = snapshots.iter().map(|(id, o)| (o, *id)).collect();
    assert_eq!(
        owners.len(),
        snapshots.len(),
        "one commit in two snapshots: {snapshots:?}"
    );
    let java_owned = |snapshot: i64| {
        snapshots.get(&snapshot).is_some_and(|owner| {
            reported
                .iter()
                .any(|c| c.java && (&c.commit_user, c.identifier) == (&owner.0, owner.1))
        })
    };
    // Our reported snapshots: each is in the table as reported, or (only when Java
    // coordinators race too) was replaced by a Java coordinator's snapshot — our link(2)
    // never replaces a snapshot, Java 2.0's rename on a local filesystem can.
    for (snapshot, owner) in &ours_reported {
        if snapshots.get(snapshot) != Some(owner) {
            counts.lost += 1;
            assert!(
                java > 0 && java_owned(*snapshot),
                "our commit {owner:?} reported snapshot {snapshot}, the table has {:?}",
                snapshots.get(snapshot)
            );
        }
    }
    // Java's reported commits that are not in the table.
    counts.lost += reported
        .iter()
        .filter(|c| c.java && !owners.contains_key(&(c.commit_user.clone(), c.identifier)))
        .count();
    // Every snapshot is a reported success, and the rows are exactly those of the reported
    // successes that are in the table, each once.
    let mut expected_ids = Vec::new();
    for owner in snapshots.values() {
        let committer = reported
            .iter()
            .find(|c| (&c.commit_user, c.identifier) == (&owner.0, owner.1))
            .unwrap_or_else(|| panic!("snapshot of {owner:?} that no process reported"));
        expected_ids.extend(committer.ids.clone().map(|id| id as i64));
    }
    // Who published each snapshot, in order (J = Java, R = ours): interleaving within a
    // round shows that both kinds really raced.
    let publishers: String = if java > 0 {
        snapshots
            .keys()
            .map(|id| if java_owned(*id) { 'J' } else { 'R' })
            .collect()
    } else {
        "all ours".to_string()
    };
    eprintln!(
        "race on {} {}: {committers} committers ({java} Java 2.0) x {rounds} rounds, shared \
         user {shared_user}: {counts:?}; table has {} snapshots, {} rows; publishers \
         {publishers}",
        store.warehouse,
        store.table,
        snapshots.len(),
        ids.len()
    );
    ids.sort_unstable();
    expected_ids.sort_unstable();
    assert_eq!(ids.len(), expected_ids.len(), "row count");
    assert_eq!(ids, expected_ids, "rows");
    if java == 0 {
        assert_eq!(counts.lost, 0, "reported commits lost: {counts:?}");
        if one_identifier.is_none() {
            assert_eq!(snapshots.len(), counts.committed, "snapshots = successes");
        }
    }
    if let Some(same_payload) = one_identifier {
        // One snapshot per round at most; every reported success is that round's snapshot
        // (checked above: rows are exactly those of the snapshots' reporters). With other
        // payloads exactly one process of a round reports success.
        assert!(snapshots.len() <= rounds as usize, "{snapshots:?}");
        let successes = counts.committed + counts.already_committed;
        if !same_payload {
            assert_eq!(
                counts.committed,
                snapshots.len(),
                "one success per snapshot: {counts:?}"
            );
            assert_eq!(counts.already_committed, 0, "{counts:?}");
        }
        assert_eq!(
            successes + counts.reused + counts.conflicts,
            (committers * rounds) as usize,
            "{counts:?}"
        );
    }
    counts
}

/// Distinct commit users: `PAIMON_WIRE_RACE_ROUNDS` rounds of `PAIMON_WIRE_RACE_COMMITTERS`
/// (8 x 12 by default, 8 x 25 in the long run).
fn own_commit_users(remote: bool) {
    let committers = env_or("PAIMON_WIRE_RACE_COMMITTERS", 8);
    let rounds = env_or("PAIMON_WIRE_RACE_ROUNDS", short_or_long(12, 25));
    let counts = race(Race {
        remote,
        committers,
        rounds,
        shared_user: false,
        java: 0,
        one_identifier: None,
    });
    // Distinct commit users never supersede each other; with the default
    // commit.max-retries every process gets its snapshot in the end.
    assert_eq!(counts.superseded, 0);
    assert_eq!(
        counts.committed + counts.conflicts,
        (committers * rounds) as usize
    );
}

/// One commit user: at most 4 committers, `PAIMON_WIRE_RACE_SHARED_ROUNDS` rounds (default 5).
fn shared_commit_user(remote: bool) {
    let committers = env_or("PAIMON_WIRE_RACE_COMMITTERS", 8).min(4);
    let rounds = env_or("PAIMON_WIRE_RACE_SHARED_ROUNDS", 5);
    let counts = race(Race {
        remote,
        committers,
        rounds,
        shared_user: true,
        java: 0,
        one_identifier: None,
    });
    assert_eq!(
        counts.committed + counts.conflicts + counts.superseded,
        (committers * rounds) as usize
    );
    assert!(counts.committed >= rounds as usize, "{counts:?}");
}

/// One commit user and one identifier per round (`PAIMON_WIRE_RACE_ONE_ID_ROUNDS` rounds,
/// default 6, 200 with `PAIMON_WIRE_LONG_TESTS=1`, of 4 processes): with other payloads
/// exactly one process reports success and its rows are in the table; with the same payload
/// all may, and its rows are in once.
fn one_identifier(remote: bool, same_payload: bool) {
    let rounds = env_or("PAIMON_WIRE_RACE_ONE_ID_ROUNDS", short_or_long(6, 200));
    let counts = race(Race {
        remote,
        committers: 4,
        rounds,
        shared_user: true,
        java: 0,
        one_identifier: Some(same_payload),
    });
    assert_eq!(counts.superseded, 0, "{counts:?}");
}

#[test]
fn racing_coordinators_with_one_identifier_and_other_payloads_report_one_success() {
    one_identifier(false, false);
}

#[test]
fn racing_coordinators_with_one_identifier_and_the_same_payload_commit_it_once() {
    one_identifier(false, true);
}

/// [`one_identifier`] with other payloads on the remote warehouse of
/// `PAIMON_WIRE_RACE_WAREHOUSE`.
#[test]
#[ignore = "needs a remote warehouse: run by scripts/test-s3-minio and scripts/test-rest"]
fn remote_racing_coordinators_with_one_identifier_and_other_payloads_report_one_success() {
    one_identifier(true, false);
}

/// [`one_identifier`] with the same payload on the remote warehouse of
/// `PAIMON_WIRE_RACE_WAREHOUSE`.
#[test]
#[ignore = "needs a remote warehouse: run by scripts/test-s3-minio and scripts/test-rest"]
fn remote_racing_coordinators_with_one_identifier_and_the_same_payload_commit_it_once() {
    one_identifier(true, true);
}

#[test]
fn concurrent_coordinators_with_their_own_commit_users_lose_no_commit() {
    own_commit_users(false);
}

#[test]
fn concurrent_coordinators_sharing_a_commit_user_commit_or_refuse_each_identifier() {
    shared_commit_user(false);
}

/// [`own_commit_users`] on the remote warehouse of `PAIMON_WIRE_RACE_WAREHOUSE`.
#[test]
#[ignore = "needs a remote warehouse: run by scripts/test-s3-minio and scripts/test-rest"]
fn remote_concurrent_coordinators_with_their_own_commit_users_lose_no_commit() {
    own_commit_users(true);
}

/// [`shared_commit_user`] on the remote warehouse of `PAIMON_WIRE_RACE_WAREHOUSE`.
#[test]
#[ignore = "needs a remote warehouse: run by scripts/test-s3-minio and scripts/test-rest"]
fn remote_concurrent_coordinators_sharing_a_commit_user_commit_or_refuse_each_identifier() {
    shared_commit_user(true);
}

/// 3 of our coordinators and 3 of Paimon Java 2.0's (`StreamTableCommit.filterAndCommit`)
/// per round, `PAIMON_WIRE_RACE_JAVA_ROUNDS` rounds (default 6).
fn racing_java(remote: bool) -> RaceCounts {
    assert!(java_harness().is_some(), "set PAIMON_WIRE_JAVA_HARNESS");
    let counts = race(Race {
        remote,
        committers: 6,
        rounds: env_or("PAIMON_WIRE_RACE_JAVA_ROUNDS", 6),
        shared_user: false,
        java: 3,
        one_identifier: None,
    });
    assert_eq!(counts.superseded, 0);
    // A race where no Java coordinator committed raced nothing (a harness that cannot start
    // fails every Java process).
    assert!(
        counts.java_committed > 0,
        "no Java coordinator committed: {counts:?}"
    );
    counts
}

/// Our coordinators racing Java's on one local table. Run by `scripts/java-interop` (needs
/// Java and the harness):
/// `PAIMON_WIRE_JAVA_HARNESS=compat/java/harness.sh cargo test --test concurrent_commits -- --ignored --exact our_coordinators_racing_java_coordinators`.
#[test]
#[ignore = "needs Paimon Java 2.0: run by scripts/java-interop"]
fn our_coordinators_racing_java_coordinators() {
    racing_java(false);
}

/// Our coordinators racing Java's on the remote warehouse of `PAIMON_WIRE_RACE_WAREHOUSE`:
/// through a REST catalog every snapshot is published by the server, so no commit of either
/// side may be lost. Run by `scripts/test-rest`.
#[test]
#[ignore = "needs Paimon Java 2.0 and a REST catalog: run by scripts/test-rest"]
fn rest_catalog_our_coordinators_racing_java_coordinators() {
    let counts = racing_java(true);
    assert_eq!(counts.lost, 0, "{counts:?}");
    assert_eq!(counts.java_failed, 0, "{counts:?}");
}
