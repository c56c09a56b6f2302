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

use crate::arrow::build_target_arrow_schema;
use crate::arrow::format::blob::DEFAULT_BLOB_READ_PARALLELISM;
use crate::arrow::format::{
    create_format_reader_with_budget, FormatReadFields, MosaicPrefetchOptions,
};
use crate::arrow::schema_evolution::{create_index_mapping, NULL_FIELD_INDEX};
use crate::arrow::ReadBudget;
use crate::deletion_vector::{DeletionVector, DeletionVectorFactory};
use crate::file_index::evaluator::evaluate_file_index;
use crate::file_index::file_index_result::FileIndexResult;
use crate::io::{FileIO, FileRead};
use crate::spec::{
    is_variant_extraction_row_type, DataField, DataFileMeta, DataType, Predicate, ROW_ID_FIELD_NAME,
};
use crate::table::schema_manager::SchemaManager;
use crate::table::ArrowRecordBatchStream;
use crate::table::RowRange;
use crate::{DataSplit, Error};
use arrow_array::{Array, Int64Array, RecordBatch};

use async_stream::try_stream;
use futures::StreamExt;
use roaring::RoaringBitmap;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub(crate) struct DataFileReadTiming {
    file_read_nanos: AtomicU64,
    parquet_decode_nanos: AtomicU64,
    file_schema_open_nanos: AtomicU64,
    first_batch_wait_nanos: AtomicU64,
    remaining_batch_wait_nanos: AtomicU64,
}

impl DataFileReadTiming {
    fn add_file_read(&self, duration: Duration) {
        self.file_read_nanos
            .fetch_add(duration.as_nanos() as u64, Ordering::Relaxed);
    }

    fn add_parquet_decode(&self, duration: Duration) {
        self.parquet_decode_nanos
            .fetch_add(duration.as_nanos() as u64, Ordering::Relaxed);
    }

    fn add_file_schema_open(&self, duration: Duration) {
        self.file_schema_open_nanos
            .fetch_add(duration.as_nanos() as u64, Ordering::Relaxed);
    }

    fn add_batch_wait(&self, duration: Duration, first: bool) {
        let target = if first {
            &self.first_batch_wait_nanos
        } else {
            &self.remaining_batch_wait_nanos
        };
        target.fetch_add(duration.as_nanos() as u64, Ordering::Relaxed);
    }

    pub(crate) fn file_read(&self) -> Duration {
        Duration::from_nanos(self.file_read_nanos.load(Ordering::Relaxed))
    }

    pub(crate) fn parquet_decode(&self) -> Duration {
        Duration::from_nanos(self.parquet_decode_nanos.load(Ordering::Relaxed))
    }
    pub(crate) fn file_waits(&self) -> (Duration, Duration, Duration) {
        (
            Duration::from_nanos(self.file_schema_open_nanos.load(Ordering::Relaxed)),
            Duration::from_nanos(self.first_batch_wait_nanos.load(Ordering::Relaxed)),
            Duration::from_nanos(self.remaining_batch_wait_nanos.load(Ordering::Relaxed)),
        )
    }
}

struct TimedFileRead {
    inner: Box<dyn FileRead>,
    timing: Arc<DataFileReadTiming>,
}

#[async_trait::async_trait]
impl FileRead for TimedFileRead {
    async fn read(&self, range: Range<u64>) -> crate::Result<bytes::Bytes> {
        let start = Instant::now();
        let result = self.inner.read(range).await;
        self.timing.add_file_read(start.elapsed());
        result
    }

    fn cache_key(&self) -> Option<&str> {
        self.inner.cache_key()
    }

    fn file_format_metadata_cache(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        self.inner.file_format_metadata_cache()
    }

    fn blob_index_cache(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        self.inner.blob_index_cache()
    }
}

/// Reads data files through their format-specific readers.
#[derive(Clone)]
pub(crate) struct DataFileReader {
    file_io: FileIO,
    schema_manager: SchemaManager,
    table_schema_id: i64,
    table_fields: Vec<DataField>,
    read_type: Vec<DataField>,
    predicates: Vec<Predicate>,
    file_index_read_enabled: bool,
    row_filter_factory: Option<Arc<dyn crate::arrow::RowFilterFactory>>,
    blob_as_descriptor: bool,
    blob_parallelism: usize,
    batch_size: Option<usize>,
    parquet_read_budget: Option<Arc<ReadBudget>>,
    table_options: Arc<HashMap<String, String>>,
    nested_field_enabled: bool,
    mosaic_prefetch: MosaicPrefetchOptions,
    read_timing: Option<Arc<DataFileReadTiming>>,
}

impl DataFileReader {
    pub(crate) fn new(
        file_io: FileIO,
        schema_manager: SchemaManager,
        table_schema_id: i64,
        table_fields: Vec<DataField>,
        read_type: Vec<DataField>,
        predicates: Vec<Predicate>,
    ) -> Self {
        Self {
            file_io,
            schema_manager,
            table_schema_id,
            table_fields,
            read_type,
            predicates,
            file_index_read_enabled: false,
            row_filter_factory: None,
            blob_as_descriptor: false,
            blob_parallelism: DEFAULT_BLOB_READ_PARALLELISM,
            batch_size: None,
            parquet_read_budget: None,
            table_options: Arc::new(HashMap::new()),
            nested_field_enabled: false,
            mosaic_prefetch: MosaicPrefetchOptions::default(),
            read_timing: None,
        }
    }

    pub(crate) fn with_blob_as_descriptor(mut self, blob_as_descriptor: bool) -> Self {
        self.blob_as_descriptor = blob_as_descriptor;
        self
    }

    pub(crate) fn with_blob_parallelism(mut self, blob_parallelism: usize) -> Self {
        debug_assert!(blob_parallelism > 0);
        self.blob_parallelism = blob_parallelism;
        self
    }

    pub(crate) fn with_file_index_read_enabled(mut self, enabled: bool) -> Self {
        self.file_index_read_enabled = enabled;
        self
    }

    pub(crate) fn with_batch_size(mut self, batch_size: Option<usize>) -> Self {
        self.batch_size = batch_size;
        self
    }

    pub(crate) fn with_parquet_read_budget(
        mut self,
        parquet_read_budget: Option<Arc<ReadBudget>>,
    ) -> Self {
        self.parquet_read_budget = parquet_read_budget;
        self
    }

    pub(crate) fn with_table_options(
        mut self,
        options: impl Into<Arc<HashMap<String, String>>>,
    ) -> Self {
        self.table_options = options.into();
        self.nested_field_enabled = crate::spec::CoreOptions::new(&self.table_options)
            .data_evolution_nested_field_enabled();
        self
    }

    pub(crate) fn with_nested_field_enabled(mut self, enabled: bool) -> Self {
        self.nested_field_enabled = enabled;
        self
    }

    pub(crate) fn with_mosaic_prefetch(mut self, mosaic_prefetch: MosaicPrefetchOptions) -> Self {
        self.mosaic_prefetch = mosaic_prefetch;
        self
    }

    pub(crate) fn with_read_timing(mut self, read_timing: Option<Arc<DataFileReadTiming>>) -> Self {
        self.read_timing = read_timing;
        self
    }

    pub(crate) fn with_row_filter_factory(
        mut self,
        factory: Arc<dyn crate::arrow::RowFilterFactory>,
    ) -> Self {
        self.row_filter_factory = Some(factory);
        self
    }

    /// Return a copy with a replaced read-type. Used by `pk_vector_position_read`
    /// to inject the internal `_ROW_ID` column for physical-position recovery.
    pub(super) fn with_read_type(mut self, read_type: Vec<DataField>) -> Self {
        self.read_type = read_type;
        self
    }

    /// The effective read-type (requested output fields) of this reader.
    /// Exposed for the sibling `pk_vector_position_read` module, which drives the
    /// PK-vector materialization read path.
    pub(super) fn read_type(&self) -> &[DataField] {
        &self.read_type
    }

    /// True if any configured predicate can actually drop rows. A lone
    /// `Predicate::AlwaysTrue` keeps every row in order and is not row-filtering,
    /// matching `reject_row_id_with_predicates`'s notion. Consumed by
    /// `pk_vector_position_read` (materialization read path).
    pub(super) fn has_row_filtering_predicate(&self) -> bool {
        self.row_filter_factory.is_some()
            || self
                .predicates
                .iter()
                .any(|p| !matches!(p, Predicate::AlwaysTrue))
    }

    /// Take a stream of DataSplits and read every data file in each split.
    /// Returns a stream of Arrow RecordBatches from all files.
    ///
    /// Uses SchemaManager to load the data file's schema (via `DataFileMeta.schema_id`)
    /// and computes field-ID-based index mapping for schema evolution (added columns,
    /// type promotion, column reordering).
    ///
    /// Matches [RawFileSplitRead.createReader](https://github.com/apache/paimon/blob/master/paimon-core/src/main/java/org/apache/paimon/operation/RawFileSplitRead.java).
    pub fn read(self, data_splits: &[DataSplit]) -> crate::Result<ArrowRecordBatchStream> {
        let splits: Vec<DataSplit> = data_splits.to_vec();
        let reader = self;
        Ok(try_stream! {
            for split in splits {
                // Create DV factory for this split only.
                let dv_factory = reader.build_split_dv_factory(&split).await?;
                let core_options = crate::spec::CoreOptions::new(&reader.table_options);
                let ranges_use_row_ids = core_options.row_tracking_enabled()
                    || core_options.data_evolution_enabled();
                let mut split_file_offset = 0;

                for file_meta in split.data_files().to_vec() {
                    let dv = DataFileReader::deletion_vector_for_file(
                        dv_factory.as_ref(),
                        &file_meta.file_name,
                    );

                    // Load data file's schema if it differs from the table schema.
                    let schema_start = reader.read_timing.as_ref().map(|_| Instant::now());
                    let data_fields = reader.derive_data_fields(&file_meta).await?;
                    if let (Some(timing), Some(start)) =
                        (reader.read_timing.as_ref(), schema_start)
                    {
                        timing.add_file_schema_open(start.elapsed());
                    }

                    let file_fields = data_fields
                        .as_deref()
                        .unwrap_or(reader.table_fields.as_slice());
                    let file_index_result = if reader.file_index_read_enabled {
                        evaluate_file_index(
                            &reader.file_io,
                            split.bucket_path(),
                            &file_meta,
                            &reader.table_fields,
                            file_fields,
                            &reader.predicates,
                        )
                        .await?
                    } else {
                        FileIndexResult::Remain
                    };

                    let range_base = if ranges_use_row_ids {
                        file_meta.first_row_id.ok_or_else(|| crate::Error::DataInvalid {
                            message: format!(
                                "Row-tracked file '{}' is missing first_row_id",
                                file_meta.file_name
                            ),
                            source: None,
                        })?
                    } else {
                        split_file_offset
                    };
                    let split_ranges = split.row_ranges().map(|ranges| {
                        to_local_row_ranges(
                            ranges,
                            range_base,
                            file_meta.row_count,
                        )
                    });
                    split_file_offset += file_meta.row_count;
                    let sidecar_ranges = split_ranges.clone();
                    let selected_ranges = match file_index_result {
                        FileIndexResult::Remain => split_ranges,
                        FileIndexResult::Skip => Some(Vec::new()),
                        FileIndexResult::Selection(selection) => {
                            match file_index_selection_to_local_ranges(
                                &selection,
                                file_meta.row_count,
                            )? {
                                Some(index_ranges) => Some(match split_ranges {
                                    Some(split_ranges) => {
                                        intersect_sorted_ranges(&index_ranges, &split_ranges)
                                    }
                                    None => index_ranges,
                                }),
                                None => split_ranges,
                            }
                        }
                    };
                    let row_selection = merge_row_selection(
                        file_meta.row_count,
                        dv.as_deref(),
                        selected_ranges.as_deref(),
                    );

                    let mut stream = reader.read_single_file_stream_with_selection(
                        &split,
                        file_meta,
                        data_fields,
                        None,
                        row_selection,
                        sidecar_ranges,
                    )?;
                    while let Some(batch) = stream.next().await {
                        yield batch?;
                    }
                }
            }
        }
        .boxed())
    }

    /// Build the deletion-vector factory for a split, or `None` when the split
    /// carries no deletion files. One factory per split (not per file), matching
    /// `read`. Shared with `pk_vector_indexed_split_read` so that path reuses the
    /// exact production derivation instead of duplicating it.
    pub(super) async fn build_split_dv_factory(
        &self,
        split: &DataSplit,
    ) -> crate::Result<Option<DeletionVectorFactory>> {
        if split
            .data_deletion_files()
            .is_some_and(|files| files.iter().any(Option::is_some))
        {
            Ok(Some(
                DeletionVectorFactory::new(
                    &self.file_io,
                    split.data_files(),
                    split.data_deletion_files(),
                )
                .await?,
            ))
        } else {
            Ok(None)
        }
    }

    /// Look up the deletion vector for one file from a split-level factory.
    pub(super) fn deletion_vector_for_file(
        factory: Option<&DeletionVectorFactory>,
        file_name: &str,
    ) -> Option<Arc<DeletionVector>> {
        factory
            .and_then(|factory| factory.get_deletion_vector(file_name))
            .cloned()
    }

    /// Load the data file's own schema fields when its `schema_id` differs from
    /// the table schema id (schema evolution); `None` when they match.
    pub(super) async fn derive_data_fields(
        &self,
        file_meta: &DataFileMeta,
    ) -> crate::Result<Option<Vec<DataField>>> {
        if file_meta.schema_id != self.table_schema_id {
            let data_schema = self.schema_manager.schema(file_meta.schema_id).await?;
            Ok(Some(data_schema.fields().to_vec()))
        } else {
            Ok(None)
        }
    }

    /// Read a single data file from a split, returning a lazy stream of batches.
    /// Optionally applies a deletion vector.
    ///
    /// Handles schema evolution using field-ID-based index mapping:
    /// - `data_fields`: if `Some`, the fields from the data file's schema (loaded via SchemaManager).
    ///   Used to compute index mapping between `read_type` and data fields by field ID.
    /// - Columns missing from the file are filled with null arrays.
    /// - Columns whose Arrow type differs from the target type are cast (type promotion).
    ///
    /// Reference: [RawFileSplitRead.createFileReader](https://github.com/apache/paimon/blob/release-1.3/paimon-core/src/main/java/org/apache/paimon/operation/RawFileSplitRead.java)
    pub(super) fn read_single_file_stream(
        &self,
        split: &DataSplit,
        file_meta: DataFileMeta,
        data_fields: Option<Vec<DataField>>,
        dv: Option<Arc<DeletionVector>>,
        row_ranges: Option<Vec<RowRange>>,
    ) -> crate::Result<ArrowRecordBatchStream> {
        self.read_single_file_stream_with_requested_ranges(
            split,
            file_meta,
            data_fields,
            dv,
            row_ranges.clone(),
            row_ranges,
        )
    }

