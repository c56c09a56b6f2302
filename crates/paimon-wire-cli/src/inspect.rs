//! `paimon-wire inspect`: a payload's messages as the canonical JSON dump or as a table.

use std::fmt::Write as _;

use paimon_wire::dump::{hex, messages_to_json};
use paimon_wire::paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon_wire::CommitMessage;

use crate::error::{CliError, CliResult};
use crate::partition::PartitionDecoder;
use crate::payload::DecodedPayload;

/// The output formats of `inspect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InspectFormat {
    /// The canonical JSON dump (`paimon_wire::dump`), pretty-printed.
    Json,
    /// A human summary per message.
    Table,
}

/// Renders `payload` in `format`; `source` names where it came from.
pub fn render(
    payload: &DecodedPayload,
    source: &str,
    format: InspectFormat,
    partitions: &PartitionDecoder,
) -> CliResult<String> {
    match format {
        InspectFormat::Json => {
            let mut text = serde_json::to_string_pretty(&messages_to_json(&payload.messages))
                .map_err(|e| CliError::input(format!("cannot render JSON: {e}")))?;
            text.push('\n');
            Ok(text)
        }
        InspectFormat::Table => Ok(render_table(payload, source, partitions)),
    }
}

/// The table format: a header line for the payload, then one block per message.
fn render_table(payload: &DecodedPayload, source: &str, partitions: &PartitionDecoder) -> String {
    let mut out = String::new();
    let count = payload.messages.len();
    let _ = writeln!(
        out,
        "{source}: {}serializer version {}, {} bytes, {count} message{}",
        if payload.enveloped { "envelope, " } else { "" },
        payload.version,
        payload.size,
        if count == 1 { "" } else { "s" }
    );
    for (i, message) in payload.messages.iter().enumerate() {
        out.push('\n');
        render_message(&mut out, i, message, partitions);
    }
    out
}

fn render_message(
    out: &mut String,
    index: usize,
    m: &CommitMessage,
    partitions: &PartitionDecoder,
) {
    let optional = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    let _ = writeln!(out, "message {index}");
    let _ = writeln!(out, "  partition            {}", hex(&m.partition));
    let _ = writeln!(
        out,
        "  partition values     {}",
        partitions.describe(&m.partition)
    );
    let _ = writeln!(out, "  bucket               {}", m.bucket);
    let _ = writeln!(
        out,
        "  total_buckets        {}",
        optional(m.total_buckets.map(i64::from))
    );
    let _ = writeln!(
        out,
        "  check_from_snapshot  {}",
        optional(m.check_from_snapshot)
    );
    let _ = writeln!(
        out,
        "  {:<28} {:>6} {:>20} {:>20}",
        "list", "files", "bytes", "rows"
    );
    let data_lists: [(&str, &[DataFileMeta]); 6] = [
        ("new_files", &m.new_files),
        ("deleted_files", &m.deleted_files),
        ("new_changelog_files", &m.new_changelog_files),
        ("compact_before", &m.compact_before),
        ("compact_after", &m.compact_after),
        ("compact_changelog_files", &m.compact_changelog_files),
    ];
    for (name, files) in data_lists {
        let sizes = files.iter().map(|f| (f.file_size, f.row_count));
        render_list_line(out, name, sizes);
    }
    let index_lists: [(&str, &[IndexFileMeta]); 4] = [
        ("new_index_files", &m.new_index_files),
        ("deleted_index_files", &m.deleted_index_files),
        ("compact_new_index_files", &m.compact_new_index_files),
        (
            "compact_deleted_index_files",
            &m.compact_deleted_index_files,
        ),
    ];
    for (name, files) in index_lists {
        let sizes = files.iter().map(|f| (f.file_size, f.row_count));
        render_list_line(out, name, sizes);
    }
}

/// One line of the file-list table: the list's name, its file count, and the totals of
/// the files' `(size in bytes, row count)`.
fn render_list_line(out: &mut String, name: &str, sizes: impl Iterator<Item = (i64, i64)>) {
    let (files, bytes, rows) = sizes.fold((0usize, 0i64, 0i64), |(n, b, r), (size, count)| {
        (n + 1, b.saturating_add(size), r.saturating_add(count))
    });
    let _ = writeln!(out, "  {name:<28} {files:>6} {bytes:>20} {rows:>20}");
}
