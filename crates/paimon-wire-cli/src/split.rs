//! `paimon-wire split`: one payload as size-bounded payloads, and the directory of a split
//! set read back for `validate` and `commit`.
//!
//! A split set is a directory of `part-<index>-of-<count>.bin` files, each a raw standard
//! payload or each an Apache Doris `DPCM` frame around one: the names carry what the
//! coordinator needs to prove the set whole (the index of each payload and the count), as an
//! engine's RPC would carry them beside the bytes.

use std::path::{Path, PathBuf};

use paimon_wire::coordinator::{BoundMessages, Coordinator, PayloadPart};
use paimon_wire::split::{parse_part_file_name, part_file_name};
use paimon_wire::{dpcm, split_list_with, EncodeOptions, LossyField, SerializerVersion};

use crate::error::{CliError, CliResult};
use crate::output::stdout_line;
use crate::payload::{display_source, read_input, DecodedPayload};

/// How `split` frames each payload it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PartFrame {
    /// The raw payload (Java's `serializeList` bytes); the version travels beside it.
    Raw,
    /// An Apache Doris frame (`DPCM`: version, length) around each payload.
    Dpcm,
}

/// Splits `payload` into payloads of at most `max_bytes` at `to` (frame included) and writes
/// them into `out_dir` (created if missing; it must hold no earlier set), printing one line
/// per file.
pub fn split_to_dir(
    payload: &DecodedPayload,
    to: SerializerVersion,
    drop: &[LossyField],
    max_bytes: usize,
    frame: PartFrame,
    out_dir: &Path,
) -> CliResult<()> {
    let options = drop
        .iter()
        .fold(EncodeOptions::default(), |options, field| {
            options.allow_dropping(*field)
        });
    // A frame's header counts against the limit the transport sets.
    let body_limit = match frame {
        PartFrame::Raw => max_bytes,
        PartFrame::Dpcm => max_bytes.saturating_sub(dpcm::HEADER_LEN),
    };
    let payloads = split_list_with(&payload.messages, to, body_limit, &options)
        .map_err(|e| CliError::input(e.to_string()))?;
    let payloads = match frame {
        PartFrame::Raw => payloads,
        PartFrame::Dpcm => payloads
            .iter()
            .map(|body| dpcm::frame(to, body))
            .collect::<Result<_, _>>()
            .map_err(|e| CliError::input(e.to_string()))?,
    };
    std::fs::create_dir_all(out_dir)
        .map_err(|e| CliError::input(format!("cannot create {}: {e}", out_dir.display())))?;
    let earlier = read_part_names(out_dir)?;
    if let Some(first) = earlier.first() {
        return Err(CliError::input(format!(
            "{} already holds a split set ({}); give an empty directory",
            out_dir.display(),
            first.0.display()
        )));
    }
    let count = payloads.len();
    for (index, bytes) in payloads.iter().enumerate() {
        let path = out_dir.join(part_file_name(index, count));
        std::fs::write(&path, bytes)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
        stdout_line(format_args!("{}: {} bytes", path.display(), bytes.len()))?;
    }
    stdout_line(format_args!(
        "{count} payload(s) of at most {max_bytes} bytes, serializer version {to}; send each \
         with its index and the count {count}"
    ))
}

/// The split-set files in `dir` with their index and count, sorted by name.
fn read_part_names(dir: &Path) -> CliResult<Vec<(PathBuf, u32, u32)>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", dir.display())))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| CliError::input(format!("cannot read {}: {e}", dir.display())))?;
        let path = entry.path();
        if let Some((index, count)) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(parse_part_file_name)
        {
            names.push((path, index, count));
        }
    }
    names.sort();
    Ok(names)
}

/// Reads the split set in `dir` (raw payloads at `version`, or `DPCM` frames, which carry
/// it) and binds it as one worker's payload with [`Coordinator::deserialize_parts`], which
/// refuses a set with a gap, and a frame whose version is not the set's.
pub fn load_split_set(
    coordinator: &Coordinator,
    dir: &Path,
    version: Option<SerializerVersion>,
) -> CliResult<BoundMessages> {
    let name = display_source(dir);
    let named = read_part_names(dir)?;
    if named.is_empty() {
        return Err(CliError::input(format!(
            "{name} is a directory without split payloads (part-<index>-of-<count>.bin)"
        )));
    }
    let mut files = Vec::with_capacity(named.len());
    for (path, index, count) in named {
        files.push((index, count, read_input(&path)?));
    }
    // Frames carry their version: the first part's is the set's unless one was given, and
    // the coordinator refuses a part whose frame says another.
    let framed_version = match files.first() {
        Some((_, _, bytes)) if dpcm::is_frame(bytes) => Some(
            dpcm::unframe(bytes)
                .map_err(|e| CliError::input(format!("{name}: {e}")))?
                .0,
        ),
        _ => None,
    };
    let version = version.or(framed_version).ok_or_else(|| {
        CliError::usage(format!(
            "{name} is a split set of raw payloads, so their serializer version must be given \
             with --version N"
        ))
    })?;
    let parts: Vec<PayloadPart<'_>> = files
        .iter()
        .map(|(index, count, bytes)| PayloadPart {
            index: *index,
            count: *count,
            bytes,
        })
        .collect();
    coordinator
        .deserialize_parts(version, &parts)
        .map_err(|e| CliError::input(format!("{name}: {e}")))
}
