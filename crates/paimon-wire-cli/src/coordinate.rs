//! `paimon-wire validate` and `paimon-wire commit`: payload files through the core's
//! coordinator (decode, validate against the bound table, merge, commit once).
//!
//! Nothing here decides whether a message is acceptable: every rule is the coordinator's.

use std::path::PathBuf;

use paimon_wire::coordinator::{
    Binding, BoundMessages, CommitOutcome, Coordinator, Rule, Stage, DEFAULT_HASH_INDEX_BUDGET,
};
use paimon_wire::{DecodeLimits, SerializerVersion};

use crate::error::{CliError, CliResult};
use crate::output::{stderr_line, stdout_line};
use crate::payload::{display_source, read_input, unframe, Framing};
use crate::table::{block_on, open, TableArgs};

/// The payload files of `validate` and `commit`, and how to read them.
#[derive(Debug, Clone, clap::Args)]
pub struct PayloadFiles {
    /// Serializer version of raw payloads (1 to 14); envelopes carry their own.
    #[arg(long = "version", value_name = "N", value_parser = crate::payload::parse_version)]
    pub version: Option<SerializerVersion>,
    /// Require every input to be an envelope (otherwise detected by its magic).
    #[arg(long)]
    pub envelope: bool,
    /// The messages come from the paimon crate's postpone fixed-bucket writer (only for
    /// postpone tables, `bucket = -2`).
    #[arg(long)]
    pub postpone_fixed_bucket: bool,
    /// Allow messages that delete: deleted data files, deletion-vector index files, deleted
    /// index files (row-level deletes, a primary-key table's deletion-vector maintenance).
    /// Without it such messages are refused (rule change-kind).
    #[arg(long)]
    pub allow_deletes: bool,
    /// Allow messages that carry compaction results, for jobs whose writers compact (Java
    /// writers with write-only = false, Java's default). They are committed as Java's
    /// committer does: an APPEND snapshot of the new files, then a COMPACT snapshot, under
    /// one identifier, after the compaction rules (inputs live, rows and ranges that add up,
    /// deletion vectors only of compacted files). `--allow-compaction=verify` also reads each
    /// compaction's inputs and results and refuses one whose rows differ (rule
    /// compact-content). Without it such messages are refused (rule compact-increment).
    #[arg(
        long,
        value_name = "verify",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "trust",
        value_enum
    )]
    pub allow_compaction: Option<AllowCompaction>,
    /// Deprecated no-op: compaction results are refused by default now (see
    /// --allow-compaction). Accepted so older scripts keep working; prints a note on stderr.
    #[arg(long, hide = true, conflicts_with = "allow_compaction")]
    pub refuse_compaction: bool,
    /// Refuse a payload of more bytes than this.
    #[arg(long, value_name = "BYTES", default_value_t = DecodeLimits::DEFAULT_MAX_PAYLOAD_BYTES)]
    pub max_payload_bytes: usize,
    /// Refuse a payload of more commit messages than this.
    #[arg(long, value_name = "N", default_value_t = DecodeLimits::DEFAULT_MAX_MESSAGES)]
    pub max_messages: usize,
    /// Refuse a payload naming more files than this (over all its file lists).
    #[arg(long, value_name = "N", default_value_t = DecodeLimits::DEFAULT_MAX_FILES)]
    pub max_files: usize,
    /// Refuse a commit whose HASH index checks (dynamic-bucket tables) would hold more than
    /// this many bytes: 12 per key of the indexes it adds, replaces or checks against
    /// (at least 1; 0 would refuse every such commit).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_HASH_INDEX_BUDGET,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub hash_index_budget: u64,
    /// The payload files (one per worker), or `-` for one payload on stdin. A directory is
    /// one worker's split set, as `paimon-wire split` writes it (`part-<index>-of-<count>.bin`,
    /// raw payloads at --version): it is refused unless every payload of the set is there.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

impl PayloadFiles {
    /// The limits each payload is decoded under (see SECURITY.md).
    fn decode_limits(&self) -> DecodeLimits {
        DecodeLimits {
            max_payload_bytes: self.max_payload_bytes,
            max_messages: self.max_messages,
            max_files: self.max_files,
        }
    }
}

/// A summary of merged messages, for printing.
fn summary(bound: &BoundMessages) -> String {
    format!(
        "{} message(s), {} new data file(s), {} row(s)",
        bound.len(),
        bound.data_file_count(),
        bound.reported_row_count()
    )
}

