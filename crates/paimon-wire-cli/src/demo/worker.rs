//! The hidden `paimon-wire worker` subcommand: one worker process of the demo.
//!
//! It opens the table, writes its share of the generated rows as Arrow batches through the
//! paimon crate's `TableWrite`, calls `prepare_commit`, and emits the messages as a payload
//! (Java `CommitMessageSerializer` bytes, optionally in an envelope) on stdout or to a file.
//! With `--progress` it reports each batch on stderr as a line `rows N` (N more rows
//! written), which the demo turns into its progress bar.

use std::io::Write;
use std::path::PathBuf;

use paimon_wire::{envelope, serialize_list, SerializerVersion};

use crate::demo::data;
use crate::error::{CliError, CliResult};
use crate::payload::{parse_version, write_output};
use crate::table::{block_on, open, TableArgs};

/// The prefix of a progress line on the worker's stderr.
pub const PROGRESS_PREFIX: &str = "rows ";

/// Arguments of `paimon-wire worker`.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// The job's commit user, shared with the coordinator.
    #[arg(long, value_name = "U")]
    pub commit_user: String,
    /// This worker's number, `0..workers`.
    #[arg(long, value_name = "I")]
    pub index: u32,
    /// How many workers share the rows.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: u32,
    /// Rows of the whole job; this worker writes its contiguous share of ids `0..rows`.
    #[arg(long, value_name = "R")]
    pub rows: u64,
    /// Number of partitions the rows spread over.
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u32).range(1..))]
    pub partitions: u32,
    /// Rows per Arrow batch.
    #[arg(long, value_name = "B", default_value_t = 8192, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_rows: u64,
    /// Serializer version of the payload.
    #[arg(long = "version", value_name = "N", value_parser = parse_version, default_value = "14")]
    pub version: SerializerVersion,
    /// Frame the payload in an envelope.
    #[arg(long)]
    pub envelope: bool,
    /// Report progress on stderr.
    #[arg(long)]
    pub progress: bool,
    /// Where to write the payload, or `-` for stdout.
    #[arg(long, value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
}

/// Runs one worker.
pub fn run(args: &WorkerArgs) -> CliResult<()> {
    if args.index >= args.workers {
        return Err(CliError::usage(format!(
            "--index {} is outside 0..{} (--workers)",
            args.index, args.workers
        )));
    }
    let payload = block_on(write_rows(args))??;
    let bytes = if args.envelope {
        envelope::wrap(args.version, &payload)
    } else {
        payload
    };
    write_output(&args.output, &bytes)
}

async fn write_rows(args: &WorkerArgs) -> CliResult<Vec<u8>> {
    let table = open(&args.table).await?;
    let builder = table
        .new_write_builder()
        .with_commit_user(args.commit_user.as_str())
        .map_err(|e| CliError::input(format!("cannot set the commit user: {e}")))?;
    let mut write = builder
        .new_write()
        .map_err(|e| CliError::input(format!("cannot start writing: {e}")))?;
    let ids = data::worker_ids(args.rows, args.workers, args.index);
    let mut start = ids.start;
    while start < ids.end {
        let end = ids.end.min(start.saturating_add(args.batch_rows));
        let batch = data::batch(start..end, args.partitions, args.index)?;
        write
            .write_arrow_batch(&batch)
            .await
            .map_err(|e| CliError::input(format!("writing rows {start}..{end}: {e}")))?;
        if args.progress {
            report_progress(end - start);
        }
        start = end;
    }
    let messages = write
        .prepare_commit()
        .await
        .map_err(|e| CliError::input(format!("prepare commit: {e}")))?;
    Ok(serialize_list(&messages, args.version)?)
}

fn report_progress(rows: u64) {
    let mut err = std::io::stderr().lock();
    // Progress is informational: a closed stderr must not fail the write.
    let _ = writeln!(err, "{PROGRESS_PREFIX}{rows}");
    let _ = err.flush();
}
