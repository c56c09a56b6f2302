//! `paimon-wire compact` (issue 41): after many write jobs, a full compaction leaves each
//! bucket one file (the rows fit `target-file-size`; a primary-key bucket one sorted run at
//! the highest level) holding exactly the rows a reader saw before, read back by the paimon
//! crate; a second compaction finds nothing to do; a table it cannot compact yet is refused
//! by name before anything is written. Real worker and compaction processes of the built
//! binary.

mod common;

use std::collections::{BTreeMap, HashMap};

use arrow_array::RecordBatch;
use common::{block_on, failure, path_in, read_table, run, success};
use paimon_wire::coordinator::{create_table_with_options, TableDefinition};

const USER: &str = "job";

/// The demo's columns (what `paimon-wire worker` writes), with `options`.
fn create(warehouse: &str, name: &str, primary_keys: &[&str], options: &[(&str, &str)]) {
    use arrow_schema::{DataType, Field, Schema};
    let definition = TableDefinition {
        columns: Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("region", DataType::Utf8, false),
            Field::new("amount", DataType::Float64, true),
            Field::new("note", DataType::Utf8, true),
        ]),
        partition_keys: vec!["region".into()],
        primary_keys: primary_keys.iter().map(|k| k.to_string()).collect(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<HashMap<_, _>>(),
    };
    block_on(create_table_with_options(
        warehouse,
        name,
        &definition,
        false,
        &Default::default(),
    ))
    .unwrap();
}

/// Job `job` of a table: one worker writing `rows` rows over 2 partitions, committed.
fn write_job(dir: &tempfile::TempDir, warehouse: &str, table: &str, job: u32, rows: u32) {
    let payload = path_in(dir, &format!("{table}-{job}.bin"));
    let (index, rows) = (job.to_string(), rows.to_string());
    success(&run(
        &[
            "worker",
            "--warehouse",
            warehouse,
            "--table",
            table,
            "--commit-user",
            USER,
            "--index",
            "0",
            "--workers",
            "1",
            "--rows",
            &rows,
            "--partitions",
            "2",
            "--output",
            &payload,
        ],
        None,
    ));
    success(&run(
        &[
            "commit",
            "--warehouse",
            warehouse,
            "--table",
            table,
            "--commit-user",
            USER,
            "--identifier",
            &index,
            "--version",
            "14",
            &payload,
        ],
        None,
    ));
}

/// `paimon-wire compact --warehouse W --table T` with `extra` arguments.
fn compact(warehouse: &str, table: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["compact", "--warehouse", warehouse, "--table", table];
    args.extend(extra);
    run(&args, None)
}

/// Every row of the table as sorted text lines: the multiset a compaction must keep.
fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut lines = Vec::new();
    for batch in batches {
        let columns: Vec<_> = batch
            .columns()
            .iter()
            .map(|c| {
                arrow_cast::display::ArrayFormatter::try_new(c.as_ref(), &Default::default())
                    .unwrap()
            })
            .collect();
        for row in 0..batch.num_rows() {
            lines.push(
                columns
                    .iter()
                    .map(|c| c.value(row).to_string())
                    .collect::<Vec<_>>()
                    .join("|"),
            );
        }
    }
    lines.sort();
    lines
}

/// Live data files per (partition, bucket) of the table's latest snapshot.
fn files_per_bucket(warehouse: &str, table: &str) -> BTreeMap<(Vec<u8>, i32), usize> {
    levels_per_bucket(warehouse, table)
        .into_iter()
        .map(|(bucket, levels)| (bucket, levels.len()))
        .collect()
}

/// The level of every live data file, per (partition, bucket).
fn levels_per_bucket(warehouse: &str, table: &str) -> BTreeMap<(Vec<u8>, i32), Vec<i32>> {
    let table = block_on(paimon_wire::coordinator::open_table(warehouse, table)).unwrap();
    let plan = block_on(table.new_read_builder().new_scan().plan()).unwrap();
    let mut files: BTreeMap<(Vec<u8>, i32), Vec<i32>> = BTreeMap::new();
    for split in plan.splits() {
        files
            .entry((split.partition().to_serialized_bytes(), split.bucket()))
            .or_default()
            .extend(split.data_files().iter().map(|f| f.level));
    }
    files
}

