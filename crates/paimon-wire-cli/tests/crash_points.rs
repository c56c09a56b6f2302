//! A coordinator killed (SIGKILL) at each crash point of a commit, then run again with the
//! same identifier, commits exactly once.
//!
//! The kill comes from an LD_PRELOAD shim (`tests/crash/publish_crash.c`, built here with the
//! system C compiler) around link(2), which the patched paimon crate uses to publish
//! `snapshot-N` on a local filesystem:
//! - `before-publish`: manifests and manifest lists are written, the snapshot is not;
//! - `after-publish`: the snapshot is published, the process never reports it;
//! - `before-second-publish`: a commit with compaction results has published its APPEND
//!   snapshot and is killed before publishing its COMPACT snapshot;
//! - `always-lose` (no crash): every publication loses the race, as if other committers always
//!   got there first, which must end in a commit-conflict error with nothing committed.
//!
//! On an object store the same crash points, and the network's faults, come from a proxy
//! between the coordinator and the store: [`object_store`].

mod common;
#[path = "crash/object_store.rs"]
mod object_store;

use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use arrow_array::RecordBatch;
use common::{path_in, read_table, run, success};
use paimon_wire::coordinator::open_table;
use paimon_wire::paimon::catalog::{Catalog, Identifier};
use paimon_wire::paimon::spec::SchemaChange;
use paimon_wire::paimon::{CatalogOptions, FileSystemCatalog, Options};

const TABLE: &str = "demo.events";
const USER: &str = "crash-test-job";
const ROWS: u64 = 40;

/// Builds the shim into `dir` and returns its path.
fn build_shim(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/crash/publish_crash.c");
    let shim = dir.join("libpublish_crash.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&shim)
        .arg(&source)
        .arg("-ldl")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc:?}: {e}"));
    assert!(
        out.status.success(),
        "building the crash shim failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    shim
}

/// Writes payload `index` of `of` (rows `index*ROWS..`) with a real worker process.
fn write_payload(dir: &tempfile::TempDir, warehouse: &str, index: u32, of: u32) -> String {
    let payload = path_in(dir, &format!("payload-{index}.bin"));
    success(&run(
        &[
            "worker",
            "--warehouse",
            warehouse,
            "--table",
            TABLE,
            "--commit-user",
            USER,
            "--index",
            &index.to_string(),
            "--workers",
            &of.to_string(),
            "--rows",
            &(ROWS * u64::from(of)).to_string(),
            "--partitions",
            "2",
            "--output",
            &payload,
        ],
        None,
    ));
    payload
}

/// `paimon-wire commit` of `payload` under `identifier`, killed at `crash_at` if given.
fn commit(warehouse: &str, payload: &str, identifier: i64, crash: Option<(&Path, &str)>) -> Output {
    commit_with(warehouse, payload, identifier, crash, &[])
}

/// `commit` with the further options `options` (such as `--allow-compaction`).
fn commit_with(
    warehouse: &str,
    payload: &str,
    identifier: i64,
    crash: Option<(&Path, &str)>,
    options: &[&str],
) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_paimon-wire"));
    command
        .args([
            "commit",
            "--warehouse",
            warehouse,
            "--table",
            TABLE,
            "--commit-user",
            USER,
            "--identifier",
            &identifier.to_string(),
            "--version",
            "14",
        ])
        .args(options)
        .arg(payload)
        .stdin(Stdio::null());
    if let Some((shim, point)) = crash {
        command
            .env("LD_PRELOAD", shim)
            .env("PAIMON_WIRE_CRASH_AT", point);
    }
    command.output().expect("paimon-wire runs")
}

