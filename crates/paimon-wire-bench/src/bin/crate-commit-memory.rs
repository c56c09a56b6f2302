//! Time and peak memory of one commit of the append workload's files by the paimon crate
//! alone, the two ways it can commit them: `materialized` (every payload's messages held, then
//! `TableCommit::commit_with_identifier`) and `streamed` (each payload handed to a
//! `DeltaManifestWriter` as it arrives and dropped, then
//! `TableCommit::filter_and_commit_delta_manifests_with_identifier`). It bounds what the
//! coordinator's streamed commit (`docs/SCALE.md`, step 3) can reach: the coordinator's rules
//! are not run here.
//!
//! ```text
//! crate-commit-memory materialized|streamed PAYLOADS
//! ```
//!
//! Each payload is one message of 100 new files (`append_workers`, the W3 table). One process
//! per mode and size, so peaks do not mix. The commit is told the files exist
//! (`with_added_files_checked`): none are created, and the coordinator checks them per
//! payload on its streamed path. Prints one line:
//! `crate-commit mode=M payloads=P files=F delta_records=R seconds=T vmhwm_kb=K`, where
//! `delta_records` is read back from the published snapshot.

use std::time::Instant;

use paimon_wire::coordinator::open_table;
use paimon_wire::paimon::table::TableCommit;
use paimon_wire_bench::{append_workers, create_w3_table, proc_status_kib};

type Error = Box<dyn std::error::Error>;

const USAGE: &str = "usage: crate-commit-memory materialized|streamed PAYLOADS";

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, payloads] = args.as_slice() else {
        return Err(USAGE.into());
    };
    let payloads: usize = payloads.parse()?;
    let streamed = match mode.as_str() {
        "materialized" => false,
        "streamed" => true,
        _ => return Err(USAGE.into()),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let warehouse = tempfile::tempdir()?;
        let path = warehouse.path().to_str().ok_or("temp dir is not UTF-8")?;
        let name = create_w3_table(path).await?;
        let table = open_table(path, name).await?;
        let commit = TableCommit::new(table.clone(), "crate-commit-memory".into())
            .with_added_files_checked();
        let start = Instant::now();
        let mut files = 0usize;
        if streamed {
            let mut writer = commit.delta_manifest_writer()?;
            for payload in append_workers(payloads) {
                files += payload.iter().map(|m| m.new_files.len()).sum::<usize>();
                writer.add(payload).await?;
            }
            let written = writer.finish().await?;
            commit
                .filter_and_commit_delta_manifests_with_identifier(&written, 1)
                .await?;
        } else {
            let messages: Vec<_> = append_workers(payloads).flatten().collect();
            files = messages.iter().map(|m| m.new_files.len()).sum();
            commit
                .filter_and_commit_with_identifier(messages, 1)
                .await?;
        }
        let elapsed = start.elapsed();
        let snapshot = table
            .snapshot_manager()
            .get_latest_snapshot()
            .await?
            .ok_or("no snapshot was published")?;
        println!(
            "crate-commit mode={mode} payloads={payloads} files={files} delta_records={} \
             seconds={:.3} vmhwm_kb={}",
            snapshot.delta_record_count().unwrap_or(-1),
            elapsed.as_secs_f64(),
            proc_status_kib("VmHWM")?
        );
        Ok(())
    })
}
