//! Cost of the coordinator's commit-time table-state check (issue 14) at 10^5 live files.
//!
//! Ignored by default (it commits 100,000 files first, about a minute). Run it with
//!
//! ```sh
//! cargo test -p paimon-wire --test table_state_cost -- --ignored --nocapture
//! ```
//!
//! It commits `TABLE_STATE_FILES` (default 100,000) data files into ONE partition and bucket
//! of a real local append table (10 commits), the worst case for the check: it reads every
//! entry of the touched bucket. Then it times `Coordinator::check_against_table` (what
//! `commit` runs before committing) for a payload of 100 new files in that partition, for one
//! in a partition the table does not have, and for a W3-sized payload (100,000 new files in a
//! new partition), and prints `table-state live_files=N case=C runs=R median_ms=M min_ms=M`.

#[path = "coordinator/support.rs"]
#[allow(dead_code)]
mod support;

use std::path::Path;
use std::time::Instant;

use paimon::table::CommitMessage;
use support::{append_coordinator, find_files, worker_messages, Kind, Warehouse};

/// `template` with `count` data files instead of its one; each exists on disk as an empty
/// file (the paimon crate checks that committed files exist; nothing here reads them).
fn with_files(root: &Path, template: &CommitMessage, prefix: &str, count: usize) -> CommitMessage {
    let file = template.new_files[0].clone();
    let real = find_files(root, &file.file_name).remove(0);
    let directory = real.parent().unwrap().to_path_buf();
    let mut message = template.clone();
    message.new_files = (0..count)
        .map(|i| {
            let mut f = file.clone();
            f.file_name = format!("data-{prefix}-{i:07}.parquet");
            std::fs::write(directory.join(&f.file_name), b"").unwrap();
            f
        })
        .collect();
    message
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement (about a minute): run with --ignored --nocapture"]
async fn table_state_check_cost_at_many_live_files() {
    let live_files: usize = std::env::var("TABLE_STATE_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    let in_a = worker_messages(&table, &[(1, "a")]).await.remove(0);
    let in_b = worker_messages(&table, &[(2, "b")]).await.remove(0);
    let root = warehouse.dir.path();

    let started = Instant::now();
    let commits = 10;
    for c in 0..commits {
        let message = with_files(root, &in_a, &format!("live{c}"), live_files / commits);
        let bound = coordinator.bind_messages(vec![message]).expect("valid");
        coordinator
            .commit(bound, c as i64 + 1)
            .await
            .expect("commit");
    }
    eprintln!(
        "committed {live_files} files in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    for (case, template, files) in [
        ("touched-partition-holds-all", &in_a, 100),
        ("new-partition", &in_b, 100),
        ("w3-sized-payload-new-partition", &in_b, live_files),
    ] {
        let probe = with_files(root, template, &format!("probe{files}"), files);
        let bound = coordinator.bind_messages(vec![probe]).expect("valid");
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
