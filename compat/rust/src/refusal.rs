//! One refusal per writable version: a message of that version plus one field only a newer
//! version carries must be refused with the field named, and the same message without that
//! field must be written.

use paimon_wire::paimon::spec::{GlobalIndexMeta, IndexFileMeta};
use paimon_wire::{
    serialize_list, serialize_list_with, CodecErrorKind, CommitMessage, EncodeOptions, LossyField,
    SerializerVersion,
};

use crate::generate::Sampler;

/// The field a version is checked to refuse: the one the next writable version adds.
#[derive(Debug, Clone, Copy)]
pub struct Refusal {
    /// The version that cannot carry the field.
    pub version: SerializerVersion,
    /// The field.
    pub field: LossyField,
    /// Its path in the error, inside `messages[0]`.
    pub path: &'static str,
    /// The first writable version that carries it.
    pub carried_by: SerializerVersion,
}

/// The refusal checked for `version`; `None` for the current version, which carries
/// everything.
pub fn refusal_for(version: SerializerVersion) -> Option<Refusal> {
    use SerializerVersion::*;
    let (field, path, carried_by) = match version {
        V2 => (LossyField::FileSource, "new_files[0].file_source", V3),
        V3 => (
            LossyField::ValueStatsCols,
            "new_files[0].value_stats_cols",
            V6,
        ),
        V6 => (LossyField::TotalBuckets, "total_buckets", V7),
        V7 => (LossyField::FirstRowId, "new_files[0].first_row_id", V10),
        V10 => (
            LossyField::GlobalIndexMeta,
            "new_index_files[0].global_index_meta",
            V11,
        ),
        V11 => (
            LossyField::GlobalIndexSourceMeta,
            "new_index_files[0].global_index_meta.source_meta",
            V12,
        ),
        V12 => (
            LossyField::ColumnMaxSequenceNumbers,
            "new_files[0].column_max_sequence_numbers",
            V13,
        ),
        V13 => (LossyField::CheckFromSnapshot, "check_from_snapshot", V14),
        _ => return None,
    };
    Some(Refusal {
        version,
        field,
        path,
        carried_by,
    })
}

/// The message the refusal of `r` is checked with: a generated message of `r.version` with
/// at least one new data file, and `r.field` set on it.
pub fn message_with_field(r: &Refusal, seed: u64) -> CommitMessage {
    let mut sampler = Sampler::new(seed);
    let mut m = sampler.message(r.version);
    if m.new_files.is_empty() {
        m.new_files.push(sampler.data_file(r.version));
    }
    // index files go on the data side only when the compact side has no files (before v10)
    m.compact_before.clear();
    m.compact_after.clear();
    m.compact_changelog_files.clear();
    m.new_index_files.append(&mut m.compact_new_index_files);
    m.deleted_index_files
        .append(&mut m.compact_deleted_index_files);
    let global = |source_meta: Option<Vec<u8>>| GlobalIndexMeta {
        row_range_start: 0,
        row_range_end: 99,
        index_field_id: 1,
        extra_field_ids: Some(vec![2]),
        index_meta: Some(vec![7, 7]),
        source_meta,
    };
    match r.field {
        LossyField::FileSource => m.new_files[0].file_source = Some(1),
        LossyField::ValueStatsCols => m.new_files[0].value_stats_cols = Some(vec!["v".into()]),
        LossyField::TotalBuckets => m.total_buckets = Some(4),
        LossyField::FirstRowId => m.new_files[0].first_row_id = Some(100),
        LossyField::GlobalIndexMeta => {
            first_index_file(&mut m).global_index_meta = Some(global(None));
        }
        LossyField::GlobalIndexSourceMeta => {
            first_index_file(&mut m).global_index_meta = Some(global(Some(vec![1, 2, 3])));
        }
        LossyField::ColumnMaxSequenceNumbers => {
            m.new_files[0].column_max_sequence_numbers = Some(vec![5, 6]);
        }
        LossyField::CheckFromSnapshot => m.check_from_snapshot = Some(3),
        other => unreachable!("no refusal is checked with {other}"),
    }
    m
}

