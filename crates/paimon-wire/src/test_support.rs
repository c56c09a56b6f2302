//! Values the crate's unit tests build (compiled for tests only).

use paimon::spec::DataFileMeta;

/// A level-0 data file `name` of `rows` rows and 1,024 bytes, sequence numbers 0 to 9, with
/// empty statistics.
pub(crate) fn data_file(name: &str, rows: i64) -> DataFileMeta {
    let empty_row = vec![0u8; 12];
    let stats =
        || paimon::spec::BinaryTableStats::new(empty_row.clone(), empty_row.clone(), vec![]);
    DataFileMeta {
        file_name: name.to_string(),
        file_size: 1024,
        row_count: rows,
        min_key: empty_row.clone(),
        max_key: empty_row.clone(),
        key_stats: stats(),
        value_stats: stats(),
        min_sequence_number: 0,
        max_sequence_number: 9,
        schema_id: 0,
        level: 0,
        extra_files: vec![],
        creation_time: None,
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(0),
        value_stats_cols: None,
        external_path: None,
        first_row_id: None,
        write_cols: None,
        column_max_sequence_numbers: None,
    }
}