#[test]
fn twenty_jobs_then_a_full_compaction_leave_one_file_per_bucket_and_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "wh");
    for (table, options) in [
        ("db.unaware", vec![("bucket", "-1")]),
        ("db.fixed", vec![("bucket", "2"), ("bucket-key", "id")]),
    ] {
        create(&warehouse, table, &[], &options);
        for job in 1..=20 {
            write_job(&dir, &warehouse, table, job, 200);
        }
        let before = rows(&read_table(&warehouse, table).1);
        assert_eq!(before.len(), 20 * 200, "{table}");
        let files_before = files_per_bucket(&warehouse, table);
        assert!(
            files_before.values().all(|&n| n >= 10),
            "{table}: {files_before:?}"
        );

        let out = success(&compact(
            &warehouse,
            table,
            &["--full", "--parallelism", "2"],
        ));
        assert!(out.contains("compacted"), "{table}: {out}");
        let files_after = files_per_bucket(&warehouse, table);
        assert_eq!(
            files_after.keys().collect::<Vec<_>>(),
            files_before.keys().collect::<Vec<_>>(),
            "{table}: the same buckets"
        );
        assert!(
            files_after.values().all(|&n| n == 1),
            "{table}: {files_after:?}"
        );
        assert_eq!(
            rows(&read_table(&warehouse, table).1),
            before,
            "{table}: the same rows"
        );

        let again = success(&compact(&warehouse, table, &["--full"]));
        assert!(again.contains("nothing to compact"), "{table}: {again}");

        // Writers go on after the compaction; the next compaction takes their files and the
        // compacted one.
        write_job(&dir, &warehouse, table, 21, 200);
        success(&compact(&warehouse, table, &["--full"]));
        assert!(files_per_bucket(&warehouse, table)
            .values()
            .all(|&n| n == 1));
        assert_eq!(rows(&read_table(&warehouse, table).1).len(), 21 * 200);
    }
}

#[test]
fn a_primary_key_table_compacts_into_one_sorted_run_at_the_highest_level_keeping_each_keys_value() {
    for (table, bucket) in [("db.pk", "2"), ("db.dynamic", "-1")] {
        primary_key_table_compacts(table, bucket);
    }
}

/// 20 jobs over the same keys, then compactions; see the test above.
fn primary_key_table_compacts(table: &str, bucket: &str) {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "wh");
    create(&warehouse, table, &["region", "id"], &[("bucket", bucket)]);
    // Twenty jobs over the same keys: every job's rows replace the previous job's.
    for job in 1..=20 {
        write_job(&dir, &warehouse, table, job, 300);
    }
    let before = rows(&read_table(&warehouse, table).1);
    assert_eq!(before.len(), 300, "each key once");
    let levels_before = levels_per_bucket(&warehouse, table);
    assert!(
        levels_before.values().all(|l| l.len() >= 10),
        "{levels_before:?}"
    );

    // Not full: at least num-sorted-run.compaction-trigger (5) runs: every bucket.
    let out = success(&compact(&warehouse, table, &[]));
    assert!(out.contains("compacted"), "{out}");
    let levels = levels_per_bucket(&warehouse, table);
    assert_eq!(
        levels.keys().collect::<Vec<_>>(),
        levels_before.keys().collect::<Vec<_>>()
    );
    // num-levels defaults to the trigger + 1 = 6: the highest level is 5.
    assert!(levels.values().all(|l| l == &vec![5]), "{levels:?}");
    assert_eq!(
        rows(&read_table(&warehouse, table).1),
        before,
        "each key keeps its value"
    );
    let again = success(&compact(&warehouse, table, &["--full"]));
    assert!(again.contains("nothing to compact"), "{again}");

    // A later job's updates win over the compacted run, and compact with it.
    write_job(&dir, &warehouse, table, 21, 300);
    let updated = rows(&read_table(&warehouse, table).1);
    success(&compact(&warehouse, table, &["--full"]));
    assert!(levels_per_bucket(&warehouse, table)
        .values()
        .all(|l| l == &vec![5]));
    assert_eq!(rows(&read_table(&warehouse, table).1), updated);
}

#[test]
fn a_bucket_is_compacted_once_it_has_compaction_min_file_num_small_files() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "wh");
    let table = "db.events";
    create(
        &warehouse,
        table,
        &[],
        &[("bucket", "-1"), ("compaction.min.file-num", "4")],
    );
    for job in 1..=3 {
        write_job(&dir, &warehouse, table, job, 50);
    }
    let out = success(&compact(&warehouse, table, &[]));
    assert!(
        out.contains("nothing to compact"),
        "three files a bucket: {out}"
    );
    write_job(&dir, &warehouse, table, 4, 50);
    let out = success(&compact(&warehouse, table, &[]));
    assert!(
        out.contains("compacted 8 file(s)"),
        "four files in each of 2 buckets: {out}"
    );
}