    /// Physical selection may be narrowed by file indexes or a LIMIT, while
    /// Java selects the ROW sidecar from the caller's original row ranges.
    pub(super) fn read_single_file_stream_with_requested_ranges(
        &self,
        split: &DataSplit,
        file_meta: DataFileMeta,
        data_fields: Option<Vec<DataField>>,
        dv: Option<Arc<DeletionVector>>,
        row_ranges: Option<Vec<RowRange>>,
        requested_ranges: Option<Vec<RowRange>>,
    ) -> crate::Result<ArrowRecordBatchStream> {
        let local_ranges = row_ranges.as_ref().map(|ranges| {
            to_local_row_ranges(
                ranges,
                file_meta.first_row_id.unwrap_or(0),
                file_meta.row_count,
            )
        });
        let row_selection =
            merge_row_selection(file_meta.row_count, dv.as_deref(), local_ranges.as_deref());
        let sidecar_ranges = requested_ranges.as_ref().map(|ranges| {
            to_local_row_ranges(
                ranges,
                file_meta.first_row_id.unwrap_or(0),
                file_meta.row_count,
            )
        });
        self.read_single_file_stream_with_selection(
            split,
            file_meta,
            data_fields,
            None,
            row_selection,
            sidecar_ranges,
        )
    }

    /// Read one file with the complete physical data schema supplied by a
    /// caller such as the KV reader. The format chooses whether it needs the
    /// full schema or only the projected fields.
    pub(super) fn read_single_file_stream_with_schema(
        &self,
        split: &DataSplit,
        file_meta: DataFileMeta,
        data_fields: Option<Vec<DataField>>,
        data_schema_fields: Vec<DataField>,
        dv: Option<Arc<DeletionVector>>,
        row_ranges: Option<Vec<RowRange>>,
    ) -> crate::Result<ArrowRecordBatchStream> {
        let local_ranges = row_ranges.as_ref().map(|ranges| {
            to_local_row_ranges(
                ranges,
                file_meta.first_row_id.unwrap_or(0),
                file_meta.row_count,
            )
        });
        let row_selection =
            merge_row_selection(file_meta.row_count, dv.as_deref(), local_ranges.as_deref());
        self.read_single_file_stream_with_selection(
            split,
            file_meta,
            data_fields,
            Some(data_schema_fields),
            row_selection,
            local_ranges,
        )
    }

    fn read_single_file_stream_with_selection(
        &self,
        split: &DataSplit,
        file_meta: DataFileMeta,
        data_fields: Option<Vec<DataField>>,
        data_schema_fields: Option<Vec<DataField>>,
        row_selection: Option<Vec<RowRange>>,
        sidecar_ranges: Option<Vec<RowRange>>,
    ) -> crate::Result<ArrowRecordBatchStream> {
        if row_selection.as_ref().is_some_and(Vec::is_empty) {
            return Ok(futures::stream::empty().boxed());
        }

        let mut read_type = self.read_type.clone();
        let output_field_count = read_type.len();
        let table_fields = self.table_fields.clone();
        let predicates = self.predicates.clone();
        let projects_row_id = read_type
            .iter()
            .any(|field| field.name() == ROW_ID_FIELD_NAME);
        let row_tracking_enabled =
            crate::spec::CoreOptions::new(&self.table_options).row_tracking_enabled();
        let mut refs = Vec::new();
        for predicate in &predicates {
            crate::arrow::residual::collect_predicate_leaf_refs(predicate, &mut refs);
        }
        let metadata_residual = (projects_row_id
            && predicates
                .iter()
                .any(|predicate| !matches!(predicate, Predicate::AlwaysTrue)))
            || (row_tracking_enabled
                && refs
                    .iter()
                    .any(|(name, _)| *name == crate::spec::SEQUENCE_NUMBER_FIELD_NAME));
        if metadata_residual {
            // Decoder-side filtering can drop rows before positional `_ROW_ID`
            // attachment. Read predicate-only columns without pushing the filter
            // down, attach the original ids, then evaluate the exact predicate.
            for (name, index) in refs {
                if name == crate::spec::SEQUENCE_NUMBER_FIELD_NAME {
                    crate::arrow::residual::push_unique_scan_field(
                        &mut read_type,
                        &crate::spec::sequence_number_data_field(),
                    );
                } else if name == ROW_ID_FIELD_NAME {
                    crate::arrow::residual::push_unique_scan_field(
                        &mut read_type,
                        &crate::spec::row_id_data_field(),
                    );
                } else {
                    if let Some(field) = table_fields.get(index) {
                        crate::arrow::residual::push_unique_scan_field(&mut read_type, field);
                    }
                }
            }
        }
        let projects_row_id = read_type
            .iter()
            .any(|field| field.name() == ROW_ID_FIELD_NAME);
        let residual_predicates = metadata_residual.then(|| crate::arrow::format::FilePredicates {
            predicates: predicates.clone(),
            row_filter_factory: None,
            file_fields: table_fields.clone(),
        });
        // The first version of the engine hook is deliberately limited to a
        // schema-identical raw read. Schema-evolution readers retain their exact
        // post-filter until expression adaptation is proven for that path.
        // Positional `_ROW_ID` materialization must see the unfiltered row
        // stream, so the engine hook stays disabled for this projection.
        let row_filter_factory = (data_fields.is_none() && !projects_row_id && !metadata_residual)
            .then(|| self.row_filter_factory.clone())
            .flatten();
        let file_io = self.file_io.clone();
        let split = split.clone();
        let batch_size = self.batch_size;
        let blob_as_descriptor = self.blob_as_descriptor;
        let blob_parallelism = self.blob_parallelism;
        let parquet_read_budget = self.parquet_read_budget.clone();
        let table_options = Arc::clone(&self.table_options);
        let mosaic_prefetch = self.mosaic_prefetch;
        let read_timing = self.read_timing.clone();

        let target_schema = build_target_arrow_schema(&read_type)?;
        let file_fields = data_fields.clone().unwrap_or_else(|| table_fields.clone());
        let data_schema_fields = data_schema_fields_for_file(
            &file_fields,
            file_meta.write_cols.as_deref(),
            data_schema_fields.as_deref(),
        )?;
        // What the reader is asked for.
        let projected_read_fields: Vec<DataField> = if data_fields.is_some()
            || file_meta.write_cols.is_some()
            || read_type.iter().any(contains_selected_map)
        {
            read_data_fields(&data_schema_fields, &read_type, self.nested_field_enabled)?
        } else {
            read_type
                .iter()
                .filter(|field| field.name() != ROW_ID_FIELD_NAME)
                .cloned()
                .collect()
        };
        let path_to_read = split.data_file_path(&file_meta);
        let configured_reader = create_format_reader_with_budget(
            &path_to_read,
            blob_as_descriptor,
            FormatReadFields {
                data_schema: &data_schema_fields,
                projected: &projected_read_fields,
            },
            &table_options,
            parquet_read_budget,
            blob_parallelism,
            mosaic_prefetch,
        )?;
        // Remap predicates from table-level to file-level indices.
        let file_predicates = if metadata_residual {
            None
        } else {
            let remapped = crate::arrow::filtering::remap_predicates_to_file(
                &predicates,
                &table_fields,
                &data_schema_fields,
            );
            if remapped.is_empty() && row_filter_factory.is_none() {
                None
            } else {
                Some(crate::arrow::format::FilePredicates {
                    predicates: remapped,
                    row_filter_factory,
                    file_fields: data_schema_fields.clone(),
                })
            }
        };

        Ok(try_stream! {
            let schema_open_start = read_timing.as_ref().map(|_| Instant::now());
            let options = crate::spec::CoreOptions::new(&table_options);
            let sidecar_ranges = super::row_sidecar::supports_read_type(
                &read_type, blob_as_descriptor || options.blob_as_descriptor(),
            ).then_some(sidecar_ranges.as_deref()).flatten();
            let (read_path, read_size) = super::row_sidecar::read_target(
                &file_io, &file_meta, split.bucket_path(), sidecar_ranges, &options,
            ).await?;
            let configured_reader = if read_path == path_to_read {
                configured_reader
            } else {
                create_format_reader_with_budget(
                    &read_path, blob_as_descriptor,
                    FormatReadFields { data_schema: &data_schema_fields, projected: &projected_read_fields },
                    &table_options, None, blob_parallelism, mosaic_prefetch,
                )?
            };
            let format_read_fields = configured_reader.read_fields;
            let format_reader = configured_reader.reader;
            // The decoded batch is described by `format_read_fields`, so map
            // `read_type` onto *that* list: its entries carry the types the columns
            // actually come back as, which is what reconciling them needs.
            let (index_mapping, source_fields) = if data_fields.is_some()
                || file_meta.write_cols.is_some()
                || read_type.iter().any(contains_selected_map)
            {
                (
                    create_index_mapping(&read_type, &format_read_fields),
                    Some(format_read_fields.clone()),
                )
            } else {
                (None, None)
            };

            let input_file = file_io.new_input(&read_path)?;
            let open_start = read_timing.as_ref().map(|_| Instant::now());
            let file_reader = input_file.reader().await?;
            if let (Some(timing), Some(start)) = (read_timing.as_ref(), open_start) {
                timing.add_file_read(start.elapsed());
            }
            let file_reader: Box<dyn FileRead> = match read_timing.as_ref() {
                Some(timing) => Box::new(TimedFileRead {
                    inner: Box::new(file_reader),
                    timing: Arc::clone(timing),
                }),
                None => Box::new(file_reader),
            };
            let is_parquet = read_path.to_ascii_lowercase().ends_with(".parquet");
            let target_schema = if read_path != path_to_read && read_path.ends_with(".row") {
                let names = read_type.iter().filter(|field| matches!(field.data_type(), DataType::Blob(_)))
                    .map(|field| field.name().to_string()).collect();
                super::row_sidecar::mark_blob_data(&target_schema, &names)
            } else {
                target_schema
            };
            let selected_row_ids = selected_row_ids_for_read(
                projects_row_id,
                file_meta.first_row_id,
                row_selection.as_deref(),
            );
            let mut row_id_cursor = file_meta.first_row_id.unwrap_or(0);
            let mut row_id_offset = 0usize;

            let mut batch_stream = format_reader.read_batch_stream(
                file_reader,
                read_size,
                &format_read_fields,
                file_predicates.as_ref(),
                batch_size,
                row_selection,
            ).await?;
            if let (Some(timing), Some(start)) = (read_timing.as_ref(), schema_open_start) {
                timing.add_file_schema_open(start.elapsed());
            }
            let mut first_batch = true;

            loop {
                let batch_wait_start = read_timing.as_ref().map(|_| Instant::now());
                let batch = if is_parquet {
                    if let Some(timing) = read_timing.as_ref() {
                        std::future::poll_fn(|cx| {
                            let start = Instant::now();
                            let batch = batch_stream.as_mut().poll_next(cx);
                            timing.add_parquet_decode(start.elapsed());
                            batch
                        })
                        .await
                    } else {
                        batch_stream.next().await
                    }
                } else {
                    batch_stream.next().await
                };
                if let (Some(timing), Some(start)) = (read_timing.as_ref(), batch_wait_start) {
                    timing.add_batch_wait(start.elapsed(), first_batch);
                }
                let Some(batch) = batch else { break };
                first_batch = false;
                let batch = batch?;
                let num_rows = batch.num_rows();
                let batch_schema = batch.schema();

                // Build output columns using index mapping (field-ID-based) or by name.
                let mut columns: Vec<Arc<dyn arrow_array::Array>> = Vec::with_capacity(target_schema.fields().len());
                for (i, target_field) in target_schema.fields().iter().enumerate() {
                    if target_field.name() == ROW_ID_FIELD_NAME {
                        columns.push(row_id_column_for_batch(
                            file_meta.first_row_id,
                            num_rows,
                            &mut row_id_cursor,
                            selected_row_ids.as_deref(),
                            &mut row_id_offset,
                        )?);
                        continue;
                    }

                    // The field the decoded column comes from: through the
                    // field-ID mapping under schema evolution, else by id against
                    // the table schema (`read_type` may be a nested projection of
                    // it; system fields stand for themselves).
                    let source_field: Option<&DataField> = if let Some(ref idx_map) = index_mapping
                    {
                        let data_idx = idx_map[i];
                        if data_idx == NULL_FIELD_INDEX {
                            None
                        } else {
                            Some(&source_fields.as_ref().unwrap()[data_idx as usize])
                        }
                    } else if let Some(ref df) = source_fields {
                        Some(&df[i])
                    } else {
                        Some(
                            table_fields
                                .iter()
                                .find(|f| f.id() == read_type[i].id())
                                .unwrap_or(&read_type[i]),
                        )
                    };
                    let source_col = source_field.and_then(|f| {
                        batch_schema
                            .index_of(f.name())
                            .ok()
                            .map(|col_idx| batch.column(col_idx))
                    });

                    if row_tracking_enabled
                        && read_type[i].id() == crate::spec::SEQUENCE_NUMBER_FIELD_ID
                        && target_field.name() == crate::spec::SEQUENCE_NUMBER_FIELD_NAME
                    {
                        columns.push(row_tracking_sequence_column(
                            source_col,
                            file_meta.max_sequence_number,
                            num_rows,
                        )?);
                        continue;
                    }

                    match (source_col, source_field) {
                        (Some(col), Some(source_field)) => {
                            columns.push(reconcile_column(col, source_field, &read_type[i])?);
                        }
                        _ => {
                            let null_array = arrow_array::new_null_array(target_field.data_type(), num_rows);
                            columns.push(null_array);
                        }
                    }
                }

                let result = if columns.is_empty() {
                    RecordBatch::try_new_with_options(
                        target_schema.clone(),
                        columns,
                        &arrow_array::RecordBatchOptions::new().with_row_count(Some(num_rows)),
                    )
                } else {
                    RecordBatch::try_new(target_schema.clone(), columns)
                }
                .map_err(|e| {
                    Error::UnexpectedError {
                        message: format!("Failed to build schema-evolved RecordBatch: {e}"),
                        source: Some(Box::new(e)),
                    }
                })?;
                let result = if let Some(residual) = &residual_predicates {
                    let filtered = crate::arrow::residual::filter_record_batch_by_predicates(
                        result,
                        residual,
                        &read_type,
                    )?;
                    if read_type.len() > output_field_count {
                        filtered.project(&(0..output_field_count).collect::<Vec<_>>()).map_err(|e| {
                            Error::UnexpectedError {
                                message: format!("Failed to project filtered RecordBatch: {e}"),
                                source: Some(Box::new(e)),
                            }
                        })?
                    } else {
                        filtered
                    }
                } else {
                    result
                };
                yield result;
            }
        }
        .boxed())
    }

    /// Read one data file selecting rows by their file-LOCAL 0-based physical
    /// positions. Unlike [`Self::read_single_file_stream`], the selection is
    /// interpreted directly in file-local coordinates: it never consults
    /// `first_row_id` (real primary-key tables never write one) and never emits
    /// `_ROW_ID`. A deletion vector, when present, is folded into the selection so
    /// any selected-but-deleted position is dropped; surviving rows are returned in
    /// ascending physical-position order. `local_positions` must be sorted
    /// ascending, de-duplicated, and within `[0, file_meta.row_count)`.
    ///
    /// Used by `pk_vector_position_read` to recover rows by physical position on
    /// primary-key data files that carry no `first_row_id`.
    pub(super) fn read_single_file_stream_local(
        &self,
        split: &DataSplit,
        file_meta: DataFileMeta,
        data_fields: Option<Vec<DataField>>,
        dv: Option<Arc<DeletionVector>>,
        local_positions: Vec<i64>,
    ) -> crate::Result<ArrowRecordBatchStream> {
        self.read_single_file_stream_local_ranges(
            split,
            file_meta,
            data_fields,
            dv,
            coalesce_positions_to_local_ranges(&local_positions),
        )
    }