fn killed(out: &Output) {
    assert_eq!(
        out.status.signal(),
        Some(9),
        "expected SIGKILL, got {:?}: {} {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Snapshot ids, the manifest lists they reference, and the row count.
struct State {
    snapshots: Vec<i64>,
    referenced_lists: BTreeSet<String>,
    rows: usize,
}

fn state(warehouse: &str) -> State {
    let (table, batches) = read_table(warehouse, TABLE);
    common::block_on(async {
        let manager = table.snapshot_manager();
        let snapshots = manager.list_all_ids().await.unwrap();
        let mut referenced_lists = BTreeSet::new();
        for id in &snapshots {
            let snapshot = manager.get_snapshot(*id).await.unwrap();
            referenced_lists.insert(snapshot.base_manifest_list().to_string());
            referenced_lists.insert(snapshot.delta_manifest_list().to_string());
        }
        State {
            snapshots,
            referenced_lists,
            rows: batches.iter().map(RecordBatch::num_rows).sum(),
        }
    })
}

/// The manifest lists in the table's manifest directory.
fn manifest_lists(warehouse: &str) -> BTreeSet<String> {
    let dir = Path::new(warehouse).join("demo.db/events/manifest");
    std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with("manifest-list-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_coordinator_killed_at_each_crash_point_commits_exactly_once_on_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "warehouse");
    let shim = build_shim(dir.path());
    success(&run(
        &["demo", "--rows", "0", "--warehouse", &warehouse],
        None,
    ));
    let first = write_payload(&dir, &warehouse, 0, 2);
    let second = write_payload(&dir, &warehouse, 1, 2);

    // 1. Killed after the manifests are written, before the snapshot is published.
    killed(&commit(
        &warehouse,
        &first,
        1,
        Some((&shim, "before-publish")),
    ));
    let after_crash = state(&warehouse);
    assert!(after_crash.snapshots.is_empty(), "nothing was published");
    assert_eq!(after_crash.rows, 0);
    let orphans = manifest_lists(&warehouse);
    assert!(
        !orphans.is_empty(),
        "the killed commit had written its manifest lists"
    );
    // The rerun commits once; the killed attempt's manifest lists stay behind, referenced by
    // no snapshot (Paimon's orphan-file cleanup removes them).
    let rerun = success(&commit(&warehouse, &first, 1, None));
    assert!(rerun.contains("committed snapshot 1:"), "{rerun}");
    let after_rerun = state(&warehouse);
    assert_eq!(after_rerun.snapshots, vec![1]);
    assert_eq!(after_rerun.rows, ROWS as usize);
    assert!(manifest_lists(&warehouse).is_superset(&orphans));
    assert!(
        orphans.is_disjoint(&after_rerun.referenced_lists),
        "no snapshot references the killed attempt's manifest lists"
    );
    // A second rerun commits nothing.
    let again = success(&commit(&warehouse, &first, 1, None));
    assert!(again.contains("already committed in snapshot 1"), "{again}");

    // 2. Killed right after publishing, before reporting.
    killed(&commit(
        &warehouse,
        &second,
        2,
        Some((&shim, "after-publish")),
    ));
    let after_crash = state(&warehouse);
    assert_eq!(
        after_crash.snapshots,
        vec![1, 2],
        "the snapshot was published"
    );
    assert_eq!(after_crash.rows, 2 * ROWS as usize);
    let rerun = success(&commit(&warehouse, &second, 2, None));
    assert!(rerun.contains("already committed in snapshot 2"), "{rerun}");
    let end = state(&warehouse);
    assert_eq!(end.snapshots, vec![1, 2]);
    assert_eq!(end.rows, 2 * ROWS as usize, "every row exactly once");
}

/// Sets table option `key` of the demo table.
fn set_table_option(warehouse: &str, key: &str, value: &str) {
    common::block_on(async {
        let mut options = Options::new();
        options.set(CatalogOptions::WAREHOUSE, warehouse);
        let catalog = FileSystemCatalog::new(options).unwrap();
        catalog
            .alter_table(
                &Identifier::new("demo", "events"),
                vec![SchemaChange::set_option(key.to_string(), value.to_string())],
                false,
            )
            .await
            .unwrap();
    })
}

#[test]
fn a_commit_that_loses_every_race_is_a_commit_conflict_and_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "warehouse");
    let shim = build_shim(dir.path());
    success(&run(
        &["demo", "--rows", "0", "--warehouse", &warehouse],
        None,
    ));
    // Few, short retries keep the test fast; the count is the table's own option.
    set_table_option(&warehouse, "commit.max-retries", "2");
    set_table_option(&warehouse, "commit.min-retry-wait", "1 ms");
    let payload = write_payload(&dir, &warehouse, 0, 1);

    let out = commit(&warehouse, &payload, 1, Some((&shim, "always-lose")));
    assert_eq!(out.status.code(), Some(3), "exit code of a commit conflict");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("commit conflict"), "{stderr}");
    assert!(stderr.contains("2 retries"), "{stderr}");
    assert!(
        out.stdout.ends_with(b"row(s)\n"),
        "only the payload line was printed"
    );
    let after = state(&warehouse);
    assert!(after.snapshots.is_empty(), "nothing was committed");

    // The files were kept: the same commit succeeds once the race is over.
    let rerun = success(&commit(&warehouse, &payload, 1, None));
    assert!(rerun.contains("committed snapshot 1:"), "{rerun}");
    let end = state(&warehouse);
    assert_eq!(end.snapshots, vec![1]);
    assert_eq!(end.rows, ROWS as usize);
}

/// The commit messages of the payload file at `path` (written at version 14).
fn decode(path: &str) -> Vec<paimon_wire::CommitMessage> {
    let bytes = std::fs::read(path).unwrap();
    paimon_wire::deserialize_list(paimon_wire::SerializerVersion::V14, &bytes).unwrap()
}

