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

//! The rewrite of a primary-key bucket's full compaction, for callers that plan and commit
//! compactions themselves (Java's merge-tree compaction rewrite, into the highest level).
//!
//! [`rewrite_key_value_files`] merges every file of one split (a whole bucket, each file with
//! its deletion vector applied) with the crate's own sort-merge reader and the table's merge
//! engine and `sequence.field`, and writes one row a key as one sorted run of new files at the
//! output level, rolled at about `target-file-size`:
//! - `deduplicate` and `first-row`: the key's winner, **with the sequence number and row kind
//!   it won with**;
//! - `partial-update` and `aggregation`: the merged row, as an INSERT with the sequence number
//!   of the latest row that added to it (what Java's merge functions return).
//!
//! Written into the highest level, a key whose result retracts it is dropped, as Java's
//! compaction drops deletes there.
//!
//! Memory: one batch per input file (the merge's inputs) and the rows of one output file,
//! whatever the bucket's size. A file is written once its rows reach `target-file-size` (as
//! estimated from the inputs' bytes per row) or `write-buffer-size` decoded (default 256 mb,
//! as Java's writers), whichever comes first.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, Int8Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowDataType, Field as ArrowField, Schema as ArrowSchema};
use futures::{StreamExt, TryStreamExt};

use super::audit_log_table::merge::value_merge_with_sequence;
use super::sort_merge::{
    DeduplicateMergeFunction, FirstRowMergeFunction, MergeFunction, SortMergeReaderBuilder,
};
use crate::spec::{
    BigIntType, CoreOptions, DataField, DataFileMeta, DataType, MergeEngine, PartitionComputer,
    RowKind, TinyIntType, SEQUENCE_NUMBER_FIELD_ID, SEQUENCE_NUMBER_FIELD_NAME,
    VALUE_KIND_FIELD_ID, VALUE_KIND_FIELD_NAME,
};
use crate::table::{ArrowRecordBatchStream, DataSplit, Table, TableWrite};
use crate::Result;

/// `file_source` of a file a compaction wrote (Java `FileSource.COMPACT`).
const FILE_SOURCE_COMPACT: i32 = 1;

/// Paimon's option for the memory of a writer's buffer, which bounds the decoded rows of one
/// output file here.
const WRITE_BUFFER_SIZE_OPTION: &str = "write-buffer-size";

/// Its default in Paimon Java (256 mb).
const DEFAULT_WRITE_BUFFER_SIZE: i64 = 256 * 1024 * 1024;

/// Why the files of `table` cannot be rewritten by [`rewrite_key_value_files`], or `None`.
pub fn key_value_rewrite_unsupported(table: &Table) -> Option<String> {
    let schema = table.schema();
    let options = CoreOptions::new(schema.options());
    if schema.primary_keys().is_empty() {
        return Some("it has no primary key".into());
    }
    if let Err(e) = options.merge_engine() {
        return Some(format!("its merge-engine cannot be read: {e}"));
    }
    if options.changelog_producer() != "none" {
        return Some(format!(
            "changelog-producer {} needs changelog files from a compaction; not written yet",
            options.changelog_producer()
        ));
    }
    if options.bucket() == -2 {
        return Some("a postpone table (bucket = -2) compacts across buckets".into());
    }
    if schema.fields().iter().any(|f| f.data_type().is_blob_type()) {
        return Some("it has BLOB columns".into());
    }
    None
}

