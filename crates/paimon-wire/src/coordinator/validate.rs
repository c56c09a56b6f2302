//! Validation of untrusted messages against the bound table (the rules are listed in the
//! [module docs of the coordinator](super#trust-model)).
//!
//! The coordinator reads what it needs of its table once, at bind time (partition key types,
//! bucket option, schema ids, external roots), and checks each message against it. The
//! public helpers here ([`plain_file_name_problem`], [`is_known_index_type`],
//! [`BucketMode`]) are the rules' building blocks, for callers that want to explain them.

use std::collections::BTreeSet;
use std::fmt;

use paimon::spec::{BinaryRow, CoreOptions, DataField, DataType, Datum, EMPTY_SERIALIZED_ROW};
use paimon::table::{normalize_global_index_type_for_drop, CommitMessage, Table};

use super::error::{CoordinatorError, CoordinatorResult, Rule, ValidationError};
use super::fields::{
    DataFileFields, IndexFileFields, MessageFields, COMPACT_BEFORE, COMPACT_NEW_INDEX_FILES,
    DATA_LISTS, DELETED_FILES, DELETED_INDEX_FILES, INDEX_LISTS, NEW_FILES, NEW_INDEX_FILES,
};
use super::keys::{compare, KeyType};
use super::{Binding, CommitMode, WriteKind};

/// Index type of deletion-vector index files (Java `DeletionVectorsIndexFile.DELETION_VECTORS_INDEX`).
pub const DELETION_VECTORS_INDEX_TYPE: &str = "DELETION_VECTORS";
/// Index type of dynamic-bucket hash index files (Java `HashIndexFile.HASH_INDEX`).
pub const HASH_INDEX_TYPE: &str = "HASH";

/// Table option listing the roots data files may be written under outside the table.
pub const DATA_EXTERNAL_PATHS_OPTION: &str = "data-file.external-paths";
/// Table option naming the root global index files may be written under.
pub const GLOBAL_INDEX_EXTERNAL_PATH_OPTION: &str = "global-index.external-path";
/// Table option choosing how writers spread files over the external roots; with
/// `entropy-inject` four hash directory levels sit between the bucket path and the file.
pub const DATA_EXTERNAL_PATHS_STRATEGY_OPTION: &str = "data-file.external-paths.strategy";

/// Largest row count one file may claim (2^48, about 2.8 * 10^14 rows). With at most
/// 2^14 such files the sum still fits the commit's `i64` arithmetic; sums over a whole
/// commit are checked separately at commit time.
pub const MAX_FILE_ROW_COUNT: i64 = 1 << 48;
/// Largest size in bytes one file may claim (2^50 bytes, 1 PiB).
pub const MAX_FILE_SIZE: i64 = 1 << 50;
/// Largest absolute sequence number, and largest row id (`first_row_id + row_count`, a
/// global index row range end): 2^62, so one more addition of a bounded count cannot
/// overflow `i64`.
pub const MAX_SEQUENCE_OR_ROW_ID: i64 = 1 << 62;
/// Largest amount one commit may raise a bucket's sequence numbers above its live files
/// (2^40): see rule **bounds** in the [coordinator](crate::coordinator) docs.
pub const MAX_SEQUENCE_STEP: i64 = 1 << 40;
/// Largest `total_buckets` a postpone fixed-bucket message may set for its partition.
pub const MAX_TOTAL_BUCKETS: i32 = 1 << 16;
/// Number of bucket ids a dynamic-bucket table has: `0..=32767`. Java keeps a key's bucket
/// as a `short` (`PartitionIndex.toBucketShort`, `MAX_DYNAMIC_BUCKETS`), and its assigners,
/// pypaimon's and the paimon crate's refuse to restore a partition whose HASH index names a
/// higher bucket: one such bucket would stop every later writer of the partition.
pub const MAX_DYNAMIC_BUCKETS: i32 = 1 << 15;

/// How a table spreads rows over buckets, which decides the buckets a message may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BucketMode {
    /// `bucket = n >= 1`: buckets `0..n-1`.
    Fixed {
        /// The table's bucket count.
        buckets: i32,
    },
    /// Primary-key table with `bucket = -1`: buckets assigned at write time,
    /// `0..32767` ([`MAX_DYNAMIC_BUCKETS`]).
    Dynamic,
    /// Append table with `bucket = -1`: every file in bucket 0.
    Unaware,
    /// `bucket = -2`: files land in bucket -2 until compaction assigns buckets.
    Postpone,
}

impl BucketMode {
    /// The bucket mode of a table with `bucket` option `bucket`, or `None` for a value Paimon
    /// does not define (0, or below -2).
    pub fn from_table_option(bucket: i32, has_primary_keys: bool) -> Option<Self> {
        match bucket {
            n if n >= 1 => Some(BucketMode::Fixed { buckets: n }),
            -1 if has_primary_keys => Some(BucketMode::Dynamic),
            -1 => Some(BucketMode::Unaware),
            -2 => Some(BucketMode::Postpone),
            _ => None,
        }
    }
}

impl fmt::Display for BucketMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BucketMode::Fixed { buckets } => write!(f, "fixed ({buckets} buckets)"),
            BucketMode::Dynamic => f.write_str("dynamic (bucket = -1, primary key)"),
            BucketMode::Unaware => f.write_str("bucket-unaware (bucket = -1, append)"),
            BucketMode::Postpone => f.write_str("postpone (bucket = -2)"),
        }
    }
}

/// Whether `index_type` is an index type Paimon defines, spelled as Paimon writes it:
/// `DELETION_VECTORS`, `HASH`, or a global index type the paimon crate knows, in lower case
/// (Java writes global index types in lower case; the paimon crate's lookup ignores case,
/// so `BTREE` would otherwise pass as a second spelling of `btree`).
pub fn is_known_index_type(index_type: &str) -> bool {
    index_type == DELETION_VECTORS_INDEX_TYPE
        || index_type == HASH_INDEX_TYPE
        || (!index_type.bytes().any(|b| b.is_ascii_uppercase())
            && normalize_global_index_type_for_drop(index_type).is_some())
}

/// A path in the one spelling the coordinator compares: a local `file:///x` URI is written
/// `file:/x` (the form Java's `Path` prints; the paimon crate's reader strips `file:/` from
/// both). Nothing else is rewritten: the reader treats the scheme case-sensitively and does
/// not resolve `.`, `..` or doubled slashes, so neither does the comparison.
fn canonical_path(path: &str) -> std::borrow::Cow<'_, str> {
    match path.strip_prefix("file:///") {
        Some(rest) => format!("file:/{rest}").into(),
        None => path.into(),
    }
}