#[test]
fn tables_it_cannot_compact_yet_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "wh");
    create(
        &warehouse,
        "db.changelog",
        &["region", "id"],
        &[("bucket", "2"), ("changelog-producer", "lookup")],
    );
    create(
        &warehouse,
        "db.postpone",
        &["region", "id"],
        &[("bucket", "-2")],
    );
    for (table, named) in [
        ("db.changelog", "changelog-producer lookup"),
        ("db.postpone", "bucket = -2"),
    ] {
        let line = failure(&compact(&warehouse, table, &[]), 1);
        assert!(line.contains(named), "{table}: {line}");
        assert!(line.contains("cannot be compacted"), "{table}: {line}");
    }
}

/// Every merge engine, `sequence.field` and deletion vectors through the CLI: eight jobs over
/// the same keys, one full compaction into one sorted run at the highest level, read back
/// with the rows a reader saw before; then a ninth job merges into the compacted run. (The
/// rows' values are the library tests' business: `tests/coordinator/native_compaction.rs`.)
#[test]
fn every_merge_engine_compacts_keeping_what_a_reader_sees() {
    for (table, options) in [
        ("db.partial", vec![("merge-engine", "partial-update")]),
        (
            "db.aggregate",
            vec![
                ("merge-engine", "aggregation"),
                ("fields.amount.aggregate-function", "sum"),
            ],
        ),
        ("db.first", vec![("merge-engine", "first-row")]),
        ("db.sequenced", vec![("sequence.field", "amount")]),
        ("db.vectors", vec![("deletion-vectors.enabled", "true")]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let warehouse = path_in(&dir, "wh");
        let mut options = options;
        options.push(("bucket", "2"));
        create(&warehouse, table, &["region", "id"], &options);
        for job in 1..=8 {
            write_job(&dir, &warehouse, table, job, 100);
        }
        let before = rows(&read_table(&warehouse, table).1);
        let out = success(&compact(&warehouse, table, &["--full"]));
        assert!(out.contains("compacted"), "{table}: {out}");
        let levels = levels_per_bucket(&warehouse, table);
        assert!(
            levels.values().all(|l| l == &vec![5]),
            "{table}: {levels:?}"
        );
        let after = rows(&read_table(&warehouse, table).1);
        assert_eq!(after.len(), 100, "{table}: each key once");
        if matches!(table, "db.first" | "db.vectors") {
            // Readers of first-row and deletion-vector tables skip level 0, where the jobs
            // wrote: the compaction is what makes their rows visible.
            assert!(before.is_empty(), "{table}: level 0 unread");
        } else {
            assert_eq!(after, before, "{table}: what a reader sees");
        }

        write_job(&dir, &warehouse, table, 9, 100);
        let merged = rows(&read_table(&warehouse, table).1);
        success(&compact(&warehouse, table, &["--full"]));
        assert_eq!(rows(&read_table(&warehouse, table).1), merged, "{table}");
    }
}

/// Two compactions of one table at once: both plan the same snapshot, both rewrite; the
/// first to commit wins and the other is refused (its inputs are no longer live), exit code
/// 1, no panic. A writer committing meanwhile keeps its rows, and every row is there once.
#[test]
fn racing_compactions_and_a_writer_keep_every_row_once() {
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "wh");
    for (table, keys, options) in [
        (
            "db.append",
            &[][..],
            &[("bucket", "2"), ("bucket-key", "id")][..],
        ),
        ("db.pk", &["region", "id"][..], &[("bucket", "2")][..]),
    ] {
        create(&warehouse, table, keys, options);
        for job in 1..=12 {
            write_job(&dir, &warehouse, table, job, 200);
        }
        let spawn_compaction = || {
            Command::new(common::BIN)
                .args([
                    "compact",
                    "--warehouse",
                    &warehouse,
                    "--table",
                    table,
                    "--full",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (first, second) = (spawn_compaction(), spawn_compaction());
        // A writer commits while the two compact.
        write_job(&dir, &warehouse, table, 13, 200);
        let outcomes = [
            first.wait_with_output().unwrap(),
            second.wait_with_output().unwrap(),
        ];
        let succeeded = outcomes.iter().filter(|o| o.status.success()).count();
        assert!(succeeded >= 1, "{table}: {outcomes:?}");
        for out in &outcomes {
            let said = if out.status.success() {
                String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .replace('\n', "; ")
            } else {
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{table}: {stderr}");
                assert!(!stderr.contains("panicked"), "{table}: {stderr}");
                assert!(stderr.contains("committed first"), "{table}: {stderr}");
                stderr.trim().to_string()
            };
            eprintln!("{table}: {said}");
        }
        let expected = if keys.is_empty() { 13 * 200 } else { 200 };
        assert_eq!(
            rows(&read_table(&warehouse, table).1).len(),
            expected,
            "{table}"
        );
        // What is left compacts cleanly.
        success(&compact(&warehouse, table, &["--full"]));
        assert_eq!(
            rows(&read_table(&warehouse, table).1).len(),
            expected,
            "{table}"
        );
    }
}

/// Every data file under `warehouse`, by path.
fn data_files_on_disk(warehouse: &str) -> std::collections::BTreeSet<std::path::PathBuf> {
    let mut found = std::collections::BTreeSet::new();
    let mut dirs = vec![std::path::PathBuf::from(warehouse)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                found.insert(path);
            }
        }
    }
    found
}

/// A task that fails (one of its bucket's files is gone from storage) fails the compaction,
/// nothing is committed, and the other tasks' results are deleted: no file is left that no
/// snapshot references.
#[test]
fn a_failed_task_commits_nothing_and_leaves_no_result_behind() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "wh");
    let table = "db.events";
    create(&warehouse, table, &[], &[("bucket", "-1")]);
    for job in 1..=5 {
        write_job(&dir, &warehouse, table, job, 100);
    }
    let lost = data_files_on_disk(&warehouse).into_iter().next().unwrap();
    std::fs::remove_file(&lost).unwrap();
    let before = data_files_on_disk(&warehouse);
    let buckets = levels_per_bucket(&warehouse, table).len();
    assert_eq!(buckets, 2, "two partitions, two tasks");

    let line = failure(
        &compact(&warehouse, table, &["--full", "--parallelism", "2"]),
        1,
    );
    assert!(line.contains("compaction task"), "{line}");
    assert_eq!(
        data_files_on_disk(&warehouse),
        before,
        "the task that succeeded left its results behind"
    );
    let opened = block_on(paimon_wire::coordinator::open_table(&warehouse, table)).unwrap();
    let latest = block_on(opened.snapshot_manager().get_latest_snapshot())
        .unwrap()
        .unwrap();
    assert_eq!(
        latest.commit_user(),
        USER,
        "nothing committed by the compaction"
    );
}

