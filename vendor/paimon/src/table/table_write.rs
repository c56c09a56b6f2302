// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! TableWrite for writing Arrow data to Paimon tables.
//!
//! Reference: [pypaimon TableWrite](https://github.com/apache/paimon/blob/master/paimon-python/pypaimon/write/table_write.py)
//! and [pypaimon FileStoreWrite](https://github.com/apache/paimon/blob/master/paimon-python/pypaimon/write/file_store_write.py)

use crate::arrow::build_target_arrow_schema;
use crate::arrow::partition::partition_array;
use crate::resource::ResourceContext;
use crate::spec::PartitionComputer;
use crate::spec::{
    first_row_supports_changelog_producer, BinaryRow, ChangelogProducer, CoreOptions, DataField,
    DataType, MergeEngine, RowKind, RowKindFilter, EMPTY_SERIALIZED_ROW, POSTPONE_BUCKET,
    VALUE_KIND_FIELD_NAME,
};
use crate::table::bucket_assigner::{BatchAssignOutput, BucketAssignerEnum, PartitionBucketKey};
use crate::table::bucket_assigner_constant::ConstantBucketAssigner;
use crate::table::bucket_assigner_cross::CrossPartitionAssigner;
use crate::table::bucket_assigner_dynamic::DynamicBucketAssigner;
use crate::table::bucket_assigner_fixed::FixedBucketAssigner;
use crate::table::bucket_function::validate_bucket_function;
use crate::table::commit_message::CommitMessage;
use crate::table::data_file_index_writer::FileIndexOptions;
use crate::table::data_file_writer::DataFileWriter;
use crate::table::dedicated_format_file_writer::AppendDedicatedFormatFileWriter;
use crate::table::format_table_writer::FormatTableWriter;
use crate::table::kv_file_writer::{KeyValueFileWriter, KeyValueWriteConfig};
use crate::table::partition_filter::PartitionFilter;
use crate::table::postpone_file_writer::{PostponeFileWriter, PostponeWriteConfig};
use crate::table::prepared_files::PreparedFiles;
use crate::table::row_kind_generator::RowKindGenerator;
use crate::table::write_batch_normalize::normalize_write_array;
use crate::table::{Snapshot, Table, TableScan};
use crate::Result;
use arrow_array::{ArrayRef, RecordBatch};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

#[path = "table_write_precomputed.rs"]
mod precomputed;

/// Enum to hold either an append-only writer, a key-value writer, or a postpone writer.
enum FileWriter {
    Append(DataFileWriter),
    AppendDedicated(Box<AppendDedicatedFormatFileWriter>),
    KeyValue(KeyValueFileWriter),
    Postpone(PostponeFileWriter),
}

pub(super) fn take_rows(batch: &RecordBatch, row_indices: &[usize]) -> Result<RecordBatch> {
    if row_indices.len() == batch.num_rows() {
        return Ok(batch.clone());
    }
    let indices =
        arrow_array::UInt32Array::from(row_indices.iter().map(|&i| i as u32).collect::<Vec<_>>());
    let columns = batch
        .columns()
        .iter()
        .map(|col| arrow_select::take::take(col.as_ref(), &indices, None))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| crate::Error::DataInvalid {
            message: format!("Failed to take rows: {e}"),
            source: None,
        })?;
    RecordBatch::try_new(batch.schema(), columns).map_err(|e| crate::Error::DataInvalid {
        message: format!("Failed to create sub-batch: {e}"),
        source: None,
    })
}

impl FileWriter {
    async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        match self {
            FileWriter::Append(w) => w.write(batch).await,
            FileWriter::AppendDedicated(w) => w.write(batch).await,
            FileWriter::KeyValue(w) => w.write(batch).await,
            FileWriter::Postpone(w) => w.write(batch).await,
        }
    }

    async fn prepare_commit(mut self) -> (Result<PreparedFiles>, Option<Self>) {
        let result = match &mut self {
            FileWriter::Append(w) => w.prepare_commit().await.map(PreparedFiles::data),
            FileWriter::AppendDedicated(w) => w.prepare_commit().await.map(PreparedFiles::data),
            FileWriter::KeyValue(w) => w.prepare_commit().await,
            FileWriter::Postpone(w) => w.prepare_commit().await.map(PreparedFiles::data),
        };
        if result.is_err() {
            self.abort().await;
        }
        // Java MergeTreeWriter keeps its sequence counter across checkpoints,
        // including prepares whose messages have not been committed yet.
        // Pending-bucket writers also retain first-retract validation.
        let retain =
            result.is_ok() && matches!(&self, FileWriter::KeyValue(_) | FileWriter::Postpone(_));
        (result, retain.then_some(self))
    }

    async fn abort(&mut self) {
        match self {
            FileWriter::Append(w) => w.abort().await,
            FileWriter::AppendDedicated(w) => w.abort().await,
            FileWriter::KeyValue(w) => w.abort().await,
            FileWriter::Postpone(w) => w.abort().await,
        }
    }
}

/// TableWrite writes Arrow RecordBatches to Paimon data files.
///
/// Each (partition, bucket) pair gets its own writer held in a HashMap.
/// Batches are routed to the correct writer based on partition/bucket.
///
/// Call `prepare_commit()` to close all writers and collect
/// `CommitMessage`s for use with `TableCommit`.
/// A failed write discards pending output; create a new `TableWrite` before retrying.
///
/// Reference: [pypaimon BatchTableWrite](https://github.com/apache/paimon/blob/master/paimon-python/pypaimon/write/table_write.py)
pub struct TableWrite {
    // Keep the Format Table state off ordinary Paimon write futures' stacks.
    format_writer: Option<Box<FormatTableWriter>>,
    table: Table,
    branch_schema_checked: bool,
    write_schema: Arc<arrow_schema::Schema>,
    write_fields: Vec<DataField>,
    written: bool,
    partition_writers: HashMap<PartitionBucketKey, FileWriter>,
    partition_computer: PartitionComputer,
    partition_keys: Vec<String>,
    schema_id: i64,
    target_file_size: i64,
    target_file_row_num: i64,
    blob_target_file_size: i64,
    vector_target_file_size: i64,
    file_compression: String,
    file_compression_zstd_level: i32,
    write_buffer_size: i64,
    file_format: String,
    data_file_prefix: String,
    primary_key_indices: Vec<usize>,
    primary_key_types: Vec<DataType>,
    sequence_field_indices: Vec<usize>,
    merge_engine: MergeEngine,
    changelog_producer: ChangelogProducer,
    changelog_file_prefix: String,
    changelog_file_format: String,
    changelog_file_compression: String,
    partition_seq_cache: HashMap<Vec<u8>, HashMap<i32, i64>>,
    sequence_snapshot: Option<Option<Snapshot>>,
    restore_snapshot_id: Option<i64>,
    commit_user: String,
    /// Shared by this writer's postpone files, as in Java's per-writer writeId.
    postpone_write_id: i32,
    /// Bucket assignment strategy (fixed, dynamic, or cross-partition).
    bucket_assigner: BucketAssignerEnum,
    /// Whether this is an overwrite operation (skip seq/index restore).
    is_overwrite: bool,
    /// Blob view fields (stored inline as BlobViewStruct bytes).
    blob_view_fields: HashSet<String>,
    /// Descriptor + view inline blob fields.
    blob_inline_fields: HashSet<String>,
    /// Whether the table has non-descriptor blob fields requiring a dedicated-format writer.
    has_blob_fields: bool,
    blob_consumer: Option<Arc<dyn crate::spec::BlobConsumer>>,
    /// Dedicated vector-store file format, when configured.
    vector_file_format: Option<String>,
    /// Whether the table has VECTOR fields requiring dedicated vector files.
    has_dedicated_vector_fields: bool,
    row_kind_generator: Option<RowKindGenerator>,
    row_kind_filter: Option<RowKindFilter>,
    file_index_options: Option<Arc<FileIndexOptions>>,
    resources: Option<ResourceContext>,
    failed: bool,
}

impl TableWrite {
    pub(crate) fn new_format(
        table: &Table,
        commit_user: String,
        resources: Option<ResourceContext>,
        overwrite: bool,
    ) -> Result<Self> {
        let format_writer = FormatTableWriter::new(table, resources.clone())?;
        let schema = table.schema();
        let options = CoreOptions::new(schema.options());
        // Format Tables do not use Paimon buckets, indexes, changelogs or
        // snapshots. Build their public TableWrite wrapper without running
        // Paimon-only option validation or constructing stateful assigners.
        Ok(Self {
            format_writer: Some(Box::new(format_writer)),
            table: table.clone(),
            branch_schema_checked: table.is_main_branch() || table.rest_env.is_some(),
            write_schema: build_target_arrow_schema(schema.fields())?,
            write_fields: schema.fields().to_vec(),
            written: false,
            partition_writers: HashMap::new(),
            partition_computer: PartitionComputer::new(
                schema.partition_keys(),
                schema.fields(),
                options.partition_default_name(),
                options.legacy_partition_name(),
            )?,
            partition_keys: schema.partition_keys().to_vec(),
            schema_id: schema.id(),
            target_file_size: 0,
            target_file_row_num: i64::MAX,
            blob_target_file_size: 0,
            vector_target_file_size: 0,
            file_compression: String::new(),
            file_compression_zstd_level: 0,
            write_buffer_size: 0,
            file_format: String::new(),
            data_file_prefix: String::new(),
            primary_key_indices: Vec::new(),
            primary_key_types: Vec::new(),
            sequence_field_indices: Vec::new(),
            merge_engine: MergeEngine::Deduplicate,
            changelog_producer: ChangelogProducer::None,
            changelog_file_prefix: String::new(),
            changelog_file_format: String::new(),
            changelog_file_compression: String::new(),
            partition_seq_cache: HashMap::new(),
            sequence_snapshot: None,
            restore_snapshot_id: None,
            commit_user,
            postpone_write_id: 0,
            bucket_assigner: BucketAssignerEnum::Constant(ConstantBucketAssigner::new(
                Vec::new(),
                0,
            )),
            is_overwrite: overwrite,
            blob_view_fields: HashSet::new(),
            blob_inline_fields: HashSet::new(),
            has_blob_fields: false,
            blob_consumer: None,
            vector_file_format: None,
            has_dedicated_vector_fields: false,
            row_kind_generator: None,
            row_kind_filter: None,
            file_index_options: None,
            resources,
            failed: false,
        })
    }

