//! Cost of verified compaction (rule `compact-content`, issue 25) per GB of compacted data.
//!
//! Ignored by default (it writes a few hundred MB). Run it with
//!
//! ```sh
//! cargo test -p paimon-wire --test verify_cost -- --ignored --nocapture
//! ```
//!
//! (The dev profile builds dependencies at opt-level 2: the reader, Parquet decoding and the
//! row comparison, which are the cost, run optimized.)
//!
//! It writes `VERIFY_COST_ROWS` rows (default 2,000,000; an id and two 48-character strings
//! that compress poorly) into one partition of an append table, commits them, writes the same
//! rows again as a compaction's results, and times `Coordinator::check_against_table` for
//! that compaction with compaction trusted and with compaction verified, 3 runs each. It
//! prints `verify-cost bytes=B trusted_ms=T verified_ms=V ms_per_gb=M`, where `bytes` is the
//! compaction's inputs plus results (what verification reads) and `ms_per_gb` is the extra
//! time of verification per GiB read.

#[path = "coordinator/support.rs"]
#[allow(dead_code)]
mod support;

use std::time::Instant;

use paimon::table::CommitMessage;
use paimon_wire::coordinator::Binding;
use support::{batch_with_values, bind, send, Kind, Warehouse, USER};

async fn write_rows(table: &paimon::table::Table, rows: usize) -> Vec<CommitMessage> {
    let builder = table.new_write_builder().with_commit_user(USER).unwrap();
    let mut write = builder.new_write().unwrap();
    let chunk = 100_000;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut text = |n: usize| {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                char::from(b'a' + (seed % 26) as u8)
            })
            .collect::<String>()
    };
    for start in (0..rows).step_by(chunk) {
        let batch: Vec<(i32, &str, String)> = (start..(start + chunk).min(rows))
            .map(|i| (i as i32, "a", format!("{}{}", text(48), text(48))))
            .collect();
        write
            .write_arrow_batch(&batch_with_values(&batch))
            .await
            .unwrap();
    }
    write.prepare_commit().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement (writes a few hundred MB): run with --ignored --nocapture"]
async fn verified_compaction_cost_per_gigabyte() {
    let rows: usize = std::env::var("VERIFY_COST_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let warehouse = Warehouse::new();
    let table = warehouse
        .create("verify_cost", Kind::PartitionedAppend)
        .await;
    let first = write_rows(&table, rows).await;
    let trusted = bind(&table, Binding::append(USER).with_compaction()).await;
    send(&trusted, &first, 1).await.unwrap();
    // The same rows again (same seed): the results of an honest compaction of `first`.
    let again = write_rows(&table, rows).await;
    let mut compaction = CommitMessage::new(first[0].partition.clone(), first[0].bucket, vec![]);
    compaction.compact_before = first.iter().flat_map(|m| m.new_files.clone()).collect();
    compaction.compact_after = again.iter().flat_map(|m| m.new_files.clone()).collect();
    let bytes: i64 = compaction
        .compact_before
        .iter()
        .chain(&compaction.compact_after)
        .map(|f| f.file_size)
        .sum();
    let verified = bind(&table, Binding::append(USER).with_verified_compaction()).await;
    let mut medians = Vec::new();
    for coordinator in [&trusted, &verified] {
        let bound = coordinator
            .bind_messages(vec![compaction.clone()])
            .expect("valid");
        let mut times: Vec<f64> = Vec::new();
        for _ in 0..3 {
            let started = Instant::now();
            coordinator
                .check_against_table(&bound)
                .await
                .expect("an honest compaction passes");
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        medians.push(times[1]);
    }
    let extra = medians[1] - medians[0];
    println!(
        "verify-cost rows={rows} bytes={bytes} trusted_ms={:.1} verified_ms={:.1} ms_per_gb={:.0}",
        medians[0],
        medians[1],
        extra / (bytes as f64 / f64::from(1u32 << 30))
    );
}