/// Decodes and validates every file with `coordinator`, printing one line per file, and
/// merges them. Consecutive payload files are decoded together on two threads
/// (`Coordinator::deserialize_all_versioned`), each read when the decoder takes it.
fn load(coordinator: &Coordinator, payloads: &PayloadFiles) -> CliResult<BoundMessages> {
    let mut parts = Vec::with_capacity(payloads.files.len());
    let mut inputs = payloads.files.as_slice();
    while let Some(path) = inputs.first() {
        if path.is_dir() {
            let name = display_source(path);
            let bound = crate::split::load_split_set(coordinator, path, payloads.version)?;
            stdout_line(format_args!("{name}: valid split set, {}", summary(&bound)))?;
            parts.push(bound);
            inputs = &inputs[1..];
            continue;
        }
        let run = inputs.iter().take_while(|path| !path.is_dir()).count();
        parts.extend(load_files(coordinator, payloads, &inputs[..run])?);
        inputs = &inputs[run..];
    }
    coordinator
        .merge(parts)
        .map_err(|e| CliError::input(format!("merging the payloads: {e}")))
}

/// A payload file read and unframed: its bytes and where the raw payload lies in them.
struct ReadPayload {
    bytes: Vec<u8>,
    raw: std::ops::Range<usize>,
}

impl AsRef<[u8]> for ReadPayload {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[self.raw.clone()]
    }
}

/// Decodes `files` (payload files, no directory) together, printing one line per file in
/// order. A file that cannot be read or unframed, or that the coordinator refuses, fails the
/// load with the error decoding it alone gives, after the lines of the files before it.
fn load_files(
    coordinator: &Coordinator,
    payloads: &PayloadFiles,
    files: &[PathBuf],
) -> CliResult<Vec<BoundMessages>> {
    let framing = if payloads.envelope {
        Framing::Envelope
    } else {
        Framing::Detect
    };
    let versions = std::sync::Mutex::new(Vec::with_capacity(files.len()));
    let unreadable = std::sync::Mutex::new(None);
    let read = |path: &PathBuf| -> CliResult<(SerializerVersion, ReadPayload)> {
        let bytes = read_input(path)?;
        let unframed = unframe(path, &bytes, payloads.version, framing)?;
        // `raw` is a part of `bytes`: its offset in them is the distance of their addresses.
        let start = unframed.raw.as_ptr() as usize - bytes.as_ptr() as usize;
        let raw = start..start + unframed.raw.len();
        let version = unframed.version;
        Ok((version, ReadPayload { bytes, raw }))
    };
    // Read by the decoder's helper thread as it takes each file; the first file that cannot
    // be read ends the files it is given.
    let taken = files.iter().map_while(|path| match read(path) {
        Ok((version, payload)) => {
            lock(&versions).push(version);
            Some((version, payload))
        }
        Err(error) => {
            *lock(&unreadable) = Some(error);
            None
        }
    });
    let decoded = coordinator.deserialize_all_versioned(taken);
    let versions = versions.into_inner().unwrap_or_else(|e| e.into_inner());
    let valid = match &decoded {
        Ok(bound) => bound.len(),
        Err(refused) => refused.index,
    };
    let bound = decoded.as_deref().unwrap_or_default();
    for (index, (path, version)) in files.iter().zip(&versions).take(valid).enumerate() {
        let name = display_source(path);
        match bound.get(index) {
            Some(bound) => stdout_line(format_args!(
                "{name}: valid, serializer version {version}, {}",
                summary(bound)
            ))?,
            // A later file was refused: this one decoded, but its messages were dropped.
            None => stdout_line(format_args!("{name}: valid, serializer version {version}"))?,
        }
    }
    match decoded {
        Err(refused) => Err(CliError::input(format!(
            "{}: {}",
            display_source(&files[refused.index]),
            refused.error
        ))),
        // A file that could not be read ended the files taken: its error is the answer.
        Ok(bound) => match unreadable.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(error) => Err(error),
            None => Ok(bound),
        },
    }
}

/// The value behind `mutex`, also after a thread panicked holding it.
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn binding(commit_user: &str, overwrite: bool, payloads: &PayloadFiles) -> Binding {
    let binding = if overwrite {
        Binding::overwrite(commit_user)
    } else {
        Binding::append(commit_user)
    };
    let binding = if payloads.postpone_fixed_bucket {
        binding.postpone_fixed_bucket()
    } else {
        binding
    };
    let binding = if payloads.allow_deletes {
        binding.with_deletes()
    } else {
        binding
    };
    if payloads.refuse_compaction {
        stderr_line(REFUSE_COMPACTION_NOTE);
    }
    match payloads.allow_compaction {
        None => binding,
        Some(AllowCompaction::Trust) => binding.with_compaction(),
        Some(AllowCompaction::Verify) => binding.with_verified_compaction(),
    }
}