    /// As [`Self::read_single_file_stream_local`], but the selection is already a
    /// list of file-local inclusive ranges: sorted ascending, non-overlapping, and
    /// within `[0, file_meta.row_count)`. A caller that already holds ranges — an
    /// engine-supplied bucket split does — hands them over directly rather than
    /// expanding them into positions this would only coalesce back.
    ///
    /// The emitted rows are always exactly the selected ones, but what that saves is
    /// the format's business, and it differs: mosaic skips a row group before
    /// touching its column data, parquet skips pages through the offset index,
    /// `.row` prunes blocks. Avro is the exception — its reader loads the whole file
    /// and deserializes every record before applying the selection, so there a
    /// narrow selection saves only what comes after decoding: Arrow column
    /// materialization, and whatever the caller does per row.
    pub(super) fn read_single_file_stream_local_ranges(
        &self,
        split: &DataSplit,
        file_meta: DataFileMeta,
        data_fields: Option<Vec<DataField>>,
        dv: Option<Arc<DeletionVector>>,
        local_ranges: Vec<RowRange>,
    ) -> crate::Result<ArrowRecordBatchStream> {
        // Local-position selection is only sound against a predicate-free reader: a
        // row-filtering predicate drops arbitrary selected rows and desyncs the
        // caller's position/score cursor. Guard the invariant here (not only at the
        // PK-vector caller) so this `pub(super)` entry cannot be misused within the
        // module. This path never projects `_ROW_ID`, so a `_ROW_ID`-only guard
        // would be a no-op — check for any row-filtering predicate instead.
        if self.has_row_filtering_predicate() {
            return Err(crate::Error::DataInvalid {
                message: "read_single_file_stream_local requires a predicate-free reader: a \
                 row-filtering predicate would desync local-position selection"
                    .to_string(),
                source: None,
            });
        }

        let read_type = self.read_type.clone();
        let table_fields = self.table_fields.clone();
        let predicates = self.predicates.clone();
        let file_io = self.file_io.clone();
        let split = split.clone();
        let blob_as_descriptor = self.blob_as_descriptor;
        let blob_parallelism = self.blob_parallelism;
        let parquet_read_budget = self.parquet_read_budget.clone();
        let table_options = Arc::clone(&self.table_options);
        let mosaic_prefetch = self.mosaic_prefetch;

        let target_schema = build_target_arrow_schema(&read_type)?;
        let file_fields = data_fields.clone().unwrap_or_else(|| table_fields.clone());
        let data_schema_fields =
            data_schema_fields_for_file(&file_fields, file_meta.write_cols.as_deref(), None)?;
        // What the reader is asked for.
        let projected_read_fields: Vec<DataField> = if data_fields.is_some()
            || file_meta.write_cols.is_some()
            || read_type.iter().any(contains_selected_map)
        {
            read_data_fields(&data_schema_fields, &read_type, self.nested_field_enabled)?
        } else {
            read_type
                .iter()
                .filter(|field| field.name() != ROW_ID_FIELD_NAME)
                .cloned()
                .collect()
        };
        let path_to_read = split.data_file_path(&file_meta);
        let configured_reader = create_format_reader_with_budget(
            &path_to_read,
            blob_as_descriptor,
            FormatReadFields {
                data_schema: &data_schema_fields,
                projected: &projected_read_fields,
            },
            &table_options,
            parquet_read_budget,
            blob_parallelism,
            mosaic_prefetch,
        )?;
        let format_read_fields = configured_reader.read_fields;
        let format_reader = configured_reader.reader;
        // The decoded batch is described by `format_read_fields`, so map
        // `read_type` onto *that* list: its entries carry the types the columns
        // actually come back as, which is what reconciling them needs.
        let (index_mapping, source_fields) = if data_fields.is_some()
            || file_meta.write_cols.is_some()
            || read_type.iter().any(contains_selected_map)
        {
            (
                create_index_mapping(&read_type, &format_read_fields),
                Some(format_read_fields.clone()),
            )
        } else {
            (None, None)
        };

        // Remap predicates from table-level to file-level indices.
        let file_predicates = {
            let remapped = crate::arrow::filtering::remap_predicates_to_file(
                &predicates,
                &table_fields,
                &data_schema_fields,
            );
            if remapped.is_empty() {
                None
            } else {
                Some(crate::arrow::format::FilePredicates {
                    predicates: remapped,
                    row_filter_factory: None,
                    file_fields: data_schema_fields.clone(),
                })
            }
        };

        // Interpret the ranges directly as file-local (no `to_local_row_ranges`, no
        // `first_row_id`), then fold the DV in. `merge_row_selection` intersects the
        // selection with the file's non-deleted ranges, so the reader emits exactly
        // the selected, non-deleted rows in ascending physical order.
        let row_selection =
            merge_row_selection(file_meta.row_count, dv.as_deref(), Some(&local_ranges));

        Ok(try_stream! {
            let input_file = file_io.new_input(&path_to_read)?;
            let file_reader = input_file.reader().await?;

            let mut batch_stream = format_reader
                .read_batch_stream(
                    Box::new(file_reader),
                    file_meta.file_size as u64,
                    &format_read_fields,
                    file_predicates.as_ref(),
                    None,
                    row_selection,
                )
                .await?;

            while let Some(batch) = batch_stream.next().await {
                let batch = batch?;
                let result = project_file_batch(
                    &batch,
                    &target_schema,
                    &read_type,
                    &table_fields,
                    index_mapping.as_deref(),
                    source_fields.as_deref(),
                )?;
                yield result;
            }
        }
        .boxed())
    }
}

/// Reconcile one decoded column with the read schema's type for it.
///
/// Delegates to [`crate::arrow::nested_evolution::evolve_column`], which returns
/// the column untouched when the types already agree, walks ROW / ARRAY / MAP to
/// NULL-fill nested fields the data file predates, and otherwise casts.
fn reconcile_column(
    col: &Arc<dyn Array>,
    source_field: &DataField,
    target_field: &DataField,
) -> crate::Result<Arc<dyn Array>> {
    crate::arrow::nested_evolution::evolve_field(col, source_field, target_field).map_err(|e| {
        Error::UnexpectedError {
            message: format!(
                "Failed to reconcile column '{}' read as {:?} with read type {:?}",
                target_field.name(),
                col.data_type(),
                target_field.data_type()
            ),
            source: Some(Box::new(e)),
        }
    })
}

/// Project one decoded file `batch` onto `target_schema`, resolving each target
/// column through the field-ID `index_mapping` (or by name when the file schema
/// matches the table schema), casting on type mismatch and null-filling absent
/// columns. Unlike the inline projection in
/// [`DataFileReader::read_single_file_stream`], this never materializes `_ROW_ID`:
/// the local-selection PK-vector read path never projects it.
fn project_file_batch(
    batch: &RecordBatch,
    target_schema: &Arc<arrow_schema::Schema>,
    read_type: &[DataField],
    table_fields: &[DataField],
    index_mapping: Option<&[i32]>,
    source_fields: Option<&[DataField]>,
) -> crate::Result<RecordBatch> {
    let num_rows = batch.num_rows();
    let batch_schema = batch.schema();
    let mut columns: Vec<Arc<dyn Array>> = Vec::with_capacity(target_schema.fields().len());
    for (i, target_field) in target_schema.fields().iter().enumerate() {
        let source_field: Option<&DataField> = if let Some(idx_map) = index_mapping {
            let data_idx = idx_map[i];
            if data_idx == NULL_FIELD_INDEX {
                None
            } else {
                Some(&source_fields.unwrap()[data_idx as usize])
            }
        } else if let Some(df) = source_fields {
            Some(&df[i])
        } else {
            Some(
                table_fields
                    .iter()
                    .find(|f| f.id() == read_type[i].id())
                    .unwrap_or(&read_type[i]),
            )
        };
        let source_col = source_field.and_then(|f| {
            batch_schema
                .index_of(f.name())
                .ok()
                .map(|col_idx| batch.column(col_idx))
        });

        match (source_col, source_field) {
            (Some(col), Some(source_field)) => {
                columns.push(reconcile_column(col, source_field, &read_type[i])?);
            }
            _ => {
                columns.push(arrow_array::new_null_array(
                    target_field.data_type(),
                    num_rows,
                ));
            }
        }
    }

    if columns.is_empty() {
        RecordBatch::try_new_with_options(
            target_schema.clone(),
            columns,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(num_rows)),
        )
    } else {
        RecordBatch::try_new(target_schema.clone(), columns)
    }
    .map_err(|e| Error::UnexpectedError {
        message: format!("Failed to build schema-evolved RecordBatch: {e}"),
        source: Some(Box::new(e)),
    })
}

fn contains_selected_map(field: &DataField) -> bool {
    crate::spec::is_map_selected_keys_field(field)
        || matches!(field.data_type(), DataType::Row(row) if row.fields().iter().any(contains_selected_map))
}

fn row_tracking_sequence_column(
    physical: Option<&Arc<dyn Array>>,
    max_sequence_number: i64,
    num_rows: usize,
) -> crate::Result<Arc<dyn Array>> {
    let physical = physical
        .map(|array| {
            array
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or_else(|| Error::DataInvalid {
                    message: "Row-tracking sequence column must be BIGINT".into(),
                    source: None,
                })
        })
        .transpose()?;
    Ok(Arc::new(Int64Array::from_iter_values((0..num_rows).map(
        |index| {
            physical
                .filter(|array| !array.is_null(index))
                .map_or(max_sequence_number, |array| array.value(index))
        },
    ))))
}

fn read_data_fields(
    all_data_fields: &[DataField],
    expected_fields: &[DataField],
    nested_field_enabled: bool,
) -> crate::Result<Vec<DataField>> {
    let mut read_fields = Vec::new();
    for data_field in all_data_fields {
        if let Some(expected) = expected_fields
            .iter()
            .find(|field| field.id() == data_field.id())
        {
            if let Some(pruned_type) = prune_data_type(
                expected.data_type(),
                data_field.data_type(),
                nested_field_enabled,
            )? {
                let mut field = data_field_with_type(data_field, pruned_type);
                if crate::spec::is_map_selected_keys_field(expected) {
                    field = field.with_description(expected.description().map(str::to_string));
                }
                read_fields.push(field);
            }
        }
    }
    for expected in expected_fields {
        if expected.id() == crate::spec::SEQUENCE_NUMBER_FIELD_ID
            && expected.name() == crate::spec::SEQUENCE_NUMBER_FIELD_NAME
            && !read_fields.iter().any(|field| field.id() == expected.id())
        {
            // Row tracking stores this physical system column outside the
            // logical table schema, including alongside selected MAP keys.
            read_fields.push(expected.clone());
        }
    }
    Ok(read_fields)
}

fn prune_data_type(
    read_type: &DataType,
    data_type: &DataType,
    nested_field_enabled: bool,
) -> crate::Result<Option<DataType>> {
    match read_type {
        DataType::Row(read_row) if is_variant_extraction_row_type(read_type) => {
            Ok(Some(DataType::Row(read_row.clone())))
        }
        DataType::Row(read_row) => {
            let DataType::Row(data_row) = data_type else {
                return Ok(Some(data_type.clone()));
            };
            let mut fields =
                read_data_fields(data_row.fields(), read_row.fields(), nested_field_enabled)?;
            if fields.is_empty() {
                if !nested_field_enabled {
                    return Ok(None);
                }
                if let Some(anchor) = data_row.fields().first().cloned() {
                    fields.push(anchor);
                } else {
                    return Ok(None);
                }
            }
            Ok(Some(DataType::Row(crate::spec::RowType::with_nullable(
                read_type.is_nullable(),
                fields,
            ))))
        }
        // ARRAY and MAP are deliberately NOT descended, even though Java's
        // `pruneDataType` does: the pruned type is also what the Vortex reader is
        // asked for, and it projects top-level columns only, then reinterprets a
        // decoded nested struct against the requested Arrow type positionally, so
        // a container pruned into read order would silently relabel its children.
        // Nested containers are reconciled after decoding instead, by
        // `arrow::nested_evolution::evolve_column`, which pairs by field id.
        _ => Ok(Some(data_type.clone())),
    }
}

fn data_field_with_type(field: &DataField, data_type: DataType) -> DataField {
    DataField::new(field.id(), field.name().to_string(), data_type)
        .with_description(field.description().map(ToString::to_string))
}

fn data_schema_fields_for_file(
    file_fields: &[DataField],
    write_cols: Option<&[String]>,
    data_schema_fields: Option<&[DataField]>,
) -> crate::Result<Vec<DataField>> {
    if let Some(write_cols) = write_cols {
        return super::data_evolution_fields::project_by_paths(file_fields, write_cols);
    }
    Ok(data_schema_fields.unwrap_or(file_fields).to_vec())
}

/// Convert ranges from their read-path coordinate system to file-local ranges.
/// `first_row_id` is the coordinate base selected by the table's read path:
/// stable row ID for row-tracked tables, or cumulative split-local physical
/// offset for raw tables without row tracking.
fn to_local_row_ranges(
    row_ranges: &[RowRange],
    first_row_id: i64,
    row_count: i64,
) -> Vec<RowRange> {
    let file_end = first_row_id + row_count - 1;
    crate::table::merge_row_ranges(
        row_ranges
            .iter()
            .filter_map(|r| {
                if r.to() < first_row_id || r.from() > file_end {
                    return None;
                }
                let local_from = (r.from() - first_row_id).max(0);
                let local_to = (r.to() - first_row_id).min(row_count - 1);
                Some(RowRange::new(local_from, local_to))
            })
            .collect(),
    )
}

/// Coalesce sorted, de-duplicated 0-based physical positions into contiguous
/// file-LOCAL inclusive `RowRange`s. Unlike a global-range build, there is no
/// `first_row_id` offset: the positions are already file-local coordinates.
fn coalesce_positions_to_local_ranges(sorted_positions: &[i64]) -> Vec<RowRange> {
    let mut ranges = Vec::new();
    let mut iter = sorted_positions.iter().copied();
    let Some(first) = iter.next() else {
        return ranges;
    };
    let mut start = first;
    let mut end = first;
    for pos in iter {
        if end + 1 == pos {
            end = pos;
        } else {
            ranges.push(RowRange::new(start, end));
            start = pos;
            end = pos;
        }
    }
    ranges.push(RowRange::new(start, end));
    ranges
}

const MAX_FILE_INDEX_ROW_RANGES: usize = 65_536;

/// Convert a bitmap into contiguous ranges without visiting every selected row.
/// `None` means the bitmap is too fragmented to materialize safely and callers
/// must preserve other restrictions and rely on the residual predicate.
pub(super) fn file_index_selection_to_local_ranges(
    selection: &RoaringBitmap,
    row_count: i64,
) -> crate::Result<Option<Vec<RowRange>>> {
    if let Some(position) = selection.max() {
        if i64::from(position) >= row_count {
            return Err(Error::FileIndexFormatInvalid {
                message: format!(
                    "FileIndex selected row position {position} outside data file row count {row_count}"
                ),
            });
        }
    }

    let mut ranges = Vec::new();
    let mut positions = selection.iter();
    while let Some(range) = positions.next_range() {
        if ranges.len() == MAX_FILE_INDEX_ROW_RANGES {
            return Ok(None);
        }
        ranges.push(RowRange::new(
            i64::from(*range.start()),
            i64::from(*range.end()),
        ));
    }
    Ok(Some(ranges))
}