/// A configured root in the spelling the writers use: [`canonical_path`], with runs of `/`
/// in its path collapsed as the writers' path resolution does (the scheme's `//` and the
/// authority are kept).
fn canonical_root(root: &str) -> String {
    let root = canonical_path(root);
    let path_start = match root.find("://") {
        Some(i) => root[i + 3..].find('/').map_or(root.len(), |j| i + 3 + j),
        None => root
            .find(':')
            .filter(|i| !root[..*i].contains('/'))
            .map_or(0, |i| i + 1),
    };
    let (head, path) = root.split_at(path_start);
    let mut out = String::with_capacity(root.len());
    out.push_str(head);
    let mut previous_slash = false;
    for c in path.chars() {
        if !(c == '/' && previous_slash) {
            out.push(c);
        }
        previous_slash = c == '/';
    }
    out
}

/// Whether `segment` is one of the four entropy directories `entropy-inject` puts between
/// the bucket path and the file (`dddd/dddd/dddd/dddddddd` in binary digits): the
/// `position`-th one, which has 8 digits when `position == 3` and 4 otherwise.
fn is_entropy_segment(position: usize, segment: &str) -> bool {
    let digits = if position == 3 { 8 } else { 4 };
    segment.len() == digits && segment.bytes().all(|b| b == b'0' || b == b'1')
}

/// Why `name` is not a plain file name, or `None` if it is one.
pub fn plain_file_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.contains('/') {
        Some("contains '/'")
    } else if name.contains('\\') {
        Some("contains '\\'")
    } else if name.contains('\0') {
        Some("contains a NUL byte")
    } else if name == "." || name == ".." {
        Some("is '.' or '..'")
    } else {
        None
    }
}

