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

//! The rewrite of an append table's compaction task, for callers that plan and commit
//! compactions themselves (Java `AppendCompactTask`'s rewrite).
//!
//! [`rewrite_append_files`] reads the files of one split, with their deletion vectors applied,
//! and writes the rows that are still live as new files of the same partition and bucket,
//! rolled at `target-file-size`, in the table's file format and compression. The result files
//! are marked as compaction output (`file_source` COMPACT) and carry, as Java's rewrite does,
//! sequence numbers counted on from the first input's smallest one. The caller commits them
//! as a compact increment (`compact_before` the split's files, `compact_after` the results).
//! Memory is bounded by the reader's batches and the writer's buffer, not by the bucket.

use futures::TryStreamExt;

use crate::spec::{CoreOptions, DataFileMeta, PartitionComputer};
use crate::table::data_file_writer::DataFileWriter;
use crate::table::{DataSplit, Table};
use crate::Result;

/// `file_source` of a file a compaction wrote (Java `FileSource.COMPACT`).
const FILE_SOURCE_COMPACT: i32 = 1;

/// Why the files of `table` cannot be rewritten by [`rewrite_append_files`], or `None`.
pub fn append_rewrite_unsupported(table: &Table) -> Option<String> {
    let schema = table.schema();
    let options = CoreOptions::new(schema.options());
    if !schema.trimmed_primary_keys().is_empty() {
        return Some("it has a primary key (its compaction merges keys)".into());
    }
    if options.data_evolution_enabled() {
        return Some("it is a data-evolution table".into());
    }
    if options.is_format_table() {
        return Some("it is a format table (it has no snapshots to compact)".into());
    }
    if schema.fields().iter().any(|f| f.data_type().is_blob_type()) {
        return Some("it has BLOB columns".into());
    }
    None
}

/// Rewrites the files of `split` (one partition and bucket of append table `table`, with
/// their deletion vectors) into new files holding exactly their live rows, in order. Returns
/// the new files; none when no row is live. The files are written but not committed: on an
/// error, the files written so far are deleted.
///
/// Refuses primary-key tables (their compaction merges keys), data-evolution and format
/// tables, and tables with BLOB columns.
pub async fn rewrite_append_files(table: &Table, split: &DataSplit) -> Result<Vec<DataFileMeta>> {
    if let Some(reason) = append_rewrite_unsupported(table) {
        return Err(crate::Error::Unsupported {
            message: format!(
                "compacting table {} is not supported: {reason}",
                table.identifier().full_name()
            ),
        });
    }
    let schema = table.schema();
    let options = CoreOptions::new(schema.options());
    options.ensure_read_authorized()?;

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
    let mut writer = DataFileWriter::new(
        table.file_io().clone(),
        table.location().to_string(),
        partition_path,
        split.bucket(),
        schema.id(),
        options.target_file_size(),
        options.file_compression().to_string(),
        options.file_compression_zstd_level(),
        options.write_parquet_buffer_size(),
        options.file_format().to_string(),
        schema.fields().to_vec(),
        schema.options().clone(),
        Some(FILE_SOURCE_COMPACT),
        None,
        None,
    )?
    .with_target_file_row_num(options.target_file_row_num()?);

    let written: Result<Vec<DataFileMeta>> = async {
        let mut batches = table
            .new_read_builder()
            .new_read()?
            .to_arrow(std::slice::from_ref(split))?;
        while let Some(batch) = batches.try_next().await? {
            if batch.num_rows() > 0 {
                writer.write(&batch).await?;
            }
        }
        writer.prepare_commit().await
    }
    .await;
    let mut files = match written {
        Ok(files) => files,
        Err(error) => {
            writer.abort().await;
            return Err(error);
        }
    };
    let mut sequence = split
        .data_files()
        .iter()
        .map(|f| f.min_sequence_number)
        .min()
        .unwrap_or(0);
    for file in &mut files {
        file.min_sequence_number = sequence;
        sequence = sequence.saturating_add(file.row_count.max(1));
        file.max_sequence_number = sequence - 1;
    }
    Ok(files)
}