/// Merge DV and row_ranges into a unified list of 0-based inclusive RowRanges.
/// Returns `None` if no filtering is needed (no DV and no ranges).
///
/// Complexity: O(D + R) where D = number of deleted rows, R = number of ranges.
fn merge_row_selection(
    row_count: i64,
    dv: Option<&DeletionVector>,
    row_ranges: Option<&[RowRange]>,
) -> Option<Vec<RowRange>> {
    let has_dv = dv.is_some_and(|d| !d.is_empty());
    let has_ranges = row_ranges.is_some();
    if !has_dv && !has_ranges {
        return None;
    }

    if !has_dv {
        return match row_ranges {
            Some(ranges) if ranges_cover_all_rows(ranges, row_count) => None,
            Some(ranges) => Some(ranges.to_vec()),
            None => None,
        };
    }

    let dv_ranges = dv_to_non_deleted_ranges(dv.unwrap(), row_count);

    match row_ranges {
        Some(ranges) => Some(intersect_sorted_ranges(&dv_ranges, ranges)),
        None => Some(dv_ranges),
    }
}

fn ranges_cover_all_rows(ranges: &[RowRange], row_count: i64) -> bool {
    if row_count <= 0 || ranges.is_empty() || ranges[0].from() > 0 {
        return false;
    }
    let mut covered_to = ranges[0].to();
    for range in &ranges[1..] {
        if range.from() > covered_to.saturating_add(1) {
            return false;
        }
        covered_to = covered_to.max(range.to());
    }
    covered_to >= row_count - 1
}

/// Convert a DeletionVector into sorted non-deleted inclusive RowRanges.
fn dv_to_non_deleted_ranges(dv: &DeletionVector, row_count: i64) -> Vec<RowRange> {
    let mut result = Vec::new();
    let mut cursor: i64 = 0;
    for deleted in dv.iter() {
        let del = deleted as i64;
        if del >= row_count {
            break;
        }
        if del > cursor {
            result.push(RowRange::new(cursor, del - 1));
        }
        cursor = del + 1;
    }
    if cursor < row_count {
        result.push(RowRange::new(cursor, row_count - 1));
    }
    result
}

/// Intersect two sorted lists of inclusive RowRanges using a merge-style scan.
fn intersect_sorted_ranges(a: &[RowRange], b: &[RowRange]) -> Vec<RowRange> {
    let mut result = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let from = a[i].from().max(b[j].from());
        let to = a[i].to().min(b[j].to());
        if from <= to {
            result.push(RowRange::new(from, to));
        }
        if a[i].to() < b[j].to() {
            i += 1;
        } else {
            j += 1;
        }
    }
    result
}

/// Expand row_ranges into a flat sequence of selected row IDs for a file.
/// Intended for per-batch _ROW_ID attachment — callers should not pass
/// whole-file ranges with millions of rows, as this allocates a Vec<i64>
/// proportional to the selected range size.
pub(super) fn expand_selected_row_ids(
    first_row_id: i64,
    row_count: i64,
    row_ranges: &[RowRange],
) -> Vec<i64> {
    if row_count == 0 {
        return Vec::new();
    }
    let file_end = first_row_id + row_count - 1;
    let mut ids = Vec::new();
    for r in row_ranges {
        let from = r.from().max(first_row_id);
        let to = r.to().min(file_end);
        for id in from..=to {
            ids.push(id);
        }
    }
    ids
}

fn expand_local_selected_row_ids(first_row_id: i64, local_ranges: &[RowRange]) -> Vec<i64> {
    let mut ids = Vec::new();
    for range in local_ranges {
        for local_id in range.from()..=range.to() {
            ids.push(first_row_id + local_id);
        }
    }
    ids
}

fn selected_row_ids_for_read(
    projects_row_id: bool,
    first_row_id: Option<i64>,
    row_selection: Option<&[RowRange]>,
) -> Option<Vec<i64>> {
    if !projects_row_id {
        return None;
    }
    match (first_row_id, row_selection) {
        (Some(first_row_id), Some(ranges)) => {
            Some(expand_local_selected_row_ids(first_row_id, ranges))
        }
        _ => None,
    }
}

fn row_id_column_for_batch(
    first_row_id: Option<i64>,
    num_rows: usize,
    row_id_cursor: &mut i64,
    selected_row_ids: Option<&[i64]>,
    row_id_offset: &mut usize,
) -> crate::Result<Arc<dyn arrow_array::Array>> {
    let Some(_) = first_row_id else {
        return Ok(Arc::new(Int64Array::new_null(num_rows)));
    };

    if let Some(selected_row_ids) = selected_row_ids {
        let end = *row_id_offset + num_rows;
        if end > selected_row_ids.len() {
            return Err(Error::UnexpectedError {
                message: format!(
                    "Row ID offset out of bounds: need {}..{} but selected_row_ids has {} entries",
                    *row_id_offset,
                    end,
                    selected_row_ids.len()
                ),
                source: None,
            });
        }
        let batch_ids = &selected_row_ids[*row_id_offset..end];
        *row_id_offset = end;
        return Ok(Arc::new(Int64Array::from(batch_ids.to_vec())));
    }

    let start = *row_id_cursor;
    let end = start + num_rows as i64;
    *row_id_cursor = end;
    Ok(Arc::new(Int64Array::from((start..end).collect::<Vec<_>>())))
}

pub(super) fn attach_row_id(
    batch: RecordBatch,
    row_id_index: usize,
    selected_row_ids: &[i64],
    row_id_offset: &mut usize,
    output_schema: &Arc<arrow_schema::Schema>,
) -> crate::Result<RecordBatch> {
    let num_rows = batch.num_rows();
    let end = *row_id_offset + num_rows;
    if end > selected_row_ids.len() {
        return Err(Error::UnexpectedError {
            message: format!(
                "Row ID offset out of bounds: need {}..{} but selected_row_ids has {} entries",
                *row_id_offset,
                end,
                selected_row_ids.len()
            ),
            source: None,
        });
    }
    let batch_ids = &selected_row_ids[*row_id_offset..end];
    *row_id_offset = end;
    let array: Arc<dyn arrow_array::Array> = Arc::new(Int64Array::from(batch_ids.to_vec()));
    insert_column_at(batch, array, row_id_index, output_schema)
}

pub(super) fn insert_column_at(
    batch: RecordBatch,
    column: Arc<dyn arrow_array::Array>,
    insert_index: usize,
    output_schema: &Arc<arrow_schema::Schema>,
) -> crate::Result<RecordBatch> {
    let mut columns: Vec<Arc<dyn arrow_array::Array>> = Vec::with_capacity(batch.num_columns() + 1);
    for (i, col) in batch.columns().iter().enumerate() {
        if i == insert_index {
            columns.push(column.clone());
        }
        columns.push(col.clone());
    }
    if insert_index >= batch.num_columns() {
        columns.push(column);
    }
    let schema = super::row_sidecar::propagate_blob_data(output_schema, &batch);
    RecordBatch::try_new(schema, columns).map_err(|e| Error::UnexpectedError {
        message: format!("Failed to insert column into RecordBatch: {e}"),
        source: Some(Box::new(e)),
    })
}

/// Append a null `_ROW_ID` column for files without `first_row_id`.
pub(super) fn append_null_row_id_column(
    batch: RecordBatch,
    insert_index: usize,
    output_schema: &Arc<arrow_schema::Schema>,
) -> crate::Result<RecordBatch> {
    let array: Arc<dyn arrow_array::Array> = Arc::new(Int64Array::new_null(batch.num_rows()));
    insert_column_at(batch, array, insert_index, output_schema)
}

#[cfg(test)]
mod row_tests {
    use super::*;
    use crate::arrow::build_target_arrow_schema;
    use crate::arrow::format::create_format_writer;
    use crate::io::FileIOBuilder;
    use crate::spec::stats::BinaryTableStats;
    use crate::spec::{
        is_variant_extraction_row_type, variant_extraction_row, BigIntType, BinaryRow,
        DataFileMeta, DataType, Datum, IntType, Predicate, PredicateBuilder, RowType, VarCharType,
    };
    use crate::table::source::DataSplitBuilder;
    use crate::variant::variant_shredding_type;
    use arrow_array::{Int32Array, StringArray};
    use futures::TryStreamExt;

    fn field(id: i32, name: &str, data_type: DataType) -> DataField {
        DataField::new(id, name.to_string(), data_type)
    }

    #[test]
    fn complete_data_schema_uses_supplied_physical_schema_and_write_cols() {
        let fields = vec![
            field(1, "id", DataType::Int(IntType::new())),
            field(2, "value", DataType::Int(IntType::new())),
        ];
        let physical = vec![field(1_000_001, "_KEY_id", DataType::Int(IntType::new()))];
        assert_eq!(
            data_schema_fields_for_file(&fields, None, None).unwrap(),
            fields
        );
        let selected = data_schema_fields_for_file(&fields, None, Some(&physical)).unwrap();
        assert_eq!(
            selected.iter().map(DataField::name).collect::<Vec<_>>(),
            vec!["_KEY_id"]
        );
        let partial =
            data_schema_fields_for_file(&fields, Some(&["value".to_string()]), Some(&physical))
                .unwrap();
        assert_eq!(
            partial.iter().map(DataField::name).collect::<Vec<_>>(),
            vec!["value"]
        );
    }

    fn data_file(file_name: &str, file_size: i64, row_count: i64, schema_id: i64) -> DataFileMeta {
        DataFileMeta {
            file_name: file_name.to_string(),
            file_size,
            row_count,
            min_key: Vec::new(),
            max_key: Vec::new(),
            key_stats: BinaryTableStats::empty(),
            value_stats: BinaryTableStats::empty(),
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id,
            level: 0,
            extra_files: Vec::new(),
            creation_time: None,
            delete_row_count: None,
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            column_max_sequence_numbers: None,
        }
    }

    #[test]
    fn row_tracking_sequence_fills_only_missing_values_from_file_metadata() {
        let physical: Arc<dyn Array> = Arc::new(Int64Array::from(vec![Some(3), None, Some(5)]));
        let filled = row_tracking_sequence_column(Some(&physical), 9, 3).unwrap();
        assert_eq!(
            filled.as_any().downcast_ref::<Int64Array>().unwrap(),
            &Int64Array::from(vec![3, 9, 5]),
        );
        let absent = row_tracking_sequence_column(None, 9, 3).unwrap();
        assert_eq!(
            absent.as_any().downcast_ref::<Int64Array>().unwrap(),
            &Int64Array::from(vec![9, 9, 9]),
        );
    }