fn configured_roots(options: &std::collections::HashMap<String, String>, key: &str) -> Vec<String> {
    options
        .get(key)
        .map(|value| {
            value
                .split(',')
                .map(str::trim)
                .filter(|root| !root.is_empty())
                .map(|root| root.trim_end_matches('/').to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Refuses an external root that another table could share (rule `external-path`, at bind).
///
/// Writers put an external file at `<root>/<partition>/bucket-<n>/<file>`: nothing in that
/// path names the table. Two tables configured with one root write into the same
/// directories, so a coordinator of one could not tell the other's files from its own — it
/// would accept the other table's messages, and its abort would delete the other table's
/// live files. Detecting a shared root would mean reading every table of every catalog that
/// can reach the store, which no coordinator can; instead every root must name its table: it
/// ends with `<database>/<table>` or `<database>.db/<table>`, or lies inside the table's own
/// directory.
fn check_table_unique_root(table: &Table, option: &str, root: &str) -> CoordinatorResult<()> {
    let identifier = table.identifier();
    let (database, name) = (identifier.database(), identifier.object());
    let canonical = canonical_root(root);
    let trimmed = canonical.trim_end_matches('/');
    let location = canonical_root(table.location());
    let location = location.trim_end_matches('/');
    let inside_table = trimmed == location || trimmed.starts_with(&format!("{location}/"));
    let names_table = [
        format!("/{database}/{name}"),
        format!("/{database}.db/{name}"),
    ]
    .iter()
    .any(|suffix| trimmed.ends_with(suffix.as_str()));
    if inside_table || names_table {
        return Ok(());
    }
    Err(CoordinatorError::Unsupported {
        reason: format!(
            "table {database}.{name} sets {option} to root {root:?}, which does not name the \
             table; another table could share it, and a coordinator could then not tell that \
             table's external files from this one's (rule external-path). Give every table its \
             own root ending in /{database}.db/{name} (or /{database}/{name}), or one inside \
             the table's directory"
        ),
    })
}

/// What the coordinator knows about its table, read once when it is bound.
#[derive(Debug, Clone)]
pub(crate) struct TableRules {
    table: Table,
    table_name: String,
    partition_fields: Vec<DataField>,
    field_ids: BTreeSet<i32>,
    bucket_option: i32,
    bucket_mode: BucketMode,
    write_kind: WriteKind,
    allow_deletes: bool,
    allow_compaction: bool,
    primary_keys: bool,
    /// Whether the table orders rows by `sequence.field` rather than by sequence number.
    sequence_field: bool,
    schema_ids: BTreeSet<i64>,
    data_external_roots: Vec<String>,
    global_index_external_root: Option<String>,
    entropy_inject: bool,
    /// The table's key type (empty without a primary key).
    key_type: KeyType,
    /// The table's number of LSM levels (Java `CoreOptions#numLevels`).
    num_levels: i32,
}

/// Java `CoreOptions#numLevels`: `num-levels`, else `num-sorted-run.compaction-trigger` + 1
/// (the trigger defaults to 5).
fn num_levels(options: &std::collections::HashMap<String, String>) -> i32 {
    let parse = |key: &str| options.get(key).and_then(|v| v.trim().parse::<i32>().ok());
    parse("num-levels")
        .unwrap_or_else(|| {
            parse("num-sorted-run.compaction-trigger")
                .unwrap_or(5)
                .saturating_add(1)
        })
        .max(1)
}

impl TableRules {
    /// Reads the rules of `table` for messages committed under `binding`.
    pub(crate) async fn load(table: &Table, binding: &Binding) -> CoordinatorResult<Self> {
        let write_kind = binding.write_kind;
        let schema = table.schema();
        let table_name = table.identifier().full_name();
        let options = CoreOptions::new(schema.options());
        if options.is_format_table() {
            return Err(CoordinatorError::Unsupported {
                reason: format!(
                    "table {table_name} is a format table; its messages use Java's \
                     TwoPhaseCommitMessage, not CommitMessageSerializer"
                ),
            });
        }
        let bucket_option = options.bucket();
        let bucket_mode =
            BucketMode::from_table_option(bucket_option, !schema.primary_keys().is_empty())
                .ok_or_else(|| CoordinatorError::Unsupported {
                    reason: format!(
                "table {table_name} has bucket = {bucket_option}, which Paimon does not define"
            ),
                })?;
        if write_kind == WriteKind::PostponeFixedBucket && bucket_mode != BucketMode::Postpone {
            return Err(CoordinatorError::Unsupported {
                reason: format!(
                    "a postpone fixed-bucket coordinator needs a postpone table (bucket = -2), \
                     but table {table_name} is {bucket_mode}; bind a standard coordinator"
                ),
            });
        }
        let mut schema_ids: BTreeSet<i64> = table
            .schema_manager()
            .list_all_ids()
            .await
            .map_err(|e| {
                CoordinatorError::paimon(format!("listing the schemas of table {table_name}"), e)
            })?
            .into_iter()
            .collect();
        schema_ids.insert(schema.id());
        let data_external_roots = configured_roots(schema.options(), DATA_EXTERNAL_PATHS_OPTION);
        let global_index_external_root =
            configured_roots(schema.options(), GLOBAL_INDEX_EXTERNAL_PATH_OPTION)
                .into_iter()
                .next();
        for (option, root) in data_external_roots
            .iter()
            .map(|r| (DATA_EXTERNAL_PATHS_OPTION, r))
            .chain(
                global_index_external_root
                    .iter()
                    .map(|r| (GLOBAL_INDEX_EXTERNAL_PATH_OPTION, r)),
            )
        {
            check_table_unique_root(table, option, root)?;
        }
        let entropy_inject = schema
            .options()
            .get(DATA_EXTERNAL_PATHS_STRATEGY_OPTION)
            .is_some_and(|s| s.trim().eq_ignore_ascii_case("entropy-inject"));
        Ok(Self {
            table: table.clone(),
            table_name,
            partition_fields: schema.partition_fields(),
            field_ids: schema.fields().iter().map(DataField::id).collect(),
            bucket_option,
            bucket_mode,
            write_kind,
            allow_deletes: binding.allow_deletes,
            allow_compaction: binding.allow_compaction,
            primary_keys: !schema.primary_keys().is_empty(),
            sequence_field: !options.sequence_fields().is_empty(),
            schema_ids,
            data_external_roots,
            global_index_external_root,
            entropy_inject,
            key_type: KeyType::new(schema.fields(), &schema.trimmed_primary_keys()),
            num_levels: num_levels(schema.options()),
        })
    }

    /// The table's key type (empty without a primary key).
    pub(crate) fn key_type(&self) -> &KeyType {
        &self.key_type
    }

    /// The table's number of LSM levels; compaction results lie below it.
    pub(crate) fn num_levels(&self) -> i32 {
        self.num_levels
    }

    pub(crate) fn table_name(&self) -> &str {
        &self.table_name
    }

    pub(crate) fn bucket_mode(&self) -> BucketMode {
        self.bucket_mode
    }

    pub(crate) fn has_primary_keys(&self) -> bool {
        self.primary_keys
    }

    /// Whether rows of one key are ordered by sequence number: a primary-key table without
    /// `sequence.field`, whose buckets are written by one writer each (not postpone).
    pub(crate) fn orders_by_sequence_number(&self) -> bool {
        self.primary_keys
            && !self.sequence_field
            && self.bucket_mode != BucketMode::Postpone
            && self.write_kind == WriteKind::Standard
    }

    pub(crate) fn partition_fields(&self) -> &[DataField] {
        &self.partition_fields
    }

    pub(crate) fn write_kind(&self) -> WriteKind {
        self.write_kind
    }

    /// The directory of `bucket` in `partition`, relative to the table's root, as the
    /// writers' external path provider appends it to an external root
    /// (`pt=a/bucket-0`; `data/pt=a/bucket-0` with `data-file.path-directory = data`).
    /// `None` when the data directory is not under the table (an absolute
    /// `data-file.path-directory`), where no external path can be checked.
    fn relative_bucket_path(&self, partition: &[u8], bucket: i32) -> Option<String> {
        let absolute = paimon::table::TableCommit::new(self.table.clone(), String::new())
            .bucket_path(partition, bucket)
            .ok()?;
        let root = format!("{}/", self.table.location().trim_end_matches('/'));
        absolute.strip_prefix(&root).map(str::to_string)
    }

    /// Checks message `index` against every rule, then applies the binding (see
    /// [`Self::apply`]).
    pub(crate) fn validate_and_apply(
        &self,
        index: usize,
        mut message: CommitMessage,
        mode: CommitMode,
    ) -> Result<CommitMessage, ValidationError> {
        self.validate(index, &message, mode)?;
        self.apply(&mut message, mode);
        Ok(message)
    }

    /// Checks message `index` (owned, or a view over payload bytes) against every rule.
    pub(crate) fn validate<M: MessageFields>(
        &self,
        index: usize,
        message: &M,
        mode: CommitMode,
    ) -> Result<(), ValidationError> {
        let check = Check {
            rules: self,
            message_index: index,
            relative_bucket_path: std::cell::OnceCell::new(),
            partition: message.partition(),
            bucket: message.bucket(),
        };
        check.partition(message.partition())?;
        check.bucket(message.bucket(), message.total_buckets())?;
        if let Some(snapshot) = message.check_from_snapshot() {
            check.non_negative(|| "check_from_snapshot".into(), snapshot)?;
        }
        if let Some((list, files)) = compaction_lists(message).find(|(_, n)| *n > 0) {
            let refusal = if !self.allow_compaction {
                Some(
                    "compaction is opt-in: a compaction replaces rows with rows the coordinator \
                     cannot read, so the binding refuses it unless the job's writers compact \
                     (Binding::with_compaction, C paimon_wire_table_commit_new_with_compaction, \
                     CLI --allow-compaction, Python allow_compaction=True)",
                )
            } else if mode == CommitMode::Overwrite {
                Some("an overwrite commit does not take compaction results; commit them in append mode")
            } else {
                None
            };
            if let Some(refusal) = refusal {
                return Err(check.fail(
                    list.to_string(),
                    Rule::CompactIncrement,
                    format!("{files} compaction file(s): {refusal}"),
                ));
            }
        }
        for (slot, list) in DATA_LISTS.into_iter().enumerate() {
            for (i, file) in message.data_files(slot).enumerate() {
                check.data_file(&ListElement(list, i), file)?;
                if slot == NEW_FILES {
                    check.new_file_level(&ListElement(list, i), file)?;
                }
            }
        }
        for (slot, list) in INDEX_LISTS.into_iter().enumerate() {
            for (i, file) in message.index_files(slot).enumerate() {
                check.index_file(&ListElement(list, i), file)?;
            }
        }
        super::hash_index::check_message(&check, message)?;
        check.change_kinds(message)?;
        super::compaction::check_message(&check, message)?;
        Ok(())
    }

    /// Applies the binding to a validated message: the table-level `total_buckets` of a
    /// standard message is dropped (the commit fills in the table's own), and a postpone
    /// fixed-bucket message is marked for the overwrite path in overwrite mode.
    pub(crate) fn apply(&self, message: &mut CommitMessage, mode: CommitMode) {
        match self.write_kind {
            WriteKind::Standard => message.total_buckets = None,
            WriteKind::PostponeFixedBucket => {
                if mode == CommitMode::Overwrite {
                    message.mark_fixed_bucket_overwrite();
                }
            }
        }
    }
}

/// The checks of one message, carrying where the message is for error reports.
pub(crate) struct Check<'a> {
    rules: &'a TableRules,
    message_index: usize,
    /// The message's partition and bucket, which fix where its files may be.
    partition: &'a [u8],
    bucket: i32,
    /// [`TableRules::relative_bucket_path`] of the message, computed on first use.
    relative_bucket_path: std::cell::OnceCell<Option<String>>,
}

impl Check<'_> {
    /// The rules of the table the message is checked against.
    pub(crate) fn rules(&self) -> &TableRules {
        self.rules
    }

    /// A refusal of this message under `rule`.
    pub(crate) fn fail(&self, field: String, rule: Rule, reason: String) -> ValidationError {
        ValidationError {
            message_index: self.message_index,
            field,
            rule,
            reason,
        }
    }

    fn partition(&self, bytes: &[u8]) -> Result<(), ValidationError> {
        let fields = &self.rules.partition_fields;
        let fail = |reason: String| self.fail("partition".into(), Rule::Partition, reason);
        if bytes.is_empty() {
            return if fields.is_empty() {
                Ok(())
            } else {
                Err(fail(format!(
                    "empty partition, but table {} is partitioned by {}",
                    self.rules.table_name,
                    key_names(fields)
                )))
            };
        }
        let row = BinaryRow::from_serialized_bytes(bytes)
            .map_err(|e| fail(format!("not a binary row: {e}")))?;
        if row.arity() as usize != fields.len() || row.arity() < 0 {
            return Err(fail(format!(
                "partition row has {} field(s), table {} has {} partition key(s) ({})",
                row.arity(),
                self.rules.table_name,
                fields.len(),
                key_names(fields)
            )));
        }
        let mut values: Vec<Option<Datum>> = Vec::with_capacity(fields.len());
        for (pos, field) in fields.iter().enumerate() {
            let value = row.get_datum(pos, field.data_type()).map_err(|e| {
                fail(format!(
                    "partition key {:?} does not decode as {:?}: {e}",
                    field.name(),
                    field.data_type()
                ))
            })?;
            if value.is_none() && !field.data_type().is_nullable() {
                return Err(fail(format!(
                    "partition key {:?} is NOT NULL but the row holds null",
                    field.name()
                )));
            }
            values.push(value);
        }
        let typed: Vec<_> = values
            .iter()
            .zip(fields)
            .map(|(value, field)| (value.as_ref(), field.data_type()))
            .collect();
        let java = java_partition_row(&typed);
        if java.as_deref() == Some(bytes) {
            return Ok(());
        }
        // The paimon crate writes a null DECIMAL(p > 18) or TIMESTAMP(p > 3) without the
        // variable-length space Java reserves for it; its writers' rows are accepted too.
        let paimon_crate = if fields.is_empty() {
            EMPTY_SERIALIZED_ROW.clone()
        } else {
            BinaryRow::from_datums(&typed).to_serialized_bytes()
        };
        if paimon_crate == bytes {
            return Ok(());
        }
        Err(fail(format!(
            "partition row is not in canonical form ({} bytes; the canonical encoding of the \
             same values is {} bytes); Paimon compares partitions as bytes, so it would \
             create a second copy of the partition",
            bytes.len(),
            java.map_or(paimon_crate.len(), |java| java.len())
        )))
    }

    fn bucket(&self, bucket: i32, total_buckets: Option<i32>) -> Result<(), ValidationError> {
        let rules = self.rules;
        let bucket_fail = |reason: String| self.fail("bucket".into(), Rule::Bucket, reason);
        let total_fail =
            |reason: String| self.fail("total_buckets".into(), Rule::TotalBuckets, reason);
        if rules.write_kind == WriteKind::PostponeFixedBucket {
            let Some(total) = total_buckets else {
                return Err(total_fail(format!(
                    "missing: bucket {bucket} was not written by a postpone fixed-bucket writer; \
                     commit standard postpone messages (bucket -2) through a standard coordinator"
                )));
            };
            if total <= 0 {
                return Err(total_fail(format!(
                    "{total}: a postpone fixed-bucket write needs a positive bucket count; \
                     commit standard messages through a standard coordinator"
                )));
            }
            if total > MAX_TOTAL_BUCKETS {
                return Err(self.fail(
                    "total_buckets".into(),
                    Rule::Bounds,
                    format!(
                        "{total} buckets is above the coordinator's bound {MAX_TOTAL_BUCKETS}; \
                         a payload must not fix a partition's bucket count that high"
                    ),
                ));
            }
            if !(0..total).contains(&bucket) {
                return Err(bucket_fail(format!(
                    "{bucket} is outside 0..{} for total_buckets = {total}",
                    total - 1
                )));
            }
            return Ok(());
        }
        if let Some(total) = total_buckets {
            if rules.bucket_mode == BucketMode::Postpone && total > 0 {
                return Err(total_fail(format!(
                    "{total} on a postpone table: this message was written by a postpone \
                     fixed-bucket writer; bind the coordinator with WriteKind::PostponeFixedBucket"
                )));
            }
            if total != rules.bucket_option {
                return Err(total_fail(format!(
                    "{total}, but table {} has bucket = {}",
                    rules.table_name, rules.bucket_option
                )));
            }
        }
        let valid = match rules.bucket_mode {
            BucketMode::Fixed { buckets } => (0..buckets).contains(&bucket),
            BucketMode::Dynamic => (0..MAX_DYNAMIC_BUCKETS).contains(&bucket),
            BucketMode::Unaware => bucket == 0,
            BucketMode::Postpone => bucket == -2,
        };
        if valid {
            Ok(())
        } else {
            let expected = match rules.bucket_mode {
                BucketMode::Fixed { buckets } => format!("0..{}", buckets - 1),
                BucketMode::Dynamic => format!(
                    "0..{} (Java's dynamic-bucket range: its writers refuse a partition with a \
                     higher bucket)",
                    MAX_DYNAMIC_BUCKETS - 1
                ),
                BucketMode::Unaware => "0".into(),
                BucketMode::Postpone => "-2".into(),
            };
            Err(bucket_fail(format!(
                "{bucket}, but table {} is {} and takes buckets {expected}",
                rules.table_name, rules.bucket_mode
            )))
        }
    }

    fn plain_name(
        &self,
        field: impl FnOnce() -> String,
        name: &str,
    ) -> Result<(), ValidationError> {
        match plain_file_name_problem(name) {
            None => Ok(()),
            Some(problem) => Err(self.fail(
                field(),
                Rule::PlainFileName,
                format!("{name:?} {problem}; file names must be plain names inside the bucket"),
            )),
        }
    }

    fn non_negative(
        &self,
        field: impl FnOnce() -> String,
        value: i64,
    ) -> Result<(), ValidationError> {
        if value < 0 {
            Err(self.fail(field(), Rule::NonNegative, format!("{value} is negative")))
        } else {
            Ok(())
        }
    }

    /// Checks a number against `0..=max` under rule [`Rule::NonNegative`] (below zero) or
    /// [`Rule::Bounds`] (above `max`).
    fn bounded(
        &self,
        field: impl Fn() -> String,
        value: i64,
        max: i64,
    ) -> Result<(), ValidationError> {
        self.non_negative(&field, value)?;
        if value > max {
            Err(self.fail(
                field(),
                Rule::Bounds,
                format!("{value} is above the coordinator's bound {max}"),
            ))
        } else {
            Ok(())
        }
    }

    /// Refuses the kinds of change a binding without deletes may not commit: deleted data
    /// files, deletion-vector index files (added or deleted: a deletion vector hides rows, and
    /// dropping one brings deleted rows back), and deleted index files other than a HASH
    /// index the same message replaces (dynamic-bucket writers rewrite their bucket's hash
    /// index on every commit).
    fn change_kinds<M: MessageFields>(&self, message: &M) -> Result<(), ValidationError> {
        if self.rules.allow_deletes {
            return Ok(());
        }
        let opt_in = "the binding does not allow deletes; a job that deletes rows or maintains \
                      deletion vectors must opt in (Binding::with_deletes, C \
                      paimon_wire_table_commit_new_with_deletes, CLI --allow-deletes, Python \
                      allow_deletes=True)";
        if let Some(file) = message.data_files(DELETED_FILES).next() {
            return Err(self.fail(
                "deleted_files[0]".into(),
                Rule::ChangeKind,
                format!(
                    "{} deleted data file(s) (first {:?}): {opt_in}",
                    message.data_file_count(DELETED_FILES),
                    file.file_name()
                ),
            ));
        }
        for slot in [NEW_INDEX_FILES, DELETED_INDEX_FILES] {
            for (i, file) in message.index_files(slot).enumerate() {
                if file.index_type() == DELETION_VECTORS_INDEX_TYPE
                    || file.has_deletion_vector_ranges()
                {
                    return Err(self.fail(
                        format!("{}[{i}]", INDEX_LISTS[slot]),
                        Rule::ChangeKind,
                        format!(
                            "deletion-vector index file {:?}: {opt_in}",
                            file.file_name()
                        ),
                    ));
                }
            }
        }
        let replaces_hash_index = message
            .index_files(NEW_INDEX_FILES)
            .any(|f| f.index_type() == HASH_INDEX_TYPE);
        for (i, file) in message.index_files(DELETED_INDEX_FILES).enumerate() {
            let index_type = file.index_type();
            if !(index_type == HASH_INDEX_TYPE && replaces_hash_index) {
                return Err(self.fail(
                    format!("deleted_index_files[{i}]"),
                    Rule::ChangeKind,
                    format!(
                        "deleted {index_type} index file {:?}{}: {opt_in}",
                        file.file_name(),
                        if index_type == HASH_INDEX_TYPE {
                            " without a new HASH index replacing it"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Rule `new-file-level`: a new data file is at level 0, where every writer (Java's and
    /// the paimon crate's) flushes; higher levels are written only by compaction, whose
    /// results the compaction rules check. A new file at a higher level would skip the
    /// one-writer and sequence checks readers rely on (files of one level above 0 must not
    /// overlap). Postpone tables are exempt.
    fn new_file_level<'m>(
        &self,
        at: &ListElement<'_>,
        file: impl DataFileFields<'m>,
    ) -> Result<(), ValidationError> {
        if file.level() == 0 || self.rules.bucket_mode == BucketMode::Postpone {
            return Ok(());
        }
        Err(self.fail(
            format!("{at}.level"),
            Rule::NewFileLevel,
            format!(
                "{:?} is a new file at level {}; writers put new files at level 0, and only a \
                 compaction (compact_after) writes higher levels",
                file.file_name(),
                file.level()
            ),
        ))
    }

    /// Rule `key-range`: on a primary-key table a data file's key rows decode as the table's
    /// key type and its minimum is not above its maximum (not on postpone tables, whose files
    /// are unsorted until compaction).
    fn key_range<'m>(
        &self,
        at: &ListElement<'_>,
        file: impl DataFileFields<'m>,
    ) -> Result<(), ValidationError> {
        let keys = &self.rules.key_type;
        if keys.is_empty() {
            return Ok(());
        }
        let decode = |field: &str, bytes: &[u8]| {
            keys.decode(bytes)
                .map_err(|e| self.fail(format!("{at}.{field}"), Rule::KeyRange, e))
        };
        let min = decode("min_key", file.min_key())?;
        let max = decode("max_key", file.max_key())?;
        // A postpone table's writers do not sort what they write (compaction sorts it into
        // buckets): their key rows are the first and last key written, in any order.
        if self.rules.bucket_mode == BucketMode::Postpone {
            return Ok(());
        }
        if compare(&min, &max) == Some(std::cmp::Ordering::Greater) {
            return Err(self.fail(
                format!("{at}.min_key"),
                Rule::KeyRange,
                format!(
                    "{:?} claims a smallest key above its largest key; readers merge files by \
                     their key ranges, so a false range makes them skip a merge",
                    file.file_name()
                ),
            ));
        }
        Ok(())
    }

    /// The message's bucket directory relative to the table root (see
    /// [`TableRules::relative_bucket_path`]).
    fn relative_bucket_path(&self) -> Option<&str> {
        self.relative_bucket_path
            .get_or_init(|| self.rules.relative_bucket_path(self.partition, self.bucket))
            .as_deref()
    }

    /// An external path must be exactly where a writer of this table puts this file: one
    /// configured root, then the message's own partition and bucket directories, then (with
    /// `entropy-inject`) the four entropy directories, then the file name. `file:///x` and
    /// `file:/x` are the same path; nothing else is normalized, because the reader does
    /// not normalize either. For index files `global_root/<file name>` is accepted too.
    fn external_path(
        &self,
        field: impl Fn() -> String,
        path: &str,
        file_name: &str,
        global_root: Option<&str>,
    ) -> Result<(), ValidationError> {
        let fail = |reason: String| self.fail(field(), Rule::ExternalPath, reason);
        let roots = &self.rules.data_external_roots;
        if roots.is_empty() && global_root.is_none() {
            return Err(fail(format!(
                "{path:?}, but table {} configures no external paths \
                 ({DATA_EXTERNAL_PATHS_OPTION})",
                self.rules.table_name
            )));
        }
        let path = canonical_path(path);
        if let Some(global) = global_root {
            if path == format!("{}/{file_name}", canonical_root(global)) {
                return Ok(());
            }
        }
        let Some(bucket_path) = self.relative_bucket_path() else {
            return Err(fail(format!(
                "{path:?}: table {} keeps its data outside the table directory \
                 (data-file.path-directory), so the coordinator cannot tell where an external \
                 file of this bucket belongs",
                self.rules.table_name
            )));
        };
        for root in roots {
            let prefix = format!("{}/{bucket_path}/", canonical_root(root));
            let Some(rest) = path.strip_prefix(prefix.as_str()) else {
                continue;
            };
            let segments: Vec<&str> = rest.split('/').collect();
            let exact = if self.rules.entropy_inject {
                segments.len() == 5
                    && segments[..4]
                        .iter()
                        .enumerate()
                        .all(|(i, s)| is_entropy_segment(i, s))
                    && segments[4] == file_name
            } else {
                segments == [file_name]
            };
            if exact {
                return Ok(());
            }
        }
        let layout = if self.rules.entropy_inject {
            "/<4 entropy directories>"
        } else {
            ""
        };
        let mut expected: Vec<String> = roots
            .iter()
            .map(|root| format!("{}/{bucket_path}{layout}/{file_name}", canonical_root(root)))
            .collect();
        if let Some(global) = global_root {
            expected.push(format!("{}/{file_name}", canonical_root(global)));
        }
        Err(fail(format!(
            "{path:?} is not where this table keeps file {file_name:?} of this partition and \
             bucket; expected {}",
            expected.join(" or ")
        )))
    }

    fn data_file<'m>(
        &self,
        at: &ListElement<'_>,
        file: impl DataFileFields<'m>,
    ) -> Result<(), ValidationError> {
        let file_name = file.file_name();
        self.plain_name(|| format!("{at}.file_name"), file_name)?;
        self.key_range(at, file)?;
        for (i, extra) in file.extra_files().enumerate() {
            self.plain_name(|| format!("{at}.extra_files[{i}]"), extra)?;
        }
        if let Some(path) = file.external_path() {
            self.external_path(|| format!("{at}.external_path"), path, file_name, None)?;
        }
        let schema_id = file.schema_id();
        if !self.rules.schema_ids.contains(&schema_id) {
            return Err(self.fail(
                format!("{at}.schema_id"),
                Rule::SchemaId,
                format!(
                    "schema {schema_id} is not in the schema history of table {} (known: {})",
                    self.rules.table_name,
                    self.rules
                        .schema_ids
                        .iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let row_count = file.row_count();
        self.bounded(
            || format!("{at}.file_size"),
            file.file_size(),
            MAX_FILE_SIZE,
        )?;
        self.bounded(|| format!("{at}.row_count"), row_count, MAX_FILE_ROW_COUNT)?;
        self.non_negative(|| format!("{at}.level"), i64::from(file.level()))?;
        for (name, sequence) in [
            ("min_sequence_number", file.min_sequence_number()),
            ("max_sequence_number", file.max_sequence_number()),
        ] {
            if !(-MAX_SEQUENCE_OR_ROW_ID..=MAX_SEQUENCE_OR_ROW_ID).contains(&sequence) {
                return Err(self.fail(
                    format!("{at}.{name}"),
                    Rule::Bounds,
                    format!(
                        "{sequence} is beyond the coordinator's bound ±{MAX_SEQUENCE_OR_ROW_ID}"
                    ),
                ));
            }
        }
        if let Some(deleted) = file.delete_row_count() {
            self.non_negative(|| format!("{at}.delete_row_count"), deleted)?;
            if deleted > row_count {
                return Err(self.fail(
                    format!("{at}.delete_row_count"),
                    Rule::NonNegative,
                    format!("{deleted} deleted rows in a file of {row_count} rows"),
                ));
            }
        }
        if let Some(first_row_id) = file.first_row_id() {
            self.bounded(
                || format!("{at}.first_row_id"),
                first_row_id,
                MAX_SEQUENCE_OR_ROW_ID,
            )?;
            // Both are bounded now, so the sum cannot overflow.
            self.bounded(
                || format!("{at}.first_row_id"),
                first_row_id + row_count,
                MAX_SEQUENCE_OR_ROW_ID,
            )?;
        }
        Ok(())
    }

    fn index_file<'m>(
        &self,
        at: &ListElement<'_>,
        file: impl IndexFileFields<'m>,
    ) -> Result<(), ValidationError> {
        let file_name = file.file_name();
        if !is_known_index_type(file.index_type()) {
            return Err(self.fail(
                format!("{at}.index_type"),
                Rule::IndexType,
                format!(
                    "{:?} is not an index type Paimon defines ({DELETION_VECTORS_INDEX_TYPE}, \
                     {HASH_INDEX_TYPE}, or a global index type: {})",
                    file.index_type(),
                    paimon::table::SUPPORTED_GLOBAL_INDEX_TYPES_FOR_DROP
                ),
            ));
        }
        self.plain_name(|| format!("{at}.file_name"), file_name)?;
        if let Some(path) = file.external_path() {
            self.external_path(
                || format!("{at}.external_path"),
                path,
                file_name,
                self.rules.global_index_external_root.as_deref(),
            )?;
        }
        let file_size = file.file_size();
        self.bounded(|| format!("{at}.file_size"), file_size, MAX_FILE_SIZE)?;
        self.bounded(
            || format!("{at}.row_count"),
            file.row_count(),
            MAX_FILE_ROW_COUNT,
        )?;
        for range in file.deletion_vector_ranges().unwrap_or_default() {
            let data_file = range.data_file_name;
            let at = || format!("{at}.deletion_vectors_ranges[{data_file:?}]");
            self.plain_name(at, data_file)?;
            self.non_negative(|| format!("{}.offset", at()), i64::from(range.offset))?;
            self.non_negative(|| format!("{}.length", at()), i64::from(range.length))?;
            // Two non-negative i32s: the i64 sum cannot overflow.
            let end = i64::from(range.offset) + i64::from(range.length);
            if end > file_size {
                return Err(self.fail(
                    at(),
                    Rule::Bounds,
                    format!(
                        "deletion vector at {}..{end} lies beyond the end of index file \
                         {file_name:?} ({file_size} bytes)",
                        range.offset
                    ),
                ));
            }
            if let Some(cardinality) = range.cardinality {
                self.bounded(
                    || format!("{}.cardinality", at()),
                    cardinality,
                    MAX_FILE_ROW_COUNT,
                )?;
            }
        }
        if let Some(global) = file.global_index() {
            self.bounded(
                || format!("{at}.global_index_meta.row_range_end"),
                global.row_range_end,
                MAX_SEQUENCE_OR_ROW_ID,
            )?;
            if !self.rules.field_ids.contains(&global.index_field_id) {
                return Err(self.fail(
                    format!("{at}.global_index_meta.index_field_id"),
                    Rule::SchemaId,
                    format!(
                        "field id {} is not a field of table {}",
                        global.index_field_id, self.rules.table_name
                    ),
                ));
            }
            self.non_negative(
                || format!("{at}.global_index_meta.row_range_start"),
                global.row_range_start,
            )?;
            if global.row_range_end < global.row_range_start {
                return Err(self.fail(
                    format!("{at}.global_index_meta.row_range_end"),
                    Rule::NonNegative,
                    format!(
                        "row range {}..{} ends before it starts",
                        global.row_range_start, global.row_range_end
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The bytes Java's `BinaryRowWriter` writes for these partition values, with the
/// `SerializationUtils.serializeBinaryRow` arity prefix; `None` for a type a partition key
/// cannot have. Java reserves variable-length space for a null non-compact DECIMAL (16 bytes)
/// or TIMESTAMP (8 bytes) and points the null field at it (`BinaryWriter.createNullSetter`).
pub(crate) fn java_partition_row(values: &[(Option<&Datum>, &DataType)]) -> Option<Vec<u8>> {
    const HEADER_BITS: usize = 8;
    let arity = values.len();
    let null_bits = (arity + 63 + HEADER_BITS) / 64 * 8;
    let mut row = vec![0u8; null_bits + 8 * arity];
    for (pos, (value, data_type)) in values.iter().enumerate() {
        let slot = null_bits + 8 * pos;
        let set_slot = |row: &mut Vec<u8>, word: u64| {
            row[slot..slot + 8].copy_from_slice(&word.to_le_bytes());
        };
        let append_var = |row: &mut Vec<u8>, bytes: &[u8], reserve: usize| -> u64 {
            let offset = row.len() as u64;
            row.extend_from_slice(bytes);
            row.resize(row.len() + reserve - bytes.len(), 0);
            offset << 32
        };
        let Some(value) = value else {
            row[(pos + HEADER_BITS) / 8] |= 1 << ((pos + HEADER_BITS) % 8);
            let reserved = match data_type {
                DataType::Decimal(d) if d.precision() > 18 => 16,
                DataType::Timestamp(t) if t.precision() > 3 => 8,
                DataType::LocalZonedTimestamp(t) if t.precision() > 3 => 8,
                _ => 0,
            };
            if reserved > 0 {
                let word = append_var(&mut row, &[], reserved);
                set_slot(&mut row, word);
            }
            continue;
        };
        match (value, data_type) {
            (Datum::Bool(v), _) => row[slot] = u8::from(*v),
            (Datum::TinyInt(v), _) => row[slot] = *v as u8,
            (Datum::SmallInt(v), _) => row[slot..slot + 2].copy_from_slice(&v.to_le_bytes()),
            (Datum::Int(v) | Datum::Date(v) | Datum::Time(v), _) => {
                row[slot..slot + 4].copy_from_slice(&v.to_le_bytes())
            }
            (Datum::Float(v), _) => row[slot..slot + 4].copy_from_slice(&v.to_le_bytes()),
            (Datum::Long(v), _) => set_slot(&mut row, *v as u64),
            (Datum::Double(v), _) => set_slot(&mut row, v.to_bits()),
            (Datum::String(_) | Datum::Bytes(_), _) => {
                let bytes = match value {
                    Datum::String(s) => s.as_bytes(),
                    Datum::Bytes(b) => b.as_slice(),
                    _ => return None,
                };
                if bytes.len() <= 7 {
                    let mut word = [0u8; 8];
                    word[..bytes.len()].copy_from_slice(bytes);
                    word[7] = 0x80 | bytes.len() as u8;
                    row[slot..slot + 8].copy_from_slice(&word);
                } else {
                    let padded = bytes.len().div_ceil(8) * 8;
                    let word = append_var(&mut row, bytes, padded) | bytes.len() as u64;
                    set_slot(&mut row, word);
                }
            }
            (Datum::Decimal { unscaled, .. }, DataType::Decimal(d)) => {
                if d.precision() <= 18 {
                    set_slot(&mut row, *unscaled as i64 as u64);
                } else {
                    let minimal = minimal_twos_complement(*unscaled);
                    let word = append_var(&mut row, &minimal, 16) | minimal.len() as u64;
                    set_slot(&mut row, word);
                }
            }
            (
                Datum::Timestamp { millis, nanos } | Datum::LocalZonedTimestamp { millis, nanos },
                DataType::Timestamp(_) | DataType::LocalZonedTimestamp(_),
            ) => {
                let precision = match data_type {
                    DataType::Timestamp(t) => t.precision(),
                    DataType::LocalZonedTimestamp(t) => t.precision(),
                    _ => return None,
                };
                if precision <= 3 {
                    set_slot(&mut row, *millis as u64);
                } else {
                    let word =
                        append_var(&mut row, &millis.to_le_bytes(), 8) | *nanos as u32 as u64;
                    set_slot(&mut row, word);
                }
            }
            _ => return None,
        }
    }
    let mut out = (arity as i32).to_be_bytes().to_vec();
    out.extend_from_slice(&row);
    Some(out)
}

/// Java `BigInteger.toByteArray()`: the shortest big-endian two's complement form.
fn minimal_twos_complement(value: i128) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xFF && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    bytes[start..].to_vec()
}

fn key_names(fields: &[DataField]) -> String {
    if fields.is_empty() {
        "no keys".into()
    } else {
        fields
            .iter()
            .map(DataField::name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The path of one file in a message's list (`new_files[3]`), formatted only when a check
/// fails: validation runs for every file of every payload, and almost all pass.
struct ListElement<'a>(&'a str, usize);

impl std::fmt::Display for ListElement<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
    }
}

/// The compaction lists of `message` with their lengths, in wire order.
pub(crate) fn compaction_lists<M: MessageFields>(
    message: &M,
) -> impl Iterator<Item = (&'static str, usize)> + '_ {
    let data = (COMPACT_BEFORE..DATA_LISTS.len())
        .map(|slot| (DATA_LISTS[slot], message.data_file_count(slot)));
    let index = (COMPACT_NEW_INDEX_FILES..INDEX_LISTS.len())
        .map(|slot| (INDEX_LISTS[slot], message.index_file_count(slot)));
    data.chain(index)
}

/// Whether `message` carries a compaction result.
pub(crate) fn has_compaction<M: MessageFields>(message: &M) -> bool {
    compaction_lists(message).any(|(_, n)| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names() {
        assert_eq!(plain_file_name_problem("data-1.parquet"), None);
        for bad in ["", "a/b", "a\\b", "a\0b", ".", ".."] {
            assert!(plain_file_name_problem(bad).is_some(), "{bad:?}");
        }
        assert_eq!(plain_file_name_problem("..a"), None);
    }

    #[test]
    fn java_and_rust_spellings_of_a_file_uri_compare_equal_and_nothing_else_is_rewritten() {
        assert_eq!(
            canonical_path("file:///tmp/a/x"),
            canonical_path("file:/tmp/a/x")
        );
        // The reader strips only a lower-case `file:/`, and a bare `/tmp/..` resolves
        // against the warehouse's file system: neither is the same path.
        assert_ne!(
            canonical_path("FILE:///tmp/a/x"),
            canonical_path("file:/tmp/a/x")
        );
        assert_ne!(canonical_path("/tmp/a/x"), canonical_path("file:/tmp/a/x"));
        assert_eq!(canonical_path("s3://bucket/root/x"), "s3://bucket/root/x");
        assert!(is_entropy_segment(0, "0101") && is_entropy_segment(3, "01010101"));
        assert_eq!(canonical_root("file:///tmp//a/"), "file:/tmp/a/");
        assert_eq!(canonical_root("s3://bucket//root"), "s3://bucket/root");
        assert!(!is_entropy_segment(0, "01010101") && !is_entropy_segment(1, "012a"));
    }

    /// Rows written by Paimon 2.0.0's generated partition projection
    /// (`CodeGenUtils.newProjection(rowType, {1..7}).apply(GenericRow.of(..)).copy()`, then
    /// `SerializationUtils.serializeBinaryRow`), for keys
    /// `STRING, STRING, BIGINT, DECIMAL(20, 2), TIMESTAMP(6), DATE, BOOLEAN`.
    const JAVA_ROWS: [&str; 3] = [
        "000000070000000000000000610000000000008116000000400000002a000000000000000200000058000000\
         40f5060068000000384a000000000000010000000000000061206c6f6e6720706172746974696f6e2076616c\
         75650000303900000000000000000000000000007b68e5cf8b010000",
        "00000007007d0000000000000000000000000000780000000000008100000000000000000000000040000000\
         0000000050000000000000000000000000000000000000000000000000000000000000000000000000000000\
         00000000",
        "00000007000000000000000031323334353637870800000040000000ffffffffffffffff0900000048000000\
         0100000058000000fdffffff0000000000000000000000003132333435363738ff54ab567314e0f52e000000\
         00000000fbffffffffffffff",
    ];

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn partition_rows_are_encoded_as_java_writes_them() {
        use paimon::spec::{
            BigIntType, BooleanType, DateType, DecimalType, TimestampType, VarCharType,
        };
        let string = DataType::VarChar(VarCharType::string_type());
        let long = DataType::BigInt(BigIntType::new());
        let decimal = DataType::Decimal(DecimalType::new(20, 2).unwrap());
        let timestamp = DataType::Timestamp(TimestampType::new(6).unwrap());
        let date = DataType::Date(DateType::new());
        let boolean = DataType::Boolean(BooleanType::new());
        let types = [
            &string, &string, &long, &decimal, &timestamp, &date, &boolean,
        ];
        let rows: [[Option<Datum>; 7]; 3] = [
            [
                Some(Datum::String("a".into())),
                Some(Datum::String("a long partition value".into())),
                Some(Datum::Long(42)),
                Some(Datum::Decimal {
                    unscaled: 12345,
                    precision: 20,
                    scale: 2,
                }),
                Some(Datum::Timestamp {
                    millis: 1_700_000_000_123,
                    nanos: 456_000,
                }),
                Some(Datum::Date(19000)),
                Some(Datum::Bool(true)),
            ],
            [
                None,
                Some(Datum::String("x".into())),
                None,
                None,
                None,
                None,
                None,
            ],
            [
                Some(Datum::String("1234567".into())),
                Some(Datum::String("12345678".into())),
                Some(Datum::Long(-1)),
                Some(Datum::Decimal {
                    unscaled: -12_345_678_901_234_567_890,
                    precision: 20,
                    scale: 2,
                }),
                Some(Datum::Timestamp {
                    millis: -5,
                    nanos: 1,
                }),
                Some(Datum::Date(-3)),
                Some(Datum::Bool(false)),
            ],
        ];
        for (row, java) in rows.iter().zip(JAVA_ROWS) {
            let java: String = java.split_whitespace().collect();
            let typed: Vec<_> = row
                .iter()
                .zip(types)
                .map(|(v, t)| (v.as_ref(), t))
                .collect();
            assert_eq!(hex(&java_partition_row(&typed).unwrap()), java);
            // And the decoder reads Java's bytes back to the same values.
            let bytes: Vec<u8> = (0..java.len() / 2)
                .map(|i| u8::from_str_radix(&java[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            let decoded = BinaryRow::from_serialized_bytes(&bytes).unwrap();
            for (pos, (value, data_type)) in typed.iter().enumerate() {
                assert_eq!(decoded.get_datum(pos, data_type).unwrap().as_ref(), *value);
            }
        }
        // The paimon crate writes the all-null row differently (no reserved space), which is
        // why the check accepts both forms.
        let nulls: Vec<_> = rows[1]
            .iter()
            .zip(types)
            .map(|(v, t)| (v.as_ref(), t))
            .collect();
        assert_ne!(
            BinaryRow::from_datums(&nulls).to_serialized_bytes(),
            java_partition_row(&nulls).unwrap()
        );
    }

    #[test]
    fn known_index_types() {
        for known in [
            "DELETION_VECTORS",
            "HASH",
            "btree",
            "bitmap",
            "ivf-pq",
            "lumina",
        ] {
            assert!(is_known_index_type(known), "{known}");
        }
        for unknown in ["", "hash", "deletion_vectors", "bloom", "BTREE", "Bitmap"] {
            assert!(!is_known_index_type(unknown), "{unknown}");
        }
    }
}
