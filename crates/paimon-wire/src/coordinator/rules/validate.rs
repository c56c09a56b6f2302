//! Validation of untrusted messages against the bound table (the rules are listed in the
//! [module docs of the coordinator](crate::coordinator#trust-model)).
//!
//! The coordinator reads what it needs of its table once, at bind time (partition key types,
//! bucket option, schema ids, external roots), and checks each message against it. The
//! public helpers here ([`plain_file_name_problem`], [`is_known_index_type`],
//! [`BucketMode`]) are the rules' building blocks, for callers that want to explain them.

use paimon::spec::{BinaryRow, DataField, DataType, Datum, EMPTY_SERIALIZED_ROW};
use paimon::table::normalize_global_index_type_for_drop;

use super::shared::check::{Check, ListElement};
use super::shared::fields::{
    DataFileFields, IndexFileFields, MessageFields, DELETED_FILES, DELETED_INDEX_FILES,
    INDEX_LISTS, NEW_INDEX_FILES,
};
use super::shared::keys::compare;
use super::shared::paths::{canonical_path, canonical_root};
use crate::coordinator::binding::WriteKind;
use crate::coordinator::error::{Rule, ValidationError};

pub use super::shared::limits::*;

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

impl Check<'_> {
    pub(super) fn partition(&self, bytes: &[u8]) -> Result<(), ValidationError> {
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

    pub(super) fn bucket(
        &self,
        bucket: i32,
        total_buckets: Option<i32>,
    ) -> Result<(), ValidationError> {
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

    pub(super) fn non_negative(
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
    pub(super) fn change_kinds<M: MessageFields>(
        &self,
        message: &M,
    ) -> Result<(), ValidationError> {
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
    pub(super) fn new_file_level<'m>(
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

    pub(super) fn data_file<'m>(
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

    pub(super) fn index_file<'m>(
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
