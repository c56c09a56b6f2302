//! A real distributed write through the C API: worker processes (the C program
//! `tests/c/worker.c`) each write Arrow batches built by hand with the Arrow C Data Interface
//! and hand their serialized commit messages to a coordinator process
//! (`tests/c/coordinator.c`) as files; the coordinator deserializes, merges and commits once.
//! The table is then read back with the paimon crate. In the append-table test every process
//! runs under valgrind memcheck.

mod support;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::thread;

use support::{c_program, expected_rows, memcheck, run, run_ok, Layout, Warehouse};

const PARTITIONS: &[&str] = &["2024-01-01", "2024-01-02", "2024-01-03"];

/// One logical commit: its table, commit user and mode, shared by workers and coordinator.
struct Job<'a> {
    warehouse: &'a Warehouse,
    table: &'a str,
    commit_user: &'a str,
    overwrite: bool,
    /// Run every process under valgrind memcheck.
    memcheck: bool,
    /// The coordinator's options choosing how it binds its table commit: none
    /// (`paimon_wire_table_commit_new`), `--with-compaction` or `--flags N`.
    binding: &'a [&'a str],
}

impl<'a> Job<'a> {
    fn new(warehouse: &'a Warehouse, commit_user: &'a str, overwrite: bool) -> Self {
        Self {
            warehouse,
            table: "orders",
            commit_user,
            overwrite,
            memcheck: false,
            binding: &[],
        }
    }

    /// Runs `program` to success (under valgrind when asked); returns its stdout.
    fn run(&self, program: &Path, args: &[String]) -> String {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if self.memcheck {
            memcheck(program, &args)
        } else {
            run_ok(program, &args)
        }
    }

    /// Runs `workers` worker processes at once, worker `w` writing ids
    /// `first_id + w*rows .. + rows` over `partitions`; returns their payload files.
    fn run_workers(
        &self,
        first_id: i64,
        workers: i64,
        rows: i64,
        partitions: &[&str],
    ) -> Vec<String> {
        let worker = c_program("worker");
        let partitions = partitions.join(",");
        thread::scope(|scope| {
            let jobs: Vec<_> = (0..workers)
                .map(|w| {
                    let out = self
                        .warehouse
                        .scratch(&format!("{}-{}-{w}.payload", self.table, self.commit_user));
                    let args: Vec<String> = vec![
                        self.warehouse.path().into(),
                        format!("db.{}", self.table),
                        self.commit_user.into(),
                        (self.overwrite as i32).to_string(),
                        (first_id + w * rows).to_string(),
                        rows.to_string(),
                        partitions.clone(),
                        out.clone(),
                    ];
                    let worker = &worker;
                    scope.spawn(move || {
                        let stdout = self.run(worker, &args);
                        assert!(stdout.contains(&format!("rows={rows}")), "{stdout}");
                        out
                    })
                })
                .collect();
            jobs.into_iter().map(|j| j.join().unwrap()).collect()
        })
    }

    fn coordinator_args(&self, commit_id: i64, crash: bool, payloads: &[String]) -> Vec<String> {
        let mut args: Vec<String> = self.binding.iter().map(|a| a.to_string()).collect();
        args.extend([
            self.warehouse.path().to_string(),
            format!("db.{}", self.table),
            self.commit_user.to_string(),
            (self.overwrite as i32).to_string(),
            commit_id.to_string(),
            (crash as i32).to_string(),
        ]);
        args.extend(payloads.iter().cloned());
        args
    }

    /// Runs the coordinator to completion; returns its report line.
    fn run_coordinator(&self, commit_id: i64, payloads: &[String]) -> String {
        self.run(
            &c_program("coordinator"),
            &self.coordinator_args(commit_id, false, payloads),
        )
    }
}

/// Three workers, one coordinator, one snapshot, every row exactly once.
fn distributed_write_commits_every_row_once(layout: Layout, memcheck: bool) {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", layout);
    let job = Job {
        memcheck,
        ..Job::new(&warehouse, "job-1", false)
    };
    let payloads = job.run_workers(0, 3, 100, PARTITIONS);

    let outcome = job.run_coordinator(1, &payloads);
    assert!(outcome.starts_with("committed snapshot=1 "), "{outcome}");
    assert!(outcome.contains("rows=300"), "{outcome}");

    assert_eq!(warehouse.rows("orders"), expected_rows(0, 300, PARTITIONS));
    assert_eq!(
        warehouse.snapshots("orders"),
        vec![(1, "job-1".to_string(), 1)]
    );
}