/// Merges every file of `split` (one partition and bucket of primary-key table `table`) and
/// writes each key's winner, with its own sequence number and row kind, as one sorted run of
/// new files at `output_level`; keys whose winner retracts them are dropped (pass the table's
/// highest level, `num-levels - 1`, so that no older version of the key is left below). The
/// files are written but not committed; on an error, the files written so far are deleted.
pub async fn rewrite_key_value_files(
    table: &Table,
    split: &DataSplit,
    output_level: i32,
) -> Result<Vec<DataFileMeta>> {
    if let Some(reason) = key_value_rewrite_unsupported(table) {
        return Err(crate::Error::Unsupported {
            message: format!(
                "compacting table {} is not supported: {reason}",
                table.identifier().full_name()
            ),
        });
    }
    let schema = table.schema();
    let options = CoreOptions::new(schema.options());
    let partition_bytes = split.partition().to_serialized_bytes();
    let partition_path = if schema.partition_keys().is_empty() {
        String::new()
    } else {
        PartitionComputer::new(
            schema.partition_keys(),
            schema.fields(),
            options.partition_default_name(),
            options.legacy_partition_name(),
        )?
        .generate_partition_path(split.partition())?
    };
    let mut writer = TableWrite::new(table, "compaction".to_string())?
        .key_value_writer(partition_path, split.bucket(), &partition_bytes)
        .await?;

    // Rows a file, from the inputs' bytes per row, so files come out near target-file-size.
    let (bytes, rows) = split
        .data_files()
        .iter()
        .fold((0i64, 0i64), |(b, r), f| (b + f.file_size, r + f.row_count));
    let bytes_per_row = if rows > 0 { (bytes / rows).max(1) } else { 1 };
    let rows_per_file = usize::try_from(
        (options.target_file_size() / bytes_per_row)
            .clamp(1, options.target_file_row_num()?.max(1)),
    )
    .unwrap_or(usize::MAX);

    // The decoded rows one output file may hold in memory: Java's `write-buffer-size` (a
    // writer's memory). A file is written when it reaches either bound.
    let max_pending_bytes = schema
        .options()
        .get(WRITE_BUFFER_SIZE_OPTION)
        .and_then(|v| crate::spec::parse_memory_size(v))
        .unwrap_or(DEFAULT_WRITE_BUFFER_SIZE)
        .max(1);
    let max_pending_bytes = usize::try_from(max_pending_bytes).unwrap_or(usize::MAX);

    let written: Result<Vec<DataFileMeta>> = async {
        let mut merged = merged_key_values(table, split)?;
        let mut pending: Vec<RecordBatch> = Vec::new();
        let mut pending_rows = 0usize;
        let mut pending_bytes = 0usize;
        let mut files = Vec::new();
        while let Some(batch) = merged.try_next().await? {
            if batch.num_rows() == 0 {
                continue;
            }
            pending_rows += batch.num_rows();
            pending_bytes += batch.get_array_memory_size();
            pending.push(batch);
            if pending_rows >= rows_per_file || pending_bytes >= max_pending_bytes {
                let batch = concat(&pending)?;
                pending.clear();
                pending_rows = 0;
                pending_bytes = 0;
                files.push(write_file(&mut writer, &batch, output_level).await?);
            }
        }
        if pending_rows > 0 {
            let batch = concat(&pending)?;
            files.push(write_file(&mut writer, &batch, output_level).await?);
        }
        Ok(files)
    }
    .await;
    match written {
        Ok(files) => Ok(files),
        Err(error) => {
            writer.abort().await;
            Err(error)
        }
    }
}

/// The merged key-value rows of `split`: `[_SEQUENCE_NUMBER, _VALUE_KIND, user columns...]`,
/// one row a key, in key order.
fn merged_key_values(table: &Table, split: &DataSplit) -> Result<ArrowRecordBatchStream> {
    let schema = table.schema();
    let options = CoreOptions::new(schema.options());
    let read = table.new_read_builder().new_read()?;
    let vectors = split.data_deletion_files();
    let mut streams: Vec<ArrowRecordBatchStream> = Vec::new();
    for (index, file) in split.data_files().iter().enumerate() {
        let vector = vectors.and_then(|v| v.get(index).cloned().flatten());
        let one = DataSplit::builder()
            .with_snapshot(split.snapshot_id())
            .with_partition(split.partition().clone())
            .with_bucket(split.bucket())
            .with_bucket_path(split.bucket_path().to_string())
            .with_total_buckets(split.total_buckets())
            .with_data_files(vec![file.clone()])
            .with_data_deletion_files(vec![vector])
            .with_raw_convertible(false)
            .build()?;
        let stream = read.to_arrow_key_values(&[one])?;
        streams.push(Box::pin(
            stream.map(|batch| batch.and_then(|b| to_key_value(&b))),
        ));
    }
    // The inputs' columns: _SEQUENCE_NUMBER, _VALUE_KIND, then the table's fields.
    let sequence_field = DataField::new(
        SEQUENCE_NUMBER_FIELD_ID,
        SEQUENCE_NUMBER_FIELD_NAME.to_string(),
        DataType::BigInt(BigIntType::new()),
    );
    let kind_field = DataField::new(
        VALUE_KIND_FIELD_ID,
        VALUE_KIND_FIELD_NAME.to_string(),
        DataType::TinyInt(TinyIntType::new()),
    );
    let mut input_fields = vec![sequence_field, kind_field];
    input_fields.extend(schema.fields().iter().cloned());
    let input = crate::arrow::build_target_arrow_schema(&input_fields)?;
    let position = |name: &str| {
        input_fields
            .iter()
            .position(|f| f.name() == name)
            .ok_or_else(|| crate::Error::DataInvalid {
                message: format!("{name} is not a column"),
                source: None,
            })
    };
    let trimmed_keys = schema.trimmed_primary_keys();
    let key_indices = trimmed_keys
        .iter()
        .map(|key| position(key))
        .collect::<Result<Vec<_>>>()?;
    let sequence_indices = options
        .sequence_fields()
        .iter()
        .map(|field| position(field))
        .collect::<Result<Vec<_>>>()?;
    // The merge emits the key columns, then the value columns: the rest, in input order.
    let value_indices: Vec<usize> = (0..input_fields.len())
        .filter(|i| !key_indices.contains(i))
        .collect();
    let output_order: Vec<usize> = key_indices.iter().chain(&value_indices).copied().collect();
    let output_fields: Vec<DataField> = output_order
        .iter()
        .map(|&i| input_fields[i].clone())
        .collect();
    let engine = options.merge_engine()?;
    let merge: Box<dyn MergeFunction> = match engine {
        MergeEngine::FirstRow => Box::new(FirstRowMergeFunction {
            ignore_delete: options.ignore_delete(),
        }),
        MergeEngine::Deduplicate => Box::new(DeduplicateMergeFunction),
        MergeEngine::PartialUpdate | MergeEngine::Aggregation => {
            let sequence_fields: Vec<String> = options
                .sequence_fields()
                .iter()
                .map(|f| f.to_string())
                .collect();
            let keys = if engine == MergeEngine::Aggregation {
                schema.primary_keys().to_vec()
            } else {
                trimmed_keys.clone()
            };
            value_merge_with_sequence(
                engine,
                schema.options(),
                &table.identifier().full_name(),
                schema.fields(),
                &keys,
                &sequence_fields,
                &output_fields,
            )?
        }
    };
    let merged = SortMergeReaderBuilder::new(
        streams,
        input.clone(),
        key_indices,
        0,
        1,
        sequence_indices,
        value_indices,
        crate::arrow::build_target_arrow_schema(&output_fields)?,
        merge,
    )
    .with_user_sequence_descending(!options.sequence_field_sort_order_is_ascending())
    .build()?;
    // Back to input order.
    let columns: Vec<usize> = (0..input_fields.len())
        .map(|i| output_order.iter().position(|&o| o == i).unwrap_or(i))
        .collect();
    Ok(Box::pin(merged.map(move |batch| {
        batch.and_then(|b| {
            b.project(&columns).map_err(|e| crate::Error::DataInvalid {
                message: format!("projecting merged rows: {e}"),
                source: None,
            })
        })
    })))
}

