//! Routing for dynamic-bucket primary-key tables: which bucket assigner owns a row.
//!
//! A primary-key table without a `bucket` option (`bucket = -1`) assigns each new key to a
//! bucket and records the assignment in HASH index files. Many workers write it at once the way
//! Paimon Java's distributed writers do: the key space is split among `n` assigners, each row
//! goes to the assigner of its partition and trimmed primary key (Java
//! `BucketAssigner.computeAssigner` over the `BinaryRow` hashes, as
//! `RowAssignerChannelComputer` computes it), and assigner `i` creates only the buckets it owns
//! (`bucket % assigners == i % assigners`). Keys already in the table's HASH index keep their
//! bucket. The assigner side is the paimon crate's writer made one assigner of many
//! ([`paimon::table::WriteBuilder::with_dynamic_bucket_share`] with
//! [`AssignerRouter::share`]).
//!
//! Tables whose primary key leaves out a partition key (cross-partition updates, which Java serves
//! with a global index) are not served: [`AssignerRouter::for_table`] refuses them.

use arrow_array::RecordBatch;
use paimon::spec::{batch_hash_codes, BinaryRow, CoreOptions, DataField};
use paimon::table::{AssignerShare, Table};

use super::{project, RoutingError};

/// Computes which of `n` bucket assigners owns each row of a dynamic-bucket primary-key
/// table, byte-exact with Paimon Java.
#[derive(Debug, Clone)]
pub struct AssignerRouter {
    partition_fields: Vec<DataField>,
    key_fields: Vec<DataField>,
    num_channels: i32,
    num_assigners: i32,
}

impl AssignerRouter {
    /// The router of `table` written by `assigners` assigner tasks. The number of them that
    /// own buckets is `dynamic-bucket.initial-buckets` capped at `assigners` (unset: all), as in
    /// Java's `HashBucketAssignerOperator`.
    ///
    /// Refuses a table that is not a dynamic-bucket primary-key table
    /// ([`RoutingError::NotDynamicBucket`]), one whose primary key leaves out a partition key
    /// (cross-partition updates), and an assigner count below 1.
    pub fn for_table(table: &Table, assigners: i32) -> Result<Self, RoutingError> {
        let schema = table.schema();
        let options = CoreOptions::new(schema.options());
        let name = table.identifier().full_name();
        let primary_keys = schema.primary_keys();
        if options.bucket() != -1 || primary_keys.is_empty() {
            return Err(RoutingError::NotDynamicBucket {
                table: name,
                why: "it is not a primary-key table with bucket = -1".into(),
            });
        }
        if let Some(key) = schema
            .partition_keys()
            .iter()
            .find(|key| !primary_keys.contains(key))
        {
            return Err(RoutingError::NotDynamicBucket {
                table: name,
                why: format!(
                    "its primary key leaves out partition key {key:?}: a key may move between \
                     partitions (cross-partition update), which needs Java's global index; write \
                     it from one writer"
                ),
            });
        }
        let share = AssignerShare::for_table(schema.options(), assigners, 0).map_err(|source| {
            RoutingError::Paimon {
                during: format!("dividing the key space among {assigners} assigners"),
                source,
            }
        })?;
        let field = |name: &String| schema.fields().iter().find(|f| f.name() == name).cloned();
        Ok(Self {
            partition_fields: schema.partition_keys().iter().filter_map(field).collect(),
            key_fields: schema
                .trimmed_primary_keys()
                .iter()
                .filter_map(field)
                .collect(),
            num_channels: share.num_channels(),
            num_assigners: share.num_assigners(),
        })
    }

    /// How many assigner tasks rows are routed to (`0..assigners()`).
    pub fn assigners(&self) -> i32 {
        self.num_channels
    }

    /// How many of them own buckets (`dynamic-bucket.initial-buckets`, capped).
    pub fn bucket_owning_assigners(&self) -> i32 {
        self.num_assigners
    }

    /// The share of the key space assigner `assign_id` owns: pass it to
    /// [`paimon::table::WriteBuilder::with_dynamic_bucket_share`].
    pub fn share(&self, assign_id: i32) -> Result<AssignerShare, RoutingError> {
        AssignerShare::new(self.num_channels, self.num_assigners, assign_id).map_err(|source| {
            RoutingError::Paimon {
                during: format!("making assigner {assign_id}"),
                source,
            }
        })
    }

    /// The assigner (`0..assigners()`) of every row of `batch`. Columns are found by name, in
    /// any order; each partition and primary-key column must have the Arrow type the paimon
    /// crate writes for the table's column.
    pub fn assigner_ids(&self, batch: &RecordBatch) -> Result<Vec<i32>, RoutingError> {
        let rows = batch.num_rows();
        let partition_hashes = if self.partition_fields.is_empty() {
            let empty = BinaryRow::from_serialized_bytes(&paimon::spec::EMPTY_SERIALIZED_ROW)
                .map_err(|source| self.error("hashing the empty partition", source))?
                .hash_code();
            vec![empty; rows]
        } else {
            let (partition, positions) = project(batch, &self.partition_fields)?;
            batch_hash_codes(&partition, &positions, &self.partition_fields)
                .map_err(|source| self.error("hashing partition rows", source))?
        };
        let (key, positions) = project(batch, &self.key_fields)?;
        let key_hashes = batch_hash_codes(&key, &positions, &self.key_fields)
            .map_err(|source| self.error("hashing primary keys", source))?;
        Ok(partition_hashes
            .iter()
            .zip(&key_hashes)
            .map(|(&partition, &key)| {
                paimon::table::compute_assigner(
                    partition,
                    key,
                    self.num_channels,
                    self.num_assigners,
                )
            })
            .collect())
    }

    fn error(&self, during: &str, source: paimon::Error) -> RoutingError {
        RoutingError::Paimon {
            during: during.to_string(),
            source,
        }
    }
}