/// Every worker and the coordinator run under valgrind memcheck here.
#[test]
fn append_table_written_by_three_worker_processes_commits_once() {
    distributed_write_commits_every_row_once(Layout::AppendPartitioned, true);
}

/// Three workers that each write rows of every bucket of a primary-key table: the coordinator
/// refuses the commit (two writers of one bucket), naming the bucket; nothing is committed.
/// Then two workers routed by `paimon_wire_table_bucket_ids` (worker w writes the buckets
/// `b % 2 == w` of the same 300 rows) commit once, and every row reads back once.
#[test]
fn primary_key_table_with_fixed_buckets_commits_once_only_when_workers_are_routed_by_bucket() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::PrimaryKeyFixedBuckets);
    let job = Job::new(&warehouse, "job-1", false);
    let unrouted = job.run_workers(0, 3, 100, PARTITIONS);
    let refused = run(
        &c_program("coordinator"),
        &job.coordinator_args(1, false, &unrouted)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("paimon_wire_table_commit_merge failed: error 19: ")
            && stderr.contains("of a primary-key table is written by two writers"),
        "{stderr}"
    );
    assert!(warehouse.snapshots("orders").is_empty());

    let worker = c_program("worker");
    let routed: Vec<String> = (0..2)
        .map(|w| {
            let out = warehouse.scratch(&format!("orders-routed-{w}.payload"));
            let partitions = PARTITIONS.join(",");
            let route = format!("{w}/2");
            let stdout = run_ok(
                &worker,
                &[
                    warehouse.path(),
                    "db.orders",
                    "job-1",
                    "0",
                    "0",
                    "300",
                    partitions.as_str(),
                    out.as_str(),
                    route.as_str(),
                ],
            );
            assert!(stdout.contains("routed_rows="), "{stdout}");
            out
        })
        .collect();
    let outcome = job.run_coordinator(1, &routed);
    assert!(outcome.starts_with("committed snapshot=1 "), "{outcome}");
    assert!(outcome.contains("rows=300"), "{outcome}");
    assert_eq!(warehouse.rows("orders"), expected_rows(0, 300, PARTITIONS));
}

/// Three workers that are dynamic-bucket assigners 0, 1 and 2 of 3
/// (`paimon_wire_write_builder_new_assigner`, rows routed by `paimon_wire_table_assigner_ids`)
/// write a dynamic-bucket primary-key table in two jobs; the second rewrites every key of the
/// first and adds as many. Each job commits once, every key reads back once, and every bucket
/// holds rows of one assigner only (`bucket % 3`).
#[test]
fn dynamic_bucket_table_written_by_three_assigner_processes_keeps_one_row_per_key() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::PrimaryKeyDynamicBuckets);
    let worker = c_program("worker");
    for (job, rows) in [(1, 300), (2, 600)] {
        let commit_user = format!("job-{job}");
        let payloads: Vec<String> = (0..3)
            .map(|w| {
                let out = warehouse.scratch(&format!("orders-{job}-{w}.payload"));
                let partitions = PARTITIONS.join(",");
                let route = format!("assigner:{w}/3");
                let rows = rows.to_string();
                let stdout = run_ok(
                    &worker,
                    &[
                        warehouse.path(),
                        "db.orders",
                        commit_user.as_str(),
                        "0",
                        "0",
                        rows.as_str(),
                        partitions.as_str(),
                        out.as_str(),
                        route.as_str(),
                    ],
                );
                assert!(stdout.contains("assigned_rows="), "{stdout}");
                for message in decode_payload(&out) {
                    if !message.new_files.is_empty() {
                        assert_eq!(message.bucket % 3, w, "worker {w}: {message:?}");
                    }
                }
                out
            })
            .collect();
        let outcome = Job::new(&warehouse, &commit_user, false).run_coordinator(1, &payloads);
        assert!(
            outcome.starts_with(&format!("committed snapshot={job} ")),
            "{outcome}"
        );
        assert_eq!(warehouse.rows("orders"), expected_rows(0, rows, PARTITIONS));
    }
}