    #[test]
    fn selected_map_read_preserves_physical_sequence_number() {
        let map = field(
            1,
            "attrs",
            DataType::Map(crate::spec::MapType::new(
                DataType::VarChar(VarCharType::string_type()),
                DataType::Int(IntType::new()),
            )),
        );
        let selected = crate::spec::map_selected_keys_field(&map, &["key".into()]).unwrap();
        let sequence = field(
            crate::spec::SEQUENCE_NUMBER_FIELD_ID,
            crate::spec::SEQUENCE_NUMBER_FIELD_NAME,
            DataType::BigInt(BigIntType::with_nullable(false)),
        );
        let read = read_data_fields(
            std::slice::from_ref(&map),
            &[selected, sequence.clone()],
            false,
        )
        .unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].data_type(), map.data_type());
        assert_eq!(
            read[0].description(),
            Some("__PAIMON_MAP_SELECTED_KEYS:key")
        );
        assert_eq!(read[1], sequence);
    }

    #[test]
    fn read_data_fields_preserves_variant_extraction_row_type() {
        let configured = DataType::Row(RowType::new(vec![field(
            0,
            "age",
            DataType::Int(IntType::new()),
        )]));
        let physical_type = variant_shredding_type(&configured).unwrap();
        let data_field = field(1, "v", physical_type);
        let extraction_type = DataType::Row(
            variant_extraction_row(
                true,
                vec![(
                    DataType::Int(IntType::new()),
                    "$.age".to_string(),
                    true,
                    "UTC".to_string(),
                )],
            )
            .unwrap(),
        );
        let expected_field = field(1, "v", extraction_type.clone());

        let read_fields = read_data_fields(&[data_field], &[expected_field], false).unwrap();

        assert_eq!(read_fields.len(), 1);
        assert!(is_variant_extraction_row_type(read_fields[0].data_type()));
        assert_eq!(read_fields[0].data_type(), &extraction_type);
    }

    #[test]
    fn read_data_fields_uses_physical_type_for_castable_field() {
        let data_field = field(1, "n", DataType::Int(IntType::new()));
        let expected_field = field(1, "n", DataType::BigInt(BigIntType::new()));

        let read_fields = read_data_fields(&[data_field], &[expected_field], false).unwrap();

        assert_eq!(read_fields.len(), 1);
        assert_eq!(read_fields[0].data_type(), &DataType::Int(IntType::new()));
    }

    #[test]
    fn projected_added_leaf_reads_older_siblings_for_each_row_null_buffer() {
        let existing = field(3, "existing", DataType::Int(IntType::new()));
        let old_sub = field(
            2,
            "sub",
            DataType::Row(RowType::new(vec![
                existing.clone(),
                field(6, "unneeded", DataType::Int(IntType::new())),
            ])),
        );
        let file_profile = field(
            1,
            "profile",
            DataType::Row(RowType::new(vec![
                old_sub.clone(),
                field(4, "other", DataType::Int(IntType::new())),
            ])),
        );
        let read_profile = field(
            1,
            "profile",
            DataType::Row(RowType::new(vec![field(
                2,
                "sub",
                DataType::Row(RowType::new(vec![field(
                    5,
                    "added",
                    DataType::Int(IntType::new()),
                )])),
            )])),
        );

        let pruned = read_data_fields(&[file_profile], &[read_profile], true).unwrap();
        let DataType::Row(profile) = pruned[0].data_type() else {
            panic!("profile should remain a ROW")
        };
        assert_eq!(
            profile.fields(),
            &[field(2, "sub", DataType::Row(RowType::new(vec![existing])))]
        );
    }

    #[test]
    fn disabled_nested_mode_does_not_preserve_deep_hidden_anchor() {
        let file_profile = field(
            1,
            "profile",
            DataType::Row(RowType::new(vec![field(
                2,
                "sub",
                DataType::Row(RowType::new(vec![field(
                    3,
                    "old",
                    DataType::Int(IntType::new()),
                )])),
            )])),
        );
        let read_profile = field(
            1,
            "profile",
            DataType::Row(RowType::new(vec![field(
                2,
                "sub",
                DataType::Row(RowType::new(vec![field(
                    4,
                    "added",
                    DataType::Int(IntType::new()),
                )])),
            )])),
        );

        assert!(read_data_fields(&[file_profile], &[read_profile], false)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn projected_missing_direct_child_reads_a_physical_sibling_as_anchor() {
        let age = field(3, "age", DataType::Int(IntType::new()));
        let file_profile = field(1, "profile", DataType::Row(RowType::new(vec![age.clone()])));
        let read_profile = field(
            1,
            "profile",
            DataType::Row(RowType::new(vec![field(
                2,
                "name",
                DataType::VarChar(VarCharType::string_type()),
            )])),
        );

        let pruned = read_data_fields(&[file_profile], &[read_profile], true).unwrap();
        let DataType::Row(profile) = pruned[0].data_type() else {
            panic!("profile should remain a ROW")
        };
        assert_eq!(profile.fields(), &[age]);
    }

    #[test]
    fn disabled_nested_mode_does_not_read_hidden_sibling_anchor() {
        let file_profile = field(
            1,
            "profile",
            DataType::Row(RowType::new(vec![field(
                2,
                "old",
                DataType::Int(IntType::new()),
            )])),
        );
        let projected = field(
            1,
            "profile",
            DataType::Row(RowType::new(vec![field(
                3,
                "added",
                DataType::Int(IntType::new()),
            )])),
        );
        assert!(read_data_fields(
            std::slice::from_ref(&file_profile),
            std::slice::from_ref(&projected),
            false,
        )
        .unwrap()
        .is_empty());
        assert_eq!(
            read_data_fields(&[file_profile], &[projected], true)
                .unwrap()
                .len(),
            1
        );
    }

    #[tokio::test]
    async fn row_projection_reads_full_file_schema_before_projecting() {
        let fields = vec![
            field(0, "id", DataType::Int(IntType::new())),
            field(1, "name", DataType::VarChar(VarCharType::string_type())),
            field(2, "score", DataType::Int(IntType::new())),
        ];
        let schema = build_target_arrow_schema(&fields).unwrap();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec!["a", "b", "c"])),
                Arc::new(Int32Array::from(vec![10, 20, 30])),
            ],
        )
        .unwrap();

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/row_projection";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.row";
        let file_path = format!("{bucket_path}/{file_name}");
        let output = file_io.new_output(&file_path).unwrap();
        let mut writer = create_format_writer(&output, schema, "zstd", 1, None, None, None)
            .await
            .unwrap();
        writer.write(&batch).await.unwrap();
        let file_size = writer.close().await.unwrap().file_size as i64;

        let schema_id = 1;
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![data_file(file_name, file_size, 3, schema_id)])
            .build()
            .unwrap();

        let read_type = vec![fields[2].clone()];
        let reader = DataFileReader::new(
            file_io.clone(),
            SchemaManager::new(file_io, table_path.to_string()),
            schema_id,
            fields,
            read_type,
            Vec::new(),
        );

        let batches = reader
            .read(&[split])
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].num_columns(), 1);
        assert_eq!(batches[0].schema().field(0).name(), "score");
        let scores = batches[0]
            .column(0)
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        assert_eq!(scores.values(), &[10, 20, 30]);
    }

    /// End-to-end guard: a non-partition predicate on a `.row` file must be
    /// applied exactly by the time batches leave `DataFileReader`. The Row
    /// format has no pushdown, so without a residual filter this would return
    /// every row; the residual filter makes it exact. Guards against a
    /// regression if the per-reader wiring is later refactored.
    #[tokio::test]
    async fn row_read_applies_exact_residual_filter_end_to_end() {
        let fields = vec![
            field(0, "id", DataType::Int(IntType::new())),
            field(1, "age", DataType::Int(IntType::new())),
        ];
        let schema = build_target_arrow_schema(&fields).unwrap();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5])),
                Arc::new(Int32Array::from(vec![10, 20, 30, 40, 50])),
            ],
        )
        .unwrap();

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/row_residual";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.row";
        let file_path = format!("{bucket_path}/{file_name}");
        let output = file_io.new_output(&file_path).unwrap();
        let mut writer = create_format_writer(&output, schema, "zstd", 1, None, None, None)
            .await
            .unwrap();
        writer.write(&batch).await.unwrap();
        let file_size = writer.close().await.unwrap().file_size as i64;

        let schema_id = 1;
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![data_file(file_name, file_size, 5, schema_id)])
            .build()
            .unwrap();

        // age > 25 -> only [30, 40, 50] must survive.
        let predicate: Predicate = PredicateBuilder::new(&fields)
            .greater_than("age", Datum::Int(25))
            .unwrap();
        let read_type = vec![fields[1].clone()];
        let reader = DataFileReader::new(
            file_io.clone(),
            SchemaManager::new(file_io, table_path.to_string()),
            schema_id,
            fields,
            read_type,
            vec![predicate],
        );

        let batches = reader
            .read(&[split])
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();

        let ages: Vec<i32> = batches
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect();
        assert_eq!(ages, vec![30, 40, 50]);
    }

    #[tokio::test]
    async fn row_partial_write_cols_resolve_predicates_against_physical_schema() {
        let fields = vec![
            field(0, "id", DataType::Int(IntType::new())),
            field(1, "age", DataType::Int(IntType::new())),
        ];
        let schema = build_target_arrow_schema(&fields[..1]).unwrap();
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(vec![1, 2]))])
                .unwrap();
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/row_partial_predicate";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "partial.row";
        let output = file_io
            .new_output(&format!("{bucket_path}/{file_name}"))
            .unwrap();
        let mut writer = create_format_writer(&output, schema, "zstd", 1, None, None, None)
            .await
            .unwrap();
        writer.write(&batch).await.unwrap();
        let file_size = writer.close().await.unwrap().file_size as i64;
        let mut file = data_file(file_name, file_size, 2, 1);
        file.write_cols = Some(vec!["id".to_string()]);
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![file])
            .build()
            .unwrap();
        let predicates = PredicateBuilder::new(&fields);
        for (predicate, expected_rows) in [
            (predicates.is_null("age").unwrap(), 2),
            (predicates.greater_than("age", Datum::Int(0)).unwrap(), 0),
        ] {
            let reader = DataFileReader::new(
                file_io.clone(),
                SchemaManager::new(file_io.clone(), table_path.to_string()),
                1,
                fields.clone(),
                vec![fields[0].clone()],
                vec![predicate],
            );
            let batches = reader
                .read(std::slice::from_ref(&split))
                .unwrap()
                .try_collect::<Vec<_>>()
                .await
                .unwrap();
            assert_eq!(
                batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
                expected_rows
            );
        }
    }

    /// The predicate must not renumber a projected `_ROW_ID`: the surviving row
    /// keeps its original physical position even when the predicate column is
    /// absent from the requested projection.
    async fn assert_row_id_with_data_predicate(format: &str) {
        let fields = vec![
            field(0, "id", DataType::Int(IntType::new())),
            field(1, "age", DataType::Int(IntType::new())),
        ];
        let schema = build_target_arrow_schema(&fields).unwrap();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(Int32Array::from(vec![10, 20, 30])),
            ],
        )
        .unwrap();

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = format!("memory:/row_id_predicate_{format}");
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = format!("part-0.{format}");
        let output = file_io
            .new_output(&format!("{bucket_path}/{file_name}"))
            .unwrap();
        let mut writer = create_format_writer(&output, schema, "zstd", 1, None, None, None)
            .await
            .unwrap();
        writer.write(&batch).await.unwrap();
        let file_size = writer.close().await.unwrap().file_size as i64;

        let mut file_meta = data_file(&file_name, file_size, 3, 1);
        file_meta.first_row_id = Some(100);
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![file_meta.clone()])
            .build()
            .unwrap();

        let row_id = DataField::new(
            crate::spec::ROW_ID_FIELD_ID,
            ROW_ID_FIELD_NAME.to_string(),
            DataType::BigInt(crate::spec::BigIntType::new()),
        );
        // Project only _ROW_ID; age must be read internally for the predicate.
        let read_type = vec![row_id];
        let predicate: Predicate = PredicateBuilder::new(&fields)
            .greater_than("age", Datum::Int(15))
            .unwrap();

        let reader = DataFileReader::new(
            file_io.clone(),
            SchemaManager::new(file_io, table_path),
            1,
            fields,
            read_type,
            vec![predicate],
        );

        let batches = reader
            .clone()
            .read(std::slice::from_ref(&split))
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        let row_ids = |batches: &[RecordBatch]| {
            batches
                .iter()
                .flat_map(|batch| {
                    batch
                        .column(0)
                        .as_any()
                        .downcast_ref::<Int64Array>()
                        .unwrap()
                        .values()
                        .iter()
                        .copied()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(row_ids(&batches), vec![101, 102]);

        let selected = reader
            .clone()
            .read_single_file_stream(
                &split,
                file_meta.clone(),
                None,
                None,
                Some(vec![RowRange::new(100, 101)]),
            )
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_eq!(row_ids(&selected), vec![101]);

        let mut deleted = RoaringBitmap::new();
        deleted.insert(2);
        let selected = reader
            .read_single_file_stream(
                &split,
                file_meta,
                None,
                Some(Arc::new(DeletionVector::from_bitmap(deleted))),
                None,
            )
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_eq!(row_ids(&selected), vec![101]);
    }

    #[tokio::test]
    async fn read_row_id_with_data_predicate_keeps_physical_position() {
        for format in ["row", "parquet"] {
            assert_row_id_with_data_predicate(format).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::build_target_arrow_schema;
    use crate::common::Options;
    use crate::file_index::file_index_result::FileIndexResult;
    use crate::file_index::file_indexer_factory::{
        FileIndexerFactory, BITMAP_INDEX, BLOOM_FILTER_INDEX,
    };
    use crate::file_index::write_column_indexes;
    use crate::io::FileIOBuilder;
    use crate::spec::stats::BinaryTableStats;
    use crate::spec::{
        ArrayType, BigIntType, DataFileMeta, DataType, Datum, IntType, Predicate, PredicateBuilder,
        PredicateOperator, Schema, SchemaChange, TableSchema, VarCharType,
    };
    use crate::table::source::{DataSplitBuilder, DeletionFile};
    use arrow_array::{Int32Array, StringArray};
    use bytes::Bytes;
    use futures::TryStreamExt;
    use paimon_mosaic_core::spec::COMPRESSION_NONE;
    use paimon_mosaic_core::writer::{MosaicWriter, OutputFile, WriterOptions};
    use roaring::RoaringBitmap;
    use std::io;

    #[test]
    fn split_local_ranges_map_across_file_boundaries() {
        let ranges = [RowRange::new(3, 4), RowRange::new(5, 7)];
        assert_eq!(
            to_local_row_ranges(&ranges, 0, 5),
            vec![RowRange::new(3, 4)]
        );
        assert_eq!(
            to_local_row_ranges(&ranges, 5, 4),
            vec![RowRange::new(0, 2)]
        );

        assert_eq!(
            to_local_row_ranges(&[RowRange::new(103, 104)], 100, 6),
            vec![RowRange::new(3, 4)]
        );
    }

    #[test]
    fn test_data_file_read_timing_aggregates_file_waits() {
        let timing = DataFileReadTiming::default();
        timing.add_file_schema_open(Duration::from_millis(2));
        timing.add_batch_wait(Duration::from_millis(5), true);
        timing.add_batch_wait(Duration::from_millis(7), false);
        timing.add_file_schema_open(Duration::from_millis(3));
        timing.add_batch_wait(Duration::from_millis(11), true);
        timing.add_batch_wait(Duration::from_millis(13), false);

        assert_eq!(
            timing.file_waits(),
            (
                Duration::from_millis(5),
                Duration::from_millis(16),
                Duration::from_millis(20),
            )
        );
    }

    #[tokio::test]
    async fn timed_file_read_preserves_cache_context() {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let input = file_io.new_input("memory:/timed-file").unwrap();
        let reader = input.reader().await.unwrap();
        let blob_index_cache = file_io.blob_index_cache();
        let timed = TimedFileRead {
            inner: Box::new(reader),
            timing: Arc::new(DataFileReadTiming::default()),
        };

        assert!(std::ptr::eq(
            timed
                .blob_index_cache()
                .unwrap()
                .downcast_ref::<crate::io::BlobIndexCacheContext>()
                .unwrap(),
            blob_index_cache.as_ref()
        ));
    }

    #[test]
    fn merge_row_selection_skips_only_unfiltered_full_coverage() {
        let full = [RowRange::new(0, 9)];
        let joined = [RowRange::new(0, 3), RowRange::new(4, 9)];
        let partial = [RowRange::new(1, 9)];
        let empty = [];

        assert_eq!(merge_row_selection(10, None, Some(&full)), None);
        assert_eq!(merge_row_selection(10, None, Some(&joined)), None);
        assert_eq!(
            merge_row_selection(10, None, Some(&partial)),
            Some(partial.to_vec())
        );
        assert_eq!(merge_row_selection(10, None, Some(&empty)), Some(vec![]));

        let mut deleted = RoaringBitmap::new();
        deleted.insert(3);
        let dv = DeletionVector::from_bitmap(deleted);
        assert_eq!(
            merge_row_selection(10, Some(&dv), Some(&full)),
            Some(vec![RowRange::new(0, 2), RowRange::new(4, 9)])
        );
    }

    #[test]
    fn file_index_selection_coalesces_positions_and_rejects_out_of_range_values() {
        let selection = [0_u32, 1, 3].into_iter().collect();
        assert_eq!(
            file_index_selection_to_local_ranges(&selection, 4).unwrap(),
            Some(vec![RowRange::new(0, 1), RowRange::new(3, 3)])
        );

        let out_of_range = [4_u32].into_iter().collect();
        assert!(matches!(
            file_index_selection_to_local_ranges(&out_of_range, 4),
            Err(Error::FileIndexFormatInvalid { .. })
        ));
    }

    #[test]
    fn dense_file_index_selection_stays_compact_and_fragmented_selection_falls_back() {
        let mut dense = RoaringBitmap::new();
        dense.insert_range(0..=10_000_000);
        assert_eq!(
            file_index_selection_to_local_ranges(&dense, 10_000_001).unwrap(),
            Some(vec![RowRange::new(0, 10_000_000)])
        );

        let fragmented = (0..=MAX_FILE_INDEX_ROW_RANGES as u32)
            .map(|position| position * 2)
            .collect();
        assert_eq!(
            file_index_selection_to_local_ranges(&fragmented, 200_000).unwrap(),
            None
        );
    }

    #[test]
    fn selected_row_ids_are_built_only_when_projected() {
        let huge_selection = [RowRange::new(0, i64::from(i32::MAX))];
        assert_eq!(
            selected_row_ids_for_read(false, Some(10), Some(&huge_selection)),
            None
        );
        assert_eq!(
            selected_row_ids_for_read(
                true,
                Some(10),
                Some(&[RowRange::new(1, 2), RowRange::new(4, 4)]),
            ),
            Some(vec![11, 12, 14])
        );
    }

    #[test]
    fn test_accessors_expose_read_type_and_row_filtering_predicate() {
        use crate::spec::{DataField, DataType, IntType};

        #[derive(Debug)]
        struct NoopRowFilterFactory;

        impl crate::arrow::RowFilterFactory for NoopRowFilterFactory {
            fn create(
                &self,
                _context: crate::arrow::RowFilterContext<'_>,
            ) -> crate::Result<Vec<Box<dyn crate::arrow::RowFilter>>> {
                Ok(Vec::new())
            }
        }

        let fields = vec![DataField::new(
            0,
            "id".to_string(),
            DataType::Int(IntType::new()),
        )];
        let file_io = crate::io::FileIOBuilder::new("memory").build().unwrap();
        let schema_manager = SchemaManager::new(file_io.clone(), "memory:/acc".to_string());

        let no_pred = DataFileReader::new(
            file_io.clone(),
            schema_manager.clone(),
            1,
            fields.clone(),
            fields.clone(),
            vec![],
        );
        assert_eq!(no_pred.read_type().len(), 1);
        assert!(!no_pred.has_row_filtering_predicate());

        let always_true = DataFileReader::new(
            file_io.clone(),
            schema_manager.clone(),
            1,
            fields.clone(),
            fields.clone(),
            vec![crate::spec::Predicate::AlwaysTrue],
        );
        assert!(
            !always_true.has_row_filtering_predicate(),
            "AlwaysTrue is not row-filtering"
        );

        let filtering = PredicateBuilder::new(&fields)
            .equal("id", crate::spec::Datum::Int(10))
            .unwrap();
        let with_filter = DataFileReader::new(
            file_io.clone(),
            schema_manager.clone(),
            1,
            fields.clone(),
            fields.clone(),
            vec![filtering],
        );
        assert!(
            with_filter.has_row_filtering_predicate(),
            "a real (non-AlwaysTrue) predicate is row-filtering"
        );

        let with_external_filter = DataFileReader::new(
            file_io.clone(),
            schema_manager.clone(),
            1,
            fields.clone(),
            fields.clone(),
            vec![],
        )
        .with_row_filter_factory(Arc::new(NoopRowFilterFactory));
        assert!(
            with_external_filter.has_row_filtering_predicate(),
            "an enabled external decoder filter can drop physical rows"
        );
    }

    struct MemOutputFile {
        data: Vec<u8>,
    }

    impl MemOutputFile {
        fn new() -> Self {
            Self { data: Vec::new() }
        }
    }

    impl OutputFile for MemOutputFile {
        fn write(&mut self, data: &[u8]) -> io::Result<()> {
            self.data.extend_from_slice(data);
            Ok(())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }

        fn pos(&self) -> u64 {
            self.data.len() as u64
        }
    }

    fn data_field(id: i32, name: &str, data_type: DataType) -> DataField {
        DataField::new(id, name.to_string(), data_type)
    }

    fn data_file(file_name: &str, file_size: i64, row_count: i64, schema_id: i64) -> DataFileMeta {
        DataFileMeta {
            file_name: file_name.to_string(),
            file_size,
            row_count,
            min_key: Vec::new(),
            max_key: Vec::new(),
            key_stats: BinaryTableStats::empty(),
            value_stats: BinaryTableStats::empty(),
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id,
            level: 0,
            extra_files: Vec::new(),
            creation_time: None,
            delete_row_count: None,
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            column_max_sequence_numbers: None,
        }
    }

    fn write_mosaic(batch: &RecordBatch) -> Bytes {
        let out = MemOutputFile::new();
        let mut writer = MosaicWriter::new(
            out,
            batch.schema().as_ref(),
            WriterOptions {
                compression: COMPRESSION_NONE,
                num_buckets: 2,
                row_group_max_size: u64::MAX,
                ..Default::default()
            },
        )
        .unwrap();
        writer.write_batch(batch).unwrap();
        writer.close().unwrap();
        Bytes::from(writer.output().data.to_vec())
    }

    async fn file_index_bytes(
        path: &str,
        column: &str,
        identifier: &str,
        data_type: DataType,
        options: &Options,
        values: &[Datum],
    ) -> Bytes {
        let mut writer = FileIndexerFactory::create_writer(identifier, data_type, options).unwrap();
        for value in values {
            writer.write(Some(value)).unwrap();
        }
        let indexes = std::collections::HashMap::from([(
            column.to_string(),
            std::collections::HashMap::from([(
                identifier.to_string(),
                Some(writer.serialized_bytes().unwrap()),
            )]),
        )]);
        write_column_indexes(path, indexes)
            .await
            .unwrap()
            .to_input_file()
            .read()
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn test_mosaic_timestamp_zero_read_filter_and_row_selection() {
        use crate::spec::{LocalZonedTimestampType, MapType, TimestampType};
        use arrow_array::builder::{ListBuilder, TimestampMillisecondBuilder};
        use arrow_array::{ArrayRef, MapArray, StructArray, TimestampMillisecondArray};
        use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
        use arrow_schema::DataType as ArrowDataType;

        let fields_at_precision = |precision| {
            let timestamp = DataType::Timestamp(TimestampType::new(precision).unwrap());
            let timestamp_ltz =
                DataType::LocalZonedTimestamp(LocalZonedTimestampType::new(precision).unwrap());
            vec![
                data_field(0, "ts", timestamp.clone()),
                data_field(1, "ts_ltz", timestamp_ltz.clone()),
                data_field(2, "timestamps", DataType::Array(ArrayType::new(timestamp))),
                data_field(
                    3,
                    "timestamp_map",
                    DataType::Map(MapType::new(
                        DataType::VarChar(VarCharType::string_type()),
                        timestamp_ltz,
                    )),
                ),
            ]
        };
        let read_fields = fields_at_precision(0);
        let output_schema = build_target_arrow_schema(&read_fields).unwrap();
        let physical_schema = build_target_arrow_schema(&fields_at_precision(3)).unwrap();
        let ArrowDataType::List(element) = physical_schema.field(2).data_type() else {
            unreachable!()
        };
        let mut timestamps =
            ListBuilder::new(TimestampMillisecondBuilder::new()).with_field(element.clone());
        timestamps.values().append_value(-1_000);
        timestamps.values().append_value(2_000);
        timestamps.append(true);
        timestamps.append(true);
        timestamps.append(false);
        timestamps.values().append_value(3_000);
        timestamps.append(true);

        let ArrowDataType::Map(entries_field, sorted) = physical_schema.field(3).data_type() else {
            unreachable!()
        };
        let ArrowDataType::Struct(entry_fields) = entries_field.data_type() else {
            unreachable!()
        };
        let entries = StructArray::try_new(
            entry_fields.clone(),
            vec![
                Arc::new(StringArray::from(vec!["before", "after", "last"])),
                Arc::new(
                    TimestampMillisecondArray::from(vec![-1_000, 2_000, 3_000])
                        .with_timezone("UTC"),
                ),
            ],
            None,
        )
        .unwrap();
        let timestamp_map = MapArray::try_new(
            entries_field.clone(),
            OffsetBuffer::new(ScalarBuffer::from(vec![0, 2, 2, 2, 3])),
            entries,
            Some(NullBuffer::from(vec![true, true, false, true])),
            *sorted,
        )
        .unwrap();
        let timestamps_millis = vec![Some(-1_000), Some(2_000), None, Some(3_000)];
        let physical_batch = RecordBatch::try_new(
            physical_schema,
            vec![
                Arc::new(TimestampMillisecondArray::from(timestamps_millis.clone())),
                Arc::new(TimestampMillisecondArray::from(timestamps_millis).with_timezone("UTC")),
                Arc::new(timestamps.finish()),
                Arc::new(timestamp_map),
            ],
        )
        .unwrap();
        let expected_columns = physical_batch
            .columns()
            .iter()
            .zip(output_schema.fields())
            .map(|(column, field)| arrow_cast::cast(column, field.data_type()).unwrap())
            .collect::<Vec<ArrayRef>>();
        let data = write_mosaic(&physical_batch);
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/mosaic_timestamp_zero";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.mosaic";
        file_io
            .new_output(&format!("{bucket_path}/{file_name}"))
            .unwrap()
            .write(data.clone())
            .await
            .unwrap();
        let builder = PredicateBuilder::new(&read_fields);
        let cases = vec![
            (Vec::new(), None, vec![0, 1, 2, 3]),
            (
                vec![builder
                    .greater_or_equal(
                        "ts",
                        Datum::Timestamp {
                            millis: 1_500,
                            nanos: 0,
                        },
                    )
                    .unwrap()],
                None,
                vec![1, 3],
            ),
            (
                vec![builder
                    .equal(
                        "ts_ltz",
                        Datum::LocalZonedTimestamp {
                            millis: -1_000,
                            nanos: 0,
                        },
                    )
                    .unwrap()],
                None,
                vec![0],
            ),
            (
                vec![builder
                    .array_contains(
                        "timestamps",
                        Datum::Timestamp {
                            millis: 2_000,
                            nanos: 0,
                        },
                    )
                    .unwrap()],
                None,
                vec![0],
            ),
            (
                Vec::new(),
                Some(vec![RowRange::new(0, 0), RowRange::new(3, 3)]),
                vec![0, 3],
            ),
        ];
        for row_groups in [0, 2] {
            for (predicates, row_ranges, expected_rows) in &cases {
                let mut split = DataSplitBuilder::new()
                    .with_snapshot(1)
                    .with_partition(crate::spec::BinaryRow::new(0))
                    .with_bucket(0)
                    .with_bucket_path(bucket_path.clone())
                    .with_total_buckets(1)
                    .with_data_files(vec![data_file(file_name, data.len() as i64, 4, 1)]);
                if let Some(row_ranges) = row_ranges {
                    split = split.with_row_ranges(row_ranges.clone());
                }
                let batches = DataFileReader::new(
                    file_io.clone(),
                    SchemaManager::new(file_io.clone(), table_path.to_string()),
                    1,
                    read_fields.clone(),
                    read_fields.clone(),
                    predicates.clone(),
                )
                .with_mosaic_prefetch(MosaicPrefetchOptions {
                    row_groups,
                    ..Default::default()
                })
                .read(&[split.build().unwrap()])
                .unwrap()
                .try_collect::<Vec<_>>()
                .await
                .unwrap();
                let actual =
                    arrow_select::concat::concat_batches(&output_schema, &batches).unwrap();
                let expected_indices = arrow_array::UInt32Array::from(expected_rows.clone());
                let expected = RecordBatch::try_new(
                    output_schema.clone(),
                    expected_columns
                        .iter()
                        .map(|column| {
                            arrow_select::take::take(column, &expected_indices, None).unwrap()
                        })
                        .collect(),
                )
                .unwrap();
                assert_eq!(
                    actual, expected,
                    "row_groups={row_groups}, predicates={predicates:?}, row_ranges={row_ranges:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn test_mosaic_physical_missing_column_is_null_filled() {
        let physical_fields = vec![
            data_field(0, "id", DataType::Int(IntType::with_nullable(false))),
            data_field(
                1,
                "name",
                DataType::VarChar(VarCharType::with_nullable(true, 20).unwrap()),
            ),
        ];
        let read_fields = vec![
            physical_fields[0].clone(),
            data_field(
                2,
                "items",
                DataType::Array(ArrayType::new(DataType::Int(IntType::new()))),
            ),
            physical_fields[1].clone(),
        ];

        let physical_arrow_schema = build_target_arrow_schema(&physical_fields).unwrap();
        let batch = RecordBatch::try_new(
            physical_arrow_schema,
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec!["a", "b", "c"])),
            ],
        )
        .unwrap();
        let data = write_mosaic(&batch);

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/mosaic_schema_evolution";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.mosaic";
        let file_path = format!("{bucket_path}/{file_name}");
        file_io
            .new_output(&file_path)
            .unwrap()
            .write(data.clone())
            .await
            .unwrap();

        let table_schema_id = 1;
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![data_file(
                file_name,
                data.len() as i64,
                3,
                table_schema_id,
            )])
            .build()
            .unwrap();
        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());
        let reader = DataFileReader::new(
            file_io,
            schema_manager,
            table_schema_id,
            read_fields.clone(),
            read_fields.clone(),
            Vec::new(),
        );
        let stream = reader.read(&[split]).unwrap();
        let batches = stream.try_collect::<Vec<_>>().await.unwrap();

        assert_eq!(batches.len(), 1);
        let result = &batches[0];
        assert_eq!(result.num_rows(), 3);
        assert_eq!(result.num_columns(), 3);
        assert_eq!(result.schema().field(0).name(), "id");
        assert_eq!(result.schema().field(1).name(), "items");
        assert_eq!(result.schema().field(2).name(), "name");
        assert_eq!(result.column(1).null_count(), 3);

        let ids = result
            .column(0)
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        assert_eq!(ids.values(), &[1, 2, 3]);
        let names = result
            .column(2)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(names.value(0), "a");
        assert_eq!(names.value(2), "c");
    }

    fn pk_fields() -> Vec<DataField> {
        vec![
            data_field(0, "id", DataType::Int(IntType::with_nullable(false))),
            data_field(
                1,
                "name",
                DataType::VarChar(VarCharType::with_nullable(true, 20).unwrap()),
            ),
        ]
    }

    fn pk_batch(ids: Vec<i32>, names: Vec<&str>) -> RecordBatch {
        RecordBatch::try_new(
            build_target_arrow_schema(&pk_fields()).unwrap(),
            vec![
                Arc::new(Int32Array::from(ids)),
                Arc::new(StringArray::from(names)),
            ],
        )
        .unwrap()
    }

    fn write_multi_row_group_mosaic(batches: &[RecordBatch], stats_columns: Vec<String>) -> Bytes {
        let out = MemOutputFile::new();
        let mut writer = MosaicWriter::new(
            out,
            batches[0].schema().as_ref(),
            WriterOptions {
                compression: COMPRESSION_NONE,
                num_buckets: 2,
                // One row group per written batch, so each batch carries its own stats.
                row_group_max_size: 1,
                stats_columns,
                ..Default::default()
            },
        )
        .unwrap();
        for batch in batches {
            writer.write_batch(batch).unwrap();
        }
        writer.close().unwrap();
        Bytes::from(writer.output().data.to_vec())
    }

    fn write_parquet(batch: &RecordBatch) -> Bytes {
        let mut buf = Vec::new();
        let mut writer =
            parquet::arrow::ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
        writer.write(batch).unwrap();
        writer.close().unwrap();
        Bytes::from(buf)
    }

    /// Writes a Paimon deletion-vector blob and returns the `DeletionFile` pointing at it.
    /// Layout matches [`DeletionVector::read_from_bytes`]:
    /// `i32 bitmapLength (magic + bitmap) | i32 magic | bitmap bytes | i32 crc`.
    async fn write_deletion_file(
        file_io: &crate::io::FileIO,
        path: &str,
        deleted_rows: &[u32],
    ) -> DeletionFile {
        // BitmapDeletionVector.MAGIC_NUMBER, see crate::deletion_vector.
        const MAGIC_NUMBER: i32 = 1581511376;
        let mut bitmap = RoaringBitmap::new();
        for row in deleted_rows {
            bitmap.insert(*row);
        }
        let mut bitmap_bytes = Vec::new();
        bitmap.serialize_into(&mut bitmap_bytes).unwrap();

        let bitmap_length = 4 + bitmap_bytes.len() as i32;
        let mut blob = Vec::new();
        blob.extend_from_slice(&bitmap_length.to_be_bytes());
        blob.extend_from_slice(&MAGIC_NUMBER.to_be_bytes());
        blob.extend_from_slice(&bitmap_bytes);
        blob.extend_from_slice(&0i32.to_be_bytes()); // crc, skipped on read
        file_io
            .new_output(path)
            .unwrap()
            .write(Bytes::from(blob))
            .await
            .unwrap();

        DeletionFile::new(
            path.to_string(),
            0,
            bitmap_length as i64,
            Some(deleted_rows.len() as i64),
        )
    }

    fn collect_ids(batches: &[RecordBatch]) -> Vec<i32> {
        batches
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect()
    }

    #[tokio::test]
    async fn test_file_index_bitmap_skip_avoids_opening_data_file_and_disabled_falls_back() {
        let fields = pk_fields();
        let index = file_index_bytes(
            "memory:/file_index_skip_source",
            "id",
            BITMAP_INDEX,
            fields[0].data_type().clone(),
            &Options::new(),
            &[Datum::Int(1), Datum::Int(2)],
        )
        .await;
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/file_index_skip";
        let bucket_path = format!("{table_path}/bucket-0");
        let mut file = data_file("missing.mosaic", 1, 2, 0);
        file.embedded_index = Some(index.to_vec());
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![file])
            .build()
            .unwrap();
        let predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(99))
            .unwrap();
        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());

        let enabled = DataFileReader::new(
            file_io.clone(),
            schema_manager.clone(),
            0,
            fields.clone(),
            fields.clone(),
            vec![predicate.clone()],
        )
        .with_file_index_read_enabled(true)
        .read(std::slice::from_ref(&split))
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
        assert!(enabled.is_empty());

        let disabled = DataFileReader::new(
            file_io,
            schema_manager,
            0,
            fields.clone(),
            fields,
            vec![predicate],
        )
        .with_file_index_read_enabled(false)
        .read(&[split])
        .unwrap()
        .try_collect::<Vec<_>>()
        .await;
        assert!(
            disabled.is_err(),
            "disabled reads must preserve the data path"
        );
    }

    #[tokio::test]
    async fn test_file_index_bitmap_selection_intersects_unordered_split_ranges_and_deletion_vector(
    ) {
        let fields = pk_fields();
        let data = write_mosaic(&pk_batch(
            vec![1, 2, 3, 4, 5, 6],
            vec!["a", "b", "c", "d", "e", "f"],
        ));
        let index = file_index_bytes(
            "memory:/file_index_selection_source",
            "id",
            BITMAP_INDEX,
            fields[0].data_type().clone(),
            &Options::new(),
            &[
                Datum::Int(1),
                Datum::Int(2),
                Datum::Int(3),
                Datum::Int(4),
                Datum::Int(5),
                Datum::Int(6),
            ],
        )
        .await;
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/file_index_selection";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.mosaic";
        file_io
            .new_output(&format!("{bucket_path}/{file_name}"))
            .unwrap()
            .write(data.clone())
            .await
            .unwrap();
        let sidecar_name = format!("{file_name}.index");
        file_io
            .new_output(&format!("{bucket_path}/{sidecar_name}"))
            .unwrap()
            .write(index)
            .await
            .unwrap();
        let dv = write_deletion_file(&file_io, &format!("{table_path}/index/dv-0"), &[3]).await;
        let mut file = data_file(file_name, data.len() as i64, 6, 0);
        file.extra_files = vec![sidecar_name];
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![file])
            .with_data_deletion_files(vec![Some(dv)])
            .with_row_ranges(vec![
                RowRange::new(4, 5),
                RowRange::new(1, 3),
                RowRange::new(2, 4),
            ])
            .build()
            .unwrap();
        let predicate = PredicateBuilder::new(&fields)
            .is_in(
                "id",
                vec![Datum::Int(2), Datum::Int(3), Datum::Int(4), Datum::Int(5)],
            )
            .unwrap();
        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());

        for enabled in [true, false] {
            let batches = DataFileReader::new(
                file_io.clone(),
                schema_manager.clone(),
                0,
                fields.clone(),
                fields.clone(),
                vec![predicate.clone()],
            )
            .with_file_index_read_enabled(enabled)
            .read(std::slice::from_ref(&split))
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
            assert_eq!(collect_ids(&batches), vec![2, 3, 5], "enabled={enabled}");
        }
    }

    #[tokio::test]
    async fn test_file_index_bloom_false_positive_is_removed_by_residual_filter() {
        let fields = pk_fields();
        let data_type = fields[0].data_type().clone();
        let mut bloom_options = Options::new();
        bloom_options.set("items", "1");
        bloom_options.set("fpp", "0.99");
        let mut writer = FileIndexerFactory::create_writer(
            BLOOM_FILTER_INDEX,
            data_type.clone(),
            &bloom_options,
        )
        .unwrap();
        writer.write(Some(&Datum::Int(1))).unwrap();
        let payload = writer.serialized_bytes().unwrap();
        let bloom_reader = FileIndexerFactory::create_reader(
            BLOOM_FILTER_INDEX,
            data_type.clone(),
            payload.clone(),
        )
        .unwrap();
        let false_positive = (2..10_000)
            .find(|candidate| {
                bloom_reader.evaluate(
                    "id",
                    0,
                    &data_type,
                    PredicateOperator::Eq,
                    &[Datum::Int(*candidate)],
                ) == FileIndexResult::Remain
            })
            .expect("high-FPP Bloom filter should have a false positive");
        let indexes = std::collections::HashMap::from([(
            "id".to_string(),
            std::collections::HashMap::from([(BLOOM_FILTER_INDEX.to_string(), Some(payload))]),
        )]);
        let index = write_column_indexes("memory:/file_index_bloom_source", indexes)
            .await
            .unwrap()
            .to_input_file()
            .read()
            .await
            .unwrap();

        let data = write_mosaic(&pk_batch(vec![1], vec!["a"]));
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/file_index_bloom";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.mosaic";
        file_io
            .new_output(&format!("{bucket_path}/{file_name}"))
            .unwrap()
            .write(data.clone())
            .await
            .unwrap();
        let mut file = data_file(file_name, data.len() as i64, 1, 0);
        file.embedded_index = Some(index.to_vec());
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![file])
            .build()
            .unwrap();
        let predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(false_positive))
            .unwrap();
        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());
        let batches = DataFileReader::new(
            file_io,
            schema_manager,
            0,
            fields.clone(),
            fields,
            vec![predicate],
        )
        .with_file_index_read_enabled(true)
        .read(&[split])
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();

        assert!(collect_ids(&batches).is_empty());
    }

    #[tokio::test]
    async fn test_file_index_uses_schema_evolved_file_fields_and_remapped_predicate() {
        let old_schema = TableSchema::new(
            0,
            &Schema::builder()
                .column("old_id", DataType::Int(IntType::new()))
                .build()
                .unwrap(),
        );
        let current_schema = old_schema
            .apply_changes(vec![
                SchemaChange::rename_column("old_id".to_string(), "new_id".to_string()),
                SchemaChange::update_column_type(
                    "new_id".to_string(),
                    DataType::BigInt(BigIntType::new()),
                ),
            ])
            .unwrap();
        let index = file_index_bytes(
            "memory:/file_index_schema_evolution_source",
            "old_id",
            BITMAP_INDEX,
            old_schema.fields()[0].data_type().clone(),
            &Options::new(),
            &[Datum::Int(1), Datum::Int(2)],
        )
        .await;
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/file_index_schema_evolution";
        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());
        let schema_path = schema_manager.schema_path(old_schema.id());
        let schema_dir = schema_path.rsplit_once('/').unwrap().0;
        file_io.mkdirs(schema_dir).await.unwrap();
        file_io
            .new_output(&schema_path)
            .unwrap()
            .write(Bytes::from(serde_json::to_vec(&old_schema).unwrap()))
            .await
            .unwrap();
        let mut file = data_file("missing.mosaic", 1, 2, old_schema.id());
        file.embedded_index = Some(index.to_vec());
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(format!("{table_path}/bucket-0"))
            .with_total_buckets(1)
            .with_data_files(vec![file])
            .build()
            .unwrap();
        let predicate = PredicateBuilder::new(current_schema.fields())
            .equal("new_id", Datum::Long(99))
            .unwrap();

        let batches = DataFileReader::new(
            file_io,
            schema_manager,
            current_schema.id(),
            current_schema.fields().to_vec(),
            current_schema.fields().to_vec(),
            vec![predicate],
        )
        .with_file_index_read_enabled(true)
        .read(&[split])
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();

        assert!(batches.is_empty());
    }

    #[tokio::test]
    async fn test_file_index_narrowing_integer_schema_changes_preserve_query_results() {
        use std::collections::HashMap;

        use apache_avro::types::Value;
        use arrow_array::Int8Array;

        use crate::catalog::Identifier;
        use crate::spec::TinyIntType;
        use crate::table::{Table, TableRead};

        let old_schema = TableSchema::new(
            0,
            &Schema::builder()
                .column("value", DataType::Int(IntType::new()))
                .build()
                .unwrap(),
        );
        let current_schema = old_schema
            .apply_changes(vec![SchemaChange::update_column_type(
                "value".to_string(),
                DataType::TinyInt(TinyIntType::new()),
            )])
            .unwrap();
        let avro_schema = apache_avro::Schema::parse_str(
            r#"{"type":"record","name":"row","fields":[{"name":"value","type":["null","int"]}]}"#,
        )
        .unwrap();
        for (case, values, expected_values) in [
            ("overflow_only", vec![Some(383)], vec![None]),
            (
                "mixed",
                vec![Some(127), Some(383), None],
                vec![Some(127), None, None],
            ),
        ] {
            let mut avro_writer = apache_avro::Writer::new(&avro_schema, Vec::new());
            let mut index_writer = FileIndexerFactory::create_writer(
                BITMAP_INDEX,
                old_schema.fields()[0].data_type().clone(),
                &Options::new(),
            )
            .unwrap();
            for value in &values {
                let (tag, avro_value) = match value {
                    Some(value) => (1, Value::Int(*value)),
                    None => (0, Value::Null),
                };
                avro_writer
                    .append(Value::Record(vec![(
                        "value".to_string(),
                        Value::Union(tag, Box::new(avro_value)),
                    )]))
                    .unwrap();
                index_writer.write(value.map(Datum::Int).as_ref()).unwrap();
            }
            let data = Bytes::from(avro_writer.into_inner().unwrap());
            let indexes = HashMap::from([(
                "value".to_string(),
                HashMap::from([(
                    BITMAP_INDEX.to_string(),
                    Some(index_writer.serialized_bytes().unwrap()),
                )]),
            )]);
            let index = write_column_indexes(&format!("memory:/narrowing_{case}_index"), indexes)
                .await
                .unwrap()
                .to_input_file()
                .read()
                .await
                .unwrap();

            let file_io = FileIOBuilder::new("memory").build().unwrap();
            let table_path = format!("memory:/file_index_narrowing_{case}");
            let bucket_path = format!("{table_path}/bucket-0");
            let file_name = "part-0.avro";
            file_io
                .new_output(&format!("{bucket_path}/{file_name}"))
                .unwrap()
                .write(data.clone())
                .await
                .unwrap();
            let schema_manager = SchemaManager::new(file_io.clone(), table_path.clone());
            let schema_path = schema_manager.schema_path(old_schema.id());
            file_io
                .mkdirs(schema_path.rsplit_once('/').unwrap().0)
                .await
                .unwrap();
            file_io
                .new_output(&schema_path)
                .unwrap()
                .write(Bytes::from(serde_json::to_vec(&old_schema).unwrap()))
                .await
                .unwrap();
            let mut file = data_file(
                file_name,
                data.len() as i64,
                values.len() as i64,
                old_schema.id(),
            );
            file.embedded_index = Some(index.to_vec());
            let split = DataSplitBuilder::new()
                .with_snapshot(1)
                .with_partition(crate::spec::BinaryRow::new(0))
                .with_bucket(0)
                .with_bucket_path(bucket_path)
                .with_total_buckets(1)
                .with_data_files(vec![file])
                .build()
                .unwrap();
            let table = Table::new(
                file_io,
                Identifier::new("default", "narrowing"),
                table_path,
                current_schema.clone(),
                None,
            );
            let builder = PredicateBuilder::new(current_schema.fields());
            for (query, predicate, expected) in [
                ("all", Predicate::AlwaysTrue, expected_values.clone()),
                (
                    "IS NULL",
                    builder.is_null("value").unwrap(),
                    expected_values
                        .iter()
                        .copied()
                        .filter(Option::is_none)
                        .collect(),
                ),
                (
                    "IS NOT NULL",
                    builder.is_not_null("value").unwrap(),
                    expected_values
                        .iter()
                        .copied()
                        .filter(Option::is_some)
                        .collect(),
                ),
                (
                    "= 127",
                    builder.equal("value", Datum::TinyInt(127)).unwrap(),
                    expected_values
                        .iter()
                        .copied()
                        .filter(|value| *value == Some(127))
                        .collect(),
                ),
            ] {
                for enabled in [false, true] {
                    let table = table.copy_with_options(HashMap::from([(
                        "file-index.read.enabled".to_string(),
                        enabled.to_string(),
                    )]));
                    let batches = TableRead::new(
                        &table,
                        current_schema.fields().to_vec(),
                        vec![predicate.clone()],
                    )
                    .to_arrow(std::slice::from_ref(&split))
                    .unwrap()
                    .try_collect::<Vec<_>>()
                    .await
                    .unwrap();
                    let actual = batches
                        .iter()
                        .flat_map(|batch| {
                            batch
                                .column(0)
                                .as_any()
                                .downcast_ref::<Int8Array>()
                                .unwrap()
                                .iter()
                        })
                        .collect::<Vec<_>>();
                    assert_eq!(
                        actual, expected,
                        "case={case}, query={query}, enabled={enabled}"
                    );
                }
            }
        }
    }

    #[tokio::test]
    async fn test_file_index_nested_not_with_added_column_falls_back() {
        let old_schema = TableSchema::new(
            0,
            &Schema::builder()
                .column("id", DataType::Int(IntType::new()))
                .build()
                .unwrap(),
        );
        let current_schema = old_schema
            .apply_changes(vec![SchemaChange::add_column(
                "added".to_string(),
                DataType::Int(IntType::new()),
            )])
            .unwrap();
        let batch = RecordBatch::try_new(
            build_target_arrow_schema(old_schema.fields()).unwrap(),
            vec![Arc::new(Int32Array::from(vec![1, 2]))],
        )
        .unwrap();
        let data = write_mosaic(&batch);
        let index = file_index_bytes(
            "memory:/file_index_nested_not_source",
            "id",
            BITMAP_INDEX,
            old_schema.fields()[0].data_type().clone(),
            &Options::new(),
            &[Datum::Int(1), Datum::Int(2)],
        )
        .await;

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/file_index_nested_not";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.mosaic";
        file_io
            .new_output(&format!("{bucket_path}/{file_name}"))
            .unwrap()
            .write(data.clone())
            .await
            .unwrap();
        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());
        let schema_path = schema_manager.schema_path(old_schema.id());
        let schema_dir = schema_path.rsplit_once('/').unwrap().0;
        file_io.mkdirs(schema_dir).await.unwrap();
        file_io
            .new_output(&schema_path)
            .unwrap()
            .write(Bytes::from(serde_json::to_vec(&old_schema).unwrap()))
            .await
            .unwrap();

        let mut file = data_file(file_name, data.len() as i64, 2, old_schema.id());
        file.embedded_index = Some(index.to_vec());
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![file])
            .build()
            .unwrap();
        let builder = PredicateBuilder::new(current_schema.fields());
        let predicate = Predicate::negate(Predicate::and(vec![
            Predicate::negate(builder.equal("id", Datum::Int(1)).unwrap()),
            builder.equal("added", Datum::Int(2)).unwrap(),
        ]));

        for enabled in [true, false] {
            let batches = DataFileReader::new(
                file_io.clone(),
                schema_manager.clone(),
                current_schema.id(),
                current_schema.fields().to_vec(),
                vec![current_schema.fields()[0].clone()],
                vec![predicate.clone()],
            )
            .with_file_index_read_enabled(enabled)
            .read(std::slice::from_ref(&split))
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
            assert_eq!(collect_ids(&batches), vec![1, 2], "enabled={enabled}");
        }
    }

    /// Deletion vectors are applied format-agnostically by `DataFileReader`; verify a
    /// Mosaic file honors deleted rows end to end.
    #[tokio::test]
    async fn test_mosaic_with_deletion_vector() {
        let fields = pk_fields();
        let data = write_mosaic(&pk_batch(vec![1, 2, 3], vec!["a", "b", "c"]));

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/mosaic_dv";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.mosaic";
        file_io
            .new_output(&format!("{bucket_path}/{file_name}"))
            .unwrap()
            .write(data.clone())
            .await
            .unwrap();
        // Delete row index 1 (id = 2).
        let dv = write_deletion_file(&file_io, &format!("{table_path}/index/dv-0"), &[1]).await;

        let table_schema_id = 1;
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![data_file(
                file_name,
                data.len() as i64,
                3,
                table_schema_id,
            )])
            .with_data_deletion_files(vec![Some(dv)])
            .build()
            .unwrap();
        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());
        let reader = DataFileReader::new(
            file_io,
            schema_manager,
            table_schema_id,
            fields.clone(),
            fields.clone(),
            Vec::new(),
        );
        let batches = reader
            .clone()
            .read(std::slice::from_ref(&split))
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();

        assert_eq!(collect_ids(&batches), vec![1, 3]);
        // Event planners do not attach endpoint DVs, but readers still honor
        // explicitly supplied DVs in a Java streaming frame.
        let mut bytes = split.serialize().unwrap();
        let flag = bytes.len() - 2;
        bytes[flag] = 1;
        let streaming = DataSplit::deserialize(&bytes).unwrap();
        let events = reader
            .read(&[streaming])
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert_eq!(collect_ids(&events), vec![1, 3]);
    }

    /// A Mosaic file and a Parquet file in the same split must both be read and concatenated.
    #[tokio::test]
    async fn test_mosaic_mixed_format_read() {
        let fields = pk_fields();
        let mosaic_data = write_mosaic(&pk_batch(vec![1, 2], vec!["a", "b"]));
        let parquet_data = write_parquet(&pk_batch(vec![3, 4], vec!["c", "d"]));

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/mosaic_mixed";
        let bucket_path = format!("{table_path}/bucket-0");
        for (name, data) in [
            ("part-0.mosaic", &mosaic_data),
            ("part-1.parquet", &parquet_data),
        ] {
            file_io
                .new_output(&format!("{bucket_path}/{name}"))
                .unwrap()
                .write(data.clone())
                .await
                .unwrap();
        }

        let table_schema_id = 1;
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![
                data_file(
                    "part-0.mosaic",
                    mosaic_data.len() as i64,
                    2,
                    table_schema_id,
                ),
                data_file(
                    "part-1.parquet",
                    parquet_data.len() as i64,
                    2,
                    table_schema_id,
                ),
            ])
            .build()
            .unwrap();
        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());
        let reader = DataFileReader::new(
            file_io,
            schema_manager,
            table_schema_id,
            fields.clone(),
            fields.clone(),
            Vec::new(),
        );
        let batches = reader
            .read(&[split])
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();

        let mut ids = collect_ids(&batches);
        ids.sort_unstable();
        assert_eq!(ids, vec![1, 2, 3, 4]);
    }

    /// Exact predicate filtering, deletion vectors and projection must compose correctly:
    /// the predicate selects `id = 10`, the DV deletes that row, and no rows remain.
    #[tokio::test]
    async fn test_mosaic_predicate_dv_projection_combination() {
        let fields = pk_fields();
        let data = write_multi_row_group_mosaic(
            &[
                pk_batch(vec![1, 2], vec!["a", "b"]),
                pk_batch(vec![10, 11], vec!["c", "d"]),
                pk_batch(vec![20, 21], vec!["e", "f"]),
            ],
            vec!["id".to_string()],
        );

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/mosaic_combo";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.mosaic";
        file_io
            .new_output(&format!("{bucket_path}/{file_name}"))
            .unwrap()
            .write(data.clone())
            .await
            .unwrap();
        // Delete global row index 2 (id = 10, first row of the second row group).
        let dv = write_deletion_file(&file_io, &format!("{table_path}/index/dv-0"), &[2]).await;

        let table_schema_id = 1;
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![data_file(
                file_name,
                data.len() as i64,
                6,
                table_schema_id,
            )])
            .with_data_deletion_files(vec![Some(dv)])
            .build()
            .unwrap();

        let predicate: Predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(10))
            .unwrap();
        let read_type = vec![fields[0].clone()];
        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());
        let reader = DataFileReader::new(
            file_io,
            schema_manager,
            table_schema_id,
            fields.clone(),
            read_type,
            vec![predicate],
        );
        let batches = reader
            .read(&[split])
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();

        assert_eq!(batches.iter().map(|b| b.num_columns()).max(), Some(1));
        assert!(collect_ids(&batches).is_empty());
    }
}

