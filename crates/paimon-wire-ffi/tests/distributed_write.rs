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
}

impl<'a> Job<'a> {
    fn new(warehouse: &'a Warehouse, commit_user: &'a str, overwrite: bool) -> Self {
        Self {
            warehouse,
            table: "orders",
            commit_user,
            overwrite,
            memcheck: false,
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
        let mut args = vec![
            self.warehouse.path().to_string(),
            format!("db.{}", self.table),
            self.commit_user.to_string(),
            (self.overwrite as i32).to_string(),
            commit_id.to_string(),
            (crash as i32).to_string(),
        ];
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
/// Then two workers routed by `paimon_table_bucket_ids` (worker w writes the buckets
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
        stderr.contains("paimon_table_commit_merge failed: error 19: ")
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