#[test]
fn overwrite_replaces_the_partitions_the_workers_wrote_and_keeps_the_others() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    let load = Job::new(&warehouse, "load", false);
    let first = load.run_workers(0, 2, 60, PARTITIONS);
    load.run_coordinator(1, &first);

    // The second job overwrites the first two partitions only.
    let rewrite = Job::new(&warehouse, "rewrite", true);
    let rewritten = &PARTITIONS[..2];
    let second = rewrite.run_workers(1000, 2, 40, rewritten);
    let outcome = rewrite.run_coordinator(1, &second);
    assert!(outcome.starts_with("committed snapshot=2 "), "{outcome}");

    let mut expected: Vec<_> = expected_rows(0, 120, PARTITIONS)
        .into_iter()
        .filter(|row| row.3 == PARTITIONS[2])
        .collect();
    expected.extend(expected_rows(1000, 80, rewritten));
    expected.sort();
    assert_eq!(warehouse.rows("orders"), expected);
    assert_eq!(
        warehouse.snapshots("orders"),
        vec![(1, "load".to_string(), 1), (2, "rewrite".to_string(), 1)]
    );
}

#[test]
fn coordinator_killed_right_after_commit_reruns_the_same_identifier_without_committing_twice() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    let job = Job::new(&warehouse, "job-7", false);
    let payloads = job.run_workers(0, 3, 50, PARTITIONS);

    let coordinator = c_program("coordinator");
    let args = job.coordinator_args(42, true, &payloads);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let crashed = run(&coordinator, &args);
    assert_eq!(crashed.status.signal(), Some(9), "{crashed:?}");
    assert!(
        crashed.stdout.is_empty(),
        "the crash happens before any report"
    );

    // The rerun does not know the commit landed; the identifier tells it.
    let outcome = job.run_coordinator(42, &payloads);
    assert!(
        outcome.starts_with("already-committed snapshot=1 "),
        "{outcome}"
    );

    assert_eq!(warehouse.rows("orders"), expected_rows(0, 150, PARTITIONS));
    assert_eq!(
        warehouse.snapshots("orders"),
        vec![(1, "job-7".to_string(), 42)]
    );
}

/// The commit messages of an envelope payload file.
fn decode_payload(path: &str) -> Vec<paimon_wire_core::CommitMessage> {
    let bytes = std::fs::read(path).unwrap();
    let (version, raw) = paimon_wire_core::envelope::unwrap(&bytes).unwrap();
    paimon_wire_core::deserialize_list(version, raw).unwrap()
}

/// A commit whose messages carry compaction results, as a compacting Java writer sends them.
/// `paimon_wire_table_commit_new` refuses it (rule `compact-increment`: compaction is opt-in)
/// and commits nothing; `paimon_wire_table_commit_new_with_compaction` commits an APPEND
/// snapshot of the new files, then a COMPACT snapshot, under one identifier; a rerun through
/// `paimon_wire_table_commit_new_with_flags(PAIMON_WIRE_BINDING_ALLOW_COMPACTION)` commits
/// nothing.
#[test]
fn compaction_results_commit_through_c_only_when_opted_in_as_an_append_then_a_compact_snapshot() {
    compaction_results_commit_through_c(&["--with-compaction"]);
}

/// The same honest compaction (its results hold the rows of its inputs) committed through
/// `paimon_wire_table_commit_new_with_flags(PAIMON_WIRE_BINDING_VERIFY_COMPACTION)`: the
/// coordinator reads the inputs and results, finds the same rows and commits it.
#[test]
fn an_honest_compaction_commits_through_c_with_verified_compaction() {
    // PAIMON_WIRE_BINDING_VERIFY_COMPACTION, which implies PAIMON_WIRE_BINDING_ALLOW_COMPACTION
    compaction_results_commit_through_c(&["--flags", "4"]);
}

