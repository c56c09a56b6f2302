//! The zero-copy views (`paimon_wire::view`): every accessor reads what real Java read from
//! the same bytes, views accept and refuse exactly what the owned decoder does, and a view of
//! a corrupted payload that parses is safe to walk completely.

mod common;

use paimon_wire::dump::hex;
use paimon_wire::view::{DataFileView, IndexFileView, MessageView, PayloadView, StatsView};
use paimon_wire::{deserialize_list, serialize_list, DecodeLimits, SerializerVersion};
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{json, Value};

/// The canonical dump (`paimon_wire::dump`'s schema) built from the views' accessors alone,
/// without materializing any owned value.
fn view_to_json(view: &PayloadView<'_>) -> Value {
    Value::Array(view.messages().iter().map(message_to_json).collect())
}

fn message_to_json(m: &MessageView<'_>) -> Value {
    let mut o = serde_json::Map::new();
    o.insert("partition".into(), hex(m.partition()).into());
    o.insert("bucket".into(), m.bucket().into());
    o.insert("total_buckets".into(), m.total_buckets().into());
    o.insert("check_from_snapshot".into(), m.check_from_snapshot().into());
    for (name, files) in m.data_file_lists() {
        let dumped: Vec<Value> = files.iter().map(|f| data_file_to_json(&f)).collect();
        assert_eq!(
            dumped.len(),
            files.len(),
            "{name}: iterated files vs the list's count"
        );
        let files = dumped;
        o.insert(name.into(), Value::Array(files));
    }
    for (name, files) in m.index_file_lists() {
        let files: Vec<Value> = files.iter().map(|f| index_file_to_json(&f)).collect();
        o.insert(name.into(), Value::Array(files));
    }
    Value::Object(o)
}

fn stats_to_json(s: StatsView<'_>) -> Value {
    json!({
        "min_values": hex(s.min_values()),
        "max_values": hex(s.max_values()),
        "null_counts": s.null_counts().collect::<Vec<_>>(),
    })
}

fn data_file_to_json(f: &DataFileView<'_>) -> Value {
    fn strings(s: paimon_wire::view::StringsView<'_>) -> Vec<&str> {
        s.iter().collect()
    }
    json!({
        "file_name": f.file_name(),
        "file_size": f.file_size(),
        "row_count": f.row_count(),
        "min_key": hex(f.min_key()),
        "max_key": hex(f.max_key()),
        "key_stats": stats_to_json(f.key_stats()),
        "value_stats": stats_to_json(f.value_stats()),
        "min_sequence_number": f.min_sequence_number(),
        "max_sequence_number": f.max_sequence_number(),
        "schema_id": f.schema_id(),
        "level": f.level(),
        "extra_files": strings(f.extra_files()),
        "creation_time": f.creation_time().map(|t| t.timestamp_millis()),
        "delete_row_count": f.delete_row_count(),
        "embedded_index": f.embedded_index().map(hex),
        "file_source": f.file_source(),
        "value_stats_cols": f.value_stats_cols().map(strings),
        "external_path": f.external_path(),
        "first_row_id": f.first_row_id(),
        "write_cols": f.write_cols().map(strings),
        "column_max_sequence_numbers": f.column_max_sequence_numbers().map(|v| v.iter().collect::<Vec<_>>()),
    })
}

fn index_file_to_json(f: &IndexFileView<'_>) -> Value {
    // Java keeps the ranges in a LinkedHashMap: a repeated data file name keeps its first
    // position and takes the last value.
    let ranges = f.deletion_vector_ranges().map(|ranges| {
        let mut map: indexmap::IndexMap<&str, Value> = indexmap::IndexMap::new();
        for r in ranges {
            map.insert(
                r.data_file_name,
                json!({"data_file_name": r.data_file_name, "offset": r.offset, "length": r.length, "cardinality": r.cardinality}),
            );
        }
        map.into_values().collect::<Vec<_>>()
    });
    let global = f.global_index().map(|g| {
        json!({
            "row_range_start": g.row_range_start(),
            "row_range_end": g.row_range_end(),
            "index_field_id": g.index_field_id(),
            "extra_field_ids": g.extra_field_ids().map(|ids| ids.collect::<Vec<_>>()),
            "index_meta": g.index_meta().map(hex),
            "source_meta": g.source_meta().map(hex),
        })
    });
    json!({
        "index_type": f.index_type(),
        "file_name": f.file_name(),
        "file_size": f.file_size(),
        "row_count": f.row_count(),
        "deletion_vectors_ranges": ranges,
        "external_path": f.external_path(),
        "global_index_meta": global,
    })
}