fn first_index_file(m: &mut CommitMessage) -> &mut IndexFileMeta {
    if m.new_index_files.is_empty() {
        m.new_index_files.push(IndexFileMeta {
            index_type: "btree".into(),
            file_name: "index-refusal-0".into(),
            file_size: 64,
            row_count: 100,
            deletion_vectors_ranges: None,
            external_path: None,
            global_index_meta: None,
        });
    }
    &mut m.new_index_files[0]
}

/// Checks the refusal: `r.version` refuses the message with the field named, `r.carried_by`
/// writes it, and with the field named droppable `r.version` writes the rest. Returns the
/// error's text and the bytes written without the field.
pub fn check(r: &Refusal, seed: u64) -> Result<(String, Vec<u8>), String> {
    let m = message_with_field(r, seed);
    let one = std::slice::from_ref(&m);
    let err = match serialize_list(one, r.version) {
        Ok(_) => return Err(format!("version {} wrote {}", r.version, r.field)),
        Err(e) => e,
    };
    let expected_path = format!("messages[0].{}", r.path);
    if !matches!(err.kind(), CodecErrorKind::Unrepresentable { .. })
        || err.field_path() != expected_path
        || err.version() != Some(r.version.as_i32())
        || !err.to_string().contains(r.field.name())
    {
        return Err(format!(
            "version {} refused {} at {:?} with {err:?}; expected an unrepresentable {} at {}",
            r.version,
            r.field,
            err.field_path(),
            r.field.name(),
            expected_path
        ));
    }
    serialize_list(one, r.carried_by)
        .map_err(|e| format!("version {} cannot write {}: {e}", r.carried_by, r.field))?;
    let dropped = serialize_list_with(
        one,
        r.version,
        &EncodeOptions::default().allow_dropping(r.field),
    )
    .map_err(|e| format!("version {} refuses more than {}: {e}", r.version, r.field))?;
    Ok((err.to_string(), dropped))
}

/// `m` without the field of `r`, as the version reads it back.
pub fn without_field(r: &Refusal, mut m: CommitMessage) -> CommitMessage {
    match r.field {
        LossyField::FileSource => m.new_files[0].file_source = None,
        LossyField::ValueStatsCols => m.new_files[0].value_stats_cols = None,
        LossyField::TotalBuckets => m.total_buckets = None,
        LossyField::FirstRowId => m.new_files[0].first_row_id = None,
        LossyField::GlobalIndexMeta => m.new_index_files[0].global_index_meta = None,
        LossyField::GlobalIndexSourceMeta => {
            if let Some(g) = m.new_index_files[0].global_index_meta.as_mut() {
                g.source_meta = None;
            }
        }
        LossyField::ColumnMaxSequenceNumbers => {
            m.new_files[0].column_max_sequence_numbers = None;
        }
        LossyField::CheckFromSnapshot => m.check_from_snapshot = None,
        _ => {}
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use paimon_wire::deserialize_list;
    use paimon_wire::dump::messages_to_json;

    #[test]
    fn every_writable_version_but_the_current_refuses_its_next_field() {
        for version in SerializerVersion::WRITABLE {
            let Some(r) = refusal_for(version) else {
                assert_eq!(version, SerializerVersion::CURRENT);
                continue;
            };
            let (_, dropped) = check(&r, crate::MATRIX_SEED).unwrap_or_else(|e| panic!("{e}"));
            let back = deserialize_list(version, &dropped).unwrap();
            let expected = without_field(&r, message_with_field(&r, crate::MATRIX_SEED));
            assert_eq!(
                messages_to_json(&back),
                messages_to_json(&[expected]),
                "{version}: only {} is dropped",
                r.field
            );
        }
    }
}
