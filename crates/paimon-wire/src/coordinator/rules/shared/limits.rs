//! The bounds and names the rules apply: index types, the options that place external files,
//! the largest numbers a file or a commit may claim, and a table's bucket modes.

use std::fmt;

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