/// Refused by default, then committed by a coordinator bound with `commit_binding`.
fn compaction_results_commit_through_c(commit_binding: &[&str]) {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::PrimaryKeyFixedBuckets);
    let job = Job::new(&warehouse, "job-c", false);
    let with_compaction = Job {
        binding: commit_binding,
        ..Job::new(&warehouse, "job-c", false)
    };
    let with_flags = Job {
        // PAIMON_WIRE_BINDING_ALLOW_COMPACTION
        binding: &["--flags", "2"],
        ..Job::new(&warehouse, "job-c", false)
    };
    let first = job.run_workers(0, 1, 60, PARTITIONS);
    let first_messages = decode_payload(&first[0]);
    // Kept aside: the next run of the worker writes its payload to the same file.
    let first_payload = warehouse.scratch("first.payload");
    std::fs::copy(&first[0], &first_payload).unwrap();
    // The same worker again on the same snapshot (same rows, same sequence numbers): the files
    // a compaction of the first round wrote.
    let rewrite = decode_payload(&job.run_workers(0, 1, 60, PARTITIONS)[0]);
    job.run_coordinator(1, std::slice::from_ref(&first_payload));
    let mut messages = decode_payload(&job.run_workers(1000, 1, 30, PARTITIONS)[0]);
    for before in first_messages {
        let after = rewrite
            .iter()
            .find(|m| m.partition == before.partition && m.bucket == before.bucket)
            .expect("the rewrite writes the same buckets");
        let mut compaction =
            paimon_wire_core::CommitMessage::new(before.partition.clone(), before.bucket, vec![]);
        compaction.compact_before = before.new_files;
        compaction.compact_after = after.new_files.clone();
        for file in &mut compaction.compact_after {
            file.level = 5;
        }
        messages.push(compaction);
    }
    let version = paimon_wire_core::SerializerVersion::CURRENT;
    let payload = warehouse.scratch("with-compaction.payload");
    std::fs::write(
        &payload,
        paimon_wire_core::envelope::wrap(
            version,
            &paimon_wire_core::serialize_list(&messages, version).unwrap(),
        ),
    )
    .unwrap();

    // Compaction is opt-in: the default table commit refuses the payload, naming the opt-in.
    for binding in [&[][..], &["--flags", "1"][..]] {
        let default = Job {
            binding,
            ..Job::new(&warehouse, "job-c", false)
        };
        let refused = run(
            &c_program("coordinator"),
            &default
                .coordinator_args(2, false, std::slice::from_ref(&payload))
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        );
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{binding:?}: {stderr}");
        assert!(
            stderr.contains("paimon_wire_commit_messages_deserialize failed: error ")
                && stderr.contains("compact-increment")
                && stderr.contains("paimon_wire_table_commit_new_with_compaction"),
            "{binding:?}: {stderr}"
        );
        assert_eq!(warehouse.snapshots("orders").len(), 1, "nothing committed");
    }

    let outcome = with_compaction.run_coordinator(2, std::slice::from_ref(&payload));
    assert!(outcome.starts_with("committed snapshot=3 "), "{outcome}");
    let kinds: Vec<String> = {
        let table = warehouse.table("orders");
        support::block_on(async {
            let manager = table.snapshot_manager();
            let mut kinds = Vec::new();
            for id in 1..=3 {
                let snapshot = manager.get_snapshot(id).await.unwrap();
                kinds.push(snapshot.commit_kind().to_string());
            }
            kinds
        })
    };
    assert_eq!(kinds, ["APPEND", "APPEND", "COMPACT"]);
    assert_eq!(
        warehouse.snapshots("orders"),
        vec![
            (1, "job-c".to_string(), 1),
            (2, "job-c".to_string(), 2),
            (3, "job-c".to_string(), 2)
        ]
    );
    let mut expected = expected_rows(0, 60, PARTITIONS);
    expected.extend(expected_rows(1000, 30, PARTITIONS));
    expected.sort();
    assert_eq!(warehouse.rows("orders"), expected, "every row once");

    let again = with_flags.run_coordinator(2, std::slice::from_ref(&payload));
    assert!(
        again.starts_with("already-committed snapshot=3 "),
        "{again}"
    );
    assert_eq!(warehouse.snapshots("orders").len(), 3);
}