    pub(crate) fn new(table: &Table, commit_user: String) -> crate::Result<Self> {
        // A dynamic-bucket write reads the persisted PK hash index; the rest are
        // refused too, since their commit is blocked anyway.
        CoreOptions::new(table.schema().options()).ensure_read_authorized()?;
        CoreOptions::new(table.schema().options()).validate_data_file_path_directory()?;
        let is_overwrite = false;
        let schema = table.schema();
        crate::spec::Schema::validate_primary_key_blob_configuration(
            schema.fields(),
            schema.primary_keys(),
            schema.options(),
        )?;
        crate::spec::map_shredding::validate(schema.fields(), schema.options())?;
        let write_schema = build_target_arrow_schema(schema.fields())?;
        let core_options = CoreOptions::new(schema.options());
        let blob_descriptor_fields = core_options.blob_descriptor_fields();
        if !core_options.video_frame_fields().is_empty() {
            return Err(crate::Error::Unsupported {
                message: "Writing packed video files is not supported yet".into(),
            });
        }
        let blob_view_fields = core_options.blob_view_fields();
        let blob_inline_fields = core_options.blob_inline_fields();

        for name in &blob_inline_fields {
            match schema.fields().iter().find(|f| f.name() == name) {
                None => {
                    return Err(crate::Error::DataInvalid {
                        message: format!("inline blob field '{name}' does not exist in schema"),
                        source: None,
                    });
                }
                Some(f) if !f.data_type().is_blob_type() => {
                    return Err(crate::Error::DataInvalid {
                        message: format!(
                            "inline blob field '{name}' is not a top-level BLOB field"
                        ),
                        source: None,
                    });
                }
                _ => {}
            }
        }
        if let Some(name) = blob_descriptor_fields
            .intersection(&blob_view_fields)
            .next()
            .cloned()
        {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Field '{name}' in 'blob-view-field' can not also be in 'blob-descriptor-field'"
                ),
                source: None,
            });
        }

        let total_buckets = core_options.bucket();
        let has_primary_keys = !schema.primary_keys().is_empty();
        let is_dynamic_bucket = has_primary_keys && total_buckets == -1;
        let changelog_producer = core_options.try_changelog_producer()?;

        let is_dynamic_cross_partition =
            is_dynamic_bucket && !schema.partition_keys().is_empty() && {
                let pk_set: HashSet<&str> =
                    schema.primary_keys().iter().map(String::as_str).collect();
                schema
                    .partition_keys()
                    .iter()
                    .any(|p| !pk_set.contains(p.as_str()))
            };

        if has_primary_keys
            && !is_dynamic_bucket
            && total_buckets < 1
            && total_buckets != POSTPONE_BUCKET
        {
            return Err(crate::Error::Unsupported {
                message: format!(
                    "KeyValueFileWriter does not support bucket={total_buckets}, only fixed bucket (>= 1), -1 (dynamic), or -2 (postpone) is supported"
                ),
            });
        }

        if !has_primary_keys && total_buckets != -1 && core_options.bucket_key().is_none() {
            return Err(crate::Error::Unsupported {
                message: "Append tables with fixed bucket must configure 'bucket-key'".to_string(),
            });
        }
        let target_file_size = core_options.target_file_size();
        let target_file_row_num = core_options.target_file_row_num()?;
        let blob_target_file_size = core_options.blob_target_file_size();
        let vector_target_file_size = core_options.vector_target_file_size();
        let file_compression = core_options.file_compression().to_string();
        let file_compression_zstd_level = core_options.file_compression_zstd_level();
        let file_format = core_options.file_format().to_string();
        let data_file_prefix = core_options.data_file_prefix().to_string();
        let vector_file_format = core_options.vector_file_format();
        let changelog_file_prefix = core_options.changelog_file_prefix().to_string();
        let changelog_file_format = core_options.changelog_file_format().to_string();
        let changelog_file_compression = core_options.changelog_file_compression().to_string();
        let write_buffer_size = core_options.write_parquet_buffer_size();
        let partition_keys: Vec<String> = schema.partition_keys().to_vec();
        let fields = schema.fields();

        let partition_field_indices: Vec<usize> = partition_keys
            .iter()
            .filter_map(|pk| fields.iter().position(|f| f.name() == pk))
            .collect();

        // Bucket keys: resolved by TableSchema
        let bucket_keys = schema.bucket_keys();

        let bucket_key_indices: Vec<usize> = bucket_keys
            .iter()
            .filter_map(|bk| fields.iter().position(|f| f.name() == bk))
            .collect();

        let partition_computer = PartitionComputer::new(
            &partition_keys,
            fields,
            core_options.partition_default_name(),
            core_options.legacy_partition_name(),
        )
        .unwrap();

        let primary_key_indices: Vec<usize> = schema
            .trimmed_primary_keys()
            .iter()
            .filter_map(|pk| fields.iter().position(|f| f.name() == pk))
            .collect();

        let primary_key_types: Vec<DataType> = primary_key_indices
            .iter()
            .map(|&idx| fields[idx].data_type().clone())
            .collect();

        let sequence_field_indices: Vec<usize> = core_options
            .sequence_fields()
            .iter()
            .filter_map(|sf| fields.iter().position(|f| f.name() == *sf))
            .collect();

        let merge_engine = core_options.merge_engine()?;

        if merge_engine == MergeEngine::FirstRow
            && !first_row_supports_changelog_producer(changelog_producer)
        {
            return Err(crate::Error::Unsupported {
                message: format!(
                    "Table '{}' has incompatible table options: merge-engine=first-row only supports changelog-producer=none or lookup, but found changelog-producer={}",
                    table.identifier().full_name(),
                    changelog_producer.as_str()
                ),
            });
        }

        let row_kind_generator = match core_options.rowkind_field() {
            Some(field_name) if has_primary_keys => {
                Some(RowKindGenerator::create(schema, field_name)?)
            }
            _ => None,
        };
        let row_kind_filter = RowKindFilter::of(core_options);

        let target_bucket_row_number = core_options.dynamic_bucket_target_row_num();
        let bucket_function_type = core_options.bucket_function_type()?;

        let bucket_assigner = if is_dynamic_cross_partition {
            BucketAssignerEnum::CrossPartition(Box::new(CrossPartitionAssigner::new(
                table.clone(),
                partition_field_indices,
                schema
                    .primary_keys()
                    .iter()
                    .map(|name| {
                        fields
                            .iter()
                            .position(|field| field.name() == name)
                            .unwrap()
                    })
                    .collect(),
                target_bucket_row_number,
                merge_engine,
            )?))
        } else if is_dynamic_bucket {
            BucketAssignerEnum::Dynamic(Box::new(DynamicBucketAssigner::new(
                table.clone(),
                partition_field_indices,
                primary_key_indices.clone(),
                is_overwrite,
                partition_computer.clone(),
            )?))
        } else if total_buckets == POSTPONE_BUCKET {
            BucketAssignerEnum::Constant(ConstantBucketAssigner::new(
                partition_field_indices,
                POSTPONE_BUCKET,
            ))
        } else if total_buckets <= 1 || bucket_key_indices.is_empty() {
            BucketAssignerEnum::Constant(ConstantBucketAssigner::new(partition_field_indices, 0))
        } else {
            let bucket_key_fields: Vec<DataField> = bucket_key_indices
                .iter()
                .map(|&idx| fields[idx].clone())
                .collect();
            validate_bucket_function(bucket_function_type, &bucket_key_fields)?;
            BucketAssignerEnum::Fixed(FixedBucketAssigner::new(
                partition_field_indices,
                bucket_key_indices,
                bucket_function_type,
                total_buckets,
            ))
        };

        let has_blob_fields = schema
            .fields()
            .iter()
            .any(|f| f.data_type().is_blob_file_field() && !blob_inline_fields.contains(f.name()));
        if has_blob_fields {
            core_options.blob_copy_buffer_size()?;
        }
        let has_dedicated_vector_fields = vector_file_format.is_some()
            && schema
                .fields()
                .iter()
                .any(|f| matches!(f.data_type(), DataType::Vector(_)));

        let file_index_options = FileIndexOptions::parse(schema.options(), schema.fields())?;
        if file_index_options.is_some() && has_dedicated_vector_fields {
            return Err(crate::Error::Unsupported {
                message: "FileIndex generation does not support dedicated Vector writes"
                    .to_string(),
            });
        }

        Ok(Self {
            format_writer: None,
            table: table.clone(),
            branch_schema_checked: table.is_main_branch() || table.rest_env.is_some(),
            write_schema,
            write_fields: fields.to_vec(),
            written: false,
            partition_writers: HashMap::new(),
            partition_computer,
            partition_keys,
            schema_id: schema.id(),
            target_file_size,
            target_file_row_num,
            blob_target_file_size,
            vector_target_file_size,
            file_compression,
            file_compression_zstd_level,
            write_buffer_size,
            file_format,
            data_file_prefix,
            primary_key_indices,
            primary_key_types,
            sequence_field_indices,
            merge_engine,
            changelog_producer,
            changelog_file_prefix,
            changelog_file_format,
            changelog_file_compression,
            partition_seq_cache: HashMap::new(),
            sequence_snapshot: None,
            restore_snapshot_id: None,
            commit_user,
            postpone_write_id: (uuid::Uuid::new_v4().as_u128() % i32::MAX as u128) as i32,
            bucket_assigner,
            is_overwrite,
            blob_view_fields,
            blob_inline_fields,
            has_blob_fields,
            blob_consumer: None,
            vector_file_format,
            has_dedicated_vector_fields,
            row_kind_generator,
            row_kind_filter,
            file_index_options: file_index_options.map(Arc::new),
            resources: None,
            failed: false,
        })
    }

    /// Scan the latest snapshot for a specific partition and return a map of
    /// bucket → (max_sequence_number + 1) for each bucket in that partition.
    async fn scan_partition_sequence_numbers(
        table: &Table,
        sequence_snapshot: Option<Option<Snapshot>>,
        partition_bytes: &[u8],
    ) -> crate::Result<HashMap<i32, i64>> {
        let latest_snapshot = match sequence_snapshot {
            Some(snapshot) => snapshot,
            None => {
                let snapshot_manager = table.snapshot_manager();
                snapshot_manager.get_latest_snapshot().await?
            }
        };
        let mut bucket_seq: HashMap<i32, i64> = HashMap::new();
        if let Some(snapshot) = latest_snapshot {
            let partition_filter = Self::build_partition_filter(table, partition_bytes)?;
            let scan = TableScan::new(table, partition_filter, vec![], None, None, None)
                .with_scan_all_files();
            let entries = scan.plan_manifest_entries(&snapshot).await?;
            for entry in &entries {
                let bucket = entry.bucket();
                let max_seq = entry.file().max_sequence_number;
                let current = bucket_seq.entry(bucket).or_insert(0);
                if max_seq + 1 > *current {
                    *current = max_seq + 1;
                }
            }
        }
        Ok(bucket_seq)
    }

    pub(super) async fn pin_sequence_snapshot(&mut self) -> Result<i64> {
        let snapshot_manager = self.table.snapshot_manager();
        let snapshot = snapshot_manager.get_latest_snapshot().await?;
        let snapshot_id = snapshot.as_ref().map_or(0, Snapshot::id);
        self.sequence_snapshot = Some(snapshot);
        Ok(snapshot_id)
    }

    /// Build a partition filter from serialized partition bytes.
    ///
    /// Uses `PartitionSet` for O(1) byte-level matching when partition fields exist.
    fn build_partition_filter(
        table: &Table,
        partition_bytes: &[u8],
    ) -> crate::Result<Option<PartitionFilter>> {
        let partition_fields = table.schema().partition_fields();
        if partition_fields.is_empty() {
            return Ok(None);
        }
        let partitions = HashSet::from([partition_bytes.to_vec()]);
        Ok(Some(PartitionFilter::from_partition_set(
            partitions,
            &partition_fields,
        )?))
    }

    /// Mark this write as an overwrite operation.
    ///
    /// Overwrite skips restoring sequence numbers and bucket index loading
    /// since old data will be fully replaced at commit time.
    pub fn with_overwrite(mut self) -> Self {
        self.is_overwrite = true;
        self.bucket_assigner.set_overwrite(true);
        self
    }

    /// Share write-buffer reservations with other consumers of this operation.
    /// Input batches remain the caller's responsibility; charges here estimate
    /// retained key-value batches and unflushed format-writer input. Call this
    /// before the first write.
    pub fn with_resources(mut self, resources: ResourceContext) -> Self {
        if let Some(writer) = self.format_writer.as_mut() {
            writer.set_resources(resources.clone());
        }
        self.resources = Some(resources);
        self
    }

    /// Select the top-level columns written by an append table, as Java
    /// `BaseAppendFileStoreWrite.withWriteType` does. Input follows this order;
    /// omitted columns are recorded in file metadata rather than filled with NULL.
    /// Configure this before writing any nonempty batch.
    pub fn with_write_type(&mut self, write_columns: Vec<String>) -> Result<&mut Self> {
        self.ensure_active()?;
        if self.written {
            return Err(crate::Error::DataInvalid {
                message: "with_write_type must be called before any data is written".into(),
                source: None,
            });
        }
        if self.format_writer.is_some() || !self.table.schema().primary_keys().is_empty() {
            return Err(crate::Error::Unsupported {
                message: "with_write_type requires a Paimon append table".into(),
            });
        }
        if write_columns.is_empty() {
            return Err(crate::Error::DataInvalid {
                message: "write columns must not be empty".into(),
                source: None,
            });
        }
        let schema = self.table.schema();
        let mut seen = HashSet::new();
        let fields = write_columns
            .iter()
            .map(|name| {
                if !seen.insert(name) {
                    return Err(crate::Error::DataInvalid {
                        message: format!("Duplicate write column '{name}'"),
                        source: None,
                    });
                }
                schema
                    .fields()
                    .iter()
                    .find(|field| field.name() == name)
                    .cloned()
                    .ok_or_else(|| crate::Error::DataInvalid {
                        message: format!("Column '{name}' is not in table schema"),
                        source: None,
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        let indices = |names: &[String]| {
            names
                .iter()
                .map(|name| {
                    fields
                        .iter()
                        .position(|field| field.name() == name)
                        .ok_or_else(|| crate::Error::DataInvalid {
                            message: format!("Write type must include routing column '{name}'"),
                            source: None,
                        })
                })
                .collect::<Result<Vec<_>>>()
        };
        let partition_indices = indices(&self.partition_keys)?;
        let options = CoreOptions::new(schema.options());
        let total_buckets = options.bucket();
        let bucket_indices = if total_buckets > 1 {
            indices(&schema.bucket_keys())?
        } else {
            Vec::new()
        };
        let assigner = if total_buckets <= 1 || bucket_indices.is_empty() {
            BucketAssignerEnum::Constant(ConstantBucketAssigner::new(
                partition_indices,
                if total_buckets == POSTPONE_BUCKET {
                    POSTPONE_BUCKET
                } else {
                    0
                },
            ))
        } else {
            BucketAssignerEnum::Fixed(FixedBucketAssigner::new(
                partition_indices,
                bucket_indices,
                options.bucket_function_type()?,
                total_buckets,
            ))
        };
        let write_schema = build_target_arrow_schema(&fields)?;
        self.bucket_assigner = assigner;
        self.write_schema = write_schema;
        self.write_fields = fields;
        Ok(self)
    }

    /// Receive dedicated append BLOB payload descriptors. Configure before
    /// writing, as in PyPaimon. Java's primary-key and inline BLOB writers do
    /// not invoke this consumer. Automatic abort preserves consumer Blob files;
    /// callers can explicitly discard prepared files with TableCommit::abort.
    pub fn with_blob_consumer(
        &mut self,
        consumer: Option<Arc<dyn crate::spec::BlobConsumer>>,
    ) -> Result<&mut Self> {
        self.ensure_active()?;
        if self.written {
            return Err(crate::Error::DataInvalid {
                message: "with_blob_consumer must be called before any write operation".into(),
                source: None,
            });
        }
        if self.format_writer.is_some() {
            return Err(crate::Error::Unsupported {
                message: "with_blob_consumer requires a Paimon table".into(),
            });
        }
        self.blob_consumer = consumer;
        Ok(self)
    }

    /// Write an Arrow RecordBatch. Rows are routed to the correct partition and bucket.
    pub async fn write_arrow_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        if let Some(writer) = self.format_writer.as_mut() {
            return writer.write(batch).await;
        }
        self.ensure_active()?;
        let Some(batch) = self.normalize_write_batch(batch)? else {
            return Ok(());
        };
        self.written = true;

        let grouped = match self.divide_by_partition_bucket(&batch).await {
            Ok(grouped) => grouped,
            Err(error) => {
                self.fail_write().await;
                return Err(error);
            }
        };
        if grouped.len() > 1 {
            return self.write_buckets_concurrently(grouped).await;
        }
        for ((partition_bytes, bucket), sub_batch) in grouped {
            self.write_bucket(partition_bytes, bucket, sub_batch)
                .await?;
        }
        Ok(())
    }

    /// Writes the rows of each (partition, bucket) of one batch on a task of its own, so the
    /// encoding of several files runs on the runtime's worker threads at once instead of one
    /// after another on the caller's. Writers are created first, as `write_bucket` does; a
    /// failed write fails the whole `TableWrite`, as `write_bucket` does (every writer is
    /// back in the map by then, so `close` deletes all their files).
    async fn write_buckets_concurrently(
        &mut self,
        grouped: Vec<(PartitionBucketKey, RecordBatch)>,
    ) -> Result<()> {
        self.ensure_active()?;
        let keys: Vec<PartitionBucketKey> = grouped.iter().map(|(key, _)| key.clone()).collect();
        if let Err(error) = self.ensure_writers(&keys).await {
            self.fail_write().await;
            return Err(error);
        }
        let mut tasks = Vec::with_capacity(grouped.len());
        for (key, batch) in grouped {
            let Some(mut writer) = self.partition_writers.remove(&key) else {
                continue; // created above
            };
            let task = tokio::spawn(async move {
                let result = writer.write(&batch).await;
                (writer, result)
            });
            tasks.push((key, task));
        }
        let mut error = None;
        for (key, task) in tasks {
            match task.await {
                Ok((writer, result)) => {
                    self.partition_writers.insert(key, writer);
                    if let Err(e) = result {
                        error.get_or_insert(e);
                    }
                }
                // A panic in a write is carried to the caller, as a sequential write's is.
                Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                Err(join) => {
                    error.get_or_insert(crate::Error::UnexpectedError {
                        message: format!("a bucket's write task was cancelled: {join}"),
                        source: None,
                    });
                }
            }
        }
        if let Some(error) = error {
            self.fail_write().await;
            return Err(error);
        }
        Ok(())
    }

    pub(super) fn normalize_write_batch(&self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        let batch = self.validate_write_batch_schema(batch)?;
        // Java filters row kinds before extracting Blob values. Ignored rows
        // need neither valid descriptor bytes nor physical files.
        let batch = self.generate_rowkind_batch(&batch)?;
        let selection = self.rowkind_selection(&batch)?;
        let batch = match &selection {
            Some(rows) => take_rows(&batch, rows)?,
            None => batch,
        };
        if batch.num_rows() == 0 {
            return Ok(None);
        }
        if !self.primary_key_indices.is_empty() {
            super::inline_blob::validate_inline_blob_columns(
                &batch,
                self.table.schema().options(),
            )?;
        }
        Ok(Some(batch))
    }

    pub(super) async fn write_partition_bucket_batch(
        &mut self,
        partition: Vec<u8>,
        bucket: i32,
        batch: RecordBatch,
    ) -> Result<()> {
        self.write_bucket(partition, bucket, batch).await
    }

    fn validate_write_batch_schema(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let expected_schema = &self.write_schema;
        let actual_schema = batch.schema();
        let table_field_count = expected_schema.fields().len();
        let actual_field_count = actual_schema.fields().len();
        // Primary-key data writers consume `_VALUE_KIND` independently of whether
        // separate changelog files are enabled. Row-kind generation and
        // cross-partition routing add the column themselves, so callers must not.
        let allows_value_kind = !self.primary_key_indices.is_empty()
            && self.row_kind_generator.is_none()
            && !matches!(self.bucket_assigner, BucketAssignerEnum::CrossPartition(_));
        let includes_value_kind = allows_value_kind && actual_field_count == table_field_count + 1;

        if actual_field_count != table_field_count && !includes_value_kind {
            let maximum_expected_count = table_field_count + usize::from(allows_value_kind);
            let (mismatch_index, expected_field, actual_field) =
                if actual_field_count < table_field_count {
                    let field = expected_schema.field(actual_field_count);
                    (
                        actual_field_count,
                        format!("'{}': {:?}", field.name(), field.data_type()),
                        "<missing>".to_string(),
                    )
                } else {
                    let field = actual_schema.field(maximum_expected_count);
                    (
                        maximum_expected_count,
                        "<no field>".to_string(),
                        format!("'{}': {:?}", field.name(), field.data_type()),
                    )
                };
            let expected_count = if allows_value_kind {
                format!("{table_field_count} or {}", table_field_count + 1)
            } else {
                table_field_count.to_string()
            };
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "write batch schema field count mismatch: expected {expected_count}, actual {actual_field_count}; first mismatch at index {mismatch_index}: expected {expected_field}, actual {actual_field}"
                ),
                source: None,
            });
        }

        for (index, expected_field) in expected_schema.fields().iter().enumerate() {
            let actual_field = actual_schema.field(index);
            if actual_field.name() != expected_field.name() {
                return Err(crate::Error::DataInvalid {
                    message: format!(
                        "write batch schema field name mismatch at index {index}: expected '{}', actual '{}'",
                        expected_field.name(),
                        actual_field.name()
                    ),
                    source: None,
                });
            }
        }
        if includes_value_kind {
            let actual_field = actual_schema.field(table_field_count);
            if actual_field.name() != VALUE_KIND_FIELD_NAME {
                return Err(crate::Error::DataInvalid {
                    message: format!(
                        "write batch schema field name mismatch at index {table_field_count}: expected '{VALUE_KIND_FIELD_NAME}', actual '{}'",
                        actual_field.name()
                    ),
                    source: None,
                });
            }
        }

        let mut normalized_columns: Vec<ArrayRef> = Vec::with_capacity(actual_field_count);
        for (index, expected_field) in expected_schema.fields().iter().enumerate() {
            let actual_field = actual_schema.field(index);
            let column = normalize_write_array(batch.column(index), expected_field.data_type())
                .map_err(|error| crate::Error::DataInvalid {
                    message: format!(
                        "write batch schema data type mismatch for field '{}' at index {index}: expected {:?}, actual {:?}: {error}",
                        expected_field.name(),
                        expected_field.data_type(),
                        actual_field.data_type()
                    ),
                    source: Some(Box::new(error)),
                })?;
            normalized_columns.push(column);
        }
        if includes_value_kind {
            let actual_field = actual_schema.field(table_field_count);
            if actual_field.data_type() != &arrow_schema::DataType::Int8 {
                return Err(crate::Error::DataInvalid {
                    message: format!(
                        "write batch schema data type mismatch for field '{VALUE_KIND_FIELD_NAME}' at index {table_field_count}: expected {:?}, actual {:?}",
                        arrow_schema::DataType::Int8,
                        actual_field.data_type()
                    ),
                    source: None,
                });
            }
            normalized_columns.push(batch.column(table_field_count).clone());
        }

        let schema = if includes_value_kind {
            let mut fields = expected_schema.fields().iter().cloned().collect::<Vec<_>>();
            fields.push(actual_schema.fields()[table_field_count].clone());
            Arc::new(arrow_schema::Schema::new_with_metadata(
                fields,
                expected_schema.metadata().clone(),
            ))
        } else {
            expected_schema.clone()
        };
        RecordBatch::try_new(schema, normalized_columns).map_err(|error| {
            crate::Error::DataInvalid {
                message: format!("Failed to normalize write batch schema: {error}"),
                source: Some(Box::new(error)),
            }
        })
    }

    /// Group rows by (partition_bytes, bucket) and return sub-batches.
    ///
    /// In cross-partition mode, also generates DELETE sub-batches for keys that
    /// migrated from one partition to another.
    async fn divide_by_partition_bucket(
        &mut self,
        batch: &RecordBatch,
    ) -> Result<Vec<(PartitionBucketKey, RecordBatch)>> {
        // Fast path: constant bucket with no partitions — skip per-row routing
        if let BucketAssignerEnum::Constant(ref a) = self.bucket_assigner {
            if self.partition_keys.is_empty() {
                return Ok(vec![(
                    (EMPTY_SERIALIZED_ROW.clone(), a.bucket()),
                    batch.clone(),
                )]);
            }
        }

        let fields = self.write_fields.clone();
        let output = self.bucket_assigner.assign_batch(batch, &fields).await?;
        if matches!(self.bucket_assigner, BucketAssignerEnum::CrossPartition(_)) {
            return self.divide_cross_partition_batch(batch, output);
        }
        // Each row's key is moved into the map, not cloned: one allocation less per row.
        let mut groups: HashMap<PartitionBucketKey, Vec<usize>> = HashMap::new();
        let keys = output.partition_bytes.into_iter().zip(output.buckets);
        for (row_idx, key) in keys.enumerate().take(batch.num_rows()) {
            groups.entry(key).or_default().push(row_idx);
        }
        groups
            .into_iter()
            .map(|(key, rows)| Ok((key, take_rows(batch, &rows)?)))
            .collect()
    }

    /// Preserve Java GlobalIndexAssigner's DELETE-before-input event order
    /// within each bucket, including migrations back to an earlier partition.
    fn divide_cross_partition_batch(
        &self,
        batch: &RecordBatch,
        output: BatchAssignOutput,
    ) -> Result<Vec<(PartitionBucketKey, RecordBatch)>> {
        let mut groups: HashMap<PartitionBucketKey, (Vec<usize>, Vec<i8>)> = HashMap::new();
        let skips: HashSet<usize> = output.skips.into_iter().collect();
        let mut deletes = output.deletes.into_iter().peekable();
        let kinds = batch.column_by_name(VALUE_KIND_FIELD_NAME).map(|column| {
            column
                .as_any()
                .downcast_ref::<arrow_array::Int8Array>()
                .unwrap()
        });
        for row_idx in 0..batch.num_rows() {
            if skips.contains(&row_idx) {
                continue;
            }
            if deletes
                .peek()
                .is_some_and(|(index, _, _)| *index == row_idx)
            {
                let (_, partition, bucket) = deletes.next().unwrap();
                let (rows, kinds) = groups.entry((partition, bucket)).or_default();
                rows.push(row_idx);
                kinds.push(RowKind::Delete.to_value());
            }
            let key = (
                output.partition_bytes[row_idx].clone(),
                output.buckets[row_idx],
            );
            let (rows, row_kinds) = groups.entry(key).or_default();
            rows.push(row_idx);
            row_kinds.push(kinds.map_or(RowKind::Insert.to_value(), |kinds| kinds.value(row_idx)));
        }
        // Generated row kinds are replaced below; migration DELETEs must not
        // append a second _VALUE_KIND column to a rowkind.field batch.
        let data = if let Some((index, _)) = batch.schema().column_with_name(VALUE_KIND_FIELD_NAME)
        {
            batch
                .project(
                    &(0..batch.num_columns())
                        .filter(|i| *i != index)
                        .collect::<Vec<_>>(),
                )
                .map_err(|error| crate::Error::DataInvalid {
                    message: format!("Failed to project cross-partition input: {error}"),
                    source: Some(Box::new(error)),
                })?
        } else {
            batch.clone()
        };
        groups
            .into_iter()
            .map(|(key, (rows, kinds))| {
                let routed = self.with_partition_values(&take_rows(&data, &rows)?, &key.0)?;
                Ok((key, Self::add_per_row_value_kind_column(&routed, kinds)?))
            })
            .collect()
    }

    /// Keep physical partition columns consistent with the routed partition.
    /// Cross-partition partial-update/aggregation writes stay in the old
    /// partition, as Java `UseOldExistingProcessor` does; deduplicate DELETEs
    /// also carry the old partition values.
    fn with_partition_values(
        &self,
        batch: &RecordBatch,
        partition_bytes: &[u8],
    ) -> Result<RecordBatch> {
        let partition = BinaryRow::from_serialized_bytes(partition_bytes)?;
        let mut columns = batch.columns().to_vec();
        for (partition_index, field) in self.table.schema().partition_fields().iter().enumerate() {
            let column_index = batch.schema().index_of(field.name()).map_err(|error| {
                crate::Error::DataInvalid {
                    message: format!("Missing partition field '{}': {error}", field.name()),
                    source: Some(Box::new(error)),
                }
            })?;
            columns[column_index] = partition_array(
                &partition,
                partition_index,
                field.data_type(),
                batch.num_rows(),
            )?;
        }
        RecordBatch::try_new(batch.schema(), columns).map_err(|error| crate::Error::DataInvalid {
            message: format!("Failed to restore routed partition values: {error}"),
            source: Some(Box::new(error)),
        })
    }

    fn generate_rowkind_batch(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let Some(generator) = &self.row_kind_generator else {
            return Ok(batch.clone());
        };
        if batch
            .schema()
            .column_with_name(VALUE_KIND_FIELD_NAME)
            .is_some()
        {
            return Err(crate::Error::DataInvalid {
                message: "batch must not contain _VALUE_KIND when rowkind.field is configured"
                    .to_string(),
                source: None,
            });
        }

        let kinds = (0..batch.num_rows())
            .map(|row| generator.generate(batch, row).map(|kind| kind.to_value()))
            .collect::<Result<Vec<_>>>()?;
        Self::add_per_row_value_kind_column(batch, kinds)
    }

    /// Both generated row kinds and explicit caller-provided kinds use the
    /// same Java RowKindFilter before bucket assignment and changelog writing.
    fn rowkind_selection(&self, batch: &RecordBatch) -> Result<Option<Vec<usize>>> {
        let Some(filter) = &self.row_kind_filter else {
            return Ok(None);
        };
        let Some(column) = batch.column_by_name(VALUE_KIND_FIELD_NAME) else {
            return Ok(None);
        };
        let kinds = column
            .as_any()
            .downcast_ref::<arrow_array::Int8Array>()
            .ok_or_else(|| crate::Error::DataInvalid {
                message: "_VALUE_KIND column must be Int8".to_string(),
                source: None,
            })?;
        let mut keep_rows = Vec::new();
        for (row, kind) in kinds.iter().enumerate() {
            let kind = RowKind::from_value(kind.unwrap_or(RowKind::Insert as i8))?;
            if filter.test(kind) {
                keep_rows.push(row);
            }
        }
        Ok((keep_rows.len() != batch.num_rows()).then_some(keep_rows))
    }

    fn add_per_row_value_kind_column(
        batch: &RecordBatch,
        value_kinds: Vec<i8>,
    ) -> Result<RecordBatch> {
        use arrow_array::Int8Array;
        use arrow_schema::{DataType as ArrowDataType, Field as ArrowField};

        if batch.num_rows() != value_kinds.len() {
            return Err(crate::Error::DataInvalid {
                message: "rowkind batch row count must match value kind array length".to_string(),
                source: None,
            });
        }
        if batch
            .schema()
            .column_with_name(VALUE_KIND_FIELD_NAME)
            .is_some()
        {
            return Err(crate::Error::DataInvalid {
                message: "batch already contains _VALUE_KIND column".to_string(),
                source: None,
            });
        }

        let vk_array = Arc::new(Int8Array::from(value_kinds));
        let vk_field = Arc::new(ArrowField::new(
            VALUE_KIND_FIELD_NAME,
            ArrowDataType::Int8,
            false,
        ));

        let mut fields = batch.schema().fields().to_vec();
        let mut columns: Vec<Arc<dyn arrow_array::Array>> = batch.columns().to_vec();
        fields.push(vk_field);
        columns.push(vk_array);

        let schema = Arc::new(arrow_schema::Schema::new(fields));
        RecordBatch::try_new(schema, columns).map_err(|e| crate::Error::DataInvalid {
            message: format!("Failed to add per-row _VALUE_KIND column: {e}"),
            source: None,
        })
    }

    /// Write a batch directly to the writer for the given (partition, bucket).
    async fn write_bucket(
        &mut self,
        partition_bytes: Vec<u8>,
        bucket: i32,
        batch: RecordBatch,
    ) -> Result<()> {
        self.ensure_active()?;
        let key = (partition_bytes, bucket);
        let result = async {
            self.ensure_writers(std::slice::from_ref(&key)).await?;
            self.partition_writers
                .get_mut(&key)
                .unwrap()
                .write(&batch)
                .await
        }
        .await;
        if result.is_err() {
            self.fail_write().await;
        }
        result
    }

    /// Creates the writer of each of `keys` that has none yet, after checking the branch's
    /// schema exists (once per `TableWrite`).
    async fn ensure_writers(&mut self, keys: &[PartitionBucketKey]) -> Result<()> {
        self.ensure_branch_schema_exists().await?;
        for key in keys {
            if !self.partition_writers.contains_key(key) {
                self.create_writer(key.0.clone(), key.1).await?;
            }
        }
        Ok(())
    }

    /// Resolved filesystem handles must name an existing branch schema before
    /// creating output. Main and REST tables retain their established metadata path.
    async fn ensure_branch_schema_exists(&mut self) -> Result<()> {
        if self.branch_schema_checked {
            return Ok(());
        }
        let schema_path = self.table.schema_manager().schema_path(self.schema_id);
        if !self.table.file_io().exists(&schema_path).await? {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "Branch '{}' does not contain schema {}.",
                    self.table.branch(),
                    self.schema_id
                ),
                source: None,
            });
        }
        self.branch_schema_checked = true;
        Ok(())
    }

    /// Routing can update persistent bucket-index state before it fails, just
    /// as file writes can produce output. Neither failure permits a later commit.
    async fn fail_write(&mut self) {
        self.close().await;
        self.failed = true;
    }

    fn ensure_active(&self) -> Result<()> {
        if self.failed {
            return Err(crate::Error::DataInvalid {
                message: "TableWrite cannot be reused after a write failure".to_string(),
                source: None,
            });
        }
        Ok(())
    }

    /// Write Arrow batches, optionally using a bucket assigned upstream, as
    /// in Java TableWrite.write(row, bucket). Dynamic HASH indexes observe every
    /// surviving key after RowKind filtering.
    pub async fn write_arrow(
        &mut self,
        batches: &[RecordBatch],
        bucket: Option<i32>,
    ) -> Result<()> {
        for batch in batches {
            match bucket {
                Some(bucket) => self.write_precomputed_bucket(batch, bucket).await?,
                None => self.write_arrow_batch(batch).await?,
            }
        }
        Ok(())
    }

    /// Close without preparing another commit, discarding only outstanding output.
    /// Files already returned by prepare_commit belong to the caller.
    pub async fn close(&mut self) {
        if let Some(writer) = self.format_writer.as_mut() {
            writer.close().await;
            return;
        }
        for (_, mut writer) in self.partition_writers.drain() {
            writer.abort().await;
        }
    }

    /// Flush all writers and collect CommitMessages for use with TableCommit.
    /// Append writers are closed; primary-key writers retain their sequence
    /// counters after handing off the prepared files, as Java does.
    ///
    /// Invalidate the snapshot sequence cache used to seed previously unseen
    /// buckets. Already-open key-value writers keep their own advancing counter.
    pub async fn prepare_commit(&mut self) -> Result<Vec<CommitMessage>> {
        if let Some(writer) = self.format_writer.as_mut() {
            return writer.prepare_commit().await;
        }
        self.ensure_active()?;
        self.partition_seq_cache.clear();
        let writers: Vec<(PartitionBucketKey, FileWriter)> =
            self.partition_writers.drain().collect();

        // Each writer prepares (encodes and closes its last files) on a task of its own, so
        // the runtime's worker threads share the work.
        let tasks: Vec<_> = writers
            .into_iter()
            .map(|((partition_bytes, bucket), writer)| {
                tokio::spawn(
                    async move { (partition_bytes, bucket, writer.prepare_commit().await) },
                )
            })
            .collect();
        let mut results = Vec::with_capacity(tasks.len());
        let mut lost = None;
        for task in futures::future::join_all(tasks).await {
            match task {
                Ok(result) => results.push(result),
                Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                Err(join) => {
                    lost.get_or_insert(crate::Error::UnexpectedError {
                        message: format!("a bucket's prepare task was cancelled: {join}"),
                        source: None,
                    });
                }
            }
        }

        let mut messages = Vec::new();
        let mut error = None;
        for (partition_bytes, bucket, (result, retained)) in results {
            if let Some(writer) = retained {
                self.partition_writers
                    .insert((partition_bytes.clone(), bucket), writer);
            }
            match result {
                Ok(files) if !files.data_files.is_empty() || !files.changelog_files.is_empty() => {
                    let mut message = CommitMessage::new(partition_bytes, bucket, files.data_files);
                    message.new_changelog_files = files.changelog_files;
                    messages.push(message);
                }
                Ok(_) => {}
                Err(err) => {
                    error.get_or_insert(err);
                }
            }
        }
        if let Some(error) = error.or(lost) {
            self.fail_prepare(&messages).await;
            return Err(error);
        }

        // Collect index files from bucket assigner
        let file_io = self.table.file_io();
        let mut index_files_by_key = match self.bucket_assigner.prepare_commit_index(file_io).await
        {
            Ok(files) => files,
            Err(error) => {
                self.fail_prepare(&messages).await;
                return Err(error);
            }
        };

        for message in &mut messages {
            let key = (message.partition.clone(), message.bucket);
            message.new_index_files = index_files_by_key.remove(&key).unwrap_or_default();
        }
        // Emit index-only messages for (partition, bucket) pairs that had no data writer
        // (e.g., old buckets where keys migrated away in cross-partition mode).
        for ((partition_bytes, bucket), idx_files) in index_files_by_key {
            if !idx_files.is_empty() {
                let mut msg = CommitMessage::new(partition_bytes, bucket, vec![]);
                msg.new_index_files = idx_files;
                messages.push(msg);
            }
        }
        Ok(messages)
    }

    async fn fail_prepare(&mut self, messages: &[CommitMessage]) {
        self.failed = true;
        self.close().await;
        // Only this failed invocation's outputs: no message has been returned
        // or submitted. Earlier successful prepare calls belong to the caller.
        let mut cleanup = messages.to_vec();
        if self.primary_key_indices.is_empty() && self.blob_consumer.is_some() {
            // A successful partition may already have exposed its dedicated
            // Blob files to the consumer. Preserve Java's deletion policy in
            // this table-wide cleanup too. Explicit TableCommit.abort remains
            // available when the caller knows the files are no longer needed.
            for message in &mut cleanup {
                message
                    .new_files
                    .retain(|file| !file.file_name.ends_with(".blob"));
            }
        }
        let commit = super::TableCommit::new(self.table.clone(), self.commit_user.clone());
        if let Err(error) = commit.abort(&cleanup).await {
            log::warn!("Failed to discard unreturned prepared files: {error}");
        }
    }

    async fn create_writer(&mut self, partition_bytes: Vec<u8>, bucket: i32) -> Result<()> {
        let partition_path = self.resolve_partition_path(&partition_bytes)?;

        let writer = if self.primary_key_indices.is_empty() {
            self.create_append_writer(partition_path, bucket)?
        } else if bucket == POSTPONE_BUCKET {
            self.create_postpone_writer(partition_path, bucket)?
        } else {
            self.create_kv_writer(partition_path, bucket, &partition_bytes)
                .await?
        };

        self.partition_writers
            .insert((partition_bytes, bucket), writer);
        Ok(())
    }

    fn resolve_partition_path(&self, partition_bytes: &[u8]) -> Result<String> {
        if self.partition_keys.is_empty() {
            Ok(String::new())
        } else {
            let row = BinaryRow::from_serialized_bytes(partition_bytes)?;
            self.partition_computer.generate_partition_path(&row)
        }
    }

    /// Create an append-only writer for non-PK tables.
    fn create_append_writer(&self, partition_path: String, bucket: i32) -> Result<FileWriter> {
        if self.has_blob_fields
            || self.has_dedicated_vector_fields
            || !self.blob_view_fields.is_empty()
        {
            let fields = self.table.schema().fields();
            Ok(FileWriter::AppendDedicated(Box::new(
                AppendDedicatedFormatFileWriter::new(
                    self.table.file_io().clone(),
                    self.table.location().to_string(),
                    partition_path,
                    bucket,
                    self.schema_id,
                    self.target_file_size,
                    self.target_file_row_num,
                    self.blob_target_file_size,
                    self.file_compression.clone(),
                    self.file_compression_zstd_level,
                    self.write_buffer_size,
                    self.file_format.clone(),
                    self.vector_target_file_size,
                    self.vector_file_format.as_deref(),
                    &self.write_schema,
                    &self.write_fields,
                    fields,
                    self.table.schema().options(),
                    &self.blob_inline_fields,
                )?
                .with_blob_consumer(self.blob_consumer.clone())?
                .with_resources(self.resources.clone()),
            )))
        } else {
            Ok(FileWriter::Append(
                DataFileWriter::new(
                    self.table.file_io().clone(),
                    self.table.location().to_string(),
                    partition_path,
                    bucket,
                    self.schema_id,
                    self.target_file_size,
                    self.file_compression.clone(),
                    self.file_compression_zstd_level,
                    self.write_buffer_size,
                    self.file_format.clone(),
                    self.write_fields.clone(),
                    self.table.schema().options().clone(),
                    Some(0),
                    None,
                    (!super::data_evolution_fields::can_omit_normal_write_cols(
                        self.table.schema().fields(),
                        &self
                            .write_fields
                            .iter()
                            .map(|field| field.name().to_string())
                            .collect::<Vec<_>>(),
                        &CoreOptions::new(self.table.schema().options()),
                    ))
                    .then(|| {
                        self.write_fields
                            .iter()
                            .map(|field| field.name().to_string())
                            .collect()
                    }),
                )?
                .with_file_index(
                    self.file_index_options
                        .as_ref()
                        .and_then(|options| options.project_to_fields(&self.write_fields))
                        .map(Arc::new),
                )
                .with_target_file_row_num(self.target_file_row_num)
                .with_resources(self.resources.clone()),
            ))
        }
    }

    /// Create a postpone writer (KV format, no sorting/dedup, special file naming).
    fn create_postpone_writer(&self, partition_path: String, bucket: i32) -> Result<FileWriter> {
        let data_file_prefix = format!(
            "{}-u-{}-s-{}-w-",
            self.data_file_prefix, self.commit_user, self.postpone_write_id
        );
        Ok(FileWriter::Postpone(
            PostponeFileWriter::new(
                self.table.file_io().clone(),
                PostponeWriteConfig {
                    table_name: self.table.identifier().full_name(),
                    primary_keys: self.table.schema().primary_keys().to_vec(),
                    table_location: self.table.location().to_string(),
                    table_options: self.table.schema().options().clone(),
                    partition_path,
                    bucket,
                    schema_id: self.schema_id,
                    target_file_size: self.target_file_size,
                    target_file_row_num: self.target_file_row_num,
                    primary_key_indices: self.primary_key_indices.clone(),
                    value_fields: self.table.schema().fields().to_vec(),
                    file_compression: self.file_compression.clone(),
                    file_compression_zstd_level: self.file_compression_zstd_level,
                    write_buffer_size: self.write_buffer_size,
                    file_format: self.file_format.clone(),
                    data_file_prefix,
                    file_index_options: self.file_index_options.clone(),
                },
            )?
            .with_resources(self.resources.clone()),
        ))
    }

    /// The key-value file writer of `bucket` of the partition at `partition_path`
    /// (`partition_bytes` serialized) of a primary-key table with normal buckets, for a caller
    /// that writes files itself (a compaction's rewrite).
    pub(crate) async fn key_value_writer(
        &mut self,
        partition_path: String,
        bucket: i32,
        partition_bytes: &[u8],
    ) -> Result<KeyValueFileWriter> {
        match self
            .create_kv_writer(partition_path, bucket, partition_bytes)
            .await?
        {
            FileWriter::KeyValue(writer) => Ok(writer),
            _ => Err(crate::Error::Unsupported {
                message: "a key-value writer is made for primary-key tables only".to_string(),
            }),
        }
    }

    /// Create a key-value writer for PK tables with normal buckets.
    async fn create_kv_writer(
        &mut self,
        partition_path: String,
        bucket: i32,
        partition_bytes: &[u8],
    ) -> Result<FileWriter> {
        if !self.is_overwrite && self.sequence_snapshot.is_none() {
            if let Some(id) = self.restore_snapshot_id {
                self.sequence_snapshot = Some(if id == 0 {
                    None
                } else {
                    Some(self.table.snapshot_manager().get_snapshot(id).await?)
                });
            }
        }
        // Lazily scan partition sequence numbers on first writer creation per partition.
        // Overwrite mode skips this — old data will be replaced, so seq starts at 0.
        if !self.is_overwrite && !self.partition_seq_cache.contains_key(partition_bytes) {
            let table = self.table.clone();
            let sequence_snapshot = self.sequence_snapshot.clone();
            let bucket_seq =
                Self::scan_partition_sequence_numbers(&table, sequence_snapshot, partition_bytes)
                    .await?;
            self.partition_seq_cache
                .insert(partition_bytes.to_vec(), bucket_seq);
        }
        let next_seq = self
            .partition_seq_cache
            .get(partition_bytes)
            .and_then(|m| m.get(&bucket))
            .copied()
            .unwrap_or(0);

        Ok(FileWriter::KeyValue(
            KeyValueFileWriter::new(
                self.table.file_io().clone(),
                KeyValueWriteConfig {
                    table_name: self.table.identifier().full_name(),
                    table_options: self.table.schema().options().clone(),
                    table_location: self.table.location().to_string(),
                    partition_path,
                    bucket,
                    schema_id: self.schema_id,
                    file_compression: self.file_compression.clone(),
                    file_compression_zstd_level: self.file_compression_zstd_level,
                    write_buffer_size: self.write_buffer_size,
                    file_format: self.file_format.clone(),
                    data_file_prefix: self.data_file_prefix.clone(),
                    input_changelog: self.changelog_producer == ChangelogProducer::Input
                        && !self.is_overwrite,
                    changelog_file_prefix: self.changelog_file_prefix.clone(),
                    changelog_file_compression: self.changelog_file_compression.clone(),
                    changelog_file_format: self.changelog_file_format.clone(),
                    primary_keys: self.table.schema().primary_keys().to_vec(),
                    primary_key_indices: self.primary_key_indices.clone(),
                    primary_key_types: self.primary_key_types.clone(),
                    value_fields: self.table.schema().fields().to_vec(),
                    sequence_field_indices: self.sequence_field_indices.clone(),
                    merge_engine: self.merge_engine,
                    deletion_vectors_enabled: CoreOptions::new(self.table.schema().options())
                        .deletion_vectors_enabled(),
                    file_index_options: self.file_index_options.clone(),
                },
                next_seq,
            )?
            .with_resources(self.resources.clone()),
        ))
    }
}

