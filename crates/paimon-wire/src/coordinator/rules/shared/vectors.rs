//! What the deletion-vector rules hand on to the rule that reads rows (`superseded-rows`):
//! positions a compaction adds to the vector of a file it does not rewrite.

use super::buckets::BucketKey;

/// Positions a compaction adds to the deletion vector of a live data file it does not
/// rewrite (what Java's lookup compaction does to the older versions of the keys it
/// compacts), for the rows they hide to be read and checked.
#[derive(Debug, Clone)]
pub(crate) struct GrownVector {
    /// The data file's bucket.
    pub(crate) bucket: BucketKey,
    /// The data file's name.
    pub(crate) file_name: String,
    /// The positions the compaction adds, ascending.
    pub(crate) added_positions: Vec<u64>,
    /// The message that names the new vector.
    pub(crate) message_index: usize,
    /// Where it names it (`compact_new_index_files[i].deletion_vectors_ranges[...]`).
    pub(crate) field: String,
}
