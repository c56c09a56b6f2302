//! Cost of the coordinator's commit-time table-state check (issue 14) at 10^5 live files.
//!
//! Builds the W3 table (`db.w3`, append, `dt INT` partition, bucket-unaware) in a temp dir and
//! commits W3's 100,000 files into it through a coordinator, in 10 commits of 10,000 files, all
//! in ONE partition (the worst case: the check reads every entry of the touched bucket). Then
//! times `Coordinator::check_against_table` for one new W3-style message of 100 files in that
//! partition (the check `commit` runs before committing), and for one in a partition the table
//! does not have. Prints `table-state live_files=N case=C runs=R median_ms=M min_ms=M`.
//!
//! Run: `cargo run -p paimon-wire-bench --bin table-state-check` (add `--release` for the
//! release profile).

use std::time::Instant;

use paimon_wire_bench::{create_w3_table, partition_row, w3_workers, W1_FIRST_DAY};
use paimon_wire::coordinator::{open_table, Binding, Coordinator};
use paimon_wire::CommitMessage;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

async fn run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let warehouse = dir.path().to_str().unwrap();
    let name = create_w3_table(warehouse).await.expect("create table");
    let table = open_table(warehouse, name).await.expect("open table");
    let coordinator = Coordinator::bind(table, Binding::append("table-state-bench"))
        .await
        .expect("bind");
    let one_partition = partition_row(W1_FIRST_DAY);
    let mut workers: Vec<CommitMessage> = w3_workers().into_iter().flatten().collect();
    let probe = workers.pop().expect("a worker");
    for message in &mut workers {
        message.partition = one_partition.clone();
    }
    let live_files: usize = workers.iter().map(|m| m.new_files.len()).sum();
    let started = Instant::now();
    for (i, chunk) in workers.chunks(100).enumerate() {
        let bound = coordinator
            .bind_messages(chunk.to_vec())
            .expect("valid messages");
        coordinator
            .commit(bound, i as i64 + 1)
            .await
            .expect("commit");
    }
    eprintln!(
        "committed {live_files} files in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for (case, partition) in [
        ("touched-partition-holds-all", one_partition.clone()),
        ("new-partition", partition_row(W1_FIRST_DAY + 1)),
    ] {
        let mut message = probe.clone();
        message.partition = partition;
        let bound = coordinator.bind_messages(vec![message]).expect("valid");
        let runs = 5;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            coordinator
                .check_against_table(&bound)
                .await
                .expect("the probe passes");
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "table-state live_files={live_files} case={case} runs={runs} median_ms={:.1} min_ms={:.1}",
            times[runs / 2],
            times[0]
        );
    }
}
