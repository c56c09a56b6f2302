//! Bucket routing: which bucket a row belongs to, computed exactly as Paimon Java does, so an
//! engine can send every row of one (partition, bucket) to one writer.
//!
//! A primary-key table keeps one row per key *per bucket*, ordered by the sequence numbers
//! of that bucket's files. Two writers that write the same bucket produce files with
//! overlapping sequence ranges, and when both hold a key, which row wins is arbitrary. So an
//! engine that writes a primary-key table from many workers must route rows by
//! (partition, bucket), one writer per bucket; the coordinator refuses a commit in which two
//! payloads write new files into one bucket of a primary-key table (see
//! [`crate::coordinator`]).
//!
//! Which tables need what ([`RoutingKind`]):
//!
//! | table | `bucket` | routing |
//! |---|---|---|
//! | primary key or append with `bucket-key`, fixed buckets | `n >= 1` | [`BucketRouter`]: route by (partition, bucket) |
//! | primary key, postpone | `-2` | none: any writer may write any row (files go to `bucket-postpone`, compaction assigns buckets) |
//! | append, bucket-unaware | `-1` | none: every file is in bucket 0 and append files never conflict |
//! | primary key, dynamic bucket, primary key includes the partition keys | `-1` | [`AssignerRouter`]: route by assigner (`0..n`); each writer is assigner `i` of `n` and assigns buckets from the table's hash index as Java's assigner `i` would |
//! | primary key, dynamic bucket, cross-partition update (a partition key outside the primary key) | `-1` | none possible: write from **one** writer |
//!
//! The bucket of a row is Java's `FixedBucketRowKeyExtractor.bucket()`: the bucket-key
//! columns (`bucket-key`, or else the primary key minus the partition keys) form a
//! `BinaryRow`, and `bucket-function.type` maps it to `0..bucket` (`default`: Murmur3 over the
//! row's bytes, `abs(hash % bucket)`; `mod`; `hive`). The computation is the paimon crate's
//! own writer routing ([`paimon::table::batch_bucket_ids`]), checked against Paimon Java 2.0
//! on every key type (`scripts/java-interop`).

mod assigner;

pub use assigner::AssignerRouter;

use std::fmt;

use arrow_array::{Array, RecordBatch};
use paimon::spec::{
    BinaryRow, BucketFunctionType, CoreOptions, DataField, DataType, POSTPONE_BUCKET,
};
use paimon::table::Table;

/// How rows of a table must be routed to writers when many workers write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoutingKind {
    /// Fixed buckets (`bucket >= 1`): send each (partition, bucket) to one writer; compute
    /// the bucket with [`BucketRouter`].
    FixedBucket {
        /// The table's bucket count.
        buckets: i32,
    },
    /// Any writer may write any row: append tables with `bucket = -1`, and postpone tables
    /// (`bucket = -2`), whose files compaction later assigns to buckets.
    AnyWriter,
    /// Primary-key table with dynamic buckets (`bucket = -1`): the writer assigns buckets
    /// from the table's hash index, so rows of one key written by two independent writers end
    /// up in two buckets. Write it from one writer, or, when the primary key includes every
    /// partition key, from `n` writers that are assigners `0..n` ([`AssignerRouter`]).
    SingleWriter,
}

impl RoutingKind {
    /// The routing `table` needs.
    pub fn of(table: &Table) -> Self {
        let schema = table.schema();
        let bucket = CoreOptions::new(schema.options()).bucket();
        let has_primary_keys = !schema.primary_keys().is_empty();
        match bucket {
            n if n >= 1 => RoutingKind::FixedBucket { buckets: n },
            POSTPONE_BUCKET => RoutingKind::AnyWriter,
            _ if has_primary_keys => RoutingKind::SingleWriter,
            _ => RoutingKind::AnyWriter,
        }
    }
}