#[test]
fn a_coordinator_killed_between_the_append_and_the_compact_snapshot_completes_on_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "warehouse");
    let shim = build_shim(dir.path());
    success(&run(
        &["demo", "--rows", "0", "--warehouse", &warehouse],
        None,
    ));
    let first = write_payload(&dir, &warehouse, 0, 2);
    success(&commit(&warehouse, &first, 1, None));
    // Identifier 2: new rows, plus a compaction of the first payload's files into files
    // holding the same rows (written by a second run of the same worker), as a compacting
    // Java writer reports one.
    let second = write_payload(&dir, &warehouse, 1, 2);
    let rewrite_dir = tempfile::tempdir().unwrap();
    let rewrite = write_payload(&rewrite_dir, &warehouse, 0, 2);
    let mut messages = decode(&second);
    let rewritten = decode(&rewrite);
    let mut compacted = 0;
    for before in decode(&first) {
        let after = rewritten
            .iter()
            .find(|m| m.partition == before.partition && m.bucket == before.bucket)
            .expect("the rewrite writes the same partitions");
        let mut compaction =
            paimon_wire::CommitMessage::new(before.partition.clone(), before.bucket, vec![]);
        compacted += before.new_files.len();
        compaction.compact_before = before.new_files;
        compaction.compact_after = after.new_files.clone();
        messages.push(compaction);
    }
    assert!(compacted > 0);
    let combined = path_in(&dir, "with-compaction.bin");
    std::fs::write(
        &combined,
        paimon_wire::serialize_list(&messages, paimon_wire::SerializerVersion::V14).unwrap(),
    )
    .unwrap();

    // Compaction is opt-in: without --allow-compaction the payload is refused by name, and
    // the deprecated --refuse-compaction changes nothing but prints a note.
    let refused = common::failure(&commit(&warehouse, &combined, 2, None), 1);
    assert!(
        refused.contains("rule compact-increment broken") && refused.contains("--allow-compaction"),
        "{refused}"
    );
    let deprecated = commit_with(&warehouse, &combined, 2, None, &["--refuse-compaction"]);
    let stderr = String::from_utf8_lossy(&deprecated.stderr);
    assert_eq!(deprecated.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--refuse-compaction is deprecated and does nothing")
            && stderr.contains("rule compact-increment broken"),
        "{stderr}"
    );
    let both = commit_with(
        &warehouse,
        &combined,
        2,
        None,
        &["--refuse-compaction", "--allow-compaction"],
    );
    common::failure(&both, 2);
    let validate = |options: &[&str]| {
        let mut args = vec!["validate", "--warehouse", &warehouse, "--table", TABLE];
        args.extend(["--version", "14"]);
        args.extend(options);
        args.push(&combined);
        run(&args, None)
    };
    let refused = common::failure(&validate(&[]), 1);
    assert!(
        refused.contains("rule compact-increment broken"),
        "{refused}"
    );
    let valid = success(&validate(&["--allow-compaction"]));
    assert!(valid.contains("valid: 1 payload(s)"), "{valid}");
    assert_eq!(state(&warehouse).snapshots, vec![1], "nothing committed");

    // Killed when publishing the COMPACT snapshot: the APPEND snapshot is in.
    killed(&commit_with(
        &warehouse,
        &combined,
        2,
        Some((&shim, "before-second-publish")),
        &["--allow-compaction"],
    ));
    let after_crash = state(&warehouse);
    assert_eq!(after_crash.snapshots, vec![1, 2]);
    assert_eq!(after_crash.rows, 2 * ROWS as usize);
    let kind = |id: i64| {
        common::block_on(async {
            let table = open_table(&warehouse, TABLE).await.unwrap();
            let snapshot = table.snapshot_manager().get_snapshot(id).await.unwrap();
            (
                snapshot.commit_kind().to_string(),
                snapshot.commit_identifier(),
            )
        })
    };
    assert_eq!(kind(2), ("APPEND".to_string(), 2));

    // The rerun commits the COMPACT part only.
    let rerun = success(&commit_with(
        &warehouse,
        &combined,
        2,
        None,
        &["--allow-compaction"],
    ));
    assert!(rerun.contains("committed snapshot 3:"), "{rerun}");
    let end = state(&warehouse);
    assert_eq!(end.snapshots, vec![1, 2, 3]);
    assert_eq!(kind(3), ("COMPACT".to_string(), 2));
    assert_eq!(end.rows, 2 * ROWS as usize, "every row exactly once");
    let again = success(&commit_with(
        &warehouse,
        &combined,
        2,
        None,
        &["--allow-compaction"],
    ));
    assert!(again.contains("already committed in snapshot 3"), "{again}");
    assert_eq!(state(&warehouse).snapshots, vec![1, 2, 3]);
}