#[cfg(test)]
pub(in crate::table) mod tests {
    use super::*;
    use crate::arrow::format::create_format_reader;
    use crate::catalog::Identifier;
    use crate::io::{FileIO, FileIOBuilder};
    use crate::spec::{
        bucket_dir_name, BigIntType, BinaryRow, BinaryRowBuilder, BinaryType, BlobType, DataField,
        DataType, Datum, DecimalType, FileKind, FloatType, IndexManifest, IntType,
        LocalZonedTimestampType, Manifest, ManifestList, PredicateBuilder, Schema, TableSchema,
        TimeType, TimestampType, TinyIntType, VarBinaryType, VarCharType, VectorType,
        SEQUENCE_NUMBER_FIELD_ID, SEQUENCE_NUMBER_FIELD_NAME, VALUE_KIND_FIELD_ID,
        VALUE_KIND_FIELD_NAME,
    };
    use crate::table::{SnapshotManager, TableCommit};
    use arrow_array::RecordBatchReader as _;
    use arrow_array::{Int32Array, Int64Array, Int8Array, StringArray, Time32MillisecondArray};
    use arrow_schema::{
        DataType as ArrowDataType, Field as ArrowField, Schema as ArrowSchema, TimeUnit,
    };
    use std::sync::Arc;

    pub(in crate::table) fn test_file_io() -> FileIO {
        FileIOBuilder::new("memory").build().unwrap()
    }

    #[tokio::test]
    async fn failed_partition_prepare_preserves_consumer_blob_files() {
        use crate::io::FileRead;
        use crate::spec::BlobDescriptor;
        use arrow_array::{ArrayRef, LargeBinaryArray};
        use std::sync::Mutex;

        for has_consumer in [false, true] {
            let io = test_file_io();
            let schema = Schema::builder()
                .column("pt", DataType::Int(IntType::new()))
                .column("payload", DataType::Blob(BlobType::new()))
                .partition_keys(["pt"])
                .option("data-evolution.enabled", "true")
                .option("row-tracking.enabled", "true")
                .build()
                .unwrap();
            let table = Table::new(
                io.clone(),
                Identifier::new("db", "partitioned_blob"),
                "memory:/partitioned-blob".into(),
                TableSchema::new(0, &schema),
                None,
            );
            let mut writer = TableWrite::new(&table, "consumer".into()).unwrap();
            let descriptors = Arc::new(Mutex::new(Vec::new()));
            if has_consumer {
                let received = descriptors.clone();
                writer
                    .with_blob_consumer(Some(Arc::new(
                        move |_: &str, descriptor: Option<&BlobDescriptor>| {
                            received.lock().unwrap().push(descriptor.unwrap().clone());
                            Ok(false)
                        },
                    )))
                    .unwrap();
            }
            let batch = RecordBatch::try_from_iter([
                ("pt", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef),
                (
                    "payload",
                    Arc::new(LargeBinaryArray::from(vec![
                        Some(b"payload".as_slice()),
                        Some(b"payload".as_slice()),
                    ])) as ArrayRef,
                ),
            ])
            .unwrap();
            writer.write_arrow_batch(&batch).await.unwrap();
            assert_eq!(writer.partition_writers.len(), 2);
            let FileWriter::AppendDedicated(partition) =
                writer.partition_writers.values_mut().next().unwrap()
            else {
                panic!("expected a dedicated Blob writer");
            };
            partition.inject_blob_close_failure();
            assert!(writer
                .prepare_commit()
                .await
                .unwrap_err()
                .to_string()
                .contains("injected close failure"));
            assert!(writer.prepare_commit().await.is_err());
            writer.close().await;
            let files = io.list_status_recursive(table.location()).await.unwrap();
            if has_consumer {
                assert_eq!(files.len(), 2);
                assert!(files.iter().all(|file| file.path.ends_with(".blob")));
                let descriptors = descriptors.lock().unwrap().clone();
                assert_eq!(descriptors.len(), 2);
                for descriptor in descriptors {
                    let reader = io
                        .new_input(descriptor.uri())
                        .unwrap()
                        .reader()
                        .await
                        .unwrap();
                    let start = descriptor.offset() as u64;
                    assert_eq!(
                        reader.read(start..start + 7).await.unwrap().as_ref(),
                        b"payload"
                    );
                }
            } else {
                assert!(files.is_empty());
            }
        }
    }

