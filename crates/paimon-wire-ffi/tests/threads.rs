//! Threads sharing handles, under ThreadSanitizer: `tests/c/threads.c` (built with
//! `-fsanitize=thread`) has four threads share one table, one write builder and one table
//! commit (routing, bucket ids, new writers, decoding), four writers write in parallel, and
//! the main thread commits once; with the table's runtime driven by the callers, and with two
//! runtime worker threads. TSan must report nothing.
//!
//! What TSan sees: the C program is instrumented; the Rust library is not (stable Rust cannot
//! be built with `-Zsanitizer=thread`), so TSan checks the C side, the handles and buffers the
//! threads pass across the boundary through intercepted libc calls (`malloc`/`free`,
//! `memcpy`, `pthread_*`), not the accesses inside the library itself.

mod support;

use std::process::Command;

use support::{c_program_tsan, crate_dir, expected_rows, Layout, Warehouse};

const PARTITIONS: &[&str] = &["2024-01-01", "2024-01-02"];
const THREADS: usize = 4;
const ROWS: i64 = 400;

/// The table's runtime is a current-thread runtime (the default): the calling threads drive it.
#[test]
fn threads_share_a_table_on_a_current_thread_runtime_with_no_tsan_report() {
    threads_share_a_table_builder_and_commit_and_write_in_parallel(0);
}

/// The table's runtime has two worker threads of its own (`paimon_wire_table_options`).
#[test]
fn threads_share_a_table_on_a_runtime_with_worker_threads_with_no_tsan_report() {
    threads_share_a_table_builder_and_commit_and_write_in_parallel(2);
}

fn threads_share_a_table_builder_and_commit_and_write_in_parallel(runtime_workers: usize) {
    let warehouse = Warehouse::new();
    // Four fixed buckets (bucket key `id`): thread t writes the rows of bucket t.
    warehouse.create_orders("orders", Layout::AppendUnpartitionedBuckets);
    let program = c_program_tsan("threads");
    let suppressions = crate_dir().join("tests/tsan.supp");
    let threads = THREADS.to_string();
    let rows = ROWS.to_string();
    let partitions = PARTITIONS.join(",");
    // `setarch -R` turns address randomization off for the run: TSan's fixed shadow layout
    // cannot map memory on kernels with high mmap randomization ("unexpected memory mapping").
    let output = Command::new("setarch")
        .args([std::env::consts::ARCH, "-R"])
        .arg(&program)
        .args([
            warehouse.path(),
            "db.orders",
            "threads-job",
            &threads,
            &rows,
            &partitions,
            &runtime_workers.to_string(),
        ])
        .env(
            "TSAN_OPTIONS",
            format!(
                "halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions={}",
                suppressions.display()
            ),
        )
        .output()
        .expect("setarch (util-linux) runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{} failed with {}:\nstdout:\n{stdout}\nstderr:\n{stderr}",
        program.display(),
        output.status
    );
    assert!(!stderr.contains("ThreadSanitizer"), "{stderr}");
    // Every thread wrote rows (one bucket each), and the commit holds all of them once.
    for thread in 0..THREADS {
        let line = stdout
            .lines()
            .find(|line| line.starts_with(&format!("thread {thread} wrote ")))
            .unwrap_or_else(|| panic!("{stdout}"));
        assert!(!line.ends_with(" 0 rows"), "{stdout}");
    }
    assert!(
        stdout.contains(&format!("committed snapshot=1 written={ROWS} rows={ROWS}")),
        "{stdout}"
    );
    assert_eq!(warehouse.rows("orders"), expected_rows(0, ROWS, PARTITIONS));
    assert_eq!(
        warehouse.snapshots("orders"),
        vec![(1, "threads-job".to_string(), 1)]
    );
}