impl fmt::Display for RoutingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoutingKind::FixedBucket { buckets } => {
                write!(f, "fixed bucket ({buckets} buckets): one writer per bucket")
            }
            RoutingKind::AnyWriter => f.write_str("any writer (bucket-unaware or postpone)"),
            RoutingKind::SingleWriter => {
                f.write_str("single writer (dynamic-bucket primary-key table)")
            }
        }
    }
}

/// Why rows could not be routed.
#[derive(Debug)]
#[non_exhaustive]
pub enum RoutingError {
    /// The table has no fixed buckets, so there is no bucket to compute.
    NotFixedBucket {
        /// The table.
        table: String,
        /// What routing the table needs instead.
        kind: RoutingKind,
    },
    /// The table is not a dynamic-bucket primary-key table whose keys
    /// [`AssignerRouter`] can divide among assigners.
    NotDynamicBucket {
        /// The table.
        table: String,
        /// Why not.
        why: String,
    },
    /// A routing column (bucket key, partition key or primary key) is missing from the batch.
    MissingColumn {
        /// The column's name.
        column: String,
    },
    /// The table's bucket options are not usable (e.g. `bucket-function.type = mod` on a
    /// key that is not one INT or BIGINT column), or the batch's column does not have the
    /// Arrow type of the table's column.
    Paimon {
        /// What was being done.
        during: String,
        /// The paimon crate's error.
        source: paimon::Error,
    },
}

impl fmt::Display for RoutingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoutingError::NotFixedBucket { table, kind } => write!(
                f,
                "table {table} has no fixed buckets to route rows to; it needs {kind}"
            ),
            RoutingError::NotDynamicBucket { table, why } => write!(
                f,
                "table {table} cannot be written by several dynamic-bucket assigners: {why}"
            ),
            RoutingError::MissingColumn { column } => write!(
                f,
                "the batch has no column {column:?}, which the table's rows are routed by"
            ),
            RoutingError::Paimon { during, source } => {
                write!(f, "cannot compute buckets while {during}: {source}")
            }
        }
    }
}

impl std::error::Error for RoutingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RoutingError::Paimon { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Computes the bucket of each row of a fixed-bucket table, byte-exact with Paimon Java.
#[derive(Debug, Clone)]
pub struct BucketRouter {
    bucket_key: Vec<DataField>,
    function: BucketFunctionType,
    buckets: i32,
}

impl BucketRouter {
    /// The router of `table`. Refuses ([`RoutingError::NotFixedBucket`]) a table without fixed
    /// buckets, and a bucket function the key cannot use.
    pub fn for_table(table: &Table) -> Result<Self, RoutingError> {
        let kind = RoutingKind::of(table);
        let RoutingKind::FixedBucket { buckets } = kind else {
            return Err(RoutingError::NotFixedBucket {
                table: table.identifier().full_name(),
                kind,
            });
        };
        let schema = table.schema();
        let options = CoreOptions::new(schema.options());
        let function = options
            .bucket_function_type()
            .map_err(|source| RoutingError::Paimon {
                during: "reading bucket-function.type".into(),
                source,
            })?;
        let bucket_key: Vec<DataField> = schema
            .bucket_keys()
            .iter()
            .filter_map(|name| schema.fields().iter().find(|f| f.name() == name).cloned())
            .collect();
        paimon::table::validate_bucket_function(function, &bucket_key).map_err(|source| {
            RoutingError::Paimon {
                during: "checking the bucket key against bucket-function.type".into(),
                source,
            }
        })?;
        Ok(Self {
            bucket_key,
            function,
            buckets,
        })
    }

    /// The table's bucket count.
    pub fn buckets(&self) -> i32 {
        self.buckets
    }

    /// The names of the bucket-key columns, in key order.
    pub fn bucket_key(&self) -> Vec<&str> {
        self.bucket_key.iter().map(|f| f.name()).collect()
    }