    fn test_schema() -> TableSchema {
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    fn test_partitioned_schema() -> TableSchema {
        let schema = Schema::builder()
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("id", DataType::Int(IntType::new()))
            .partition_keys(["pt"])
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    fn test_table(file_io: &FileIO, table_path: &str) -> Table {
        Table::new(
            file_io.clone(),
            Identifier::new("default", "test_table"),
            table_path.to_string(),
            test_schema(),
            None,
        )
    }

    fn test_partitioned_table(file_io: &FileIO, table_path: &str) -> Table {
        Table::new(
            file_io.clone(),
            Identifier::new("default", "test_table"),
            table_path.to_string(),
            test_partitioned_schema(),
            None,
        )
    }

    fn test_blob_table_schema() -> TableSchema {
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("payload", DataType::Blob(BlobType::new()))
            .option("data-evolution.enabled", "true")
            .option("row-tracking.enabled", "true")
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    fn test_vector_table_schema(vector_file_format: &str) -> TableSchema {
        let vector_type = DataType::Vector(
            VectorType::try_new(true, 2, DataType::Float(FloatType::new())).unwrap(),
        );
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("embedding", vector_type)
            .option("data-evolution.enabled", "true")
            .option("row-tracking.enabled", "true")
            .option("vector.file.format", vector_file_format)
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    pub(in crate::table) async fn setup_dirs(file_io: &FileIO, table_path: &str) {
        file_io
            .mkdirs(&format!("{table_path}/snapshot/"))
            .await
            .unwrap();
        file_io
            .mkdirs(&format!("{table_path}/manifest/"))
            .await
            .unwrap();
    }

    pub(in crate::table) fn make_batch(ids: Vec<i32>, values: Vec<i32>) -> RecordBatch {
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("value", ArrowDataType::Int32, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(ids)),
                Arc::new(Int32Array::from(values)),
            ],
        )
        .unwrap()
    }

    fn make_nullable_batch(ids: Vec<Option<i32>>, values: Vec<Option<i32>>) -> RecordBatch {
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, true),
            ArrowField::new("value", ArrowDataType::Int32, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(ids)),
                Arc::new(Int32Array::from(values)),
            ],
        )
        .unwrap()
    }

    fn make_vector_batch(ids: Vec<i32>, vectors: Vec<Vec<f32>>) -> RecordBatch {
        use arrow_array::builder::{FixedSizeListBuilder, Float32Builder};

        let element_field = Arc::new(ArrowField::new("element", ArrowDataType::Float32, true));
        let mut builder =
            FixedSizeListBuilder::new(Float32Builder::new(), 2).with_field(element_field.clone());
        for vector in vectors {
            assert_eq!(vector.len(), 2);
            for value in vector {
                builder.values().append_value(value);
            }
            builder.append(true);
        }
        let embedding = builder.finish();

        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new(
                "embedding",
                ArrowDataType::FixedSizeList(element_field, 2),
                true,
            ),
        ]));
        RecordBatch::try_new(
            schema,
            vec![Arc::new(Int32Array::from(ids)), Arc::new(embedding)],
        )
        .unwrap()
    }

    fn make_batch_with_value_kind(
        ids: Vec<i32>,
        values: Vec<i32>,
        value_kinds: Vec<i8>,
    ) -> RecordBatch {
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("value", ArrowDataType::Int32, false),
            ArrowField::new(
                crate::spec::VALUE_KIND_FIELD_NAME,
                ArrowDataType::Int8,
                false,
            ),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(ids)),
                Arc::new(Int32Array::from(values)),
                Arc::new(Int8Array::from(value_kinds)),
            ],
        )
        .unwrap()
    }

    fn make_partitioned_batch_with_value_kind(
        pts: Vec<&str>,
        ids: Vec<i32>,
        values: Vec<i32>,
        value_kinds: Vec<i8>,
    ) -> RecordBatch {
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("pt", ArrowDataType::Utf8, false),
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("value", ArrowDataType::Int32, false),
            ArrowField::new(
                crate::spec::VALUE_KIND_FIELD_NAME,
                ArrowDataType::Int8,
                false,
            ),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(arrow_array::StringArray::from(pts)),
                Arc::new(Int32Array::from(ids)),
                Arc::new(Int32Array::from(values)),
                Arc::new(Int8Array::from(value_kinds)),
            ],
        )
        .unwrap()
    }

    fn physical_key_value_fields() -> Vec<DataField> {
        vec![
            DataField::new(
                SEQUENCE_NUMBER_FIELD_ID,
                SEQUENCE_NUMBER_FIELD_NAME.to_string(),
                DataType::BigInt(BigIntType::new()),
            ),
            DataField::new(
                VALUE_KIND_FIELD_ID,
                VALUE_KIND_FIELD_NAME.to_string(),
                DataType::TinyInt(TinyIntType::new()),
            ),
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "value".to_string(), DataType::Int(IntType::new())),
        ]
    }

    async fn read_physical_key_value_batches(
        file_io: &FileIO,
        file_path: &str,
        file_size: i64,
    ) -> Vec<RecordBatch> {
        let read_fields = physical_key_value_fields();
        let format_reader = create_format_reader(file_path, false, &read_fields).unwrap();
        let input = file_io.new_input(file_path).unwrap();
        let file_reader = input.reader().await.unwrap();
        let stream = format_reader
            .read_batch_stream(
                Box::new(file_reader),
                file_size as u64,
                &read_fields,
                None,
                None,
                None,
            )
            .await
            .unwrap();
        futures::TryStreamExt::try_collect(stream).await.unwrap()
    }

    fn collect_i32(batches: &[RecordBatch], column: usize) -> Vec<i32> {
        batches
            .iter()
            .flat_map(|batch| {
                batch
                    .column(column)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect()
    }

    fn collect_i64(batches: &[RecordBatch], column: usize) -> Vec<i64> {
        batches
            .iter()
            .flat_map(|batch| {
                batch
                    .column(column)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect()
    }

    fn collect_i8(batches: &[RecordBatch], column: usize) -> Vec<i8> {
        batches
            .iter()
            .flat_map(|batch| {
                batch
                    .column(column)
                    .as_any()
                    .downcast_ref::<Int8Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect()
    }

    fn make_partitioned_batch(pts: Vec<&str>, ids: Vec<i32>) -> RecordBatch {
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("pt", ArrowDataType::Utf8, false),
            ArrowField::new("id", ArrowDataType::Int32, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(arrow_array::StringArray::from(pts)),
                Arc::new(Int32Array::from(ids)),
            ],
        )
        .unwrap()
    }

    fn make_id_only_batch(ids: Vec<i32>) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![ArrowField::new(
                "id",
                ArrowDataType::Int32,
                false,
            )])),
            vec![Arc::new(Int32Array::from(ids))],
        )
        .unwrap()
    }

    fn assert_data_invalid_contains(error: crate::Error, expected_context: &[&str]) {
        let message = match error {
            crate::Error::DataInvalid { message, .. } => message,
            error => panic!("expected DataInvalid, got {error:?}"),
        };
        for context in expected_context {
            assert!(
                message.contains(context),
                "expected error message to contain {context:?}, got {message:?}"
            );
        }
    }

    #[tokio::test]
    async fn test_write_arrow_batch_rejects_missing_blob_field() {
        let table = Table::new(
            test_file_io(),
            Identifier::new("default", "test_blob_schema_validation"),
            "memory:/test_blob_schema_validation".to_string(),
            test_blob_table_schema(),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let error = table_write
            .write_arrow_batch(&make_id_only_batch(vec![1]))
            .await
            .unwrap_err();

        assert_data_invalid_contains(
            error,
            &[
                "field count",
                "expected 2",
                "actual 1",
                "payload",
                "<missing>",
            ],
        );
    }

    #[tokio::test]
    async fn test_write_arrow_batch_rejects_missing_vector_field() {
        let table = Table::new(
            test_file_io(),
            Identifier::new("default", "test_vector_schema_validation"),
            "memory:/test_vector_schema_validation".to_string(),
            test_vector_table_schema("parquet"),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let error = table_write
            .write_arrow_batch(&make_id_only_batch(vec![1]))
            .await
            .unwrap_err();

        assert_data_invalid_contains(
            error,
            &[
                "field count",
                "expected 2",
                "actual 1",
                "embedding",
                "<missing>",
            ],
        );
    }

    #[tokio::test]
    async fn test_write_arrow_batch_rejects_mismatched_table_fields() {
        let table = test_table(&test_file_io(), "memory:/test_schema_field_validation");
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let swapped = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("value", ArrowDataType::Int32, false),
                ArrowField::new("id", ArrowDataType::Int32, false),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![10])),
                Arc::new(Int32Array::from(vec![1])),
            ],
        )
        .unwrap();
        let error = table_write.write_arrow_batch(&swapped).await.unwrap_err();
        assert_data_invalid_contains(
            error,
            &["field name", "index 0", "expected 'id'", "actual 'value'"],
        );

        let wrong_name = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("id", ArrowDataType::Int32, false),
                ArrowField::new("wrong", ArrowDataType::Int32, false),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(Int32Array::from(vec![10])),
            ],
        )
        .unwrap();
        let error = table_write
            .write_arrow_batch(&wrong_name)
            .await
            .unwrap_err();
        assert_data_invalid_contains(
            error,
            &[
                "field name",
                "index 1",
                "expected 'value'",
                "actual 'wrong'",
            ],
        );

        let wrong_type = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("id", ArrowDataType::Int64, false),
                ArrowField::new("value", ArrowDataType::Int32, false),
            ])),
            vec![
                Arc::new(Int64Array::from(vec![1_i64])),
                Arc::new(Int32Array::from(vec![10])),
            ],
        )
        .unwrap();
        let error = table_write
            .write_arrow_batch(&wrong_type)
            .await
            .unwrap_err();
        assert_data_invalid_contains(
            error,
            &["data type", "field 'id'", "expected Int32", "actual Int64"],
        );

        let unexpected_column = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("id", ArrowDataType::Int32, false),
                ArrowField::new("value", ArrowDataType::Int32, false),
                ArrowField::new("extra", ArrowDataType::Int32, false),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(Int32Array::from(vec![10])),
                Arc::new(Int32Array::from(vec![20])),
            ],
        )
        .unwrap();
        let error = table_write
            .write_arrow_batch(&unexpected_column)
            .await
            .unwrap_err();
        assert_data_invalid_contains(
            error,
            &[
                "field count",
                "expected 2",
                "actual 3",
                "<no field>",
                "extra",
            ],
        );
    }

    #[tokio::test]
    async fn test_write_arrow_batch_rejects_invalid_empty_batch_schema() {
        let table = test_table(&test_file_io(), "memory:/test_empty_schema_validation");
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        let batch = RecordBatch::new_empty(Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "id",
            ArrowDataType::Int32,
            false,
        )])));

        let error = table_write.write_arrow_batch(&batch).await.unwrap_err();

        assert_data_invalid_contains(
            error,
            &[
                "field count",
                "expected 2",
                "actual 1",
                "value",
                "<missing>",
            ],
        );
    }

    #[tokio::test]
    async fn test_normal_write_rejects_appended_value_kind() {
        let table = test_table(&test_file_io(), "memory:/test_unexpected_value_kind");
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let error = table_write
            .write_arrow_batch(&make_batch_with_value_kind(vec![1], vec![10], vec![0]))
            .await
            .unwrap_err();

        assert_data_invalid_contains(
            error,
            &[
                "field count",
                "expected 2",
                "actual 3",
                "<no field>",
                VALUE_KIND_FIELD_NAME,
            ],
        );
    }

    #[tokio::test]
    async fn test_rowkind_field_accepts_table_schema_and_rejects_caller_value_kind() {
        let file_io = test_file_io();
        let table_path = "memory:/test_rowkind_schema_validation";
        setup_dirs(&file_io, table_path).await;
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .column("op", DataType::VarChar(VarCharType::string_type()))
            .primary_key(["id"])
            .option("bucket", "1")
            .option("rowkind.field", "op")
            .build()
            .unwrap();
        let table = Table::new(
            file_io,
            Identifier::new("default", "test_rowkind_schema_validation"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let caller_value_kind = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("id", ArrowDataType::Int32, false),
                ArrowField::new("value", ArrowDataType::Int32, false),
                ArrowField::new("op", ArrowDataType::Utf8, false),
                ArrowField::new(VALUE_KIND_FIELD_NAME, ArrowDataType::Int8, false),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(Int32Array::from(vec![10])),
                Arc::new(StringArray::from(vec!["+I"])),
                Arc::new(Int8Array::from(vec![0])),
            ],
        )
        .unwrap();
        let error = table_write
            .write_arrow_batch(&caller_value_kind)
            .await
            .unwrap_err();
        assert_data_invalid_contains(
            error,
            &[
                "field count",
                "expected 3",
                "actual 4",
                VALUE_KIND_FIELD_NAME,
            ],
        );

        let valid = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("id", ArrowDataType::Int32, false),
                ArrowField::new("value", ArrowDataType::Int32, false),
                ArrowField::new("op", ArrowDataType::Utf8, false),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(Int32Array::from(vec![10])),
                Arc::new(StringArray::from(vec!["+I"])),
            ],
        )
        .unwrap();
        table_write.write_arrow_batch(&valid).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files[0].row_count, 1);
    }

    #[tokio::test]
    async fn test_write_and_commit() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write";
        setup_dirs(&file_io, table_path).await;

        let table = test_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let batch = make_batch(vec![1, 2, 3], vec![10, 20, 30]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].bucket, 0);
        assert_eq!(messages[0].new_files.len(), 1);
        assert_eq!(messages[0].new_files[0].row_count, 3);

        // Commit and verify snapshot
        let commit = TableCommit::new(table, "test-user".to_string());
        commit.commit(messages).await.unwrap();

        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.id(), 1);
        assert_eq!(snapshot.total_record_count(), Some(3));
    }

    #[tokio::test]
    async fn test_append_write_populates_value_stats() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_value_stats";
        setup_dirs(&file_io, table_path).await;

        let table = test_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_nullable_batch(
                vec![Some(3), None],
                vec![Some(30), Some(10)],
            ))
            .await
            .unwrap();
        table_write
            .write_arrow_batch(&make_nullable_batch(vec![Some(1)], vec![None]))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files.len(), 1);
        let file = &messages[0].new_files[0];
        assert_eq!(file.row_count, 3);
        assert_eq!(file.value_stats_cols, None);
        assert_eq!(file.value_stats.null_counts(), &vec![Some(1), Some(1)]);

        let min_values = BinaryRow::from_serialized_bytes(file.value_stats.min_values()).unwrap();
        let max_values = BinaryRow::from_serialized_bytes(file.value_stats.max_values()).unwrap();
        assert_eq!(min_values.get_int(0).unwrap(), 1);
        assert_eq!(max_values.get_int(0).unwrap(), 3);
        assert_eq!(min_values.get_int(1).unwrap(), 10);
        assert_eq!(max_values.get_int(1).unwrap(), 30);
    }

    #[tokio::test]
    async fn test_append_write_populates_microsecond_timestamp_value_stats() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_timestamp6_value_stats";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("ts", DataType::Timestamp(TimestampType::new(6).unwrap()))
            .column(
                "lzts",
                DataType::LocalZonedTimestamp(LocalZonedTimestampType::new(6).unwrap()),
            )
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_timestamp9_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let arrow_schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new(
                "ts",
                ArrowDataType::Timestamp(TimeUnit::Microsecond, None),
                true,
            ),
            ArrowField::new(
                "lzts",
                ArrowDataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
        ]));
        let batch = RecordBatch::try_new(
            arrow_schema,
            vec![
                Arc::new(arrow_array::TimestampMicrosecondArray::from(vec![
                    Some(1_704_067_200_987_654_i64),
                    Some(1_704_067_200_123_456_i64),
                ])),
                Arc::new(
                    arrow_array::TimestampMicrosecondArray::from(vec![
                        Some(1_704_067_201_999_999_i64),
                        Some(1_704_067_201_000_001_i64),
                    ])
                    .with_timezone("UTC"),
                ),
            ],
        )
        .unwrap();

        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        let file = &messages[0].new_files[0];
        assert_eq!(file.value_stats_cols, None);

        let min_values = BinaryRow::from_serialized_bytes(file.value_stats.min_values()).unwrap();
        let max_values = BinaryRow::from_serialized_bytes(file.value_stats.max_values()).unwrap();
        assert_eq!(
            min_values.get_timestamp_raw(0, 6).unwrap(),
            (1_704_067_200_123, 456_000)
        );
        assert_eq!(
            max_values.get_timestamp_raw(0, 6).unwrap(),
            (1_704_067_200_987, 654_000)
        );
        assert_eq!(
            min_values.get_timestamp_raw(1, 6).unwrap(),
            (1_704_067_201_000, 1_000)
        );
        assert_eq!(
            max_values.get_timestamp_raw(1, 6).unwrap(),
            (1_704_067_201_999, 999_000)
        );
    }

    #[tokio::test]
    async fn test_append_write_nanosecond_timestamp_value_stats_keeps_counts_only() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_timestamp9_value_stats";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("ts", DataType::Timestamp(TimestampType::new(9).unwrap()))
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_timestamp9_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let arrow_schema = Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "ts",
            ArrowDataType::Timestamp(TimeUnit::Nanosecond, None),
            true,
        )]));
        let batch = RecordBatch::try_new(
            arrow_schema,
            vec![Arc::new(arrow_array::TimestampNanosecondArray::from(vec![
                Some(1_704_067_200_987_654_321_i64),
                None,
            ]))],
        )
        .unwrap();

        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        let file = &messages[0].new_files[0];
        assert_eq!(file.value_stats_cols, None);
        assert_eq!(file.value_stats.null_counts(), &vec![Some(1)]);

        let min_values = BinaryRow::from_serialized_bytes(file.value_stats.min_values()).unwrap();
        let max_values = BinaryRow::from_serialized_bytes(file.value_stats.max_values()).unwrap();
        assert!(min_values.is_null_at(0));
        assert!(max_values.is_null_at(0));
    }

    #[tokio::test]
    async fn test_append_write_truncates_string_and_binary_value_stats() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_skip_variable_length_stats";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("name", DataType::VarChar(VarCharType::string_type()))
            .column(
                "payload",
                DataType::VarBinary(VarBinaryType::new(1024).unwrap()),
            )
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_variable_length_stats_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let arrow_schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("name", ArrowDataType::Utf8, true),
            ArrowField::new("payload", ArrowDataType::Binary, true),
        ]));
        let batch = RecordBatch::try_new(
            arrow_schema,
            vec![
                Arc::new(Int32Array::from(vec![2, 1])),
                Arc::new(StringArray::from(vec![
                    Some("a long string value"),
                    Some("another long string value"),
                ])),
                Arc::new(arrow_array::BinaryArray::from(vec![
                    Some(b"large-binary-value" as &[u8]),
                    Some(b"another-large-binary-value" as &[u8]),
                ])),
            ],
        )
        .unwrap();

        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        let file = &messages[0].new_files[0];
        assert_eq!(file.value_stats_cols, None);
        assert_eq!(
            file.value_stats.null_counts(),
            &vec![Some(0), Some(0), Some(0)]
        );

        let min_values = BinaryRow::from_serialized_bytes(file.value_stats.min_values()).unwrap();
        let max_values = BinaryRow::from_serialized_bytes(file.value_stats.max_values()).unwrap();
        assert_eq!(min_values.get_int(0).unwrap(), 1);
        assert_eq!(max_values.get_int(0).unwrap(), 2);
        assert_eq!(min_values.get_string(1).unwrap(), "a long string va");
        assert_eq!(max_values.get_string(1).unwrap(), "another long sts");
        assert_eq!(min_values.get_binary(2).unwrap(), b"another-large-bi");
        assert_eq!(max_values.get_binary(2).unwrap(), b"large-binary-vam");
    }

    #[tokio::test]
    async fn test_append_write_applies_configured_metadata_stats_modes() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_configured_metadata_stats_modes";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("name", DataType::VarChar(VarCharType::string_type()))
            .column("payload", DataType::Binary(BinaryType::new(1024).unwrap()))
            .column("value", DataType::Int(IntType::new()))
            .option("metadata.stats-mode", "counts")
            .option("metadata.stats-keep-first-n-columns", "2")
            .option("fields.name.stats-mode", "full")
            .option("fields.payload.stats-mode", "full")
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_configured_stats_modes_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let arrow_schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, true),
            ArrowField::new("name", ArrowDataType::Utf8, true),
            ArrowField::new("payload", ArrowDataType::Binary, true),
            ArrowField::new("value", ArrowDataType::Int32, true),
        ]));
        let batch = RecordBatch::try_new(
            arrow_schema,
            vec![
                Arc::new(Int32Array::from(vec![Some(2), None])),
                Arc::new(StringArray::from(vec![
                    Some("alpha-long-value-12345"),
                    Some("zeta-long-value-99999"),
                ])),
                Arc::new(arrow_array::BinaryArray::from(vec![
                    Some(b"first-binary-value" as &[u8]),
                    None,
                ])),
                Arc::new(Int32Array::from(vec![Some(10), Some(20)])),
            ],
        )
        .unwrap();

        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        let file = &messages[0].new_files[0];
        assert_eq!(
            file.value_stats_cols,
            Some(vec![
                "id".to_string(),
                "name".to_string(),
                "payload".to_string()
            ])
        );
        assert_eq!(
            file.value_stats.null_counts(),
            &vec![Some(1), Some(0), Some(1)]
        );

        let min_values = BinaryRow::from_serialized_bytes(file.value_stats.min_values()).unwrap();
        let max_values = BinaryRow::from_serialized_bytes(file.value_stats.max_values()).unwrap();
        assert!(min_values.is_null_at(0));
        assert!(max_values.is_null_at(0));
        assert_eq!(min_values.get_string(1).unwrap(), "alpha-long-value-12345");
        assert_eq!(max_values.get_string(1).unwrap(), "zeta-long-value-99999");
        assert_eq!(min_values.get_binary(2).unwrap(), b"first-binary-value");
        assert_eq!(max_values.get_binary(2).unwrap(), b"first-binary-value");
    }

    #[tokio::test]
    async fn test_append_write_respects_non_dense_metadata_stats_storage() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_non_dense_metadata_stats";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("ignored", DataType::Int(IntType::new()))
            .option("metadata.stats-mode", "none")
            .option("metadata.stats-dense-store", "false")
            .option("fields.id.stats-mode", "counts")
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_non_dense_stats_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let arrow_schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, true),
            ArrowField::new("ignored", ArrowDataType::Int32, true),
        ]));
        let batch = RecordBatch::try_new(
            arrow_schema,
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None])),
                Arc::new(Int32Array::from(vec![Some(10), Some(20)])),
            ],
        )
        .unwrap();

        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        let file = &messages[0].new_files[0];
        assert_eq!(file.value_stats_cols, None);
        assert_eq!(file.value_stats.null_counts(), &vec![Some(1), None]);

        let min_values = BinaryRow::from_serialized_bytes(file.value_stats.min_values()).unwrap();
        let max_values = BinaryRow::from_serialized_bytes(file.value_stats.max_values()).unwrap();
        assert_eq!(min_values.arity(), 2);
        assert_eq!(max_values.arity(), 2);
        assert!(min_values.is_null_at(0));
        assert!(max_values.is_null_at(0));
        assert!(min_values.is_null_at(1));
        assert!(max_values.is_null_at(1));
    }

    #[tokio::test]
    async fn test_append_write_populates_time_value_stats() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_time_value_stats";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("tm", DataType::Time(TimeType::new(3).unwrap()))
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_time_value_stats_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let arrow_schema = Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "tm",
            ArrowDataType::Time32(TimeUnit::Millisecond),
            true,
        )]));
        let batch = RecordBatch::try_new(
            arrow_schema,
            vec![Arc::new(Time32MillisecondArray::from(vec![
                Some(3_000),
                None,
                Some(1_000),
            ]))],
        )
        .unwrap();

        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        let file = &messages[0].new_files[0];
        assert_eq!(file.value_stats_cols, None);
        assert_eq!(file.value_stats.null_counts(), &vec![Some(1)]);

        let min_values = BinaryRow::from_serialized_bytes(file.value_stats.min_values()).unwrap();
        let max_values = BinaryRow::from_serialized_bytes(file.value_stats.max_values()).unwrap();
        assert_eq!(min_values.get_int(0).unwrap(), 1_000);
        assert_eq!(max_values.get_int(0).unwrap(), 3_000);
    }

    #[tokio::test]
    async fn test_scan_prunes_real_append_files_using_written_value_stats() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_value_stats_scan";
        setup_dirs(&file_io, table_path).await;

        let table = test_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![1, 2], vec![10, 20]))
            .await
            .unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        TableCommit::new(table.clone(), "test-user".to_string())
            .commit(messages)
            .await
            .unwrap();

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![100, 101], vec![1000, 1010]))
            .await
            .unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        TableCommit::new(table.clone(), "test-user".to_string())
            .commit(messages)
            .await
            .unwrap();

        let predicate = PredicateBuilder::new(table.schema().fields())
            .greater_than("id", Datum::Int(10))
            .unwrap();
        let mut reader = table.new_read_builder();
        reader.with_filter(predicate);
        let (_plan, trace) = reader.new_scan().plan_with_trace().await.unwrap();

        assert_eq!(trace.final_files, 1, "scan trace: {trace:?}");
        assert!(
            trace.manifest_entries_pruned_by_data_stats >= 1,
            "scan trace: {trace:?}"
        );
    }

    #[tokio::test]
    async fn test_table_write_row_format_roundtrip() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_row_format";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .option("file.format", "row")
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_row_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![1, 2, 3], vec![10, 20, 30]))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files.len(), 1);
        let data_file = &messages[0].new_files[0];
        assert!(data_file.file_name.ends_with(".row"));

        let file_path = format!(
            "{}/{}/{}",
            table_path,
            bucket_dir_name(messages[0].bucket),
            data_file.file_name
        );
        let format_reader =
            create_format_reader(&file_path, false, table.schema().fields()).unwrap();
        let input = file_io.new_input(&file_path).unwrap();
        let stream = format_reader
            .read_batch_stream(
                Box::new(input.reader().await.unwrap()),
                data_file.file_size as u64,
                table.schema().fields(),
                None,
                None,
                None,
            )
            .await
            .unwrap();
        let batches: Vec<RecordBatch> = futures::TryStreamExt::try_collect(stream).await.unwrap();

        assert_eq!(collect_i32(&batches, 0), vec![1, 2, 3]);
        assert_eq!(collect_i32(&batches, 1), vec![10, 20, 30]);
    }

    #[tokio::test]
    async fn test_primary_key_non_parquet_formats_roundtrip_with_typed_physical_fields() {
        for format in ["row", "avro"] {
            let file_io = test_file_io();
            let table_path = format!("memory:/test_pk_typed_fields_{format}");
            setup_dirs(&file_io, &table_path).await;
            let schema = Schema::builder()
                .column("id", DataType::Int(IntType::new()))
                .column("value", DataType::Int(IntType::new()))
                .primary_key(["id"])
                .option("bucket", "1")
                .option("file.format", format)
                .build()
                .unwrap();
            let table = Table::new(
                file_io,
                Identifier::new("default", "test_pk_typed_fields"),
                table_path,
                TableSchema::new(0, &schema),
                None,
            );
            let mut writer = TableWrite::new(&table, "test-user".into()).unwrap();
            writer
                .write_arrow_batch(&make_batch(vec![2, 1], vec![20, 10]))
                .await
                .unwrap();
            let messages = writer.prepare_commit().await.unwrap();
            assert_eq!(messages[0].new_files.len(), 1);
            assert!(messages[0].new_files[0].file_name.ends_with(format));
            let file = &messages[0].new_files[0];
            let file_path = format!(
                "{}/{}/{}",
                table.location(),
                bucket_dir_name(messages[0].bucket),
                file.file_name
            );
            let physical_fields = vec![
                DataField::new(
                    SEQUENCE_NUMBER_FIELD_ID,
                    SEQUENCE_NUMBER_FIELD_NAME.into(),
                    DataType::BigInt(BigIntType::new()),
                ),
                DataField::new(
                    VALUE_KIND_FIELD_ID,
                    VALUE_KIND_FIELD_NAME.into(),
                    DataType::TinyInt(TinyIntType::new()),
                ),
                table.schema().fields()[0].clone(),
                table.schema().fields()[1].clone(),
            ];
            let format_reader = create_format_reader(&file_path, false, &physical_fields).unwrap();
            let input = table.file_io().new_input(&file_path).unwrap();
            let stream = format_reader
                .read_batch_stream(
                    Box::new(input.reader().await.unwrap()),
                    file.file_size as u64,
                    &physical_fields,
                    None,
                    None,
                    None,
                )
                .await
                .unwrap();
            let batches: Vec<RecordBatch> =
                futures::TryStreamExt::try_collect(stream).await.unwrap();
            assert_eq!(collect_i32(&batches, 2), vec![1, 2], "{format}");
            assert_eq!(collect_i32(&batches, 3), vec![10, 20], "{format}");
            TableCommit::new(table.clone(), "test-user".into())
                .commit(messages)
                .await
                .unwrap();
        }
    }

    #[test]
    fn test_allows_append_blob_table() {
        let table = Table::new(
            test_file_io(),
            Identifier::new("default", "test_blob_table"),
            "memory:/test_blob_table".to_string(),
            test_blob_table_schema(),
            None,
        );

        assert!(TableWrite::new(&table, "test-user".to_string()).is_ok());
    }

    #[tokio::test]
    async fn test_blob_write_and_commit() {
        let file_io = test_file_io();
        let table_path = "memory:/test_blob_write";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_blob_table"),
            table_path.to_string(),
            test_blob_table_schema(),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("payload", ArrowDataType::LargeBinary, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(arrow_array::LargeBinaryArray::from(vec![
                    Some(b"hello" as &[u8]),
                    None,
                    Some(b"world"),
                ])),
            ],
        )
        .unwrap();

        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();

        assert_eq!(messages.len(), 1);
        // Should have 2 files: 1 parquet (normal cols) + 1 blob (payload)
        assert_eq!(messages[0].new_files.len(), 2);

        let parquet_files: Vec<_> = messages[0]
            .new_files
            .iter()
            .filter(|f| f.file_name.ends_with(".parquet"))
            .collect();
        let blob_files: Vec<_> = messages[0]
            .new_files
            .iter()
            .filter(|f| f.file_name.ends_with(".blob"))
            .collect();
        assert_eq!(parquet_files.len(), 1);
        assert_eq!(blob_files.len(), 1);

        assert_eq!(parquet_files[0].row_count, 3);
        assert_eq!(blob_files[0].row_count, 3);
        assert_eq!(parquet_files[0].write_cols, Some(vec!["id".to_string()]));
        assert_eq!(blob_files[0].write_cols, Some(vec!["payload".to_string()]));

        // Commit and verify snapshot
        let commit = TableCommit::new(table, "test-user".to_string());
        commit.commit(messages).await.unwrap();

        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.id(), 1);
    }

    #[tokio::test]
    async fn test_dedicated_blob_stats_use_normal_write_columns() {
        let file_io = test_file_io();
        let table_path = "memory:/test_dedicated_blob_stats_mapping";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("payload", DataType::Blob(BlobType::new()))
            .column("a", DataType::Int(IntType::new()))
            .column("b", DataType::Int(IntType::new()))
            .option("data-evolution.enabled", "true")
            .option("row-tracking.enabled", "true")
            .build()
            .unwrap();
        let table = Table::new(
            file_io,
            Identifier::new("default", "test_dedicated_blob_stats_mapping"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let batch = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("payload", ArrowDataType::LargeBinary, true),
                ArrowField::new("a", ArrowDataType::Int32, false),
                ArrowField::new("b", ArrowDataType::Int32, false),
            ])),
            vec![
                Arc::new(arrow_array::LargeBinaryArray::from(vec![Some(
                    b"payload" as &[u8],
                )])),
                Arc::new(Int32Array::from(vec![100])),
                Arc::new(Int32Array::from(vec![0])),
            ],
        )
        .unwrap();

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        let normal_write_cols = messages[0]
            .new_files
            .iter()
            .find(|file| file.file_name.ends_with(".parquet"))
            .unwrap()
            .write_cols
            .clone();
        TableCommit::new(table.clone(), "test-user".to_string())
            .commit(messages)
            .await
            .unwrap();

        let predicate = PredicateBuilder::new(table.schema().fields())
            .greater_than("a", Datum::Int(50))
            .unwrap();
        let mut reader = table.new_read_builder();
        reader.with_filter(predicate);
        let (_plan, trace) = reader.new_scan().plan_with_trace().await.unwrap();

        assert!(trace.final_files > 0, "scan trace: {trace:?}");
        assert_eq!(
            normal_write_cols,
            Some(vec!["a".to_string(), "b".to_string()])
        );
    }

    async fn assert_vector_write_uses_dedicated_file(table_path: &str, vector_file_format: &str) {
        let file_io = test_file_io();
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_vector_table"),
            table_path.to_string(),
            test_vector_table_schema(vector_file_format),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        let batch = make_vector_batch(
            vec![1, 2, 3],
            vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![0.5, 0.5]],
        );

        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();

        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files.len(), 2);

        let vector_suffix = format!(".vector.{vector_file_format}");
        let normal_files: Vec<_> = messages[0]
            .new_files
            .iter()
            .filter(|f| !f.file_name.contains(".vector."))
            .collect();
        let vector_files: Vec<_> = messages[0]
            .new_files
            .iter()
            .filter(|f| f.file_name.ends_with(&vector_suffix))
            .collect();

        assert_eq!(normal_files.len(), 1);
        assert_eq!(vector_files.len(), 1);
        assert_eq!(normal_files[0].row_count, 3);
        assert_eq!(vector_files[0].row_count, 3);
        assert_eq!(normal_files[0].write_cols, Some(vec!["id".to_string()]));
        assert_eq!(
            vector_files[0].write_cols,
            Some(vec!["embedding".to_string()])
        );

        TableCommit::new(table, "test-user".to_string())
            .commit(messages)
            .await
            .unwrap();
        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.id(), 1);
    }

    #[tokio::test]
    async fn test_vector_write_uses_dedicated_parquet_file() {
        assert_vector_write_uses_dedicated_file(
            "memory:/test_vector_write_dedicated_parquet",
            "parquet",
        )
        .await;
    }

    #[cfg(feature = "vortex")]
    #[tokio::test]
    async fn test_vector_write_uses_dedicated_vortex_file() {
        assert_vector_write_uses_dedicated_file(
            "memory:/test_vector_write_dedicated_vortex",
            "vortex",
        )
        .await;
    }

    #[test]
    fn test_allows_partial_update_fixed_bucket_table() {
        let table = Table::new(
            test_file_io(),
            Identifier::new("default", "test_partial_update_table"),
            "memory:/test_partial_update_table".to_string(),
            TableSchema::new(
                0,
                &Schema::builder()
                    .column("id", DataType::Int(IntType::new()))
                    .column("value", DataType::Int(IntType::new()))
                    .primary_key(["id"])
                    .option("bucket", "1")
                    .option("merge-engine", "partial-update")
                    .build()
                    .unwrap(),
            ),
            None,
        );

        TableWrite::new(&table, "test-user".to_string()).unwrap();
    }

    #[tokio::test]
    async fn test_allows_partial_update_dynamic_bucket_table() {
        let file_io = test_file_io();
        let table_path = "memory:/test_partial_update_dynamic_bucket_table";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io,
            Identifier::new("default", "test_partial_update_dynamic_bucket_table"),
            table_path.to_string(),
            TableSchema::new(
                0,
                &Schema::builder()
                    .column("id", DataType::Int(IntType::new()))
                    .column("value", DataType::Int(IntType::new()))
                    .primary_key(["id"])
                    .option("merge-engine", "partial-update")
                    .build()
                    .unwrap(),
            ),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![1], vec![10]))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn test_allows_aggregation_dynamic_bucket_table() {
        let file_io = test_file_io();
        let table_path = "memory:/test_aggregation_dynamic_bucket_table";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io,
            Identifier::new("default", "test_aggregation_dynamic_bucket_table"),
            table_path.to_string(),
            TableSchema::new(
                0,
                &Schema::builder()
                    .column("id", DataType::Int(IntType::new()))
                    .column("value", DataType::Int(IntType::new()))
                    .primary_key(["id"])
                    .option("bucket", "-1")
                    .option("merge-engine", "aggregation")
                    .option("fields.value.aggregate-function", "sum")
                    .build()
                    .unwrap(),
            ),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        assert!(matches!(
            table_write.bucket_assigner,
            BucketAssignerEnum::Dynamic(_)
        ));
        table_write
            .write_arrow_batch(&make_batch(vec![1], vec![10]))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn test_rejects_partial_update_with_deletion_vectors_when_creating_writer() {
        let file_io = test_file_io();
        let table_path = "memory:/test_partial_update_dv_table";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io,
            Identifier::new("default", "test_partial_update_dv_table"),
            table_path.to_string(),
            TableSchema::new(
                0,
                &Schema::builder()
                    .column("id", DataType::Int(IntType::new()))
                    .column("value", DataType::Int(IntType::new()))
                    .primary_key(["id"])
                    .option("bucket", "1")
                    .option("merge-engine", "partial-update")
                    .option("deletion-vectors.enabled", "true")
                    .build()
                    .unwrap(),
            ),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        let err = table_write
            .write_arrow_batch(&make_batch(vec![1], vec![10]))
            .await
            .unwrap_err();
        assert!(
            matches!(err, crate::Error::Unsupported { message } if message.contains("deletion-vectors.enabled=true"))
        );
    }

    #[tokio::test]
    async fn test_write_partitioned() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_partitioned";
        setup_dirs(&file_io, table_path).await;

        let table = test_partitioned_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let batch = make_partitioned_batch(vec!["a", "b", "a"], vec![1, 2, 3]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        // Should have 2 commit messages (one per partition)
        assert_eq!(messages.len(), 2);

        let total_rows: i64 = messages
            .iter()
            .flat_map(|m| &m.new_files)
            .map(|f| f.row_count)
            .sum();
        assert_eq!(total_rows, 3);

        // Commit and verify
        let commit = TableCommit::new(table, "test-user".to_string());
        commit.commit(messages).await.unwrap();

        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.id(), 1);
        assert_eq!(snapshot.total_record_count(), Some(3));
    }

    /// A batch spanning many partitions is written on several tasks at once (a
    /// multi-threaded runtime, as engines run); every partition gets exactly its rows, over
    /// two batches, and the commit holds them all.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn test_write_partitions_concurrently_on_a_multi_thread_runtime() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_partitions_concurrently";
        setup_dirs(&file_io, table_path).await;

        let table = test_partitioned_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        let names = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"];
        for round in 0..2 {
            let ids: Vec<i32> = (0..800).map(|i| round * 800 + i).collect();
            let pts: Vec<&str> = ids.iter().map(|i| names[(*i % 8) as usize]).collect();
            table_write
                .write_arrow_batch(&make_partitioned_batch(pts, ids))
                .await
                .unwrap();
        }

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 8);
        let mut rows_by_partition = HashMap::new();
        for message in &messages {
            let rows: i64 = message.new_files.iter().map(|f| f.row_count).sum();
            *rows_by_partition
                .entry(message.partition.clone())
                .or_insert(0) += rows;
        }
        assert_eq!(rows_by_partition.len(), 8);
        assert!(rows_by_partition.values().all(|rows| *rows == 200));

        let commit = TableCommit::new(table, "test-user".to_string());
        commit.commit(messages).await.unwrap();
        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.total_record_count(), Some(1600));
    }

    #[tokio::test]
    async fn test_write_empty_batch() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_empty";
        let table = test_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let batch = make_batch(vec![], vec![]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert!(messages.is_empty());
    }

    #[tokio::test]
    async fn test_prepare_commit_reusable() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_reuse";
        setup_dirs(&file_io, table_path).await;

        let table = test_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        // First write + prepare_commit
        table_write
            .write_arrow_batch(&make_batch(vec![1, 2], vec![10, 20]))
            .await
            .unwrap();
        let messages1 = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages1.len(), 1);
        assert_eq!(messages1[0].new_files[0].row_count, 2);

        // Second write + prepare_commit (reuse)
        table_write
            .write_arrow_batch(&make_batch(vec![3, 4, 5], vec![30, 40, 50]))
            .await
            .unwrap();
        let messages2 = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages2.len(), 1);
        assert_eq!(messages2[0].new_files[0].row_count, 3);

        // Empty prepare_commit is fine
        let messages3 = table_write.prepare_commit().await.unwrap();
        assert!(messages3.is_empty());
    }

    #[tokio::test]
    async fn test_write_multiple_batches() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_multi";
        setup_dirs(&file_io, table_path).await;

        let table = test_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        table_write
            .write_arrow_batch(&make_batch(vec![1, 2], vec![10, 20]))
            .await
            .unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![3, 4], vec![30, 40]))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        // Multiple batches accumulate into a single file
        assert_eq!(messages[0].new_files.len(), 1);

        let total_rows: i64 = messages[0].new_files.iter().map(|f| f.row_count).sum();
        assert_eq!(total_rows, 4);
    }

    /// TIME as an append table's `bucket-key`. Java allows it: `validateBucket`
    /// rejects only ARRAY, MULTISET, MAP and ROW there. Routing has to agree with
    /// `BinaryRow::hash_code`, so the bucket is pinned against the row the per-row
    /// encoder produces rather than against a hard-coded number.
    #[tokio::test]
    async fn test_time_bucket_key_routes_by_binary_row_hash() {
        let file_io = test_file_io();
        let table_path = "memory:/test_time_bucket_key";
        setup_dirs(&file_io, table_path).await;

        let time_type = DataType::Time(TimeType::new(3).unwrap());
        let schema = Schema::builder()
            .column("tm", time_type.clone())
            .column("value", DataType::Int(IntType::new()))
            .option("bucket", "4")
            .option("bucket-key", "tm")
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_time_bucket_key_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );

        // 12:34:56.123 and midnight.
        let times = [45_296_123_i32, 0];
        let arrow_schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("tm", ArrowDataType::Time32(TimeUnit::Millisecond), true),
            ArrowField::new("value", ArrowDataType::Int32, true),
        ]));
        let batch = RecordBatch::try_new(
            arrow_schema,
            vec![
                Arc::new(Time32MillisecondArray::from(times.map(Some).to_vec())),
                Arc::new(Int32Array::from(vec![Some(10), Some(20)])),
            ],
        )
        .unwrap();

        let fields = table.schema().fields().to_vec();
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        let output = table_write
            .bucket_assigner
            .assign_batch(&batch, &fields)
            .await
            .unwrap();

        let expected: Vec<i32> = times
            .iter()
            .map(|&millis| {
                let row = BinaryRow::from_datums(&[(Some(&Datum::Time(millis)), &time_type)]);
                // Mirrors `default_bucket`: `(hash % n).abs()`, which is Java's
                // `Math.abs(hashcode % numBuckets)` and is *not* a euclidean
                // remainder for negative hashes.
                (row.hash_code() % 4).wrapping_abs()
            })
            .collect();
        assert_eq!(output.buckets, expected);

        // And the write itself must land, not just the routing.
        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        let rows: i64 = messages
            .iter()
            .flat_map(|m| m.new_files.iter())
            .map(|f| f.row_count)
            .sum();
        assert_eq!(rows, 2);
    }

    /// TIME as a partition key. `partition_utils` already renders TIME partition
    /// values, but that code was unreachable from the write path while the batch
    /// encoder rejected the column, so this is the first test that exercises the
    /// two together — hence the assertion on the rendered path, not just the row.
    #[tokio::test]
    async fn test_time_partition_key_writes_formatted_partition() {
        let file_io = test_file_io();
        let table_path = "memory:/test_time_partition_key";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("tm", DataType::Time(TimeType::new(3).unwrap()))
            .column("value", DataType::Int(IntType::new()))
            .partition_keys(["tm"])
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_time_partition_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let arrow_schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("tm", ArrowDataType::Time32(TimeUnit::Millisecond), true),
            ArrowField::new("value", ArrowDataType::Int32, true),
        ]));
        let batch = RecordBatch::try_new(
            arrow_schema,
            vec![
                Arc::new(Time32MillisecondArray::from(vec![Some(45_296_123)])),
                Arc::new(Int32Array::from(vec![Some(10)])),
            ],
        )
        .unwrap();

        table_write.write_arrow_batch(&batch).await.unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        let partition = BinaryRow::from_serialized_bytes(&messages[0].partition).unwrap();
        assert_eq!(partition.get_int(0).unwrap(), 45_296_123);

        let computer = PartitionComputer::new(
            table.schema().partition_keys(),
            table.schema().fields(),
            "__DEFAULT_PARTITION__",
            false,
        )
        .unwrap();
        assert_eq!(
            computer.generate_partition_path(&partition).unwrap(),
            "tm=12%3A34%3A56.123/"
        );
    }

    fn test_bucketed_schema() -> TableSchema {
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .option("bucket", "4")
            .option("bucket-key", "id")
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    fn test_bucketed_table(file_io: &FileIO, table_path: &str) -> Table {
        Table::new(
            file_io.clone(),
            Identifier::new("default", "test_table"),
            table_path.to_string(),
            test_bucketed_schema(),
            None,
        )
    }

    /// Build a batch where the bucket-key column ("id") is nullable.
    fn make_nullable_id_batch(ids: Vec<Option<i32>>, values: Vec<i32>) -> RecordBatch {
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, true),
            ArrowField::new("value", ArrowDataType::Int32, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(ids)),
                Arc::new(Int32Array::from(values)),
            ],
        )
        .unwrap()
    }

    #[tokio::test]
    async fn test_mod_bucket_function_routes_by_floor_mod() {
        let file_io = test_file_io();
        let table_path = "memory:/test_mod_bucket_function";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .option("bucket", "5")
            .option("bucket-key", "id")
            .option("bucket-function.type", "mod")
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );

        let fields = table.schema().fields().to_vec();
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        let output = table_write
            .bucket_assigner
            .assign_batch(&make_batch(vec![-3, 17, 5], vec![10, 20, 30]), &fields)
            .await
            .unwrap();

        assert_eq!(output.buckets, vec![2, 2, 0]);
    }

    #[tokio::test]
    async fn test_mod_bucket_function_rejects_non_integral_key() {
        let file_io = test_file_io();
        let table_path = "memory:/test_mod_bucket_invalid";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("id", DataType::VarChar(VarCharType::string_type()))
            .column("value", DataType::Int(IntType::new()))
            .option("bucket", "5")
            .option("bucket-key", "id")
            .option("bucket-function.type", "mod")
            .build()
            .unwrap();
        let table = Table::new(
            file_io,
            Identifier::new("default", "test_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );

        let err = match TableWrite::new(&table, "test-user".to_string()) {
            Ok(_) => panic!("expected mod bucket function to reject non-integral key"),
            Err(err) => err,
        };
        assert!(
            matches!(err, crate::Error::ConfigInvalid { ref message } if message.contains("INT or BIGINT")),
            "expected ConfigInvalid for non-integral mod bucket key, got {err:?}"
        );
    }

    #[tokio::test]
    async fn test_hive_bucket_function_routes_by_hive_hash() {
        let file_io = test_file_io();
        let table_path = "memory:/test_hive_bucket_function";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("name", DataType::VarChar(VarCharType::string_type()))
            .option("bucket", "8")
            .option("bucket-key", "id,name")
            .option("bucket-function.type", "hive")
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_table"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );

        let arrow_schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("name", ArrowDataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            arrow_schema,
            vec![
                Arc::new(Int32Array::from(vec![7])),
                Arc::new(StringArray::from(vec!["hello"])),
            ],
        )
        .unwrap();

        let fields = table.schema().fields().to_vec();
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        let output = table_write
            .bucket_assigner
            .assign_batch(&batch, &fields)
            .await
            .unwrap();

        assert_eq!(output.buckets, vec![3]);
    }

    #[tokio::test]
    async fn test_write_bucketed_with_null_bucket_key() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_null_bk";
        setup_dirs(&file_io, table_path).await;

        let table = test_bucketed_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        // Row with NULL bucket key should not panic
        let batch = make_nullable_id_batch(vec![None, Some(1), None], vec![10, 20, 30]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        let total_rows: i64 = messages
            .iter()
            .flat_map(|m| &m.new_files)
            .map(|f| f.row_count)
            .sum();
        assert_eq!(total_rows, 3);
    }

    #[tokio::test]
    async fn test_null_bucket_key_routes_consistently() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_null_bk_consistent";
        setup_dirs(&file_io, table_path).await;

        let table = test_bucketed_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        // Two NULLs should land in the same bucket
        let batch = make_nullable_id_batch(vec![None, None], vec![10, 20]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        // Both NULL-key rows must be in the same (partition, bucket) group
        let null_bucket_rows: i64 = messages
            .iter()
            .flat_map(|m| &m.new_files)
            .map(|f| f.row_count)
            .sum();
        assert_eq!(null_bucket_rows, 2);
        // All NULL-key rows go to exactly one bucket
        assert_eq!(messages.len(), 1);
    }

    #[tokio::test]
    async fn test_null_vs_nonnull_bucket_key_differ() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_null_vs_nonnull";
        setup_dirs(&file_io, table_path).await;

        let table = test_bucketed_table(&file_io, table_path);

        // Compute bucket for NULL key
        let fields = table.schema().fields().to_vec();
        let mut tw = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let batch_null = make_nullable_id_batch(vec![None], vec![10]);
        let out_null = tw
            .bucket_assigner
            .assign_batch(&batch_null, &fields)
            .await
            .unwrap();
        let bucket_null = out_null.buckets[0];

        // Compute bucket for key = 0 (the value a null field's fixed bytes happen to be)
        let batch_zero = make_nullable_id_batch(vec![Some(0)], vec![20]);
        let out_zero = tw
            .bucket_assigner
            .assign_batch(&batch_zero, &fields)
            .await
            .unwrap();
        let bucket_zero = out_zero.buckets[0];

        // A NULL bucket key must produce a BinaryRow with the null bit set,
        // which hashes differently from a non-null 0 value.
        // (With 4 buckets they could theoretically collide, but the hash codes differ.)
        let mut builder_null = BinaryRowBuilder::new(1);
        builder_null.set_null_at(0);
        let hash_null = builder_null.build().hash_code();

        let mut builder_zero = BinaryRowBuilder::new(1);
        builder_zero.write_int(0, 0);
        let hash_zero = builder_zero.build().hash_code();

        assert_ne!(hash_null, hash_zero, "NULL and 0 should hash differently");
        // If hashes differ, buckets should differ (with 4 buckets, very likely)
        // But we verify the hash difference is the important invariant
        let _ = (bucket_null, bucket_zero);
    }

    /// Mirrors Java's testUnCompactDecimalAndTimestampNullValueBucketNumber.
    /// Non-compact types (Decimal(38,18), LocalZonedTimestamp(6), Timestamp(6))
    /// use variable-length encoding in BinaryRow — NULL handling must still work.
    #[tokio::test]
    async fn test_non_compact_null_bucket_key() {
        let file_io = test_file_io();

        let bucket_cols = ["d", "ltz", "ntz"];
        let total_buckets = 16;

        for bucket_col in &bucket_cols {
            let table_path = format!("memory:/test_null_bk_{bucket_col}");
            setup_dirs(&file_io, &table_path).await;

            let schema = Schema::builder()
                .column("d", DataType::Decimal(DecimalType::new(38, 18).unwrap()))
                .column(
                    "ltz",
                    DataType::LocalZonedTimestamp(LocalZonedTimestampType::new(6).unwrap()),
                )
                .column("ntz", DataType::Timestamp(TimestampType::new(6).unwrap()))
                .column("k", DataType::Int(IntType::new()))
                .option("bucket", total_buckets.to_string())
                .option("bucket-key", *bucket_col)
                .build()
                .unwrap();
            let table_schema = TableSchema::new(0, &schema);
            let table = Table::new(
                file_io.clone(),
                Identifier::new("default", "test_table"),
                table_path.to_string(),
                table_schema,
                None,
            );

            let mut tw = TableWrite::new(&table, "test-user".to_string()).unwrap();
            let fields = table.schema().fields().to_vec();

            // Build a batch: d=NULL, ltz=NULL, ntz=NULL, k=1
            let arrow_schema = Arc::new(ArrowSchema::new(vec![
                ArrowField::new("d", ArrowDataType::Decimal128(38, 18), true),
                ArrowField::new(
                    "ltz",
                    ArrowDataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                    true,
                ),
                ArrowField::new(
                    "ntz",
                    ArrowDataType::Timestamp(TimeUnit::Microsecond, None),
                    true,
                ),
                ArrowField::new("k", ArrowDataType::Int32, false),
            ]));
            let batch = RecordBatch::try_new(
                arrow_schema,
                vec![
                    Arc::new(
                        arrow_array::Decimal128Array::from(vec![None::<i128>])
                            .with_precision_and_scale(38, 18)
                            .unwrap(),
                    ),
                    Arc::new(
                        arrow_array::TimestampMicrosecondArray::from(vec![None::<i64>])
                            .with_timezone("UTC"),
                    ),
                    Arc::new(arrow_array::TimestampMicrosecondArray::from(vec![
                        None::<i64>,
                    ])),
                    Arc::new(Int32Array::from(vec![1])),
                ],
            )
            .unwrap();

            let batch_output = tw
                .bucket_assigner
                .assign_batch(&batch, &fields)
                .await
                .unwrap();
            let bucket = batch_output.buckets[0];

            // Expected: BinaryRow with 1 field, null at pos 0
            let mut builder = BinaryRowBuilder::new(1);
            builder.set_null_at(0);
            let expected_bucket = (builder.build().hash_code() % total_buckets).wrapping_abs();

            assert_eq!(
                bucket, expected_bucket,
                "NULL bucket-key '{bucket_col}' should produce bucket {expected_bucket}, got {bucket}"
            );
        }
    }

    #[tokio::test]
    async fn test_write_rolling_on_target_file_size() {
        let file_io = test_file_io();
        let table_path = "memory:/test_table_write_rolling";
        setup_dirs(&file_io, table_path).await;

        // Create table with very small target-file-size to trigger rolling
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .option("target-file-size", "1b")
            .build()
            .unwrap();
        let table_schema = TableSchema::new(0, &schema);
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_table"),
            table_path.to_string(),
            table_schema,
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        // Write multiple batches — each should roll to a new file
        table_write
            .write_arrow_batch(&make_batch(vec![1, 2], vec![10, 20]))
            .await
            .unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![3, 4], vec![30, 40]))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        // With 1-byte target, each batch should produce a separate file
        assert_eq!(messages[0].new_files.len(), 2);

        let total_rows: i64 = messages[0].new_files.iter().map(|f| f.row_count).sum();
        assert_eq!(total_rows, 4);
    }

    #[cfg(feature = "vortex")]
    #[tokio::test]
    async fn test_vortex_write_rolling_on_target_file_size() {
        let file_io = test_file_io();
        let table_path = "memory:/test_vortex_table_write_rolling";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .option("target-file-size", "1b")
            .option("file.format", "vortex")
            .build()
            .unwrap();
        let table_schema = TableSchema::new(0, &schema);
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_table"),
            table_path.to_string(),
            table_schema,
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        table_write
            .write_arrow_batch(&make_batch(vec![1, 2], vec![10, 20]))
            .await
            .unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![3, 4], vec![30, 40]))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files.len(), 2);

        let total_rows: i64 = messages[0].new_files.iter().map(|f| f.row_count).sum();
        assert_eq!(total_rows, 4);
    }

    // -----------------------------------------------------------------------
    // Primary-key table write tests
    // -----------------------------------------------------------------------

    fn test_pk_schema() -> TableSchema {
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["id"])
            .option("bucket", "1")
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    fn test_pk_table(file_io: &FileIO, table_path: &str) -> Table {
        Table::new(
            file_io.clone(),
            Identifier::new("default", "test_pk_table"),
            table_path.to_string(),
            test_pk_schema(),
            None,
        )
    }

    fn pk_changelog_schema(options: &[(&str, &str)]) -> TableSchema {
        let mut builder = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["id"])
            .option("bucket", "1");
        for (key, value) in options {
            builder = builder.option(*key, *value);
        }
        TableSchema::new(0, &builder.build().unwrap())
    }

    fn loaded_first_row_schema_with_changelog_producer(producer: &str) -> TableSchema {
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["id"])
            .option("merge-engine", "first-row")
            .option("changelog-producer", "lookup")
            .build()
            .unwrap();
        let table_schema = TableSchema::new(0, &schema);
        let mut value = serde_json::to_value(&table_schema).unwrap();
        value["options"]["changelog-producer"] = serde_json::Value::String(producer.to_string());
        serde_json::from_value(value).unwrap()
    }

    fn ordinary_dynamic_pk_changelog_schema() -> TableSchema {
        let schema = Schema::builder()
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .partition_keys(["pt"])
            .primary_key(["pt", "id"])
            .option("changelog-producer", "input")
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    #[tokio::test]
    async fn a_dynamic_copy_cannot_move_where_a_written_hash_index_lands() {
        // An index manifest records only a file name, so a write must place the
        // hash index where a normally loaded table will look for it. A dynamic
        // override of `index-file-in-data-file-dir` would break that pairing, so
        // `copy_with_options` pins the option to the stored value.
        let file_io = test_file_io();
        let table_path = "memory:/test_hash_index_layout_survives_a_copy";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .partition_keys(["pt"])
            .primary_key(["pt", "id"])
            .option("changelog-producer", "input")
            .option("index-file-in-data-file-dir", "true")
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_hash_index_layout_survives_a_copy"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let copied = table.copy_with_options(HashMap::from([(
            "index-file-in-data-file-dir".to_string(),
            "false".to_string(),
        )]));

        let mut table_write = TableWrite::new(&copied, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_partitioned_batch_with_value_kind(
                vec!["a", "a"],
                vec![1, 2],
                vec![10, 20],
                vec![0, 0],
            ))
            .await
            .unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages[0].new_index_files[0].index_type, "HASH");
        let name = messages[0].new_index_files[0].file_name.clone();

        assert!(
            file_io
                .exists(&format!("{table_path}/pt=a/bucket-0/{name}"))
                .await
                .unwrap(),
            "the hash index must stay in the bucket data-file directory the stored option selects"
        );
        assert!(
            !file_io
                .exists(&format!("{table_path}/index/{name}"))
                .await
                .unwrap(),
            "the override must not have moved it to the table index directory"
        );
    }

    #[tokio::test]
    async fn test_default_changelog_producer_accepts_value_kind() {
        let file_io = test_file_io();
        let table_path = "memory:/test_default_changelog_value_kind";
        setup_dirs(&file_io, table_path).await;
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_default_changelog_value_kind"),
            table_path.to_string(),
            pk_changelog_schema(&[]),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        table_write
            .write_arrow_batch(&make_batch_with_value_kind(
                vec![1, 1, 2],
                vec![10, 20, 30],
                vec![1, 2, 3],
            ))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files.len(), 1);
        assert_eq!(messages[0].new_files[0].delete_row_count, Some(1));
        assert!(messages[0].new_changelog_files.is_empty());

        let data_file = &messages[0].new_files[0];
        let data_file_path = format!(
            "{table_path}/{}/{}",
            bucket_dir_name(messages[0].bucket),
            data_file.file_name
        );
        let data_batches =
            read_physical_key_value_batches(&file_io, &data_file_path, data_file.file_size).await;
        assert_eq!(collect_i8(&data_batches, 1), vec![2, 3]);
        assert_eq!(collect_i32(&data_batches, 2), vec![1, 2]);
        assert_eq!(collect_i32(&data_batches, 3), vec![20, 30]);
    }

    #[test]
    fn test_table_write_rejects_loaded_first_row_with_incompatible_changelog_producer() {
        let file_io = test_file_io();

        for producer in ["input", "full-compaction"] {
            let table = Table::new(
                file_io.clone(),
                Identifier::new("default", "test_first_row_changelog"),
                "memory:/test_first_row_changelog".to_string(),
                loaded_first_row_schema_with_changelog_producer(producer),
                None,
            );

            let err = match TableWrite::new(&table, "test-user".to_string()) {
                Ok(_) => panic!(
                    "first-row should reject changelog-producer={producer} during write setup"
                ),
                Err(err) => err,
            };

            assert!(
                matches!(err, crate::Error::Unsupported { ref message }
                    if message.contains("incompatible table options")
                        && message.contains("merge-engine=first-row")
                        && message.contains(producer)),
                "first-row runtime guard should reject changelog-producer={producer}, got {err:?}"
            );
        }
    }

    #[tokio::test]
    async fn test_input_changelog_rejects_misplaced_or_wrong_type_value_kind() {
        let table = Table::new(
            test_file_io(),
            Identifier::new("default", "test_input_changelog_schema_validation"),
            "memory:/test_input_changelog_schema_validation".to_string(),
            pk_changelog_schema(&[("changelog-producer", "input")]),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let misplaced = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("id", ArrowDataType::Int32, false),
                ArrowField::new(VALUE_KIND_FIELD_NAME, ArrowDataType::Int8, false),
                ArrowField::new("value", ArrowDataType::Int32, false),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(Int8Array::from(vec![0])),
                Arc::new(Int32Array::from(vec![10])),
            ],
        )
        .unwrap();
        let error = table_write.write_arrow_batch(&misplaced).await.unwrap_err();
        assert_data_invalid_contains(
            error,
            &[
                "field name",
                "index 1",
                "expected 'value'",
                VALUE_KIND_FIELD_NAME,
            ],
        );

        let wrong_type = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                ArrowField::new("id", ArrowDataType::Int32, false),
                ArrowField::new("value", ArrowDataType::Int32, false),
                ArrowField::new(VALUE_KIND_FIELD_NAME, ArrowDataType::Int32, false),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(Int32Array::from(vec![10])),
                Arc::new(Int32Array::from(vec![0])),
            ],
        )
        .unwrap();
        let error = table_write
            .write_arrow_batch(&wrong_type)
            .await
            .unwrap_err();
        assert_data_invalid_contains(
            error,
            &[
                "data type",
                VALUE_KIND_FIELD_NAME,
                "expected Int8",
                "actual Int32",
            ],
        );
    }

    #[tokio::test]
    async fn test_input_changelog_writes_raw_rows_separately_from_data_rows() {
        let file_io = test_file_io();
        let table_path = "memory:/test_input_changelog_duplicate_pk";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_input_changelog"),
            table_path.to_string(),
            pk_changelog_schema(&[
                ("changelog-producer", "input"),
                ("changelog-file.prefix", "custom-changelog-"),
            ]),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![1, 1], vec![10, 20]))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files.len(), 1);
        assert_eq!(messages[0].new_files[0].row_count, 1);
        assert_eq!(messages[0].new_changelog_files.len(), 1);
        assert_eq!(messages[0].new_changelog_files[0].row_count, 2);
        assert!(messages[0].new_files[0].file_name.starts_with("data-"));
        assert!(messages[0].new_changelog_files[0]
            .file_name
            .starts_with("custom-changelog-"));

        let bucket_dir = bucket_dir_name(messages[0].bucket);
        let data_file = &messages[0].new_files[0];
        let data_file_path = format!("{table_path}/{bucket_dir}/{}", data_file.file_name);
        let data_batches =
            read_physical_key_value_batches(&file_io, &data_file_path, data_file.file_size).await;
        assert_eq!(collect_i64(&data_batches, 0), vec![1]);
        assert_eq!(collect_i8(&data_batches, 1), vec![0]);
        assert_eq!(collect_i32(&data_batches, 2), vec![1]);
        assert_eq!(collect_i32(&data_batches, 3), vec![20]);

        let changelog_file = &messages[0].new_changelog_files[0];
        let changelog_file_path = format!("{table_path}/{bucket_dir}/{}", changelog_file.file_name);
        let changelog_batches = read_physical_key_value_batches(
            &file_io,
            &changelog_file_path,
            changelog_file.file_size,
        )
        .await;
        assert_eq!(collect_i64(&changelog_batches, 0), vec![0, 1]);
        assert_eq!(collect_i8(&changelog_batches, 1), vec![0, 0]);
        assert_eq!(collect_i32(&changelog_batches, 2), vec![1, 1]);
        assert_eq!(collect_i32(&changelog_batches, 3), vec![10, 20]);
    }

    #[tokio::test]
    async fn test_input_changelog_metadata_counts_retract_rows() {
        let file_io = test_file_io();
        let table_path = "memory:/test_input_changelog_retract_rows";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io,
            Identifier::new("default", "test_input_changelog"),
            table_path.to_string(),
            pk_changelog_schema(&[("changelog-producer", "input")]),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_batch_with_value_kind(
                vec![1, 2, 3],
                vec![10, 20, 30],
                vec![0, 1, 3],
            ))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages[0].new_files[0].delete_row_count, Some(2));
        assert_eq!(messages[0].new_changelog_files[0].delete_row_count, Some(2));
    }

    #[tokio::test]
    async fn test_input_changelog_rejects_invalid_value_kind() {
        let file_io = test_file_io();
        let table_path = "memory:/test_input_changelog_invalid_value_kind";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io,
            Identifier::new("default", "test_input_changelog"),
            table_path.to_string(),
            pk_changelog_schema(&[("changelog-producer", "input")]),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_batch_with_value_kind(vec![1], vec![10], vec![4]))
            .await
            .unwrap();

        let err = table_write.prepare_commit().await.unwrap_err();
        assert!(
            matches!(err, crate::Error::DataInvalid { message, .. } if message.contains("Invalid RowKind value"))
        );
    }

    #[tokio::test]
    async fn test_input_changelog_commit_writes_changelog_manifest_metadata() {
        let file_io = test_file_io();
        let table_path = "memory:/test_input_changelog_commit";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_input_changelog"),
            table_path.to_string(),
            pk_changelog_schema(&[("changelog-producer", "input")]),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![1, 1], vec![10, 20]))
            .await
            .unwrap();
        let messages = table_write.prepare_commit().await.unwrap();
        let data_file_name = messages[0].new_files[0].file_name.clone();
        let changelog_file_name = messages[0].new_changelog_files[0].file_name.clone();

        let commit = TableCommit::new(table, "test-user".to_string());
        commit.commit(messages).await.unwrap();

        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.total_record_count(), Some(1));
        assert_eq!(snapshot.delta_record_count(), Some(1));
        assert_eq!(snapshot.changelog_record_count(), Some(2));

        let manifest_dir = format!("{table_path}/manifest");
        let delta_metas = ManifestList::read(
            &file_io,
            &format!("{manifest_dir}/{}", snapshot.delta_manifest_list()),
        )
        .await
        .unwrap();
        let delta_entries = Manifest::read(
            &file_io,
            &format!("{manifest_dir}/{}", delta_metas[0].file_name()),
        )
        .await
        .unwrap();
        assert_eq!(delta_entries.len(), 1);
        assert_eq!(*delta_entries[0].kind(), FileKind::Add);
        assert_eq!(delta_entries[0].file().file_name, data_file_name);

        let changelog_list = snapshot
            .changelog_manifest_list()
            .expect("changelog manifest list");
        let changelog_metas =
            ManifestList::read(&file_io, &format!("{manifest_dir}/{changelog_list}"))
                .await
                .unwrap();
        let changelog_entries = Manifest::read(
            &file_io,
            &format!("{manifest_dir}/{}", changelog_metas[0].file_name()),
        )
        .await
        .unwrap();
        assert_eq!(changelog_entries.len(), 1);
        assert_eq!(*changelog_entries[0].kind(), FileKind::Add);
        assert_eq!(changelog_entries[0].file().file_name, changelog_file_name);
        assert_eq!(changelog_entries[0].file().row_count, 2);
    }

    #[tokio::test]
    async fn test_input_changelog_dynamic_bucket_commits_data_changelog_and_index() {
        let file_io = test_file_io();
        let table_path = "memory:/test_input_changelog_dynamic_bucket_commit";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_input_changelog_dynamic_bucket"),
            table_path.to_string(),
            ordinary_dynamic_pk_changelog_schema(),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();
        assert!(matches!(
            table_write.bucket_assigner,
            BucketAssignerEnum::Dynamic(_)
        ));
        table_write
            .write_arrow_batch(&make_partitioned_batch_with_value_kind(
                vec!["a", "a"],
                vec![1, 2],
                vec![10, 20],
                vec![0, 3],
            ))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files.len(), 1);
        assert_eq!(messages[0].new_files[0].row_count, 2);
        assert_eq!(messages[0].new_files[0].delete_row_count, Some(1));
        assert_eq!(messages[0].new_changelog_files.len(), 1);
        assert_eq!(messages[0].new_changelog_files[0].row_count, 2);
        assert_eq!(messages[0].new_changelog_files[0].delete_row_count, Some(1));
        assert_eq!(messages[0].new_index_files.len(), 1);
        assert_eq!(messages[0].new_index_files[0].index_type, "HASH");
        assert_eq!(messages[0].new_index_files[0].row_count, 2);

        let index_file_name = messages[0].new_index_files[0].file_name.clone();

        let commit = TableCommit::new(table, "test-user".to_string());
        commit.commit(messages).await.unwrap();

        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.total_record_count(), Some(2));
        assert_eq!(snapshot.delta_record_count(), Some(2));
        assert_eq!(snapshot.changelog_record_count(), Some(2));

        let manifest_dir = format!("{table_path}/manifest");
        let changelog_list = snapshot
            .changelog_manifest_list()
            .expect("changelog manifest list");
        let changelog_metas =
            ManifestList::read(&file_io, &format!("{manifest_dir}/{changelog_list}"))
                .await
                .unwrap();
        let changelog_partition_stats = changelog_metas[0].partition_stats();
        assert!(!changelog_partition_stats.min_values().is_empty());
        assert!(!changelog_partition_stats.max_values().is_empty());
        assert_eq!(
            changelog_partition_stats.null_counts().as_slice(),
            &[Some(0)]
        );

        let index_manifest = snapshot.index_manifest().expect("index manifest");
        let index_entries =
            IndexManifest::read(&file_io, &format!("{manifest_dir}/{index_manifest}"))
                .await
                .unwrap();
        assert_eq!(index_entries.len(), 1);
        assert_eq!(index_entries[0].kind, FileKind::Add);
        assert_eq!(index_entries[0].index_file.file_name, index_file_name);
        assert_eq!(index_entries[0].index_file.index_type, "HASH");
        assert_eq!(index_entries[0].index_file.row_count, 2);
    }

    #[tokio::test]
    async fn test_input_changelog_overwrite_does_not_write_changelog_files() {
        let file_io = test_file_io();
        let table_path = "memory:/test_input_changelog_overwrite";
        setup_dirs(&file_io, table_path).await;

        let table = Table::new(
            file_io,
            Identifier::new("default", "test_input_changelog"),
            table_path.to_string(),
            pk_changelog_schema(&[("changelog-producer", "input")]),
            None,
        );

        let mut table_write = TableWrite::new(&table, "test-user".to_string())
            .unwrap()
            .with_overwrite();
        table_write
            .write_arrow_batch(&make_batch(vec![1], vec![10]))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files.len(), 1);
        assert!(messages[0].new_changelog_files.is_empty());
    }

    #[tokio::test]
    async fn test_pk_write_and_commit() {
        let file_io = test_file_io();
        let table_path = "memory:/test_pk_write";
        setup_dirs(&file_io, table_path).await;

        let table = test_pk_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let batch = make_batch(vec![3, 1, 2], vec![30, 10, 20]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].new_files.len(), 1);

        let file = &messages[0].new_files[0];
        assert_eq!(file.row_count, 3);
        assert_eq!(file.level, 0);
        assert_eq!(file.min_sequence_number, 0);
        assert_eq!(file.max_sequence_number, 2);
        assert_eq!(file.value_stats_cols, None);
        assert_eq!(file.value_stats.null_counts(), &vec![Some(0), Some(0)]);
        let min_values = BinaryRow::from_serialized_bytes(file.value_stats.min_values()).unwrap();
        let max_values = BinaryRow::from_serialized_bytes(file.value_stats.max_values()).unwrap();
        assert_eq!(min_values.get_int(1).unwrap(), 10);
        assert_eq!(max_values.get_int(1).unwrap(), 30);
        // min_key and max_key should be non-empty (serialized BinaryRow)
        assert!(!file.min_key.is_empty());
        assert!(!file.max_key.is_empty());

        // Commit
        let commit = TableCommit::new(table.clone(), "test-user".to_string());
        commit.commit(messages).await.unwrap();

        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.id(), 1);
        assert_eq!(snapshot.total_record_count(), Some(3));
    }

    #[tokio::test]
    async fn test_pk_write_sorted_output() {
        let file_io = test_file_io();
        let table_path = "memory:/test_pk_sorted";
        setup_dirs(&file_io, table_path).await;

        let table = test_pk_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        // Write unsorted data
        let batch = make_batch(vec![5, 2, 4, 1, 3], vec![50, 20, 40, 10, 30]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        let commit = TableCommit::new(table.clone(), "test-user".to_string());
        commit.commit(messages).await.unwrap();

        // Read back using sort-merge reader — should be sorted by PK
        let rb = table.new_read_builder();
        let scan = rb.new_scan();
        let plan = scan.plan().await.unwrap();
        let read = rb.new_read().unwrap();
        let batches: Vec<RecordBatch> =
            futures::TryStreamExt::try_collect(read.to_arrow(plan.splits()).unwrap())
                .await
                .unwrap();

        let ids: Vec<i32> = batches
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect();
        assert_eq!(ids, vec![1, 2, 3, 4, 5]);

        let values: Vec<i32> = batches
            .iter()
            .flat_map(|b| {
                b.column(1)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect();
        assert_eq!(values, vec![10, 20, 30, 40, 50]);
    }

    #[tokio::test]
    async fn test_pk_write_dedup_across_commits() {
        let file_io = test_file_io();
        let table_path = "memory:/test_pk_dedup";
        setup_dirs(&file_io, table_path).await;

        let table = test_pk_table(&file_io, table_path);

        // First commit: id=1,2,3
        let mut tw1 = TableWrite::new(&table, "test-user".to_string()).unwrap();
        tw1.write_arrow_batch(&make_batch(vec![1, 2, 3], vec![10, 20, 30]))
            .await
            .unwrap();
        let msgs1 = tw1.prepare_commit().await.unwrap();
        let commit = TableCommit::new(table.clone(), "test-user".to_string());
        commit.commit(msgs1).await.unwrap();

        // Second commit: id=2,3,4 with updated values, higher sequence numbers
        let mut tw2 = TableWrite::new(&table, "test-user".to_string()).unwrap();
        tw2.write_arrow_batch(&make_batch(vec![2, 3, 4], vec![200, 300, 400]))
            .await
            .unwrap();
        let msgs2 = tw2.prepare_commit().await.unwrap();
        commit.commit(msgs2).await.unwrap();

        // Read back — dedup should keep newer values for id=2,3
        let rb = table.new_read_builder();
        let scan = rb.new_scan();
        let plan = scan.plan().await.unwrap();
        let read = rb.new_read().unwrap();
        let batches: Vec<RecordBatch> =
            futures::TryStreamExt::try_collect(read.to_arrow(plan.splits()).unwrap())
                .await
                .unwrap();

        let ids: Vec<i32> = batches
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect();
        let values: Vec<i32> = batches
            .iter()
            .flat_map(|b| {
                b.column(1)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect();

        assert_eq!(ids, vec![1, 2, 3, 4]);
        assert_eq!(values, vec![10, 200, 300, 400]);
    }

    #[tokio::test]
    async fn test_pk_write_sequence_number_in_file() {
        let file_io = test_file_io();
        let table_path = "memory:/test_pk_seq";
        setup_dirs(&file_io, table_path).await;

        let table = test_pk_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let batch = make_batch(vec![1, 2], vec![10, 20]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        let file = &messages[0].new_files[0];
        // Fresh table, seq starts at 0, 2 rows → min=0, max=1
        assert_eq!(file.min_sequence_number, 0);
        assert_eq!(file.max_sequence_number, 1);
    }

    // -----------------------------------------------------------------------
    // Postpone bucket (bucket = -2) write tests
    // -----------------------------------------------------------------------

    fn test_postpone_pk_schema() -> TableSchema {
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["id"])
            .option("bucket", "-2")
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    pub(in crate::table) fn test_postpone_pk_table(file_io: &FileIO, table_path: &str) -> Table {
        Table::new(
            file_io.clone(),
            Identifier::new("default", "test_postpone_table"),
            table_path.to_string(),
            test_postpone_pk_schema(),
            None,
        )
    }

    fn test_postpone_partitioned_schema() -> TableSchema {
        let schema = Schema::builder()
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["pt", "id"])
            .partition_keys(["pt"])
            .option("bucket", "-2")
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    pub(in crate::table) fn test_postpone_partitioned_table(
        file_io: &FileIO,
        table_path: &str,
    ) -> Table {
        Table::new(
            file_io.clone(),
            Identifier::new("default", "test_postpone_table"),
            table_path.to_string(),
            test_postpone_partitioned_schema(),
            None,
        )
    }

    pub(in crate::table) fn make_partitioned_batch_3col(
        pts: Vec<&str>,
        ids: Vec<i32>,
        values: Vec<i32>,
    ) -> RecordBatch {
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new("pt", ArrowDataType::Utf8, false),
            ArrowField::new("id", ArrowDataType::Int32, false),
            ArrowField::new("value", ArrowDataType::Int32, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(arrow_array::StringArray::from(pts)),
                Arc::new(Int32Array::from(ids)),
                Arc::new(Int32Array::from(values)),
            ],
        )
        .unwrap()
    }

    #[tokio::test]
    async fn test_postpone_write_and_commit() {
        let file_io = test_file_io();
        let table_path = "memory:/test_postpone_write";
        setup_dirs(&file_io, table_path).await;

        let table = test_postpone_pk_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let batch = make_batch(vec![3, 1, 2], vec![30, 10, 20]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].bucket, POSTPONE_BUCKET);
        assert_eq!(messages[0].new_files.len(), 1);
        assert_eq!(messages[0].new_files[0].row_count, 3);

        // Commit and verify snapshot
        let commit = TableCommit::new(table, "test-user".to_string());
        commit.commit(messages).await.unwrap();

        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.id(), 1);
        assert_eq!(snapshot.total_record_count(), Some(3));
    }

    #[tokio::test]
    async fn test_postpone_write_empty_batch() {
        let file_io = test_file_io();
        let table_path = "memory:/test_postpone_empty";
        let table = test_postpone_pk_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let batch = make_batch(vec![], vec![]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert!(messages.is_empty());
    }

    #[tokio::test]
    async fn test_postpone_write_multiple_batches() {
        let file_io = test_file_io();
        let table_path = "memory:/test_postpone_multi";
        setup_dirs(&file_io, table_path).await;

        let table = test_postpone_pk_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        table_write
            .write_arrow_batch(&make_batch(vec![1, 2], vec![10, 20]))
            .await
            .unwrap();
        table_write
            .write_arrow_batch(&make_batch(vec![3, 4], vec![30, 40]))
            .await
            .unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].bucket, POSTPONE_BUCKET);

        let total_rows: i64 = messages[0].new_files.iter().map(|f| f.row_count).sum();
        assert_eq!(total_rows, 4);
    }

    #[tokio::test]
    async fn test_postpone_write_partitioned() {
        let file_io = test_file_io();
        let table_path = "memory:/test_postpone_partitioned";
        setup_dirs(&file_io, table_path).await;

        let table = test_postpone_partitioned_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let batch =
            make_partitioned_batch_3col(vec!["a", "b", "a"], vec![1, 2, 3], vec![10, 20, 30]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        // 2 partitions
        assert_eq!(messages.len(), 2);
        // All messages should use POSTPONE_BUCKET
        for msg in &messages {
            assert_eq!(msg.bucket, POSTPONE_BUCKET);
        }

        let total_rows: i64 = messages
            .iter()
            .flat_map(|m| &m.new_files)
            .map(|f| f.row_count)
            .sum();
        assert_eq!(total_rows, 3);

        // Commit and verify
        let commit = TableCommit::new(table, "test-user".to_string());
        commit.commit(messages).await.unwrap();

        let snap_manager = SnapshotManager::new(file_io.clone(), table_path.to_string());
        let snapshot = snap_manager.get_latest_snapshot().await.unwrap().unwrap();
        assert_eq!(snapshot.id(), 1);
        assert_eq!(snapshot.total_record_count(), Some(3));
    }

    #[tokio::test]
    async fn test_postpone_write_reusable() {
        let file_io = test_file_io();
        let table_path = "memory:/test_postpone_reuse";
        setup_dirs(&file_io, table_path).await;

        let table = test_postpone_pk_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        // First write + prepare_commit
        table_write
            .write_arrow_batch(&make_batch(vec![1, 2], vec![10, 20]))
            .await
            .unwrap();
        let messages1 = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages1.len(), 1);
        assert_eq!(messages1[0].new_files[0].row_count, 2);

        // Second write + prepare_commit (reuse)
        table_write
            .write_arrow_batch(&make_batch(vec![3, 4, 5], vec![30, 40, 50]))
            .await
            .unwrap();
        let messages2 = table_write.prepare_commit().await.unwrap();
        assert_eq!(messages2.len(), 1);
        assert_eq!(messages2[0].new_files[0].row_count, 3);
        let prefix1 = messages1[0].new_files[0]
            .file_name
            .split_once("-w-")
            .unwrap()
            .0;
        let prefix2 = messages2[0].new_files[0]
            .file_name
            .split_once("-w-")
            .unwrap()
            .0;
        assert_eq!(prefix1, prefix2);

        // Empty prepare_commit
        let messages3 = table_write.prepare_commit().await.unwrap();
        assert!(messages3.is_empty());
    }

    #[tokio::test]
    async fn test_postpone_writers_with_same_commit_user_have_distinct_prefixes() {
        let file_io = test_file_io();
        let table_path = "memory:/test_postpone_writer_prefixes";
        setup_dirs(&file_io, table_path).await;

        let table = test_postpone_pk_table(&file_io, table_path);
        let mut prefixes = Vec::new();
        for id in [1, 2] {
            let mut write = TableWrite::new(&table, "shared-user".to_string()).unwrap();
            write
                .write_arrow_batch(&make_batch(vec![id], vec![id * 10]))
                .await
                .unwrap();
            let messages = write.prepare_commit().await.unwrap();
            let file_name = &messages[0].new_files[0].file_name;
            let (prefix, _) = file_name.split_once("-w-").unwrap();
            assert!(prefix.starts_with("data--u-shared-user-s-"));
            prefixes.push(prefix.to_string());
        }
        assert_ne!(prefixes[0], prefixes[1]);
    }

    #[tokio::test]
    async fn test_postpone_write_file_naming_and_kv_format() {
        let file_io = test_file_io();
        let table_path = "memory:/test_postpone_kv";
        setup_dirs(&file_io, table_path).await;

        let table = test_postpone_pk_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "my-commit-user".to_string()).unwrap();

        let batch = make_batch(vec![3, 1, 2], vec![30, 10, 20]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        let file = &messages[0].new_files[0];

        // Verify postpone file naming: data--u-{commitUser}-s-{writeId}-w-{uuid}-{index}.parquet
        assert!(
            file.file_name.starts_with("data--u-my-commit-user-s-"),
            "Expected postpone file prefix, got: {}",
            file.file_name
        );
        assert!(
            file.file_name.contains("-w-"),
            "Expected -w- in file name, got: {}",
            file.file_name
        );

        // Verify KV format: read the parquet file and check physical columns
        let bucket_dir = format!("{table_path}/bucket-postpone");
        let file_path = format!("{bucket_dir}/{}", file.file_name);
        let input = file_io.new_input(&file_path).unwrap();
        let data = input.read().await.unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(data, 1024).unwrap();
        let schema = reader.schema();
        // Physical schema: [_SEQUENCE_NUMBER, _VALUE_KIND, id, value]
        assert_eq!(schema.fields().len(), 4);
        assert_eq!(schema.field(0).name(), "_SEQUENCE_NUMBER");
        assert_eq!(schema.field(1).name(), "_VALUE_KIND");
        assert_eq!(schema.field(2).name(), "id");
        assert_eq!(schema.field(3).name(), "value");

        // Data should be in arrival order (not sorted by PK): 3, 1, 2
        let batches: Vec<RecordBatch> = reader.into_iter().map(|r| r.unwrap()).collect();
        let ids: Vec<i32> = batches
            .iter()
            .flat_map(|b| {
                b.column(2)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect();
        assert_eq!(
            ids,
            vec![3, 1, 2],
            "Postpone mode should preserve arrival order"
        );

        // Java records the first and last keys without sorting postpone input.
        assert_eq!(
            BinaryRow::from_serialized_bytes(&file.min_key)
                .unwrap()
                .get_int(0)
                .unwrap(),
            3
        );
        assert_eq!(
            BinaryRow::from_serialized_bytes(&file.max_key)
                .unwrap()
                .get_int(0)
                .unwrap(),
            2
        );
    }

    // -----------------------------------------------------------------------
    // Cross-partition update tests (dynamic bucket, PK not including partition)
    // -----------------------------------------------------------------------

    fn test_cross_partition_schema() -> TableSchema {
        // PK is only "id", partition is "pt" — PK does NOT include partition field
        let schema = Schema::builder()
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["id"])
            .partition_keys(["pt"])
            .build()
            .unwrap();
        TableSchema::new(0, &schema)
    }

    fn test_cross_partition_table(file_io: &FileIO, table_path: &str) -> Table {
        Table::new(
            file_io.clone(),
            Identifier::new("default", "test_cross_partition"),
            table_path.to_string(),
            test_cross_partition_schema(),
            None,
        )
    }

    #[tokio::test]
    async fn test_cross_partition_detection() {
        let file_io = test_file_io();
        let table_path = "memory:/test_cross_detect";

        // Cross-partition: PK=id, partition=pt, bucket=-1
        let table = test_cross_partition_table(&file_io, table_path);
        let tw = TableWrite::new(&table, "test-user".to_string()).unwrap();
        assert!(matches!(
            tw.bucket_assigner,
            BucketAssignerEnum::CrossPartition(_)
        ));

        // Non-cross-partition: PK includes partition field
        let schema = Schema::builder()
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["pt", "id"])
            .partition_keys(["pt"])
            .build()
            .unwrap();
        let table2 = Table::new(
            file_io.clone(),
            Identifier::new("default", "test"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let tw2 = TableWrite::new(&table2, "test-user".to_string()).unwrap();
        assert!(matches!(
            tw2.bucket_assigner,
            BucketAssignerEnum::Dynamic(_)
        ));
    }

    #[tokio::test]
    async fn test_input_changelog_cross_partition_write_rejects_caller_value_kind() {
        let file_io = test_file_io();
        let schema = Schema::builder()
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["id"])
            .partition_keys(["pt"])
            .option("changelog-producer", "input")
            .build()
            .unwrap();
        let table = Table::new(
            file_io,
            Identifier::new("default", "test_cross_partition_schema_validation"),
            "memory:/test_cross_partition_schema_validation".to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        let error = table_write
            .write_arrow_batch(&make_partitioned_batch_with_value_kind(
                vec!["a"],
                vec![1],
                vec![10],
                vec![0],
            ))
            .await
            .unwrap_err();

        assert_data_invalid_contains(
            error,
            &[
                "field count",
                "expected 3",
                "actual 4",
                "<no field>",
                VALUE_KIND_FIELD_NAME,
            ],
        );
    }

    #[tokio::test]
    async fn test_cross_partition_partial_update_and_aggregation_keep_old_location() {
        let file_io = test_file_io();
        for engine in ["partial-update", "aggregation"] {
            let table_path = format!("memory:/test_cross_{engine}");
            setup_dirs(&file_io, &table_path).await;
            let schema = Schema::builder()
                .column("pt", DataType::VarChar(VarCharType::string_type()))
                .column("id", DataType::Int(IntType::new()))
                .column("value", DataType::Int(IntType::new()))
                .primary_key(["id"])
                .partition_keys(["pt"])
                .option("merge-engine", engine)
                .build()
                .unwrap();
            let table = Table::new(
                file_io.clone(),
                Identifier::new("default", "test_cross"),
                table_path,
                TableSchema::new(0, &schema),
                None,
            );
            let mut writer = TableWrite::new(&table, "test-user".to_string()).unwrap();
            let first = make_partitioned_batch_3col(vec!["old"], vec![1], vec![10]);
            let first_output = writer.divide_by_partition_bucket(&first).await.unwrap();
            assert_eq!(first_output.len(), 1);
            let old_bucket = first_output[0].0 .1;
            let later = make_partitioned_batch_3col(vec!["new"], vec![1], vec![20]);
            let later_output = writer.divide_by_partition_bucket(&later).await.unwrap();
            assert_eq!(
                later_output.len(),
                1,
                "{engine} must not emit a cross-partition delete"
            );
            assert_eq!(later_output[0].0 .1, old_bucket);
            let pt = later_output[0]
                .1
                .column(0)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            assert_eq!(
                pt.value(0),
                "old",
                "{engine} must restore the old partition value"
            );
            assert_eq!(later_output[0].0 .0, first_output[0].0 .0);
        }
    }

    #[tokio::test]
    async fn test_cross_partition_write_same_partition() {
        let file_io = test_file_io();
        let table_path = "memory:/test_cross_same_pt";
        setup_dirs(&file_io, table_path).await;

        let table = test_cross_partition_table(&file_io, table_path);
        let mut table_write = TableWrite::new(&table, "test-user".to_string()).unwrap();

        // All rows in same partition — no cross-partition deletes
        let batch =
            make_partitioned_batch_3col(vec!["a", "a", "a"], vec![1, 2, 3], vec![10, 20, 30]);
        table_write.write_arrow_batch(&batch).await.unwrap();

        let messages = table_write.prepare_commit().await.unwrap();
        let total_data_files: usize = messages.iter().map(|m| m.new_files.len()).sum();
        assert!(total_data_files >= 1);

        let total_rows: i64 = messages
            .iter()
            .flat_map(|m| &m.new_files)
            .map(|f| f.row_count)
            .sum();
        assert_eq!(total_rows, 3);
    }

    #[tokio::test]
    async fn test_cross_partition_write_generates_delete() {
        let file_io = test_file_io();
        let table_path = "memory:/test_cross_delete";
        setup_dirs(&file_io, table_path).await;

        let table = test_cross_partition_table(&file_io, table_path);

        // First commit: id=1 in partition "a"
        let mut tw1 = TableWrite::new(&table, "test-user".to_string()).unwrap();
        let batch1 = make_partitioned_batch_3col(vec!["a"], vec![1], vec![10]);
        tw1.write_arrow_batch(&batch1).await.unwrap();
        let msgs1 = tw1.prepare_commit().await.unwrap();
        let commit = TableCommit::new(table.clone(), "test-user".to_string());
        commit.commit(msgs1).await.unwrap();

        // Second commit: id=1 moves to partition "b"
        let mut tw2 = TableWrite::new(&table, "test-user".to_string()).unwrap();
        let batch2 = make_partitioned_batch_3col(vec!["b"], vec![1], vec![20]);
        tw2.write_arrow_batch(&batch2).await.unwrap();
        let msgs2 = tw2.prepare_commit().await.unwrap();

        // Should have messages for both partition "a" (delete) and partition "b" (add)
        assert!(
            msgs2.len() >= 2,
            "Expected messages for both old and new partition, got {}",
            msgs2.len()
        );

        // The total data files should include both the DELETE and ADD records
        let total_rows: i64 = msgs2
            .iter()
            .flat_map(|m| &m.new_files)
            .map(|f| f.row_count)
            .sum();
        // 1 ADD in partition "b" + 1 DELETE in partition "a"
        assert_eq!(total_rows, 2);

        commit.commit(msgs2).await.unwrap();

        // Read back — should only see id=1 with value=20 in partition "b"
        let rb = table.new_read_builder();
        let scan = rb.new_scan();
        let plan = scan.plan().await.unwrap();
        let read = rb.new_read().unwrap();
        let batches: Vec<RecordBatch> =
            futures::TryStreamExt::try_collect(read.to_arrow(plan.splits()).unwrap())
                .await
                .unwrap();

        let ids: Vec<i32> = batches
            .iter()
            .flat_map(|b| {
                b.column(1)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect();
        let values: Vec<i32> = batches
            .iter()
            .flat_map(|b| {
                b.column(2)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied()
            })
            .collect();

        assert_eq!(ids, vec![1]);
        assert_eq!(values, vec![20]);
    }

    fn tiny_split_pk_table(file_io: &FileIO, table_path: &str) -> Table {
        Table::new(
            file_io.clone(),
            Identifier::new("default", "test_tiny_split_pk"),
            table_path.to_string(),
            pk_changelog_schema(&[
                ("source.split.target-size", "1b"),
                ("source.split.open-file-cost", "1b"),
            ]),
            None,
        )
    }

    async fn commit_one_batch(table: &Table, ids: Vec<i32>, values: Vec<i32>) {
        let mut tw = TableWrite::new(table, "test-user".to_string()).unwrap();
        tw.write_arrow_batch(&make_batch(ids, values))
            .await
            .unwrap();
        let msgs = tw.prepare_commit().await.unwrap();
        TableCommit::new(table.clone(), "test-user".to_string())
            .commit(msgs)
            .await
            .unwrap();
    }

    pub(in crate::table) async fn read_id_value_rows(table: &Table) -> Vec<(i32, i32)> {
        let rb = table.new_read_builder();
        let plan = rb.new_scan().plan().await.unwrap();
        let read = rb.new_read().unwrap();
        let batches: Vec<RecordBatch> =
            futures::TryStreamExt::try_collect(read.to_arrow(plan.splits()).unwrap())
                .await
                .unwrap();
        let mut rows: Vec<(i32, i32)> = batches
            .iter()
            .flat_map(|b| {
                let ids = b.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
                let values = b.column(1).as_any().downcast_ref::<Int32Array>().unwrap();
                (0..b.num_rows()).map(|i| (ids.value(i), values.value(i)))
            })
            .collect();
        rows.sort_unstable();
        rows
    }

    /// Regression test: three commits of the same primary key produce three
    /// key-overlapping files. Even with a 1-byte split target they must stay
    /// in one split so the sort-merge reader merges them, instead of each
    /// split emitting its own (stale) version of the row.
    #[tokio::test]
    async fn test_pk_plan_keeps_overlapping_files_in_one_split_under_tiny_target() {
        let file_io = test_file_io();
        let table_path = "memory:/test_tiny_split_overlap";
        setup_dirs(&file_io, table_path).await;
        let table = tiny_split_pk_table(&file_io, table_path);

        commit_one_batch(&table, vec![1], vec![10]).await;
        commit_one_batch(&table, vec![1], vec![20]).await;
        commit_one_batch(&table, vec![1], vec![30]).await;

        let plan = table.new_read_builder().new_scan().plan().await.unwrap();
        assert_eq!(
            plan.splits().len(),
            1,
            "overlapping files must share a split"
        );
        assert_eq!(plan.splits()[0].data_files().len(), 3);

        assert_eq!(read_id_value_rows(&table).await, vec![(1, 30)]);
    }

    /// Files with disjoint key ranges may still be distributed across splits
    /// for parallelism when the split target is small.
    #[tokio::test]
    async fn test_pk_plan_separates_disjoint_files_under_tiny_target() {
        let file_io = test_file_io();
        let table_path = "memory:/test_tiny_split_disjoint";
        setup_dirs(&file_io, table_path).await;
        let table = tiny_split_pk_table(&file_io, table_path);

        commit_one_batch(&table, vec![1], vec![10]).await;
        commit_one_batch(&table, vec![2], vec![20]).await;
        commit_one_batch(&table, vec![3], vec![30]).await;

        let plan = table.new_read_builder().new_scan().plan().await.unwrap();
        assert_eq!(
            plan.splits().len(),
            3,
            "disjoint files keep split parallelism"
        );

        assert_eq!(
            read_id_value_rows(&table).await,
            vec![(1, 10), (2, 20), (3, 30)]
        );
    }

    /// Append-only tables have no primary keys (and empty min/max keys); they
    /// must keep using plain file-level bin packing instead of degrading to a
    /// single all-files section.
    #[tokio::test]
    async fn test_append_table_plan_uses_file_level_bin_pack_under_tiny_target() {
        let file_io = test_file_io();
        let table_path = "memory:/test_tiny_split_append";
        setup_dirs(&file_io, table_path).await;

        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .option("bucket", "1")
            .option("bucket-key", "id")
            .option("source.split.target-size", "1b")
            .option("source.split.open-file-cost", "1b")
            .build()
            .unwrap();
        let table = Table::new(
            file_io.clone(),
            Identifier::new("default", "test_tiny_split_append"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );

        commit_one_batch(&table, vec![1], vec![10]).await;
        commit_one_batch(&table, vec![2], vec![20]).await;
        commit_one_batch(&table, vec![3], vec![30]).await;

        let plan = table.new_read_builder().new_scan().plan().await.unwrap();
        assert_eq!(
            plan.splits().len(),
            3,
            "append tables keep file-level bin pack"
        );
    }
    #[tokio::test]
    async fn dedicated_insert_preserves_existing_global_index() {
        for action in ["THROW_ERROR", "DROP_PARTITION_INDEX"] {
            let file_io = test_file_io();
            let path = "memory:/audit-dedicated-index-append";
            setup_dirs(&file_io, path).await;
            let table = Table::new(
                file_io.clone(),
                Identifier::new("default", "audit"),
                path.into(),
                test_vector_table_schema("parquet").copy_with_options(
                    std::collections::HashMap::from([(
                        "global-index.column-update-action".into(),
                        action.into(),
                    )]),
                ),
                None,
            );
            async fn append(table: &Table, id: i32) -> crate::Result<()> {
                let mut writer = TableWrite::new(table, "audit".into())?;
                writer
                    .write_arrow_batch(&make_vector_batch(vec![id], vec![vec![1.0, 0.0]]))
                    .await?;
                let messages = writer.prepare_commit().await?;
                assert!(messages[0]
                    .new_files
                    .iter()
                    .all(|f| f.first_row_id.is_none() && f.write_cols.is_some()));
                TableCommit::new(table.clone(), "audit".into())
                    .commit(messages)
                    .await
            }
            append(&table, 1).await.unwrap();
            let mut message = crate::table::CommitMessage::new(vec![], 0, vec![]);
            message.new_index_files.push(crate::spec::IndexFileMeta {
                index_type: "lumina".into(),
                file_name: "audit-index".into(),
                file_size: 1,
                row_count: 1,
                deletion_vectors_ranges: None,
                external_path: None,
                global_index_meta: Some(crate::spec::GlobalIndexMeta {
                    index_field_id: 1,
                    row_range_start: 0,
                    row_range_end: 0,
                    extra_field_ids: None,
                    index_meta: None,
                    source_meta: None,
                }),
            });
            TableCommit::new(table.clone(), "audit-index".into())
                .commit(vec![message])
                .await
                .unwrap();
            append(&table, 2).await.unwrap();
            let snapshot = table
                .snapshot_manager()
                .get_latest_snapshot()
                .await
                .unwrap()
                .unwrap();
            assert_eq!(snapshot.next_row_id(), Some(2));
            let entries = crate::spec::IndexManifest::read(
                &file_io,
                &format!("{path}/manifest/{}", snapshot.index_manifest().unwrap()),
            )
            .await
            .unwrap();
            assert_eq!(entries.len(), 1);
            assert_eq!(entries[0].index_file.file_name, "audit-index");
        }
    }
}