#[test]
fn views_read_what_java_read_from_every_release_fixture() {
    let fixtures = common::java_fixtures();
    assert!(fixtures.len() >= 20, "found {} fixtures", fixtures.len());
    for (path, version) in &fixtures {
        let bytes = std::fs::read(path).unwrap();
        let view = PayloadView::parse(*version, &bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let java_json: Value =
            serde_json::from_slice(&std::fs::read(path.with_extension("json")).unwrap()).unwrap();
        assert_eq!(
            view_to_json(&view),
            java_json,
            "{}: the views read differently from Java",
            path.display()
        );
        assert_eq!(view.version(), *version);
        assert_eq!(view.len(), java_json.as_array().unwrap().len());
        let owned = deserialize_list(*version, &bytes).unwrap();
        assert_eq!(
            common::dump(&view.to_messages()),
            common::dump(&owned),
            "{}",
            path.display()
        );
        assert_eq!(
            view.data_file_count(),
            owned.iter().map(|m| m.new_files.len()).sum::<usize>()
        );
        assert_eq!(
            view.reported_row_count(),
            owned
                .iter()
                .flat_map(|m| &m.new_files)
                .map(|f| f.row_count)
                .fold(0i64, i64::saturating_add)
        );
    }
}

#[test]
fn views_refuse_with_the_limits_of_the_owned_decoder() {
    let files = vec![common::fixed_data_file("a"), common::fixed_data_file("b")];
    let messages = vec![paimon_wire::CommitMessage::new(vec![0; 12], 3, files)];
    let bytes = serialize_list(&messages, SerializerVersion::V14).unwrap();
    let one_file = DecodeLimits {
        max_files: 1,
        ..DecodeLimits::UNLIMITED
    };
    let view_error =
        PayloadView::parse_with_limits(SerializerVersion::V14, &bytes, &one_file).unwrap_err();
    let owned_error =
        paimon_wire::deserialize_list_with_limits(SerializerVersion::V14, &bytes, &one_file)
            .unwrap_err();
    assert_eq!(view_error.to_string(), owned_error.to_string());
    assert!(view_error.to_string().contains("files"), "{view_error}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Views of what the encoder wrote read the messages that went in (every field of the
    /// model, every version), compared with the generator's messages, not with a decode.
    #[test]
    fn views_read_back_every_field(
        (version, messages) in (1i32..=14)
            .prop_map(|v| SerializerVersion::try_from(v).unwrap())
            .prop_filter("a version some release writes", |v| v.is_writable())
            .prop_flat_map(|v| (Just(v), vec(common::message(v), 0..4)))
    ) {
        let bytes = serialize_list(&messages, version).unwrap();
        let view = PayloadView::parse(version, &bytes).unwrap();
        prop_assert_eq!(view_to_json(&view), common::dump(&messages));
    }

    /// Corrupted payloads: the view and the owned decoder agree on accepting or refusing, with
    /// the same error; a view that parses can be walked completely (the accessors' debug
    /// assertions would fail if a checked field could not be read again).
    #[test]
    fn corrupted_payloads_parse_as_the_owned_decoder_decodes(
        messages in vec(common::message(SerializerVersion::V14), 1..3),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        version in 1i32..=14,
    ) {
        let version = SerializerVersion::try_from(version).unwrap();
        let mut bytes = serialize_list(&messages, SerializerVersion::V14).unwrap();
        for (at, value) in flips {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        let owned = deserialize_list(version, &bytes);
        match PayloadView::parse(version, &bytes) {
            Ok(view) => {
                let owned = owned.expect("the view parsed, so the owned decoder must decode");
                prop_assert_eq!(view_to_json(&view), common::dump(&owned));
            }
            Err(view_error) => {
                let owned_error = owned.expect_err("the view refused, so must the owned decoder");
                prop_assert_eq!(view_error.to_string(), owned_error.to_string());
            }
        }
    }
}