/// Parquet-only end-to-end tests for the inline VECTOR (`FixedSizeList`) read path.
///
/// This module is deliberately NOT gated behind the `mosaic` feature: the vector
/// read capability is core parquet support, so these tests must run under a plain
/// `cargo test -p paimon`.
#[cfg(test)]
mod vector_parquet_tests {
    use super::*;
    use crate::arrow::format::FormatFileWriter;
    use crate::arrow::format::ParquetFormatWriter;
    use crate::io::FileIOBuilder;
    use crate::spec::stats::BinaryTableStats;
    use crate::spec::{
        DataFileMeta, DataType, Datum, FloatType, LocalZonedTimestampType, PredicateBuilder,
        TimestampType, VectorType,
    };
    use crate::table::source::DataSplitBuilder;
    use arrow_array::builder::{FixedSizeListBuilder, Float32Builder};
    use arrow_array::{FixedSizeListArray, Float32Array, RecordBatch, TimestampSecondArray};
    use arrow_schema::{DataType as ArrowDataType, Field as ArrowField};
    use futures::TryStreamExt;

    fn data_file(file_name: &str, file_size: i64, row_count: i64, schema_id: i64) -> DataFileMeta {
        DataFileMeta {
            file_name: file_name.to_string(),
            file_size,
            row_count,
            min_key: Vec::new(),
            max_key: Vec::new(),
            key_stats: BinaryTableStats::empty(),
            value_stats: BinaryTableStats::empty(),
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id,
            level: 0,
            extra_files: Vec::new(),
            creation_time: None,
            delete_row_count: None,
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            column_max_sequence_numbers: None,
        }
    }

