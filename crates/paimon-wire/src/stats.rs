//! Building the `paimon` crate's `BinaryTableStats` (the type of `DataFileMeta::key_stats` and
//! `value_stats`).

pub use paimon::spec::BinaryTableStats;

/// Builds a `BinaryTableStats` from serialized min and max value rows and per-column null
/// counts.
///
/// ```
/// use paimon_wire::paimon::spec::DataFileMeta;
/// # fn f(mut file: DataFileMeta) {
/// file.value_stats = paimon_wire::table_stats(vec![0; 12], vec![0; 12], vec![Some(0)]);
/// assert_eq!(file.value_stats.null_counts(), &vec![Some(0)]);
/// # }
/// ```
pub fn table_stats(
    min_values: Vec<u8>,
    max_values: Vec<u8>,
    null_counts: Vec<Option<i64>>,
) -> BinaryTableStats {
    BinaryTableStats::new(min_values, max_values, null_counts)
}