/// A key-value read's batch (`rowkind` text, `_SEQUENCE_NUMBER`, user columns) as the merge
/// takes it: `_SEQUENCE_NUMBER`, `_VALUE_KIND` (its byte), user columns.
fn to_key_value(batch: &RecordBatch) -> Result<RecordBatch> {
    let invalid = |message: String| crate::Error::DataInvalid {
        message,
        source: None,
    };
    let kinds = batch
        .column(0)
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| invalid("a key-value read's first column is not its row kind".into()))?;
    let kind_bytes = (0..kinds.len())
        .map(|i| RowKind::from_short_string(kinds.value(i)).map(RowKind::to_value))
        .collect::<Result<Vec<i8>>>()?;
    let mut columns: Vec<ArrayRef> = vec![
        batch.column(1).clone(),
        Arc::new(Int8Array::from(kind_bytes)),
    ];
    columns.extend(batch.columns()[2..].iter().cloned());
    let mut fields: Vec<Arc<ArrowField>> = vec![
        Arc::new(ArrowField::new(
            SEQUENCE_NUMBER_FIELD_NAME,
            ArrowDataType::Int64,
            false,
        )),
        Arc::new(ArrowField::new(
            VALUE_KIND_FIELD_NAME,
            ArrowDataType::Int8,
            false,
        )),
    ];
    fields.extend(batch.schema().fields()[2..].iter().cloned());
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns)
        .map_err(|e| invalid(format!("rebuilding a key-value batch: {e}")))
}

fn concat(batches: &[RecordBatch]) -> Result<RecordBatch> {
    arrow_select::concat::concat_batches(&batches[0].schema(), batches).map_err(|e| {
        crate::Error::DataInvalid {
            message: format!("concatenating merged rows: {e}"),
            source: None,
        }
    })
}

/// Writes merged rows `[_SEQUENCE_NUMBER, _VALUE_KIND, user columns...]` as one file.
async fn write_file(
    writer: &mut super::kv_file_writer::KeyValueFileWriter,
    batch: &RecordBatch,
    level: i32,
) -> Result<DataFileMeta> {
    let seq = batch
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| crate::Error::DataInvalid {
            message: "merged rows lack their sequence numbers".into(),
            source: None,
        })?
        .clone();
    // The writer takes the user columns with the row kind as a `_VALUE_KIND` column.
    let mut columns: Vec<ArrayRef> = batch.columns()[2..].to_vec();
    columns.push(batch.column(1).clone());
    let mut fields: Vec<Arc<ArrowField>> = batch.schema().fields()[2..].to_vec();
    fields.push(batch.schema().fields()[1].clone());
    let user = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).map_err(|e| {
        crate::Error::DataInvalid {
            message: format!("building the rows of a compacted file: {e}"),
            source: None,
        }
    })?;
    writer
        .write_sorted_file(&user, &seq, level, FILE_SOURCE_COMPACT)
        .await
}
