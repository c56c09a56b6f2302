//! `paimon-wire inspect`: a payload's messages as the canonical JSON dump or as a table.

use std::fmt::Write as _;

use paimon_wire::dump::{hex, messages_to_json};
use paimon_wire::view::{MessageView, PayloadView};
use paimon_wire::{deserialize_list, CommitMessage};

use crate::error::{CliError, CliResult};
use crate::partition::PartitionDecoder;
use crate::payload::Unframed;

/// The output formats of `inspect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InspectFormat {
    /// The canonical JSON dump (`paimon_wire::dump`), pretty-printed.
    Json,
    /// A human summary per message.
    Table,
}

/// A payload read for `inspect`: owned messages for the JSON dump, a zero-copy view for the
/// table (which only counts and sums, so nothing is copied out of the payload).
pub enum Inspected<'a> {
    /// Decoded messages, for [`InspectFormat::Json`].
    Messages(Vec<CommitMessage>),
    /// The checked payload read in place, for [`InspectFormat::Table`].
    View(PayloadView<'a>),
}

impl<'a> Inspected<'a> {
    /// Reads `payload` (named `source` in errors) the way `format` needs it. Both ways check
    /// the whole payload and fail with the same error.
    pub fn read(payload: &Unframed<'a>, source: &str, format: InspectFormat) -> CliResult<Self> {
        let read = match format {
            InspectFormat::Json => {
                deserialize_list(payload.version, payload.raw).map(Self::Messages)
            }
            InspectFormat::Table => {
                PayloadView::parse(payload.version, payload.raw).map(Self::View)
            }
        };
        read.map_err(|e| CliError::input(format!("{source}: {e}")))
    }
}

/// Renders what [`Inspected::read`] read from `payload`, an input of `size` bytes named
/// `source`.
pub fn render(
    inspected: &Inspected<'_>,
    payload: &Unframed<'_>,
    size: usize,
    source: &str,
    partitions: &PartitionDecoder,
) -> CliResult<String> {
    match inspected {
        Inspected::Messages(messages) => {
            let mut text = serde_json::to_string_pretty(&messages_to_json(messages))
                .map_err(|e| CliError::input(format!("cannot render JSON: {e}")))?;
            text.push('\n');
            Ok(text)
        }
        Inspected::View(view) => Ok(render_table(view, payload, size, source, partitions)),
    }
}

/// The table format: a header line for the payload, then one block per message.
fn render_table(
    view: &PayloadView<'_>,
    payload: &Unframed<'_>,
    size: usize,
    source: &str,
    partitions: &PartitionDecoder,
) -> String {
    let mut out = String::new();
    let count = view.len();
    let _ = writeln!(
        out,
        "{source}: {}serializer version {}, {size} bytes, {count} message{}",
        payload
            .framed_as
            .map(|frame| format!("{frame}, "))
            .unwrap_or_default(),
        view.version(),
        if count == 1 { "" } else { "s" }
    );
    for (i, message) in view.messages().iter().enumerate() {
        out.push('\n');
        render_message(&mut out, i, message, partitions);
    }
    out
}

fn render_message(
    out: &mut String,
    index: usize,
    m: &MessageView<'_>,
    partitions: &PartitionDecoder,
) {
    let optional = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    let _ = writeln!(out, "message {index}");
    let _ = writeln!(out, "  partition            {}", hex(m.partition()));
    let _ = writeln!(
        out,
        "  partition values     {}",
        partitions.describe(m.partition())
    );
    let _ = writeln!(out, "  bucket               {}", m.bucket());
    let _ = writeln!(
        out,
        "  total_buckets        {}",
        optional(m.total_buckets().map(i64::from))
    );
    let _ = writeln!(
        out,
        "  check_from_snapshot  {}",
        optional(m.check_from_snapshot())
    );
    let _ = writeln!(
        out,
        "  {:<28} {:>6} {:>20} {:>20}",
        "list", "files", "bytes", "rows"
    );
    for (name, files) in m.data_file_lists() {
        let sizes = files.iter().map(|f| (f.file_size(), f.row_count()));
        render_list_line(out, name, sizes);
    }
    for (name, files) in m.index_file_lists() {
        let sizes = files.iter().map(|f| (f.file_size(), f.row_count()));
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