/// How `--allow-compaction` takes compaction results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AllowCompaction {
    /// Check them by their metadata and the table's state (`--allow-compaction`).
    Trust,
    /// Also read their inputs and results and compare the rows (`--allow-compaction=verify`).
    Verify,
}

/// What `--refuse-compaction` prints: it changes nothing any more.
const REFUSE_COMPACTION_NOTE: &str = "paimon-wire: note: --refuse-compaction is deprecated and \
     does nothing: compaction results are refused by default now (--allow-compaction takes them)";

/// The commit user `validate` binds with; validation does not depend on it.
const VALIDATE_COMMIT_USER: &str = "paimon-wire-validate";

/// The options of `validate` beyond the table and payloads.
#[derive(Debug, Clone, clap::Args)]
pub struct ValidateOptions {
    /// Check as an overwrite commit would (the sequence-numbers rule depends on the mode).
    #[arg(long)]
    pub overwrite: bool,
}

/// `validate`: checks every payload against the table — every rule `commit` runs, the
/// table's state included — and that they merge; commits nothing. Prints the rules it ran.
pub fn validate(
    table: &TableArgs,
    payloads: &PayloadFiles,
    options: &ValidateOptions,
) -> CliResult<()> {
    block_on(async {
        let table_handle = open(table).await?;
        let coordinator = Coordinator::bind(
            table_handle,
            binding(VALIDATE_COMMIT_USER, options.overwrite, payloads),
        )
        .await?
        .with_decode_limits(payloads.decode_limits())
        .with_hash_index_budget(payloads.hash_index_budget);
        let merged = load(&coordinator, payloads)?;
        coordinator.check_against_table(&merged).await?;
        stdout_line(format_args!(
            "valid: {} payload(s) for table {}: {} after merging",
            payloads.files.len(),
            table.table,
            summary(&merged)
        ))?;
        let names = |stage: Stage| {
            Rule::ALL
                .iter()
                .filter(|rule| rule.stage() == stage)
                .map(|rule| rule.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        stdout_line(format_args!(
            "rules checked: per message: {}; across payloads: one writer per bucket, no \
             conflicting duplicates; against the table's state: {}; only when committing, \
             against the snapshot it publishes: {}",
            names(Stage::Message),
            names(Stage::TableState),
            names(Stage::Publication)
        ))?;
        Ok(())
    })?
}

/// The options of `commit` beyond the table and payloads.
#[derive(Debug, Clone, clap::Args)]
pub struct CommitOptions {
    /// The job's commit user (the one its workers were created with).
    #[arg(long, value_name = "U", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub commit_user: String,
    /// The commit identifier; committing the same identifier again commits nothing.
    /// Identifiers must increase for one commit user.
    #[arg(long, value_name = "I")]
    pub identifier: i64,
    /// Replace the partitions the payloads write instead of appending.
    #[arg(long)]
    pub overwrite: bool,
}

/// `commit`: validates, merges and commits the payloads once under the identifier.
pub fn commit(
    table: &TableArgs,
    payloads: &PayloadFiles,
    options: &CommitOptions,
) -> CliResult<()> {
    block_on(async {
        let table_handle = open(table).await?;
        let coordinator = Coordinator::bind(
            table_handle,
            binding(&options.commit_user, options.overwrite, payloads),
        )
        .await?
        .with_decode_limits(payloads.decode_limits())
        .with_hash_index_budget(payloads.hash_index_budget);
        let merged = load(&coordinator, payloads)?;
        let what = summary(&merged);
        match coordinator.commit(merged, options.identifier).await? {
            CommitOutcome::Committed { snapshot_id } => {
                stdout_line(format_args!("committed snapshot {snapshot_id}: {what}"))?;
            }
            CommitOutcome::AlreadyCommitted {
                snapshot_id: Some(snapshot_id),
            } => stdout_line(format_args!(
                "identifier {} of commit user {:?} was already committed in snapshot \
                 {snapshot_id}; nothing committed",
                options.identifier, options.commit_user
            ))?,
            CommitOutcome::AlreadyCommitted { snapshot_id: None } => stdout_line(format_args!(
                "identifier {} of commit user {:?} was already committed (a later identifier \
                 of this user supersedes it, or its snapshot expired); nothing committed",
                options.identifier, options.commit_user
            ))?,
            CommitOutcome::NothingToCommit => {
                stdout_line(format_args!(
                    "nothing to commit: the payloads carry no new files; no snapshot made"
                ))?;
            }
        }
        Ok(())
    })?
}