    /// The bucket (`0..buckets`) of every row of `batch`. Columns are found by name, in any
    /// order; columns that are not part of the bucket key are ignored. Each bucket-key column
    /// must have the Arrow type the paimon crate writes for the table's column.
    pub fn bucket_ids(&self, batch: &RecordBatch) -> Result<Vec<i32>, RoutingError> {
        if self.buckets == 1 || self.bucket_key.is_empty() {
            return Ok(vec![0; batch.num_rows()]);
        }
        let (key, positions) = project(batch, &self.bucket_key)?;
        let mut buckets = paimon::table::batch_bucket_ids(
            &key,
            &positions,
            &self.bucket_key,
            self.function,
            self.buckets,
        )
        .map_err(|source| self.hash_error(source))?;
        if self.function == BucketFunctionType::Default {
            self.fix_null_non_compact(&key, &positions, &mut buckets)?;
        }
        Ok(buckets)
    }

    /// Java reserves variable-length space for a null non-compact DECIMAL (precision > 18)
    /// or TIMESTAMP (precision > 3) in a `BinaryRow`, and the `default` bucket function
    /// hashes the row's bytes; the paimon crate's row builder does not reserve it, so its
    /// hash of such a row differs from Java's (found by the Java 2.0 check). Rows with such
    /// a null are hashed again from Java's exact bytes.
    fn fix_null_non_compact(
        &self,
        key: &RecordBatch,
        positions: &[usize],
        buckets: &mut [i32],
    ) -> Result<(), RoutingError> {
        let non_compact: Vec<usize> = self
            .bucket_key
            .iter()
            .enumerate()
            .filter(|(_, f)| match f.data_type() {
                DataType::Decimal(d) => d.precision() > 18,
                DataType::Timestamp(t) => t.precision() > 3,
                DataType::LocalZonedTimestamp(t) => t.precision() > 3,
                _ => false,
            })
            .map(|(pos, _)| pos)
            .collect();
        if non_compact.is_empty() {
            return Ok(());
        }
        for (row, bucket) in buckets.iter_mut().enumerate() {
            if !non_compact.iter().any(|&pos| key.column(pos).is_null(row)) {
                continue;
            }
            let binary = BinaryRow::from_arrow(key, row, positions, &self.bucket_key)
                .map_err(|source| self.hash_error(source))?;
            let mut datums = Vec::with_capacity(self.bucket_key.len());
            for (pos, field) in self.bucket_key.iter().enumerate() {
                datums.push(
                    binary
                        .get_datum(pos, field.data_type())
                        .map_err(|source| self.hash_error(source))?,
                );
            }
            let typed: Vec<_> = datums
                .iter()
                .zip(&self.bucket_key)
                .map(|(datum, field)| (datum.as_ref(), field.data_type()))
                .collect();
            let Some(java) = crate::coordinator::validate::java_partition_row(&typed) else {
                continue;
            };
            let hash = BinaryRow::from_serialized_bytes(&java)
                .map_err(|source| self.hash_error(source))?
                .hash_code();
            *bucket = (hash % self.buckets).wrapping_abs();
        }
        Ok(())
    }

    fn hash_error(&self, source: paimon::Error) -> RoutingError {
        RoutingError::Paimon {
            during: format!(
                "hashing bucket key ({})",
                self.bucket_key
                    .iter()
                    .map(|f| format!("{} {}", f.name(), f.data_type()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            source,
        }
    }
}

/// `batch`'s columns named like `fields`, in `fields`' order, and their positions.
pub(crate) fn project(
    batch: &RecordBatch,
    fields: &[DataField],
) -> Result<(RecordBatch, Vec<usize>), RoutingError> {
    let schema = batch.schema();
    let mut indices = Vec::with_capacity(fields.len());
    for field in fields {
        let index = schema
            .index_of(field.name())
            .map_err(|_| RoutingError::MissingColumn {
                column: field.name().to_string(),
            })?;
        indices.push(index);
    }
    let projected = batch.project(&indices).map_err(|e| RoutingError::Paimon {
        during: "selecting the routing columns".into(),
        source: paimon::Error::DataInvalid {
            message: e.to_string(),
            source: None,
        },
    })?;
    Ok((projected, (0..fields.len()).collect()))
}