    /// TRUE end-to-end: write a parquet data file containing a `FixedSizeList<Float32, 2>`
    /// column, then read it back through `DataFileReader` using a Paimon `read_type` whose
    /// field is `DataType::Vector`. This exercises `build_target_arrow_schema`, the parquet
    /// format dispatch (by `.parquet` extension), and the read path's pass-through/cast
    /// logic — not just a raw Arrow/parquet round-trip.
    #[tokio::test]
    async fn test_datafilereader_inline_vector_column_e2e() {
        // Paimon read schema: a single nullable VECTOR<FLOAT> column of length 2.
        let vector_type = VectorType::try_new(true, 2, DataType::Float(FloatType::new())).unwrap();
        let read_fields = vec![DataField::new(
            0,
            "embedding".to_string(),
            DataType::Vector(vector_type),
        )];

        // Build the physical Arrow data via the Paimon -> Arrow conversion under test,
        // so the parquet file matches what the read path expects to materialize.
        let arrow_schema = build_target_arrow_schema(&read_fields).unwrap();

        // Build a FixedSizeList<Float32, 2> column:
        //   row 0 = [1.0, 2.0]   (non-null)
        //   row 1 = null         (null vector row)
        //   row 2 = [3.0, 4.0]   (non-null)
        let mut builder = FixedSizeListBuilder::new(Float32Builder::new(), 2).with_field(Arc::new(
            ArrowField::new("element", ArrowDataType::Float32, true),
        ));
        builder.values().append_value(1.0);
        builder.values().append_value(2.0);
        builder.append(true);
        builder.values().append_value(0.0);
        builder.values().append_value(0.0);
        builder.append(false); // null vector row
        builder.values().append_value(3.0);
        builder.values().append_value(4.0);
        builder.append(true);
        let vec_array = builder.finish();
        let batch = RecordBatch::try_new(arrow_schema.clone(), vec![Arc::new(vec_array)]).unwrap();

        // Write the data file as parquet into the split's bucket path.
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/vector_inline_e2e";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.parquet";
        let file_path = format!("{bucket_path}/{file_name}");
        let output = file_io.new_output(&file_path).unwrap();
        let mut writer: Box<dyn FormatFileWriter> = Box::new(
            ParquetFormatWriter::new(
                &output,
                arrow_schema.clone(),
                "zstd",
                1,
                None,
                &std::collections::HashMap::new(),
            )
            .await
            .unwrap(),
        );
        writer.write(&batch).await.unwrap();
        let file_size = writer.close().await.unwrap().file_size;

        // Build a split whose data file's schema_id matches the table schema_id, so the
        // read path uses `read_type` directly (no SchemaManager lookup needed).
        let table_schema_id = 1;
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![data_file(
                file_name,
                file_size as i64,
                3,
                table_schema_id,
            )])
            .build()
            .unwrap();