/// The latest snapshot's id, if any.
fn latest_snapshot(warehouse: &str, table: &str) -> Option<i64> {
    let table = block_on(paimon_wire::coordinator::open_table(warehouse, table)).unwrap();
    block_on(table.snapshot_manager().get_latest_snapshot_id()).unwrap()
}

/// `paimon-wire compact` killed (SIGKILL, its whole process group: coordinator and task
/// workers) at points from its start to its end (more of them with `PAIMON_WIRE_LONG_TESTS=1`): each time the table is the one before the
/// compaction, or the compacted one, never a snapshot naming a file the kill left half
/// written; every row reads back once, and a later compaction completes.
#[test]
fn a_compactor_killed_mid_task_leaves_nothing_referenced_behind() {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "wh");
    let table = "db.pk";
    create(&warehouse, table, &["region", "id"], &[("bucket", "2")]);
    for job in 1..=6 {
        write_job(&dir, &warehouse, table, job, 40_000);
    }
    let before = rows(&read_table(&warehouse, table).1);
    let mut killed_before_commit = 0;
    // Five kill points; with PAIMON_WIRE_LONG_TESTS=1, forty from 10 ms to 1.6 s.
    let delays: Vec<u64> = if std::env::var("PAIMON_WIRE_LONG_TESTS").as_deref() == Ok("1") {
        (1..=40).map(|i| i * 40 - 30).collect()
    } else {
        vec![20, 80, 200, 400, 800]
    };
    for delay_ms in delays {
        let snapshot = latest_snapshot(&warehouse, table);
        let mut child = Command::new(common::BIN)
            .args([
                "compact",
                "--warehouse",
                &warehouse,
                "--table",
                table,
                "--full",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // The kill leaves the compactor's task directory: in the test's own, removed with it.
            .env("TMPDIR", dir.path())
            .process_group(0)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // The process group the child leads (it was started with process_group(0)).
        let killed = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .status()
            .unwrap();
        assert!(killed.success() || child.try_wait().unwrap().is_some());
        let status = child.wait().unwrap();
        let now = latest_snapshot(&warehouse, table);
        if now == snapshot {
            killed_before_commit += usize::from(!status.success());
        }
        // Whether it was killed before or after its commit, the table reads as before.
        assert_eq!(
            rows(&read_table(&warehouse, table).1),
            before,
            "killed after {delay_ms} ms"
        );
        if now != snapshot {
            // It committed before the kill: write again, so the next round has work.
            write_job(&dir, &warehouse, table, 7 + delay_ms as u32, 40_000);
        }
    }
    assert!(
        killed_before_commit > 0,
        "no kill landed before the commit: the test exercised nothing"
    );
    success(&compact(&warehouse, table, &["--full"]));
    assert_eq!(rows(&read_table(&warehouse, table).1), before);
    assert!(levels_per_bucket(&warehouse, table)
        .values()
        .all(|l| l == &vec![5]));
}
