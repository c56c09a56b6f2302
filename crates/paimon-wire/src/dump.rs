//! The canonical JSON dump of commit messages: one schema, shared with the Java harness
//! (`compat/java`), so that a message decoded by Rust and the same message decoded by real
//! Java can be compared field by field. `paimon-wire inspect` prints it.
//!
//! Field names are the `paimon` crate's snake_case names. Binary rows (partition, keys,
//! statistics) are lowercase hex of the bytes exactly as they appear on the wire (a
//! big-endian arity, then the row). `creation_time` is milliseconds since the epoch.

use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::CommitMessage;
use serde_json::{json, Map, Value};

/// The canonical dump of a list of messages: a JSON array, one object per message.
pub fn messages_to_json(messages: &[CommitMessage]) -> Value {
    Value::Array(messages.iter().map(message_to_json).collect())
}

/// The canonical dump of one message.
pub fn message_to_json(m: &CommitMessage) -> Value {
    let files =
        |files: &[DataFileMeta]| Value::Array(files.iter().map(data_file_to_json).collect());
    let indexes =
        |files: &[IndexFileMeta]| Value::Array(files.iter().map(index_file_to_json).collect());
    let mut o = Map::new();
    o.insert("partition".into(), hex(&m.partition).into());
    o.insert("bucket".into(), m.bucket.into());
    o.insert("total_buckets".into(), m.total_buckets.into());
    o.insert("check_from_snapshot".into(), m.check_from_snapshot.into());
    o.insert("new_files".into(), files(&m.new_files));
    o.insert("deleted_files".into(), files(&m.deleted_files));
    o.insert("new_changelog_files".into(), files(&m.new_changelog_files));
    o.insert("new_index_files".into(), indexes(&m.new_index_files));
    o.insert(
        "deleted_index_files".into(),
        indexes(&m.deleted_index_files),
    );
    o.insert("compact_before".into(), files(&m.compact_before));
    o.insert("compact_after".into(), files(&m.compact_after));
    o.insert(
        "compact_changelog_files".into(),
        files(&m.compact_changelog_files),
    );
    o.insert(
        "compact_new_index_files".into(),
        indexes(&m.compact_new_index_files),
    );
    o.insert(
        "compact_deleted_index_files".into(),
        indexes(&m.compact_deleted_index_files),
    );
    Value::Object(o)
}

/// The canonical dump of one data file.
pub fn data_file_to_json(f: &DataFileMeta) -> Value {
    let stats = |min: &[u8], max: &[u8], nulls: &[Option<i64>]| json!({"min_values": hex(min), "max_values": hex(max), "null_counts": nulls});
    json!({
        "file_name": f.file_name,
        "file_size": f.file_size,
        "row_count": f.row_count,
        "min_key": hex(&f.min_key),
        "max_key": hex(&f.max_key),
        "key_stats": stats(f.key_stats.min_values(), f.key_stats.max_values(), f.key_stats.null_counts()),
        "value_stats": stats(f.value_stats.min_values(), f.value_stats.max_values(), f.value_stats.null_counts()),
        "min_sequence_number": f.min_sequence_number,
        "max_sequence_number": f.max_sequence_number,
        "schema_id": f.schema_id,
        "level": f.level,
        "extra_files": f.extra_files,
        "creation_time": f.creation_time.map(|t| t.timestamp_millis()),
        "delete_row_count": f.delete_row_count,
        "embedded_index": f.embedded_index.as_deref().map(hex),
        "file_source": f.file_source,
        "value_stats_cols": f.value_stats_cols,
        "external_path": f.external_path,
        "first_row_id": f.first_row_id,
        "write_cols": f.write_cols,
        "column_max_sequence_numbers": f.column_max_sequence_numbers,
    })
}

/// The canonical dump of one index file.
pub fn index_file_to_json(f: &IndexFileMeta) -> Value {
    let ranges = f.deletion_vectors_ranges.as_ref().map(|ranges| {
        ranges
            .iter()
            .map(|(name, r)| {
                json!({"data_file_name": name, "offset": r.offset, "length": r.length, "cardinality": r.cardinality})
            })
            .collect::<Vec<_>>()
    });
    let global = f.global_index_meta.as_ref().map(|g| {
        json!({
            "row_range_start": g.row_range_start,
            "row_range_end": g.row_range_end,
            "index_field_id": g.index_field_id,
            "extra_field_ids": g.extra_field_ids,
            "index_meta": g.index_meta.as_deref().map(hex),
            "source_meta": g.source_meta.as_deref().map(hex),
        })
    });
    json!({
        "index_type": f.index_type,
        "file_name": f.file_name,
        "file_size": f.file_size,
        "row_count": f.row_count,
        "deletion_vectors_ranges": ranges,
        "external_path": f.external_path,
        "global_index_meta": global,
    })
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}
