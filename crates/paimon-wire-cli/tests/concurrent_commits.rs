//! Concurrent coordinators on one table: K `paimon-wire commit` processes, each with its own
//! payload, start together, round after round. Afterwards every reported success must be a
//! snapshot of the table carrying that process's commit user and identifier, the snapshot
//! count must equal the number of successes, and every row of every successful payload must
//! be in the table exactly once (and no row of a payload that was not committed).
//!
//! Each leg is bounded: `PAIMON_WIRE_RACE_ROUNDS` (default 25) rounds of
//! `PAIMON_WIRE_RACE_COMMITTERS` (default 8) processes.

mod common;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};

use arrow_array::{Int64Array, RecordBatch};
use common::{path_in, run, success};
use futures::TryStreamExt;
use paimon_wire::coordinator::open_table;

const TABLE: &str = "demo.events";
/// Rows in each payload.
const ROWS_PER_PAYLOAD: u64 = 20;

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
    /// Exit 3: lost the race on every allowed attempt; nothing committed.
    Conflict,
    /// Exit 1, the identifier was superseded by a higher one of the same commit user.
    Superseded,
}

/// One commit process: its payload's row ids, commit user and identifier.
struct Committer {
    ids: std::ops::Range<u64>,
    commit_user: String,
    identifier: i64,
    payload: String,
}

fn spawn_commit(warehouse: &str, committer: &Committer) -> Child {
    let identifier = committer.identifier.to_string();
    Command::new(env!("CARGO_BIN_EXE_paimon-wire"))
        .args([
            "commit",
            "--warehouse",
            warehouse,
            "--table",
            TABLE,
            "--commit-user",
            &committer.commit_user,
            "--identifier",
            &identifier,
            "--version",
            "14",
            &committer.payload,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the paimon-wire binary starts")
}

fn ended(child: Child) -> Ended {
    let out = child.wait_with_output().expect("commit process ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
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
        other => panic!("commit process ended with {other:?}: {stdout} {stderr}"),
    }
}

/// Snapshot id -> (commit user, commit identifier), and every row id in the table.
fn table_state(warehouse: &str) -> (BTreeMap<i64, (String, i64)>, Vec<i64>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let table = open_table(warehouse, TABLE).await.unwrap();
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
        let builder = table.new_read_builder();
        let plan = builder.new_scan().plan().await.unwrap();
        let batches: Vec<RecordBatch> = builder
            .new_read()
            .unwrap()
            .to_arrow(plan.splits())
            .unwrap()
            .try_collect()
            .await
            .unwrap();
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
    })
}

/// Counts of one race.
#[derive(Debug, Default)]
struct RaceCounts {
    committed: usize,
    conflicts: usize,
    superseded: usize,
}

/// Creates the demo table in a new warehouse, writes `rounds × committers` payloads with
/// disjoint row ids (real worker processes), then runs the rounds and checks the table.
/// With `shared_user`, every process commits as one commit user with increasing
/// identifiers; otherwise each process has its own commit user.
fn race(committers: u32, rounds: u32, shared_user: bool) -> RaceCounts {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "warehouse");
    success(&run(
        &["demo", "--rows", "0", "--warehouse", &warehouse],
        None,
    ));
    let payloads = committers * rounds;
    let total_rows = u64::from(payloads) * ROWS_PER_PAYLOAD;
    let mut plan: Vec<Vec<Committer>> = Vec::new();
    for round in 0..rounds {
        let mut workers = Vec::new();
        let mut round_plan = Vec::new();
        for k in 0..committers {
            let index = round * committers + k;
            let payload = path_in(&dir, &format!("payload-{index}.bin"));
            let commit_user = if shared_user {
                "race-shared".to_string()
            } else {
                format!("race-{k}")
            };
            workers.push(
                Command::new(env!("CARGO_BIN_EXE_paimon-wire"))
                    .args([
                        "worker",
                        "--warehouse",
                        &warehouse,
                        "--table",
                        TABLE,
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
                        "--output",
                        &payload,
                    ])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
            let first = u64::from(index) * ROWS_PER_PAYLOAD;
            round_plan.push(Committer {
                ids: first..first + ROWS_PER_PAYLOAD,
                commit_user,
                // Identifiers increase per commit user across rounds (and, for the shared
                // user, across the processes of a round too).
                identifier: i64::from(index) + 1,
                payload,
            });
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
    let mut expected_snapshots = BTreeMap::new();
    let mut expected_ids = Vec::new();
    for round in &plan {
        let children: Vec<Child> = round
            .iter()
            .map(|committer| spawn_commit(&warehouse, committer))
            .collect();
        for (committer, child) in round.iter().zip(children) {
            match ended(child) {
                Ended::Committed(snapshot) => {
                    counts.committed += 1;
                    let previous = expected_snapshots.insert(
                        snapshot,
                        (committer.commit_user.clone(), committer.identifier),
                    );
                    assert!(
                        previous.is_none(),
                        "two processes reported snapshot {snapshot}: {previous:?} and {} {}",
                        committer.commit_user,
                        committer.identifier
                    );
                    expected_ids.extend(committer.ids.clone().map(|id| id as i64));
                }
                Ended::Conflict => counts.conflicts += 1,
                Ended::Superseded => {
                    assert!(shared_user, "only a shared commit user can be superseded");
                    counts.superseded += 1;
                }
            }
        }
    }

    let (snapshots, mut ids) = table_state(&warehouse);
    eprintln!(
        "race: {committers} committers x {rounds} rounds, shared user {shared_user}: \
         {} committed, {} conflicts, {} superseded; table has {} snapshots, {} rows",
        counts.committed,
        counts.conflicts,
        counts.superseded,
        snapshots.len(),
        ids.len()
    );
    // Every reported success is in the table as reported, and nothing else is.
    let lost: Vec<_> = expected_snapshots
        .iter()
        .filter(|(id, owner)| snapshots.get(id) != Some(owner))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} reported commits are not in the table as reported: {lost:?}; table: {snapshots:?}",
        lost.len(),
        counts.committed
    );
    assert_eq!(
        snapshots, expected_snapshots,
        "snapshots beyond the reported ones"
    );
    // Every row of every committed payload exactly once, and nothing else.
    ids.sort_unstable();
    expected_ids.sort_unstable();
    assert_eq!(ids.len(), expected_ids.len(), "row count");
    assert_eq!(ids, expected_ids, "rows");
    counts
}

#[test]
fn concurrent_coordinators_with_their_own_commit_users_lose_no_commit() {
    let committers = env_or("PAIMON_WIRE_RACE_COMMITTERS", 8);
    let rounds = env_or("PAIMON_WIRE_RACE_ROUNDS", 25);
    let counts = race(committers, rounds, false);
    // Distinct commit users never supersede each other; with the default
    // commit.max-retries every process gets its snapshot in the end.
    assert_eq!(counts.superseded, 0);
    assert_eq!(
        counts.committed + counts.conflicts,
        (committers * rounds) as usize
    );
}

#[test]
fn concurrent_coordinators_sharing_a_commit_user_commit_or_refuse_each_identifier() {
    let committers = env_or("PAIMON_WIRE_RACE_COMMITTERS", 8).min(4);
    let rounds = env_or("PAIMON_WIRE_RACE_ROUNDS", 25).min(5);
    let counts = race(committers, rounds, true);
    assert_eq!(
        counts.committed + counts.conflicts + counts.superseded,
        (committers * rounds) as usize
    );
    assert!(counts.committed >= rounds as usize, "{counts:?}");
}