        let schema_manager = SchemaManager::new(file_io.clone(), table_path.to_string());
        let reader = DataFileReader::new(
            file_io,
            schema_manager,
            table_schema_id,
            read_fields.clone(),
            read_fields.clone(),
            Vec::new(),
        );
        let batches = reader
            .read(&[split])
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();

        let total_rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(total_rows, 3);
        let result = &batches[0];
        assert_eq!(result.num_columns(), 1);
        assert_eq!(result.schema().field(0).name(), "embedding");

        // The materialized column must be a FixedSizeListArray with the right length,
        // child Float32 values, and null bitmap (one non-null and one null row).
        let fsl = result
            .column(0)
            .as_any()
            .downcast_ref::<FixedSizeListArray>()
            .expect("column should materialize as FixedSizeListArray");
        assert_eq!(fsl.value_length(), 2);
        assert!(fsl.is_valid(0));
        assert!(fsl.is_null(1)); // null vector row preserved through the read path
        assert!(fsl.is_valid(2));

        let row0 = fsl.value(0);
        let floats0 = row0
            .as_any()
            .downcast_ref::<Float32Array>()
            .expect("child should be Float32Array");
        assert_eq!(floats0.values(), &[1.0, 2.0]);

        let row2 = fsl.value(2);
        let floats2 = row2
            .as_any()
            .downcast_ref::<Float32Array>()
            .expect("child should be Float32Array");
        assert_eq!(floats2.values(), &[3.0, 4.0]);
    }

    #[tokio::test]
    async fn test_datafilereader_timestamp_zero_parquet_roundtrip_and_filter() {
        let read_fields = vec![
            DataField::new(
                0,
                "ts".to_string(),
                DataType::Timestamp(TimestampType::new(0).unwrap()),
            ),
            DataField::new(
                1,
                "ts_ltz".to_string(),
                DataType::LocalZonedTimestamp(LocalZonedTimestampType::new(0).unwrap()),
            ),
        ];
        let arrow_schema = build_target_arrow_schema(&read_fields).unwrap();
        let batch = RecordBatch::try_new(
            arrow_schema.clone(),
            vec![
                Arc::new(TimestampSecondArray::from(vec![-1, 2, 3])),
                Arc::new(TimestampSecondArray::from(vec![-1, 2, 3]).with_timezone("UTC")),
            ],
        )
        .unwrap();

        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let table_path = "memory:/timestamp_zero_parquet_e2e";
        let bucket_path = format!("{table_path}/bucket-0");
        let file_name = "part-0.parquet";
        let file_path = format!("{bucket_path}/{file_name}");
        let output = file_io.new_output(&file_path).unwrap();
        let mut writer: Box<dyn FormatFileWriter> = Box::new(
            ParquetFormatWriter::new(
                &output,
                arrow_schema.clone(),
                "zstd",
                1,
                Some(&read_fields),
                &std::collections::HashMap::new(),
            )
            .await
            .unwrap(),
        );
        writer.write(&batch).await.unwrap();
        let file_size = writer.close().await.unwrap().file_size;

        let schema_id = 1;
        let split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(crate::spec::BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(bucket_path)
            .with_total_buckets(1)
            .with_data_files(vec![data_file(file_name, file_size as i64, 3, schema_id)])
            .build()
            .unwrap();
        let predicates = vec![
            PredicateBuilder::new(&read_fields)
                .equal(
                    "ts",
                    Datum::Timestamp {
                        millis: 2_000,
                        nanos: 0,
                    },
                )
                .unwrap(),
            PredicateBuilder::new(&read_fields)
                .equal(
                    "ts_ltz",
                    Datum::LocalZonedTimestamp {
                        millis: 2_000,
                        nanos: 0,
                    },
                )
                .unwrap(),
        ];
        let reader = DataFileReader::new(
            file_io.clone(),
            SchemaManager::new(file_io, table_path.to_string()),
            schema_id,
            read_fields.clone(),
            read_fields,
            predicates,
        );
        let batches = reader
            .read(&[split])
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap();

        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].schema().as_ref(), arrow_schema.as_ref());
        assert_eq!(
            batches[0]
                .column_by_name("ts")
                .unwrap()
                .as_any()
                .downcast_ref::<TimestampSecondArray>()
                .unwrap()
                .values(),
            &[2]
        );
        assert_eq!(
            batches[0]
                .column_by_name("ts_ltz")
                .unwrap()
                .as_any()
                .downcast_ref::<TimestampSecondArray>()
                .unwrap()
                .values(),
            &[2]
        );
    }
}

#[cfg(test)]
mod prune_container_tests {
    use super::*;
    use crate::spec::{ArrayType, DataType, MapType, RowType, VarCharType};

    fn f(id: i32, name: &str, dt: DataType) -> DataField {
        DataField::new(id, name.to_string(), dt)
    }

    fn str_t() -> DataType {
        DataType::VarChar(VarCharType::new(50).unwrap())
    }

    fn row(fields: Vec<DataField>) -> DataType {
        DataType::Row(RowType::new(fields))
    }

    #[test]
    fn keeps_an_array_element_type_verbatim() {
        // Not descended on purpose — see the comment in `prune_data_type`: the
        // Vortex reader would relabel a reordered container positionally. The
        // element is reconciled after decoding instead.
        let data = DataType::Array(ArrayType::new(row(vec![
            f(2, "name", str_t()),
            f(3, "lang", str_t()),
        ])));
        let read = DataType::Array(ArrayType::new(row(vec![f(3, "lang", str_t())])));

        assert_eq!(prune_data_type(&read, &data, false).unwrap().unwrap(), data);
    }

    #[test]
    fn keeps_a_map_value_type_verbatim() {
        let data = DataType::Map(MapType::new(
            str_t(),
            row(vec![f(5, "v", str_t()), f(6, "unit", str_t())]),
        ));
        let read = DataType::Map(MapType::new(str_t(), row(vec![f(5, "v", str_t())])));

        assert_eq!(prune_data_type(&read, &data, false).unwrap().unwrap(), data);
    }
}
