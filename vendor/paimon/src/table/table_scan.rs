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

//! TableScan for full table scan.
//!
//! Reference: [pypaimon.read.table_scan.TableScan](https://github.com/apache/paimon/blob/release-1.3/paimon-python/pypaimon/read/table_scan.py)
//! and [FullStartingScanner](https://github.com/apache/paimon/blob/release-1.3/paimon-python/pypaimon/read/scanner/full_starting_scanner.py).

use super::bucket_filter::compute_target_buckets;
use super::chunk_shuffle::{chunk_shuffle_splits, ChunkShuffle};
use super::format_table_scan::FormatTableScan;
use super::global_index_scanner::RowRangeIndex;
use super::global_index_types::normalize_queryable_global_index_type;
use super::kv_file_reader::retain_primary_key_conjuncts;
use super::partition_filter::PartitionFilter;
use super::row_position_selection::RowPositionSelection;
use super::stats_filter::{
    data_evolution_group_matches_predicates_for_table, data_file_matches_predicates_for_table,
    data_file_matches_predicates_with_key_stats, group_by_overlapping_row_id, ResolvedStatsSchema,
};
use super::{find_field_id_by_name, Table};
use crate::io::FileIO;
use crate::spec::{
    avro::SharedSchemaCache, bucket_path, BinaryRow, BucketFunctionType, CoreOptions, DataField,
    DataFileMeta, FileKind, GlobalIndexSearchMode, IndexManifest, IndexManifestEntry,
    ManifestEntry, ManifestFileMeta, ManifestSidecar, PartitionComputer, Predicate, Snapshot,
    ROW_ID_FIELD_ID, ROW_ID_FIELD_NAME, SEQUENCE_NUMBER_FIELD_ID, SEQUENCE_NUMBER_FIELD_NAME,
    VALUE_KIND_FIELD_ID, VALUE_KIND_FIELD_NAME,
};
use crate::table::bin_pack::{pack_for_ordered, split_for_batch};
use crate::table::index_file_path::IndexFileLocation;
use crate::table::merge_tree_split_generator::{
    merge_tree_split_for_batch, KeyComparator, SplitGroup,
};
use crate::table::schema_manager::SchemaManager;
use crate::table::source::{
    any_range_overlaps_file, intersect_ranges_with_file, merge_row_ranges, DataSplit,
    DataSplitBuilder, DeletionFile, PartitionBucket, Plan, RowRange,
};
use crate::table::ScanTrace;
use futures::{StreamExt, TryStreamExt};
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

#[path = "audit_log_table/scan.rs"]
mod audit;
pub use audit::AuditLogScan;

/// Path segment for manifest directory under table.
const MANIFEST_DIR: &str = "manifest";
/// Path segment for index directory under table.
const DELETION_VECTORS_INDEX_TYPE: &str = "DELETION_VECTORS";

#[derive(Debug, Default)]
struct ManifestReadCounters {
    entries_read: usize,
    pruned_by_bucket: usize,
    pruned_by_partition: usize,
    after_entry_pruning: usize,
    pruned_by_level: usize,
    pruned_by_row_ranges: usize,
    pruned_by_data_stats: usize,
    after_manifest_filters: usize,
}

impl ManifestReadCounters {
    fn merge(&mut self, other: Self) {
        self.entries_read += other.entries_read;
        self.pruned_by_bucket += other.pruned_by_bucket;
        self.pruned_by_partition += other.pruned_by_partition;
        self.after_entry_pruning += other.after_entry_pruning;
        self.pruned_by_level += other.pruned_by_level;
        self.pruned_by_row_ranges += other.pruned_by_row_ranges;
        self.pruned_by_data_stats += other.pruned_by_data_stats;
        self.after_manifest_filters += other.after_manifest_filters;
    }
}

/// Reads a manifest list file (Avro) and returns manifest file metas.
async fn read_manifest_list(
    file_io: &FileIO,
    table_path: &str,
    list_name: &str,
) -> crate::Result<Vec<crate::spec::ManifestFileMeta>> {
    if list_name.is_empty() {
        return Ok(Vec::new());
    }
    let path = format!(
        "{}/{}/{}",
        table_path.trim_end_matches('/'),
        MANIFEST_DIR,
        list_name
    );
    let input = file_io.new_input(&path)?;
    let bytes = input.read().await?;
    crate::spec::avro::from_avro_bytes_fast::<crate::spec::ManifestFileMeta>(&bytes)
}

struct ManifestSidecarPruning<'a> {
    row_range_index: Option<&'a RowRangeIndex>,
    partition_filter: Option<&'a PartitionFilter>,
    partition_arity: usize,
    bucket_predicate: Option<&'a Predicate>,
    bucket_key_fields: &'a [DataField],
    bucket_function_type: BucketFunctionType,
}

impl ManifestSidecarPruning<'_> {
    fn has_filter(&self) -> bool {
        self.row_range_index.is_some()
            || self.partition_filter.is_some()
            || self.bucket_predicate.is_some()
    }
}

/// Read a complete manifest or a sidecar-selected OCF stream.
///
/// Callers decide whether row-range block pruning is safe by supplying or omitting
/// `row_range_index`; incremental paths must validate DELETE entries before pruning them.
async fn read_manifest_bytes_with_sidecar(
    file_io: &FileIO,
    path: &str,
    manifest: &ManifestFileMeta,
    enabled: bool,
    pruning: ManifestSidecarPruning<'_>,
) -> crate::Result<bytes::Bytes> {
    if !enabled || !pruning.has_filter() {
        return file_io.new_input(path)?.read().await;
    }

    let ManifestSidecarPruning {
        row_range_index,
        partition_filter,
        partition_arity,
        bucket_predicate,
        bucket_key_fields,
        bucket_function_type,
    } = pruning;
    let row_filter = |start, end| row_range_index.is_some_and(|index| index.intersects(start, end));
    let mut partition_block_filter = |partition: &[u8]| {
        partition_filter
            .and_then(|filter| filter.matches_entry(partition).ok())
            .unwrap_or(true)
    };
    let mut bucket_cache: HashMap<i32, Option<HashSet<i32>>> = HashMap::new();
    let mut bucket_block_filter = |bucket: i32, total_buckets: i32| {
        let Some(predicate) = bucket_predicate else {
            return true;
        };
        bucket_cache
            .entry(total_buckets)
            .or_insert_with(|| {
                compute_target_buckets(
                    predicate,
                    bucket_key_fields,
                    bucket_function_type,
                    total_buckets,
                )
            })
            .as_ref()
            .is_none_or(|targets| targets.contains(&bucket))
    };
    let selection = ManifestSidecar::read_with_filters(
        file_io,
        path,
        manifest,
        row_range_index.map(|_| &row_filter as &(dyn Fn(i64, i64) -> bool + Sync)),
        partition_filter
            .map(|_| &mut partition_block_filter as &mut (dyn FnMut(&[u8]) -> bool + Send)),
        Some(partition_arity),
        bucket_predicate
            .map(|_| &mut bucket_block_filter as &mut (dyn FnMut(i32, i32) -> bool + Send)),
    )
    .await;

    match selection.as_ref() {
        Some(selection) => selection.read_bytes(file_io, path).await,
        None => file_io.new_input(path)?.read().await,
    }
}

fn validate_incremental_entries(entries: &[ManifestEntry]) -> crate::Result<()> {
    if entries.iter().any(|entry| *entry.kind() != FileKind::Add) {
        return Err(crate::Error::DataInvalid {
            message: "Incremental delta manifests must contain only ADD entries".into(),
            source: None,
        });
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum IncrementalSplitMode {
    Batch,
    Streaming,
}

enum ManifestListSource<'a> {
    Snapshot(&'a Snapshot),
    AppendDeltas(&'a [Snapshot]),
}

/// Reads all manifest entries for a snapshot (base + delta manifest lists, then each manifest file).
/// Applies filters during concurrent manifest reading to reduce entries early:
/// - Manifest-file-level partition stats pruning (skip entire manifest files)
/// - Level-0 filtering per entry (DV mode or FirstRow engine)
/// - Partition predicate filtering per entry
/// - Data-level stats pruning per entry (current schema only, cross-schema fail-open)
#[allow(clippy::too_many_arguments)]
async fn read_all_manifest_entries(
    file_io: &FileIO,
    table_path: &str,
    source: ManifestListSource<'_>,
    skip_level_zero: bool,
    scan_all_files: bool,
    has_primary_keys: bool,
    partition_filter: Option<&PartitionFilter>,
    partition_fields: &[DataField],
    data_predicates: &[Predicate],
    key_predicates: &[Predicate],
    current_schema_id: i64,
    schema_fields: &[DataField],
    key_fields: &[String],
    bucket_predicate: Option<&Predicate>,
    bucket_key_fields: &[DataField],
    bucket_function_type: BucketFunctionType,
    row_range_index: Option<&RowRangeIndex>,
    manifest_sidecar_enabled: bool,
    manifest_parallelism: usize,
    trace: Option<&mut ScanTrace>,
) -> crate::Result<Vec<ManifestEntry>> {
    let incremental = matches!(&source, ManifestListSource::AppendDeltas(_));
    let (mut manifest_files, delta) = match source {
        ManifestListSource::Snapshot(snapshot) => futures::try_join!(
            read_manifest_list(file_io, table_path, snapshot.base_manifest_list()),
            read_manifest_list(file_io, table_path, snapshot.delta_manifest_list()),
        )?,
        ManifestListSource::AppendDeltas(snapshots) => {
            let names = snapshots
                .iter()
                .map(|snapshot| snapshot.delta_manifest_list().to_string())
                .collect::<Vec<_>>();
            let delta = futures::stream::iter(names)
                .map(|name| async move { read_manifest_list(file_io, table_path, &name).await })
                .buffered(manifest_parallelism)
                .try_fold(Vec::new(), |mut files, next| async move {
                    files.extend(next);
                    Ok(files)
                })
                .await?;
            (Vec::new(), delta)
        }
    };
    let mut trace = trace;
    if let Some(trace) = trace.as_deref_mut() {
        trace.record_manifest_lists(manifest_files.len(), delta.len());
    }
    manifest_files.extend(delta);

    // Manifest-file-level partition stats pruning: skip entire manifest files
    // whose partition range doesn't overlap the partition predicate.
    let manifest_files_before_partition_pruning = manifest_files.len();
    if let Some(pf) = partition_filter {
        manifest_files.retain(|meta| pf.matches_manifest(meta, partition_fields));
    }
    if let Some(trace) = trace.as_deref_mut() {
        trace.manifest_files_before_partition_pruning = manifest_files_before_partition_pruning;
        trace.manifest_files_after_partition_pruning = manifest_files.len();
    }

    retain_manifest_buckets(
        &mut manifest_files,
        has_primary_keys && !scan_all_files,
        bucket_predicate,
        bucket_key_fields,
        bucket_function_type,
    );

    if let Some(index) = row_range_index {
        let before = manifest_files.len();
        retain_manifest_row_ranges(&mut manifest_files, index);
        if let Some(trace) = trace.as_deref_mut() {
            trace.manifest_files_pruned_by_row_ranges = before - manifest_files.len();
        }
    }

    let manifest_path_prefix = format!("{}/{}", table_path.trim_end_matches('/'), MANIFEST_DIR);
    let shared_cache = SharedSchemaCache::new();
    let (all_entries, mut counters) = futures::stream::iter(manifest_files)
        .map(|meta| {
            let path = format!("{}/{}", manifest_path_prefix, meta.file_name());
            let cache = shared_cache.clone();
            async move {
                // Incremental delta validation must observe every ADD/DELETE before
                // row-range pruning; keep its existing post-validation row filter.
                let sidecar_row_index = (!incremental).then_some(row_range_index).flatten();
                let content = read_manifest_bytes_with_sidecar(
                    file_io,
                    &path,
                    &meta,
                    manifest_sidecar_enabled,
                    ManifestSidecarPruning {
                        row_range_index: sidecar_row_index,
                        partition_filter,
                        partition_arity: partition_fields.len(),
                        bucket_predicate,
                        bucket_key_fields,
                        bucket_function_type,
                    },
                )
                .await?;

                // Per-task bucket cache (few distinct total_buckets values per manifest).
                let mut bucket_cache: HashMap<i32, Option<HashSet<i32>>> = HashMap::new();
                let mut counters = ManifestReadCounters::default();

                let entries = crate::spec::avro::from_manifest_bytes_filtered_shared(
                    &content,
                    &cache,
                    &mut |_kind, partition_bytes, bucket, total_buckets| {
                        counters.entries_read += 1;
                        // Bucket filter (negative bucket = unassigned)
                        if has_primary_keys && !scan_all_files && bucket < 0 {
                            counters.pruned_by_bucket += 1;
                            return false;
                        }
                        if let Some(pred) = bucket_predicate {
                            let targets = bucket_cache.entry(total_buckets).or_insert_with(|| {
                                compute_target_buckets(
                                    pred,
                                    bucket_key_fields,
                                    bucket_function_type,
                                    total_buckets,
                                )
                            });
                            if let Some(targets) = targets {
                                if !targets.contains(&bucket) {
                                    counters.pruned_by_bucket += 1;
                                    return false;
                                }
                            }
                        }

                        // Partition filter
                        if let Some(pf) = partition_filter {
                            match pf.matches_entry(partition_bytes) {
                                Ok(false) => {
                                    counters.pruned_by_partition += 1;
                                    return false;
                                }
                                Ok(true) => {}
                                Err(_) => {}
                            }
                        }

                        true
                    },
                )?;
                counters.after_entry_pruning = entries.len();

                // Post-filter: level-0 and data predicates (need DataFileMeta)
                let mut filtered = Vec::with_capacity(entries.len());
                for entry in entries {
                    if skip_level_zero && has_primary_keys && entry.file().level == 0 {
                        counters.pruned_by_level += 1;
                        continue;
                    }
                    if (!data_predicates.is_empty() || !key_predicates.is_empty())
                        && !data_file_matches_predicates_with_key_stats(
                            entry.file(),
                            data_predicates,
                            key_predicates,
                            current_schema_id,
                            schema_fields,
                            key_fields,
                        )
                    {
                        counters.pruned_by_data_stats += 1;
                        continue;
                    }
                    filtered.push(entry);
                }
                counters.after_manifest_filters = filtered.len();
                Ok::<_, crate::Error>((filtered, counters))
            }
        })
        // Keep manifest read concurrency bounded by the table option. `try_fold`
        // releases each yielded result after merging it, so peak retained results
        // are the accumulator plus at most this bounded set of in-flight reads.
        .buffered(manifest_parallelism)
        .try_fold(
            (Vec::new(), ManifestReadCounters::default()),
            |(mut all_entries, mut counters), (entries, manifest_counters)| async move {
                counters.merge(manifest_counters);
                all_entries.extend(entries);
                Ok((all_entries, counters))
            },
        )
        .await?;
    let mut all_entries = if incremental {
        validate_incremental_entries(&all_entries)?;
        all_entries
    } else {
        merge_manifest_entries(all_entries)
    };
    let manifest_entries_after_merge = all_entries.len();
    if let Some(index) = row_range_index {
        let before = all_entries.len();
        all_entries = retain_manifest_entry_row_ranges(all_entries, index);
        counters.pruned_by_row_ranges = before - all_entries.len();
    }
    if let Some(trace) = trace {
        trace.manifest_entries_read = counters.entries_read;
        trace.manifest_entries_pruned_by_bucket = counters.pruned_by_bucket;
        trace.manifest_entries_pruned_by_partition = counters.pruned_by_partition;
        trace.manifest_entries_after_entry_pruning = counters.after_entry_pruning;
        trace.manifest_entries_pruned_by_level = counters.pruned_by_level;
        trace.manifest_entries_pruned_by_row_ranges = counters.pruned_by_row_ranges;
        trace.manifest_entries_pruned_by_data_stats = counters.pruned_by_data_stats;
        trace.manifest_entries_after_manifest_filters = counters.after_manifest_filters;
        trace.manifest_entries_after_merge = manifest_entries_after_merge;
    }
    Ok(all_entries)
}

fn manifest_file_overlaps_row_range_index(
    manifest: &crate::spec::ManifestFileMeta,
    row_range_index: &RowRangeIndex,
) -> bool {
    manifest_row_id_range(manifest).is_none_or(|(min, max)| row_range_index.intersects(min, max))
}

fn manifest_row_id_range(manifest: &crate::spec::ManifestFileMeta) -> Option<(i64, i64)> {
    match (manifest.min_row_id(), manifest.max_row_id()) {
        (Some(min), Some(max)) if min <= max => Some((min, max)),
        _ => None,
    }
}

fn retain_manifest_row_ranges(
    manifests: &mut Vec<crate::spec::ManifestFileMeta>,
    row_range_index: &RowRangeIndex,
) {
    manifests.retain(|manifest| manifest_file_overlaps_row_range_index(manifest, row_range_index));
}

/// Conservatively prune manifests using their bucket envelope and a common
/// positive `_TOTAL_BUCKETS` value. Missing, invalid, mixed, or legacy metadata
/// always fails open. Tight envelopes become especially effective when
/// manifests are bucket-sorted.
fn retain_manifest_buckets(
    manifests: &mut Vec<crate::spec::ManifestFileMeta>,
    only_real_buckets: bool,
    bucket_predicate: Option<&Predicate>,
    bucket_key_fields: &[DataField],
    bucket_function_type: BucketFunctionType,
) {
    let mut target_cache: HashMap<i32, Option<HashSet<i32>>> = HashMap::new();
    manifests.retain(|manifest| {
        let (Some(min_bucket), Some(max_bucket)) = (manifest.min_bucket(), manifest.max_bucket())
        else {
            return true;
        };
        if min_bucket > max_bucket {
            return true;
        }
        if only_real_buckets && max_bucket < 0 {
            return false;
        }

        let Some(predicate) = bucket_predicate else {
            return true;
        };
        let Some(total_buckets) = manifest.total_buckets().filter(|value| *value > 0) else {
            return true;
        };
        // A mixed range containing the unassigned bucket is not a safe
        // representation of the real-bucket subset.
        if min_bucket < 0 || max_bucket >= total_buckets {
            return true;
        }

        let targets = target_cache.entry(total_buckets).or_insert_with(|| {
            compute_target_buckets(
                predicate,
                bucket_key_fields,
                bucket_function_type,
                total_buckets,
            )
        });
        targets.as_ref().is_none_or(|targets| {
            targets
                .iter()
                .any(|bucket| *bucket >= min_bucket && *bucket <= max_bucket)
        })
    });
}

fn data_file_overlaps_row_range_index(
    file: &DataFileMeta,
    row_range_index: &RowRangeIndex,
) -> bool {
    file.row_id_range()
        .is_none_or(|(from, to)| row_range_index.intersects(from, to))
}

fn retain_manifest_entry_row_ranges(
    entries: Vec<ManifestEntry>,
    row_range_index: &RowRangeIndex,
) -> Vec<ManifestEntry> {
    entries
        .into_iter()
        .filter(|entry| data_file_overlaps_row_range_index(entry.file(), row_range_index))
        .collect()
}

fn data_evolution_row_range_groups(
    data_files: Vec<DataFileMeta>,
    row_ranges: Option<&[RowRange]>,
) -> crate::Result<(Vec<Vec<DataFileMeta>>, usize)> {
    if data_files.is_empty() {
        return Ok((Vec::new(), 0));
    }
    if let Some(file) = data_files.iter().find(|file| file.first_row_id.is_none()) {
        return Err(crate::Error::DataInvalid {
            message: format!("First row id of '{}' should not be null.", file.file_name),
            source: None,
        });
    }
    let Some(row_ranges) = row_ranges else {
        return Ok((group_by_overlapping_row_id(data_files), 0));
    };
    let row_id_groups = group_by_overlapping_row_id(data_files);
    let groups_before_pruning = row_id_groups.len();

    let retained = row_id_groups
        .into_iter()
        .filter(|group| {
            group
                .iter()
                .any(|file| any_range_overlaps_file(row_ranges, file))
        })
        .collect::<Vec<_>>();
    let pruned = groups_before_pruning - retained.len();
    Ok((retained, pruned))
}

fn split_row_ranges_for_files(
    effective_row_ranges: Option<&[RowRange]>,
    files: &[DataFileMeta],
) -> crate::Result<Option<Vec<RowRange>>> {
    let Some(ranges) = effective_row_ranges else {
        return Ok(None);
    };
    if let Some(file) = files.iter().find(|file| file.row_id_range().is_none()) {
        return Err(crate::Error::DataInvalid {
            message: format!(
                "Cannot apply selected row ranges to file '{}' with missing or invalid row-id range",
                file.file_name
            ),
            source: None,
        });
    }

    let split_ranges = merge_row_ranges(
        files
            .iter()
            .flat_map(|file| intersect_ranges_with_file(ranges, file))
            .collect(),
    );
    // Empty means this split holds none of the selected rows. Only data
    // evolution prunes such splits away up front (`RowRangeIndex`), so on a
    // row-tracking table they reach here legitimately and the caller drops them.
    Ok(Some(split_ranges))
}

fn scan_predicate_field_ids(predicates: &[Predicate], schema_fields: &[DataField]) -> HashSet<i32> {
    let mut leaf_refs = Vec::new();
    for predicate in predicates {
        crate::arrow::residual::collect_predicate_leaf_refs(predicate, &mut leaf_refs);
    }
    leaf_refs
        .into_iter()
        // `_ROW_ID` uses a placeholder leaf index, so match the scanner's name-based resolution.
        .filter_map(|(column, _)| find_field_id_by_name(schema_fields, column))
        .collect()
}

fn retain_index_manifest_entry(
    entry: &IndexManifestEntry,
    global_index_needed: bool,
    deletion_vectors_needed: bool,
) -> bool {
    entry.kind == FileKind::Add
        && ((deletion_vectors_needed && entry.index_file.index_type == DELETION_VECTORS_INDEX_TYPE)
            || (global_index_needed
                && normalize_queryable_global_index_type(&entry.index_file.index_type).is_some()))
}

fn retain_index_manifest_entry_for_scan(
    entry: &IndexManifestEntry,
    global_index_needed: bool,
    deletion_vectors_needed: bool,
    partition_filter: Option<&PartitionFilter>,
    predicate_field_ids: &HashSet<i32>,
) -> crate::Result<bool> {
    if !retain_index_manifest_entry(entry, global_index_needed, deletion_vectors_needed) {
        return Ok(false);
    }
    if let Some(filter) = partition_filter {
        if !filter.matches_entry(&entry.partition)? {
            return Ok(false);
        }
    }
    if normalize_queryable_global_index_type(&entry.index_file.index_type).is_none() {
        return Ok(true);
    }
    let Some(global_index) = entry.index_file.global_index_meta.as_ref() else {
        // Keep malformed entries so the scanner can preserve fail-loud validation.
        return Ok(true);
    };
    Ok(predicate_field_ids.contains(&global_index.index_field_id)
        || global_index.extra_field_ids.as_ref().is_some_and(|ids| {
            ids.iter()
                .any(|field_id| predicate_field_ids.contains(field_id))
        }))
}

/// A deletion-vector entry whose on-disk path is not resolved yet.
///
/// A deletion vector is an index file, so it follows the same layout rules as
/// every other index file: an explicit external path wins, otherwise it lives
/// beside its bucket's data files when the table keeps index files in the
/// data-file directory, and under the table `index/` directory otherwise. The
/// bucket directory is only known once a split's bucket path is computed, so
/// resolution is deferred until then.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UnresolvedDeletionFile {
    file_name: String,
    external_path: Option<String>,
    offset: i64,
    length: i64,
    cardinality: Option<i64>,
}

impl UnresolvedDeletionFile {
    fn resolve(&self, location: &IndexFileLocation<'_>) -> DeletionFile {
        DeletionFile::new(
            location.resolve(&self.file_name, self.external_path.as_deref()),
            self.offset,
            self.length,
            self.cardinality,
        )
    }
}

/// Builds a map from (partition, bucket) to (data_file_name -> deletion vector) from index manifest
/// entries. Only considers ADD entries with index_type "DELETION_VECTORS" and their
/// deletion_vectors_ranges. Paths stay unresolved; see [`UnresolvedDeletionFile`].
fn build_deletion_files_map(
    index_entries: &[crate::spec::IndexManifestEntry],
) -> HashMap<PartitionBucket, HashMap<String, UnresolvedDeletionFile>> {
    use crate::spec::FileKind;
    let mut map: HashMap<PartitionBucket, HashMap<String, UnresolvedDeletionFile>> =
        HashMap::with_capacity(index_entries.len());
    for entry in index_entries {
        if entry.kind != FileKind::Add {
            continue;
        }
        if entry.index_file.index_type != DELETION_VECTORS_INDEX_TYPE {
            continue;
        }
        let ranges = match &entry.index_file.deletion_vectors_ranges {
            Some(r) if !r.is_empty() => r,
            _ => continue,
        };
        let key = PartitionBucket::new(entry.partition.clone(), entry.bucket);
        let per_bucket = map.entry(key).or_default();
        for (data_file_name, meta) in ranges {
            per_bucket.insert(
                data_file_name.clone(),
                UnresolvedDeletionFile {
                    file_name: entry.index_file.file_name.clone(),
                    external_path: entry.index_file.external_path.clone(),
                    offset: meta.offset as i64,
                    length: meta.length as i64,
                    cardinality: meta.cardinality,
                },
            );
        }
    }
    map
}

/// Nets add/delete manifest entries for a scan, returning only the live ADD set.
///
/// Mirrors Java `AbstractFileStoreScan.readAndMergeFileEntries`: first collect
/// the full [`Identifier`] of every DELETE entry, then keep the ADD entries
/// whose identifier is not in that set. The identity is the complete Paimon file
/// identity (`partition, bucket, level, file_name, extra_files, embedded_index,
/// external_path`, matching Java `FileEntry.Identifier`).
///
/// Keying on file name alone is wrong: a single-run compaction upgrades a file
/// *in place* — `DELETE f@oldLevel` plus `ADD f@newLevel` with the same file
/// name (`PojoDataFileMeta.upgrade` reuses the name, only changing `level`). An
/// identity without `level` lets the DELETE cancel the upgraded ADD, dropping
/// the file from the scan and silently losing its rows on read.
///
/// Collecting deletes first (rather than insert/remove while iterating) makes
/// the result independent of ADD/DELETE ordering, matching the Java scan path.
fn merge_manifest_entries(mut entries: Vec<ManifestEntry>) -> Vec<ManifestEntry> {
    use crate::spec::Identifier;
    let deleted: HashSet<Identifier> = entries
        .iter()
        .filter(|e| *e.kind() == FileKind::Delete)
        .map(|e| e.identifier())
        .collect();
    entries.retain(|e| *e.kind() == FileKind::Add && !deleted.contains(&e.identifier()));
    entries
}

/// Whether scan-owned pruning still preserves `merged_row_count()` as a safe
/// row-count hint.
///
/// Data predicates and row ranges can reduce rows within a split after planning,
/// so split-level row counts stop being a conservative bound for final rows.
pub(super) fn can_push_down_limit_hint_for_scan(
    data_predicates: &[Predicate],
    row_ranges: Option<&[RowRange]>,
) -> bool {
    data_predicates.is_empty() && row_ranges.is_none()
}

#[derive(Debug)]
struct LimitPushdownResult {
    splits: Vec<DataSplit>,
    split_candidates_built: usize,
    limit_early_stopped: bool,
}

#[derive(Debug)]
struct LimitPushdownAccumulator {
    limit: usize,
    fallback_splits: Vec<DataSplit>,
    limited_splits: Vec<DataSplit>,
    scanned_row_count: i64,
    limit_early_stopped: bool,
}

impl LimitPushdownAccumulator {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            fallback_splits: Vec::new(),
            limited_splits: Vec::new(),
            scanned_row_count: 0,
            limit_early_stopped: limit == 0,
        }
    }

    fn push(&mut self, split: DataSplit) -> bool {
        if self.limit_early_stopped {
            return true;
        }

        if let Some(merged_count) = split.merged_row_count() {
            self.fallback_splits.push(split.clone());
            self.limited_splits.push(split);
            self.scanned_row_count += merged_count;
            // Compare without a lossy signed cast: `limit` is `usize`, so
            // `limit as i64` turns any value above `i64::MAX` (e.g. a C caller
            // passing `SIZE_MAX`) negative, which would early-stop after the
            // first counted split. `scanned_row_count` is always >= 0, so an
            // unsigned comparison keeps a huge limit from truncating the scan.
            self.limit_early_stopped = self.scanned_row_count as u128 >= self.limit as u128;
        } else {
            self.fallback_splits.push(split);
        }

        self.limit_early_stopped
    }

    fn finish(self) -> LimitPushdownResult {
        let split_candidates_built = self.fallback_splits.len();
        let splits = if self.limit_early_stopped {
            self.limited_splits
        } else {
            self.fallback_splits
        };

        LimitPushdownResult {
            splits,
            split_candidates_built,
            limit_early_stopped: self.limit_early_stopped,
        }
    }
}

type PartitionDataFileGroups = IndexMap<(Vec<u8>, i32), (i32, Vec<DataFileMeta>)>;
type BucketDataFileGroup = ((Vec<u8>, i32), (i32, Vec<DataFileMeta>));

fn group_data_files_by_partition_bucket(entries: Vec<ManifestEntry>) -> Vec<BucketDataFileGroup> {
    // Preserve the first occurrence of each pair across partitions. Nesting by
    // partition moves later buckets ahead of intervening groups and changes
    // the physical row positions used by append slices and shards.
    let mut groups = PartitionDataFileGroups::new();
    for entry in entries {
        let (partition, bucket, total_buckets, file) = entry.into_parts();
        groups
            .entry((partition, bucket))
            .or_insert_with(|| (total_buckets, Vec::new()))
            .1
            .push(file);
    }
    groups.into_iter().collect()
}

#[derive(Clone, Copy)]
struct GlobalIndexScanSettings {
    search_mode: GlobalIndexSearchMode,
    thread_num: usize,
}

fn global_index_detail_data_ranges(entries: &[ManifestEntry]) -> Vec<RowRange> {
    merge_row_ranges(
        entries
            .iter()
            .filter_map(|entry| {
                entry
                    .file()
                    .row_id_range()
                    .map(|(from, to)| RowRange::new(from, to))
            })
            .collect(),
    )
}

fn should_use_global_index_row_range_optimization(
    row_range_optimization_disabled: bool,
    data_evolution_enabled: bool,
    global_index_enabled: bool,
    has_data_predicates: bool,
) -> bool {
    !row_range_optimization_disabled
        && data_evolution_enabled
        && global_index_enabled
        && has_data_predicates
}

fn should_skip_level_zero_for_scan(
    scan_all_files: bool,
    has_primary_keys: bool,
    deletion_vectors_enabled: bool,
    deletion_vectors_merge_on_read: bool,
    merge_engine: crate::Result<crate::spec::MergeEngine>,
) -> bool {
    if scan_all_files {
        return false;
    }
    if !has_primary_keys {
        return false;
    }

    if deletion_vectors_enabled {
        return !deletion_vectors_merge_on_read;
    }
    merge_engine.is_ok_and(|e| e == crate::spec::MergeEngine::FirstRow)
}

fn is_system_field_id(field_id: i32) -> bool {
    matches!(
        field_id,
        ROW_ID_FIELD_ID | SEQUENCE_NUMBER_FIELD_ID | VALUE_KIND_FIELD_ID
    )
}

fn is_system_field_name(name: &str) -> bool {
    matches!(
        name,
        ROW_ID_FIELD_NAME | SEQUENCE_NUMBER_FIELD_NAME | VALUE_KIND_FIELD_NAME
    )
}

fn is_vector_store_file_name(file_name: &str) -> bool {
    file_name.to_ascii_lowercase().contains(".vector.")
}

fn is_normal_data_file(file: &DataFileMeta) -> bool {
    !crate::table::dedicated_format_file_writer::is_blob_or_video_file_name(&file.file_name)
        && !is_vector_store_file_name(&file.file_name)
}

type DataFileFieldIdsCache = HashMap<(i64, Option<Vec<String>>), HashSet<i32>>;

fn data_evolution_representative_file(group: &[DataFileMeta]) -> crate::Result<usize> {
    let mut representative: Option<usize> = None;
    for (idx, file) in group.iter().enumerate() {
        if !is_normal_data_file(file) {
            continue;
        }
        let should_replace = match representative {
            None => true,
            Some(current_idx) => {
                let current = &group[current_idx];
                (file.max_sequence_number, file.file_name.as_str())
                    < (current.max_sequence_number, current.file_name.as_str())
            }
        };
        if should_replace {
            representative = Some(idx);
        }
    }
    representative.ok_or_else(|| crate::Error::DataInvalid {
        message: "Data-evolution row range group requires at least one normal data file."
            .to_string(),
        source: None,
    })
}

async fn resolve_data_file_field_ids(
    table_schema_id: i64,
    table_fields: &[DataField],
    schema_manager: &SchemaManager,
    file: &DataFileMeta,
) -> crate::Result<HashSet<i32>> {
    let schema;
    let fields = if file.schema_id == table_schema_id {
        table_fields
    } else {
        schema = schema_manager.schema(file.schema_id).await?;
        schema.fields()
    };

    let mut field_ids = HashSet::new();
    match file.write_cols.as_ref() {
        None => {
            field_ids.extend(
                fields
                    .iter()
                    .filter(|field| !is_system_field_id(field.id()))
                    .map(|field| field.id()),
            );
        }
        Some(write_cols) => {
            for col in write_cols {
                if is_system_field_name(col) {
                    continue;
                }
                let projected = super::data_evolution_fields::project_by_paths(
                    fields,
                    std::slice::from_ref(col),
                )?;
                for field in projected {
                    if !is_system_field_id(field.id()) {
                        field_ids.insert(field.id());
                    }
                }
            }
        }
    }
    Ok(field_ids)
}

async fn data_file_field_ids(
    table_schema_id: i64,
    table_fields: &[DataField],
    schema_manager: &SchemaManager,
    file: &DataFileMeta,
    field_ids_cache: &mut DataFileFieldIdsCache,
) -> crate::Result<HashSet<i32>> {
    let key = (file.schema_id, file.write_cols.clone());
    if let Some(field_ids) = field_ids_cache.get(&key) {
        return Ok(field_ids.clone());
    }

    let field_ids =
        resolve_data_file_field_ids(table_schema_id, table_fields, schema_manager, file).await?;
    field_ids_cache.insert(key, field_ids.clone());
    Ok(field_ids)
}

async fn prune_data_evolution_group_by_read_fields(
    group: Vec<DataFileMeta>,
    read_field_ids: &HashSet<i32>,
    deletion_vectors_enabled: bool,
    table_schema_id: i64,
    table_fields: &[DataField],
    schema_manager: &SchemaManager,
    field_ids_cache: &mut DataFileFieldIdsCache,
) -> crate::Result<Vec<DataFileMeta>> {
    if read_field_ids.is_empty() || group.len() <= 1 {
        return Ok(group);
    }

    let anchor_idx = if deletion_vectors_enabled {
        Some(data_evolution_representative_file(&group)?)
    } else {
        None
    };
    let sequence_idx = if read_field_ids.contains(&SEQUENCE_NUMBER_FIELD_ID) {
        Some(data_evolution_sequence_file_index(&group)?)
    } else {
        None
    };

    let mut keep = Vec::with_capacity(group.len());
    for (idx, file) in group.iter().enumerate() {
        let file_field_ids = data_file_field_ids(
            table_schema_id,
            table_fields,
            schema_manager,
            file,
            field_ids_cache,
        )
        .await?;
        if file_field_ids
            .iter()
            .any(|field_id| read_field_ids.contains(field_id))
        {
            keep.push(idx);
        }
    }
    if let Some(anchor_idx) = anchor_idx {
        if !keep.contains(&anchor_idx) {
            keep.push(anchor_idx);
        }
    }
    if let Some(sequence_idx) = sequence_idx {
        if !keep.contains(&sequence_idx) {
            keep.push(sequence_idx);
        }
    }

    if keep.is_empty() {
        keep.push(data_evolution_representative_file(&group)?);
    } else if keep.iter().any(|idx| !is_normal_data_file(&group[*idx]))
        && !keep.iter().any(|idx| is_normal_data_file(&group[*idx]))
    {
        let representative_idx = data_evolution_representative_file(&group)?;
        if !keep.contains(&representative_idx) {
            keep.push(representative_idx);
        }
    }

    if sequence_idx.is_some() {
        // Preserve original order for equal-sequence metadata providers.
        keep.sort_unstable();
    }
    let mut files = group.into_iter().map(Some).collect::<Vec<_>>();
    Ok(keep
        .into_iter()
        .filter_map(|idx| files.get_mut(idx).and_then(Option::take))
        .collect())
}

/// The newest normal file supplies row-tracking sequence metadata. It must
/// survive user-column pruning even if it only wrote an unprojected column.
fn data_evolution_sequence_file_index(group: &[DataFileMeta]) -> crate::Result<usize> {
    group
        .iter()
        .enumerate()
        .filter(|(_, file)| is_normal_data_file(file))
        .min_by_key(|(idx, file)| (std::cmp::Reverse(file.max_sequence_number), *idx))
        .map(|(idx, _)| idx)
        .ok_or_else(|| crate::Error::DataInvalid {
            message: "Data-evolution sequence metadata requires a normal data file".into(),
            source: None,
        })
}

#[derive(Debug, Clone)]
pub struct TableScan<'a>(TableScanKind<'a>);

#[derive(Debug, Clone)]
enum TableScanKind<'a> {
    Paimon(PaimonTableScan<'a>),
    Format(FormatTableScan<'a>),
}

impl<'a> TableScan<'a> {
    pub(crate) fn new(
        table: &'a Table,
        partition_filter: Option<PartitionFilter>,
        data_predicates: Vec<Predicate>,
        bucket_predicate: Option<Predicate>,
        limit: Option<usize>,
        row_ranges: Option<Vec<RowRange>>,
    ) -> Self {
        if table.is_format_table() {
            Self(TableScanKind::Format(FormatTableScan::new(
                table,
                partition_filter,
                limit,
                row_ranges,
            )))
        } else {
            Self(TableScanKind::Paimon(PaimonTableScan::new(
                table,
                partition_filter,
                data_predicates,
                bucket_predicate,
                limit,
                row_ranges,
            )))
        }
    }

    pub fn with_scan_all_files(self) -> Self {
        match self.0 {
            TableScanKind::Paimon(scan) => Self(TableScanKind::Paimon(scan.with_scan_all_files())),
            TableScanKind::Format(scan) => Self(TableScanKind::Format(scan)),
        }
    }

    pub fn with_row_ranges(self, ranges: Vec<RowRange>) -> Self {
        match self.0 {
            TableScanKind::Paimon(scan) => {
                Self(TableScanKind::Paimon(scan.with_row_ranges(ranges)))
            }
            TableScanKind::Format(scan) => {
                Self(TableScanKind::Format(scan.with_row_ranges(ranges)))
            }
        }
    }

    /// Select a half-open range of logical positions in an append snapshot.
    ///
    /// Data-evolution positions are assigned before group statistics, projection
    /// and deletion vectors. Ordinary append positions follow the final
    /// stats-pruned split and file order.
    pub fn with_row_position_slice(self, start: u64, end: u64) -> crate::Result<Self> {
        self.with_row_position_selection(RowPositionSelection::slice(start, end)?)
    }

    /// Select a balanced contiguous shard of append row positions.
    pub fn with_row_position_shard(self, index: u64, count: u64) -> crate::Result<Self> {
        self.with_row_position_selection(RowPositionSelection::shard(index, count)?)
    }

    /// Repack an append scan into deterministic fixed-live-row chunks.
    ///
    /// `seed` must render as a decimal integer. Accepting any `ToString` seed
    /// keeps ordinary Rust integer calls ergonomic while allowing language
    /// bindings to preserve arbitrary-precision integer seeds.
    pub fn with_chunk_shuffle(self, seed: impl ToString, chunk_size: u64) -> crate::Result<Self> {
        let config = ChunkShuffle::from_decimal_seed(&seed.to_string(), chunk_size)?;
        match self.0 {
            TableScanKind::Paimon(mut scan) => {
                if !scan.table.schema().primary_keys().is_empty() {
                    return Err(crate::Error::Unsupported {
                        message: "chunk_shuffle only supports append tables".to_string(),
                    });
                }
                if scan.limit.is_some() {
                    return Err(crate::Error::Unsupported {
                        message: "chunk_shuffle cannot combine with limit".to_string(),
                    });
                }
                if scan.row_ranges.is_some() || scan.row_position_selection().is_some() {
                    return Err(crate::Error::Unsupported {
                        message:
                            "chunk_shuffle cannot combine with row ranges or positional selection"
                                .to_string(),
                    });
                }
                if !scan.data_predicates.is_empty() {
                    return Err(crate::Error::Unsupported {
                        message: "chunk_shuffle only supports partition predicates".to_string(),
                    });
                }
                scan.split_selection = Some(Box::new(ScanSplitSelection {
                    mode: Some(ScanSplitMode::ChunkShuffle(config)),
                    shard: scan.shard(),
                }));
                Ok(Self(TableScanKind::Paimon(scan)))
            }
            TableScanKind::Format(_) => Err(crate::Error::Unsupported {
                message: "format tables do not support chunk_shuffle".to_string(),
            }),
        }
    }

    /// Select one worker shard using Java `SnapshotReaderImpl.withShard` rules.
    ///
    /// Append tables and primary-key tables with deletion vectors or first-row
    /// use `abs(String.hashCode(file_name) % count)`. Other tables use
    /// `bucket % count`, keeping all versions of a key or row-id group together.
    /// Chunk shuffling instead distributes balanced ranges of shuffled chunks;
    /// callers may configure the shard before or after chunk shuffling.
    pub fn with_shard(mut self, index: usize, count: usize) -> crate::Result<Self> {
        if count == 0 || index >= count {
            return Err(crate::Error::DataInvalid {
                message: "shard count must be positive and index less than count".to_string(),
                source: None,
            });
        }
        match &mut self.0 {
            TableScanKind::Paimon(scan) => {
                if scan.row_position_selection().is_some() {
                    return Err(crate::Error::DataInvalid {
                        message:
                            "with_shard and row-position selection cannot be used simultaneously"
                                .to_string(),
                        source: None,
                    });
                }
                match scan.split_selection.as_deref_mut() {
                    Some(selection) => selection.shard = Some((index, count)),
                    None => {
                        scan.split_selection = Some(Box::new(ScanSplitSelection {
                            mode: None,
                            shard: Some((index, count)),
                        }));
                    }
                }
                Ok(self)
            }
            TableScanKind::Format(_) => Err(crate::Error::Unsupported {
                message: "format tables do not support sharding".to_string(),
            }),
        }
    }

    pub(crate) fn has_row_position_selection(&self) -> bool {
        match &self.0 {
            TableScanKind::Paimon(scan) => scan.row_position_selection().is_some(),
            TableScanKind::Format(_) => false,
        }
    }

    pub(crate) fn has_chunk_shuffle(&self) -> bool {
        matches!(&self.0, TableScanKind::Paimon(scan) if scan.chunk_shuffle().is_some())
    }

    pub(crate) fn has_shard(&self) -> bool {
        matches!(&self.0, TableScanKind::Paimon(scan) if scan.shard().is_some())
    }

    fn with_row_position_selection(self, selection: RowPositionSelection) -> crate::Result<Self> {
        match self.0 {
            TableScanKind::Paimon(mut scan) if scan.table.schema().primary_keys().is_empty() => {
                if scan.chunk_shuffle().is_some() {
                    return Err(crate::Error::DataInvalid {
                        message:
                            "row-position selection and chunk_shuffle cannot be used simultaneously"
                                .into(),
                        source: None,
                    });
                }
                if scan.shard().is_some() {
                    return Err(crate::Error::DataInvalid {
                        message:
                            "row-position selection and with_shard cannot be used simultaneously"
                                .into(),
                        source: None,
                    });
                }
                if scan
                    .row_position_selection()
                    .is_some_and(|previous| previous.is_slice() != selection.is_slice())
                {
                    return Err(crate::Error::DataInvalid {
                        message: "row-position slice and shard cannot be used simultaneously"
                            .into(),
                        source: None,
                    });
                }
                scan.split_selection = Some(Box::new(ScanSplitSelection {
                    mode: Some(ScanSplitMode::RowPosition(selection)),
                    shard: None,
                }));
                Ok(Self(TableScanKind::Paimon(scan)))
            }
            _ => Err(crate::Error::Unsupported {
                message: "row-position selection only supports append tables".into(),
            }),
        }
    }

    pub(super) fn with_projected_read_field_ids(
        self,
        projected_read_field_ids: Option<HashSet<i32>>,
    ) -> Self {
        match self.0 {
            TableScanKind::Paimon(scan) => Self(TableScanKind::Paimon(
                scan.with_projected_read_field_ids(projected_read_field_ids),
            )),
            TableScanKind::Format(scan) => Self(TableScanKind::Format(scan)),
        }
    }

    pub async fn plan(&self) -> crate::Result<Plan> {
        // Boxed: engines poll this under deep operator stacks.
        match &self.0 {
            TableScanKind::Paimon(scan) => Box::pin(scan.plan()).await,
            TableScanKind::Format(scan) => scan.plan().await,
        }
    }

    pub async fn plan_with_trace(&self) -> crate::Result<(Plan, ScanTrace)> {
        match &self.0 {
            TableScanKind::Paimon(scan) => Box::pin(scan.plan_with_trace()).await,
            TableScanKind::Format(scan) => scan.plan_with_trace().await,
        }
    }

    pub(crate) async fn plan_snapshot_deltas(
        &self,
        snapshots: &[Snapshot],
        end_snapshot: &Snapshot,
    ) -> crate::Result<Plan> {
        match &self.0 {
            TableScanKind::Paimon(scan) => scan.plan_snapshot_deltas(snapshots, end_snapshot).await,
            TableScanKind::Format(_) => Err(crate::Error::Unsupported {
                message: "Format tables do not support incremental delta scan".to_string(),
            }),
        }
    }

    pub(crate) async fn plan_manifest_entries(
        &self,
        snapshot: &Snapshot,
    ) -> crate::Result<Vec<ManifestEntry>> {
        match &self.0 {
            TableScanKind::Paimon(scan) => scan.plan_manifest_entries(snapshot).await,
            TableScanKind::Format(_) => Err(crate::Error::Unsupported {
                message: "Format tables do not have Paimon manifest entries".to_string(),
            }),
        }
    }

    /// Plan data splits from a snapshot's delta manifest list only.
    pub(crate) async fn plan_snapshot_delta(&self, snapshot: &Snapshot) -> crate::Result<Plan> {
        match &self.0 {
            TableScanKind::Paimon(scan) => scan.plan_snapshot_delta(snapshot).await,
            TableScanKind::Format(_) => Err(crate::Error::Unsupported {
                message: "Format tables do not support incremental delta scan".to_string(),
            }),
        }
    }

    /// Plan data splits from a snapshot's changelog manifest list only.
    pub(crate) async fn plan_snapshot_changelog(&self, snapshot: &Snapshot) -> crate::Result<Plan> {
        match &self.0 {
            TableScanKind::Paimon(scan) => scan.plan_snapshot_changelog(snapshot).await,
            TableScanKind::Format(_) => Err(crate::Error::Unsupported {
                message: "Format tables do not support incremental changelog scan".to_string(),
            }),
        }
    }

    /// Plan before/after full-snapshot splits for batch incremental Diff.
    pub(crate) async fn plan_snapshot_diff(
        &self,
        before: &Snapshot,
        after: &Snapshot,
    ) -> crate::Result<(Plan, Plan)> {
        match &self.0 {
            TableScanKind::Paimon(scan) => scan.plan_snapshot_diff(before, after).await,
            TableScanKind::Format(_) => Err(crate::Error::Unsupported {
                message: "Format tables do not support incremental Diff scan".to_string(),
            }),
        }
    }

    #[cfg(test)]
    fn apply_limit_pushdown(&self, splits: Vec<DataSplit>) -> Vec<DataSplit> {
        match &self.0 {
            TableScanKind::Paimon(scan) => scan.apply_limit_pushdown(splits),
            TableScanKind::Format(scan) => scan.apply_limit_pushdown(splits),
        }
    }
}

/// Paimon table scan: resolves snapshots, reads manifests, and builds data splits.
///
/// Reference: [pypaimon.read.table_scan.TableScan](https://github.com/apache/paimon/blob/master/paimon-python/pypaimon/read/table_scan.py)
#[derive(Debug, Clone)]
enum ScanSplitMode {
    RowPosition(RowPositionSelection),
    ChunkShuffle(ChunkShuffle),
}

#[derive(Debug, Clone)]
struct ScanSplitSelection {
    mode: Option<ScanSplitMode>,
    shard: Option<(usize, usize)>,
}

#[derive(Debug, Clone)]
struct PaimonTableScan<'a> {
    table: &'a Table,
    partition_filter: Option<PartitionFilter>,
    data_predicates: Vec<Predicate>,
    bucket_predicate: Option<Predicate>,
    /// Optional limit on the number of rows to return.
    /// When set, the scan will try to return only enough splits to satisfy the limit.
    limit: Option<usize>,
    row_ranges: Option<Vec<RowRange>>,
    /// Mutually exclusive row-position or fixed-row chunk transformation.
    /// Boxed because scans normally use neither, and keeping the cold payload
    /// out of the scan preserves the compact `TableScanKind` representation.
    split_selection: Option<Box<ScanSplitSelection>>,
    /// Diff compares complete logical states, so it must not accept physical
    /// row-range pruning from an explicit range or a global-index lookup.
    row_range_optimization_disabled: bool,
    /// When true, disables level-0 filtering so all files are visible.
    /// Used by non-read paths (overwrite, truncate, writer restore) that need
    /// the complete file set. Normal read scans leave this as `false`.
    scan_all_files: bool,
    incremental_split_mode: Option<IncrementalSplitMode>,
    projected_read_field_ids: Option<HashSet<i32>>,
}

impl<'a> PaimonTableScan<'a> {
    fn row_position_selection(&self) -> Option<RowPositionSelection> {
        match self
            .split_selection
            .as_deref()
            .and_then(|selection| selection.mode.as_ref())
        {
            Some(ScanSplitMode::RowPosition(selection)) => Some(*selection),
            _ => None,
        }
    }

    fn chunk_shuffle(&self) -> Option<&ChunkShuffle> {
        match self
            .split_selection
            .as_deref()
            .and_then(|selection| selection.mode.as_ref())
        {
            Some(ScanSplitMode::ChunkShuffle(config)) => Some(config),
            _ => None,
        }
    }

    fn shard(&self) -> Option<(usize, usize)> {
        self.split_selection
            .as_deref()
            .and_then(|selection| selection.shard)
    }

    fn is_streaming(&self) -> bool {
        self.incremental_split_mode.is_some()
    }

    pub(crate) fn new(
        table: &'a Table,
        partition_filter: Option<PartitionFilter>,
        data_predicates: Vec<Predicate>,
        bucket_predicate: Option<Predicate>,
        limit: Option<usize>,
        row_ranges: Option<Vec<RowRange>>,
    ) -> Self {
        Self {
            table,
            partition_filter,
            data_predicates,
            bucket_predicate,
            limit,
            row_ranges,
            split_selection: None,
            row_range_optimization_disabled: false,
            scan_all_files: false,
            incremental_split_mode: None,
            projected_read_field_ids: None,
        }
    }

    /// Disable level-0 filtering so all files are visible.
    ///
    /// Used by non-read paths (overwrite, truncate, writer restore) that need
    /// the complete file set regardless of merge engine or DV settings.
    pub fn with_scan_all_files(mut self) -> Self {
        self.scan_all_files = true;
        self.projected_read_field_ids = None;
        self
    }

    /// Set row ranges for scan-time filtering.
    ///
    /// This replaces any existing row_ranges. Typically used to inject
    /// results from global index lookups. An empty vector selects no rows.
    pub fn with_row_ranges(mut self, ranges: Vec<RowRange>) -> Self {
        self.row_ranges = Some(ranges);
        self
    }

    fn without_row_range_optimization(mut self) -> Self {
        self.row_ranges = None;
        self.split_selection = None;
        self.row_range_optimization_disabled = true;
        self
    }

    pub(super) fn with_projected_read_field_ids(
        mut self,
        projected_read_field_ids: Option<HashSet<i32>>,
    ) -> Self {
        self.projected_read_field_ids = projected_read_field_ids;
        self
    }

    /// Plan the full scan: resolve snapshot (via options or latest), then read manifests and build DataSplits.
    ///
    /// Time travel is resolved from table options:
    /// - `scan.version` is resolved first, overwriting the same selector kind;
    ///   only one of `scan.timestamp-millis`, `scan.timestamp`, `scan.watermark`, `scan.snapshot-id`,
    ///   `scan.tag-name` may remain after resolution
    /// - `scan.version` → tag name (if exists) → `watermark-<value>` → snapshot
    ///   id (if parseable) → error (ambiguous by design, like SQL `VERSION AS OF`)
    /// - `scan.snapshot-id` → snapshot id only (never a tag lookup)
    /// - `scan.tag-name` → tag name only (never parsed as a snapshot id)
    /// - `scan.timestamp-millis` → find the latest snapshot <= that timestamp
    /// - `scan.timestamp` → parse in the local time zone, then resolve like `scan.timestamp-millis`
    /// - `scan.watermark` → find the earliest snapshot with watermark >= that
    ///   value (snapshots without a watermark are skipped)
    /// - otherwise → read the latest snapshot
    ///
    /// Reference: [TimeTravelUtil.tryTravelToSnapshot](https://github.com/apache/paimon/blob/master/paimon-core/src/main/java/org/apache/paimon/table/source/snapshot/TimeTravelUtil.java)
    /// for `scan.version`; the strict selectors mirror Java's typed
    /// `scan.snapshot-id` / `scan.tag-name` handling.
    pub async fn plan(&self) -> crate::Result<Plan> {
        let grant = self.authorize_query().await?;
        let data_evolution_read_field_ids = self.projected_read_field_ids()?;
        let plan = match super::time_travel::resolve_snapshot(self.table).await? {
            Some(snapshot) => {
                self.plan_snapshot(snapshot, data_evolution_read_field_ids.as_ref(), None)
                    .await?
            }
            None => Plan::new(Vec::new()),
        };
        self.check_planned_files(&plan, grant.is_some()).await?;
        Ok(plan.planned(grant))
    }

    /// Plan the full scan and return metadata-pruning trace counters.
    pub async fn plan_with_trace(&self) -> crate::Result<(Plan, ScanTrace)> {
        let grant = self.authorize_query().await?;
        let mut trace = ScanTrace {
            limit: self.limit,
            ..Default::default()
        };
        let data_evolution_read_field_ids = self.projected_read_field_ids()?;
        let plan = match super::time_travel::resolve_snapshot(self.table).await? {
            Some(snapshot) => {
                trace.snapshot_id = Some(snapshot.id());
                let plan = self
                    .plan_snapshot(
                        snapshot,
                        data_evolution_read_field_ids.as_ref(),
                        Some(&mut trace),
                    )
                    .await?;
                trace.planned_data_file_bytes = plan.planned_data_file_bytes();
                plan
            }
            None => Plan::new(Vec::new()),
        };
        self.check_planned_files(&plan, grant.is_some()).await?;
        Ok((plan.planned(grant), trace))
    }

    /// The grant predates the manifest read, so the table can have been
    /// re-created in between. Also refuses stats the schema no longer covers.
    async fn check_planned_files(&self, plan: &Plan, query_auth: bool) -> crate::Result<()> {
        if !query_auth {
            return Ok(());
        }
        if let Some(rest_env) = self.table.rest_env() {
            rest_env
                .current_table_checked(self.table.schema().id(), self.table.schema().fields())
                .await?;
        }
        super::query_auth::reject_unauthorized_stats(
            plan,
            self.table.schema(),
            self.table.schema_manager(),
        )
        .await
    }

    /// Authorize this scan and return the grant for the caller to stamp.
    async fn authorize_query(
        &self,
    ) -> crate::Result<Option<Arc<super::query_auth::QueryAuthGrant>>> {
        let core_options = CoreOptions::new(self.table.schema().options());
        // Unconditional: unrelated to query-auth.
        core_options.ensure_type_paimon_served(&self.table.identifier().full_name())?;
        core_options.validate_data_file_path_directory()?;

        // File paths and stats, not table columns: the endpoint cannot rule on them.
        let query_auth = CoreOptions::new(self.table.schema().options()).query_auth_enabled();
        if self.scan_all_files {
            return if query_auth {
                Err(super::query_auth::unsupported(
                    "`$files` and friends are file paths and stats, not table columns, so the \
                     auth endpoint can never rule on them",
                ))
            } else {
                Ok(None)
            };
        }
        // A predicate or a row-range slice reads `_ROW_ID` unprojected.
        let touches_row_id = self.row_ranges.is_some()
            || self
                .data_predicates
                .iter()
                .any(super::row_id_predicate::references_row_id);
        if query_auth && touches_row_id {
            super::query_auth::reject_system_columns([ROW_ID_FIELD_NAME])?;
        }

        let grant = self.table.authorize_read(query_auth).await?;
        // A plan already answers COUNT/MIN/MAX from row counts and bounds.
        if grant.as_ref().is_some_and(|g| !g.is_unrestricted()) {
            return Err(super::query_auth::unsupported(
                "a plan already carries file paths, row counts and column bounds that a row \
                 filter or column masking must not expose",
            ));
        }
        Ok(grant)
    }

    /// Fail closed on planning paths that do not authorize, `with_scan_all_files`
    /// included.
    fn validate_read_options(&self) -> crate::Result<()> {
        let options = CoreOptions::new(self.table.schema().options());
        options.ensure_read_authorized()?;
        options.validate_data_file_path_directory()
    }

    /// Filter before split grouping and LIMIT. In particular, file-name shards
    /// cannot be selected from packed splits: one split can contain files owned
    /// by several workers. Keep chunk-shuffle input complete until shuffling.
    fn retain_shard_entries(&self, entries: &mut Vec<ManifestEntry>) -> crate::Result<()> {
        let Some((index, count)) = self.shard().filter(|_| self.chunk_shuffle().is_none()) else {
            return Ok(());
        };
        let options = self.table.schema().core_options();
        let has_primary_keys = !self.table.schema().primary_keys().is_empty();
        // Match SplitGenerator.alwaysRawConvertible, independent of whether a
        // particular split is raw-convertible or the scan includes level zero.
        let by_file_name = if has_primary_keys {
            options.deletion_vectors_enabled()
                || options.merge_engine()? == crate::spec::MergeEngine::FirstRow
        } else {
            !options.data_evolution_enabled()
        };
        entries.retain(|entry| {
            if by_file_name {
                let hash = entry
                    .file()
                    .file_name
                    .encode_utf16()
                    .fold(0i32, |hash, unit| {
                        hash.wrapping_mul(31).wrapping_add(i32::from(unit))
                    });
                // Take the signed remainder before abs, as Java does. Widening
                // also handles Integer.MIN_VALUE without overflow.
                ((i128::from(hash) % count as i128).unsigned_abs() as usize) == index
            } else {
                i128::from(entry.bucket()) % count as i128 == index as i128
            }
        });
        Ok(())
    }

    fn projected_read_field_ids(&self) -> crate::Result<Option<HashSet<i32>>> {
        Ok(self.projected_read_field_ids.clone())
    }

    /// Apply a limit-pushdown hint to the generated splits.
    ///
    /// Mirrors Java `DataTableBatchScan#applyPushDownLimit`: splits whose
    /// `merged_row_count()` is unknown (for example merge-needed PK splits or
    /// unknown deletion cardinality) are skipped — they contribute an unknown
    /// number of rows, so they cannot help satisfy the limit. Pruning is
    /// committed only once the accumulated known row count reaches the limit;
    /// if it never does, the original split list is returned unchanged. The
    /// caller or query engine must still enforce the final LIMIT.
    #[cfg(test)]
    fn apply_limit_pushdown(&self, splits: Vec<DataSplit>) -> Vec<DataSplit> {
        let limit = match self.limit {
            Some(l) => l,
            None => return splits,
        };
        let mut accumulator = LimitPushdownAccumulator::new(limit);

        for split in splits {
            if accumulator.push(split) {
                break;
            }
        }

        accumulator.finish().splits
    }

    /// Read all manifest entries from a snapshot, applying filters and merging.
    ///
    /// This is the shared entry point used by both `plan_snapshot` (scan) and
    /// `TableCommit` (overwrite). Filters include partition predicate, data
    /// predicates, and bucket predicate.
    pub(crate) async fn plan_manifest_entries(
        &self,
        snapshot: &Snapshot,
    ) -> crate::Result<Vec<ManifestEntry>> {
        self.plan_manifest_entries_with_trace(ManifestListSource::Snapshot(snapshot), None, None)
            .await
    }

    async fn plan_manifest_entries_with_trace(
        &self,
        source: ManifestListSource<'_>,
        row_range_index: Option<&RowRangeIndex>,
        trace: Option<&mut ScanTrace>,
    ) -> crate::Result<Vec<ManifestEntry>> {
        let file_io = self.table.file_io();
        let table_path = self.table.location();
        let core_options = CoreOptions::new(self.table.schema().options());
        let data_evolution_enabled = core_options.data_evolution_enabled();

        let has_primary_keys = !self.table.schema().primary_keys().is_empty();

        // Skip level-0 files for PK tables when:
        // - DV mode: level-0 files are unmerged, DV handles dedup at higher levels
        // - FirstRow engine without DV: reads go through DataFileReader (no merge),
        //   so only compacted (level > 0) files are safe to read directly
        // Deduplicate engine always uses KeyValueFileReader which handles level-0
        // via sort-merge, so level-0 files must remain visible.
        //
        // Non-read paths (overwrite, truncate, writer restore) set scan_all_files=true
        // to see all files including level-0, matching Java's CommitScanner behavior.
        let skip_level_zero = self.skip_level_zero();

        let partition_fields = self.table.schema().partition_fields();

        let pushdown_data_predicates = if data_evolution_enabled {
            Vec::new()
        } else {
            self.stats_pruning_predicates()
        };
        let key_fields = self.table.schema().trimmed_primary_keys();
        let pushdown_key_predicates = self.key_stats_predicates(&pushdown_data_predicates);

        let bucket_key_fields: Vec<DataField> = if self.bucket_predicate.is_none() {
            Vec::new()
        } else {
            let bucket_keys = core_options.bucket_key().unwrap_or_else(|| {
                if has_primary_keys {
                    self.table.schema().trimmed_primary_keys()
                } else {
                    Vec::new()
                }
            });
            bucket_keys
                .iter()
                .filter_map(|key| {
                    self.table
                        .schema()
                        .fields()
                        .iter()
                        .find(|f| f.name() == key)
                        .cloned()
                })
                .collect::<Vec<_>>()
        };
        let bucket_function_type = core_options.bucket_function_type()?;

        let entries = read_all_manifest_entries(
            file_io,
            table_path,
            source,
            skip_level_zero,
            self.scan_all_files,
            has_primary_keys,
            self.partition_filter.as_ref(),
            &partition_fields,
            &pushdown_data_predicates,
            &pushdown_key_predicates,
            self.table.schema().id(),
            self.table.schema().fields(),
            &key_fields,
            self.bucket_predicate.as_ref(),
            &bucket_key_fields,
            bucket_function_type,
            row_range_index,
            core_options.manifest_sidecar_enabled(),
            core_options.scan_manifest_parallelism()?,
            trace,
        )
        .await?;
        Ok(entries)
    }

    fn can_push_down_limit_hint(&self, row_ranges: Option<&[RowRange]>) -> bool {
        can_push_down_limit_hint_for_scan(&self.data_predicates, row_ranges)
    }

    fn global_index_scan_settings(
        &self,
        core_options: &CoreOptions,
        data_evolution_enabled: bool,
    ) -> crate::Result<Option<GlobalIndexScanSettings>> {
        if !self.is_streaming()
            && should_use_global_index_row_range_optimization(
                self.row_range_optimization_disabled,
                data_evolution_enabled,
                core_options.global_index_enabled(),
                !self.data_predicates.is_empty(),
            )
        {
            Ok(Some(GlobalIndexScanSettings {
                search_mode: core_options.scalar_index_search_mode()?,
                thread_num: core_options.global_index_thread_num()?,
            }))
        } else {
            Ok(None)
        }
    }

    async fn read_index_manifest_entries(
        &self,
        snapshot: &Snapshot,
        global_index_needed: bool,
        deletion_vectors_needed: bool,
    ) -> crate::Result<Option<Vec<IndexManifestEntry>>> {
        if !global_index_needed && !deletion_vectors_needed {
            return Ok(None);
        }
        let Some(index_manifest_name) = snapshot.index_manifest() else {
            return Ok(None);
        };
        let table_path = self.table.location().trim_end_matches('/');
        let path = format!("{table_path}/{MANIFEST_DIR}/{index_manifest_name}");
        let predicate_field_ids = if global_index_needed {
            scan_predicate_field_ids(&self.data_predicates, self.table.schema().fields())
        } else {
            HashSet::new()
        };
        let mut entries = Vec::new();
        for entry in IndexManifest::read(self.table.file_io(), &path).await? {
            if retain_index_manifest_entry_for_scan(
                &entry,
                global_index_needed,
                deletion_vectors_needed,
                self.partition_filter.as_ref(),
                &predicate_field_ids,
            )? {
                entries.push(entry);
            }
        }
        Ok(Some(entries))
    }

    async fn evaluate_global_index_row_ranges(
        &self,
        snapshot: &Snapshot,
        index_entries: &[IndexManifestEntry],
        settings: GlobalIndexScanSettings,
        data_ranges: &[RowRange],
    ) -> crate::Result<Option<Vec<RowRange>>> {
        let core_options = CoreOptions::new(self.table.schema().options());
        super::global_index_scanner::evaluate_global_index(
            super::global_index_scanner::GlobalIndexEvaluation {
                file_io: self.table.file_io(),
                table_path: self.table.location().trim_end_matches('/'),
                index_entries,
                predicates: &self.data_predicates,
                schema_fields: self.table.schema().fields(),
                search_mode: settings.search_mode,
                global_index_thread_num: settings.thread_num,
                btree_fallback_scan_max_size: core_options.btree_index_fallback_scan_max_size()?,
                btree_data_block_cache_size: core_options.btree_index_data_block_cache_size()?,
                bitmap_fallback_scan_max_size: core_options
                    .bitmap_index_fallback_scan_max_size()?,
                fm_read_options: if index_entries
                    .iter()
                    .any(|entry| entry.index_file.index_type.eq_ignore_ascii_case("fm"))
                {
                    crate::fm_index::FMOptions::from_options(self.table.schema().options())?.read
                } else {
                    crate::fm_index::FMReadOptions::default()
                },
                next_row_id: snapshot.next_row_id(),
                data_ranges,
            },
        )
        .await
    }

    async fn manifest_row_ranges(
        &self,
        snapshot: &Snapshot,
        index_entries: Option<&[IndexManifestEntry]>,
        settings: Option<GlobalIndexScanSettings>,
    ) -> crate::Result<Option<Vec<RowRange>>> {
        if self.row_ranges.is_some() {
            return Ok(self.row_ranges.clone());
        }
        let (Some(index_entries), Some(settings)) = (index_entries, settings) else {
            return Ok(None);
        };
        if settings.search_mode == GlobalIndexSearchMode::Detail {
            return Ok(None);
        }
        self.evaluate_global_index_row_ranges(snapshot, index_entries, settings, &[])
            .await
    }

    async fn effective_row_ranges(
        &self,
        snapshot: &Snapshot,
        entries: &[ManifestEntry],
        index_entries: Option<&[IndexManifestEntry]>,
        settings: Option<GlobalIndexScanSettings>,
        manifest_row_ranges: Option<Vec<RowRange>>,
    ) -> crate::Result<Option<Vec<RowRange>>> {
        if self.row_ranges.is_some()
            || !matches!(
                settings,
                Some(GlobalIndexScanSettings {
                    search_mode: GlobalIndexSearchMode::Detail,
                    ..
                })
            )
        {
            return Ok(manifest_row_ranges);
        }
        let (Some(index_entries), Some(settings)) = (index_entries, settings) else {
            return Ok(None);
        };
        let data_ranges = global_index_detail_data_ranges(entries);
        self.evaluate_global_index_row_ranges(snapshot, index_entries, settings, &data_ranges)
            .await
    }

    /// The predicate set that may prune WHOLE FILES by their stats.
    ///
    /// For primary-key tables read by merging, only key conjuncts are safe: a
    /// key's versions agree on the key columns but not on value columns, so a
    /// value conjunct could prune the file holding the newest version and
    /// resurrect an older one from a surviving file. The dropped conjuncts
    /// are still enforced exactly by the post-merge residual filter in
    /// `KeyValueFileReader`.
    ///
    /// Full predicates are safe for materialized first-row / deletion-vector
    /// files. First-row all-files scans and incremental scans retain every
    /// version before the reader applies its residual filter.
    fn stats_pruning_predicates(&self) -> Vec<Predicate> {
        let has_primary_keys = !self.table.schema().primary_keys().is_empty();
        if has_primary_keys && self.requires_key_merge() {
            retain_primary_key_conjuncts(
                &self.data_predicates,
                self.table.schema().fields(),
                &self.table.schema().trimmed_primary_keys(),
            )
        } else {
            self.data_predicates.clone()
        }
    }

    fn requires_key_merge(&self) -> bool {
        let options = self.table.schema().core_options();
        self.is_streaming()
            || match options.merge_engine() {
                Ok(crate::spec::MergeEngine::FirstRow) => !self.skip_level_zero(),
                _ => {
                    !options.deletion_vectors_enabled() || options.deletion_vectors_merge_on_read()
                }
            }
    }

    fn skip_level_zero(&self) -> bool {
        let options = self.table.schema().core_options();
        should_skip_level_zero_for_scan(
            self.scan_all_files || self.is_streaming(),
            !self.table.schema().primary_keys().is_empty(),
            options.deletion_vectors_enabled(),
            options.deletion_vectors_merge_on_read(),
            options.merge_engine(),
        )
    }

    /// Project file-safe predicates onto trimmed primary-key columns while
    /// preserving table-schema field indices.
    fn key_stats_predicates(&self, predicates: &[Predicate]) -> Vec<Predicate> {
        let key_fields = self.table.schema().trimmed_primary_keys();
        if key_fields.is_empty() {
            return Vec::new();
        }
        retain_primary_key_conjuncts(predicates, self.table.schema().fields(), &key_fields)
    }

    /// Plan data splits from a snapshot's delta manifest list (APPEND deltas).
    ///
    /// Reuses the same split-building path as a full snapshot plan, but only
    /// reads the delta manifest list and keeps ADD entries.
    pub(crate) async fn plan_snapshot_delta(&self, snapshot: &Snapshot) -> crate::Result<Plan> {
        self.validate_read_options()?;
        let data_evolution_read_field_ids = self.projected_read_field_ids()?;
        let mut scan = self.clone();
        scan.incremental_split_mode = Some(IncrementalSplitMode::Streaming);
        scan.plan_snapshot_manifest_list(
            snapshot,
            snapshot.delta_manifest_list(),
            data_evolution_read_field_ids.as_ref(),
        )
        .await
    }

    /// Plan all selected APPEND deltas together. Entries are merged before
    /// splitting so versions of a primary key cannot escape into separate plans.
    async fn plan_snapshot_deltas(
        &self,
        snapshots: &[Snapshot],
        end_snapshot: &Snapshot,
    ) -> crate::Result<Plan> {
        self.validate_read_options()?;
        let data_evolution_read_field_ids = self.projected_read_field_ids()?;
        let mut scan = self.clone();
        scan.incremental_split_mode = Some(IncrementalSplitMode::Batch);
        scan.plan_snapshot_from_lists(
            end_snapshot,
            ManifestListSource::AppendDeltas(snapshots),
            data_evolution_read_field_ids.as_ref(),
            None,
        )
        .await
    }

    /// Plan data splits from a snapshot's changelog manifest list.
    ///
    /// Reuses the same split-building path as a full snapshot plan, but only
    /// reads the changelog manifest list and keeps ADD entries. Snapshots
    /// without a changelog list yield an empty plan.
    pub(crate) async fn plan_snapshot_changelog(&self, snapshot: &Snapshot) -> crate::Result<Plan> {
        self.validate_read_options()?;
        let Some(list_name) = snapshot.changelog_manifest_list() else {
            return Ok(Plan::new(Vec::new()).with_snapshot_id(snapshot.id()));
        };
        let data_evolution_read_field_ids = self.projected_read_field_ids()?;
        let mut scan = self.clone();
        scan.incremental_split_mode = Some(IncrementalSplitMode::Streaming);
        scan.plan_snapshot_manifest_list(
            snapshot,
            list_name,
            data_evolution_read_field_ids.as_ref(),
        )
        .await
    }

    async fn plan_snapshot_manifest_list(
        &self,
        snapshot: &Snapshot,
        manifest_list_name: &str,
        data_evolution_read_field_ids: Option<&HashSet<i32>>,
    ) -> crate::Result<Plan> {
        if matches!(self.limit, Some(0)) {
            return Ok(Plan::new(Vec::new()).with_snapshot_id(snapshot.id()));
        }
        let core_options = CoreOptions::new(self.table.schema().options());
        let data_evolution_enabled = core_options.data_evolution_enabled();
        let global_index_settings =
            self.global_index_scan_settings(&core_options, data_evolution_enabled)?;
        let index_entries = self
            .read_index_manifest_entries(
                snapshot,
                global_index_settings.is_some(),
                core_options.deletion_vectors_enabled() && !self.is_streaming(),
            )
            .await?;
        let manifest_row_ranges = self
            .manifest_row_ranges(snapshot, index_entries.as_deref(), global_index_settings)
            .await?;
        if manifest_row_ranges.as_ref().is_some_and(Vec::is_empty) {
            return Ok(Plan::new(Vec::new()).with_snapshot_id(snapshot.id()));
        }
        // Positional scans count all candidate row IDs. Pruning a preceding
        // manifest or file here would renumber the surviving rows; intersect
        // explicit/global-index ranges after assigning positions instead.
        let row_range_index = if data_evolution_enabled && self.row_position_selection().is_none() {
            manifest_row_ranges.clone().map(RowRangeIndex::create)
        } else {
            None
        };
        let entries = self
            .plan_manifest_list_entries(manifest_list_name, row_range_index.as_ref())
            .await?;
        let effective_row_ranges = self
            .effective_row_ranges(
                snapshot,
                &entries,
                index_entries.as_deref(),
                global_index_settings,
                manifest_row_ranges,
            )
            .await?;
        self.plan_snapshot_from_entries(
            snapshot.clone(),
            entries,
            data_evolution_read_field_ids,
            index_entries,
            effective_row_ranges,
            None,
        )
        .await
    }

    /// Plan before/after full-snapshot states for Diff incremental scan.
    ///
    /// Loads full manifest entries for both snapshots, rejects bucket rescale,
    /// then builds splits via the shared snapshot planning path. Diff keeps the
    /// complete state on both sides because serialized key bytes do not preserve
    /// the logical ordering required for safe overlap pruning.
    pub(crate) async fn plan_snapshot_diff(
        &self,
        before: &Snapshot,
        after: &Snapshot,
    ) -> crate::Result<(Plan, Plan)> {
        self.validate_read_options()?;
        let core_options = CoreOptions::new(self.table.schema().options());
        // Both forms: without `first_row_id` a filter stays an ordinary data
        // predicate instead of becoming a row range.
        if self.row_ranges.is_some()
            || self
                .data_predicates
                .iter()
                .any(super::row_id_predicate::references_row_id)
        {
            return Err(crate::Error::Unsupported {
                message: "Batch incremental Diff does not support _ROW_ID filters".to_string(),
            });
        }
        // A limit hint cannot be pushed into either side of a Diff: truncating
        // the states independently can both hide changes and invent them.
        let mut full_state_scan = self.clone();
        full_state_scan.limit = None;
        // Row ranges identify physical positions in individual files, whereas
        // Diff compares complete logical states across both snapshots.
        full_state_scan = full_state_scan.without_row_range_optimization();
        full_state_scan
            .validate_diff_bucket_layout(before, after)
            .await?;
        let before_entries = full_state_scan.plan_manifest_entries(before).await?;
        let after_entries = full_state_scan.plan_manifest_entries(after).await?;
        // Each side is a complete snapshot state. A DV index belongs to that
        // snapshot, so resolve the two index manifests independently before
        // building splits. Reusing the endpoint's DVs for the older state can
        // hide rows that were live at the start of the Diff.
        let deletion_vectors_needed = core_options.deletion_vectors_enabled();
        let (before_index_entries, after_index_entries) = futures::try_join!(
            full_state_scan.read_index_manifest_entries(before, false, deletion_vectors_needed),
            full_state_scan.read_index_manifest_entries(after, false, deletion_vectors_needed)
        )?;
        let before_plan = full_state_scan
            .plan_snapshot_from_entries(
                before.clone(),
                before_entries,
                None,
                before_index_entries,
                None,
                None,
            )
            .await?;
        let after_plan = full_state_scan
            .plan_snapshot_from_entries(
                after.clone(),
                after_entries,
                None,
                after_index_entries,
                None,
                None,
            )
            .await?;
        Ok((before_plan, after_plan))
    }

    async fn validate_diff_bucket_layout(
        &self,
        before: &Snapshot,
        after: &Snapshot,
    ) -> crate::Result<()> {
        if before.schema_id() == after.schema_id() {
            return Ok(());
        }

        let schema_manager = self.table.schema_manager();
        let (before_schema, after_schema) = futures::try_join!(
            schema_manager.schema(before.schema_id()),
            schema_manager.schema(after.schema_id())
        )?;
        if before_schema.core_options().bucket() != after_schema.core_options().bucket() {
            return Err(crate::Error::Unsupported {
                message: "Batch incremental Diff does not support bucket rescale between snapshots"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// Read entries from a single manifest list (delta or changelog) with
    /// partition / bucket filter pushdown matching the full scan path.
    async fn plan_manifest_list_entries(
        &self,
        manifest_list_name: &str,
        row_range_index: Option<&RowRangeIndex>,
    ) -> crate::Result<Vec<ManifestEntry>> {
        let file_io = self.table.file_io();
        let table_path = self.table.location();
        let core_options = CoreOptions::new(self.table.schema().options());
        let has_primary_keys = !self.table.schema().primary_keys().is_empty();
        let partition_fields = self.table.schema().partition_fields();

        let mut manifest_metas =
            read_manifest_list(file_io, table_path, manifest_list_name).await?;

        if let Some(pf) = self.partition_filter.as_ref() {
            manifest_metas.retain(|meta| pf.matches_manifest(meta, &partition_fields));
        }
        if let Some(index) = row_range_index {
            retain_manifest_row_ranges(&mut manifest_metas, index);
        }

        let bucket_key_fields: Vec<DataField> = if self.bucket_predicate.is_none() {
            Vec::new()
        } else {
            let bucket_keys = core_options.bucket_key().unwrap_or_else(|| {
                if has_primary_keys {
                    self.table.schema().trimmed_primary_keys()
                } else {
                    Vec::new()
                }
            });
            bucket_keys
                .iter()
                .filter_map(|key| {
                    self.table
                        .schema()
                        .fields()
                        .iter()
                        .find(|f| f.name() == key)
                        .cloned()
                })
                .collect::<Vec<_>>()
        };
        let bucket_function_type = core_options.bucket_function_type()?;

        retain_manifest_buckets(
            &mut manifest_metas,
            has_primary_keys && !self.scan_all_files,
            self.bucket_predicate.as_ref(),
            &bucket_key_fields,
            bucket_function_type,
        );

        let base_path = format!("{}/{}", table_path.trim_end_matches('/'), MANIFEST_DIR);
        let shared_cache = SharedSchemaCache::new();
        let partition_filter = self.partition_filter.as_ref();
        let bucket_predicate = self.bucket_predicate.as_ref();
        let scan_all_files = self.scan_all_files;

        let mut entries = Vec::new();
        for meta in manifest_metas {
            let path = format!("{base_path}/{}", meta.file_name());
            // This path validates incremental/changelog manifests before its
            // existing post-read row-range pruning, so do not hide DELETEs at
            // the block layer.
            let bytes = read_manifest_bytes_with_sidecar(
                file_io,
                &path,
                &meta,
                core_options.manifest_sidecar_enabled(),
                ManifestSidecarPruning {
                    row_range_index: None,
                    partition_filter,
                    partition_arity: partition_fields.len(),
                    bucket_predicate,
                    bucket_key_fields: &bucket_key_fields,
                    bucket_function_type,
                },
            )
            .await?;
            let mut bucket_cache: HashMap<i32, Option<HashSet<i32>>> = HashMap::new();
            let manifest_entries = crate::spec::avro::from_manifest_bytes_filtered_shared(
                &bytes,
                &shared_cache,
                &mut |_kind, partition_bytes, bucket, total_buckets| {
                    if has_primary_keys && !scan_all_files && bucket < 0 {
                        return false;
                    }
                    if let Some(pred) = bucket_predicate {
                        let targets = bucket_cache.entry(total_buckets).or_insert_with(|| {
                            compute_target_buckets(
                                pred,
                                &bucket_key_fields,
                                bucket_function_type,
                                total_buckets,
                            )
                        });
                        if let Some(targets) = targets {
                            if !targets.contains(&bucket) {
                                return false;
                            }
                        }
                    }
                    if let Some(pf) = partition_filter {
                        match pf.matches_entry(partition_bytes) {
                            Ok(false) => return false,
                            Ok(true) => {}
                            Err(_) => {}
                        }
                    }
                    true
                },
            )?;
            entries.extend(manifest_entries);
        }
        validate_incremental_entries(&entries)?;
        let entries = if let Some(index) = row_range_index {
            retain_manifest_entry_row_ranges(entries, index)
        } else {
            entries
        };
        Ok(entries)
    }

    async fn plan_snapshot(
        &self,
        snapshot: Snapshot,
        data_evolution_read_field_ids: Option<&HashSet<i32>>,
        trace: Option<&mut ScanTrace>,
    ) -> crate::Result<Plan> {
        self.plan_snapshot_from_lists(
            &snapshot,
            ManifestListSource::Snapshot(&snapshot),
            data_evolution_read_field_ids,
            trace,
        )
        .await
    }

    async fn plan_snapshot_from_lists(
        &self,
        snapshot: &Snapshot,
        source: ManifestListSource<'_>,
        data_evolution_read_field_ids: Option<&HashSet<i32>>,
        mut trace: Option<&mut ScanTrace>,
    ) -> crate::Result<Plan> {
        if matches!(self.limit, Some(0)) {
            if let Some(trace) = trace {
                trace.record_final_plan_with_limit(0, 0, 0, 0, true);
            }
            return Ok(Plan::new(Vec::new()).with_snapshot_id(snapshot.id()));
        }
        let core_options = CoreOptions::new(self.table.schema().options());
        let data_evolution_enabled = core_options.data_evolution_enabled();
        let global_index_settings =
            self.global_index_scan_settings(&core_options, data_evolution_enabled)?;
        let index_entries = self
            .read_index_manifest_entries(
                snapshot,
                global_index_settings.is_some(),
                core_options.deletion_vectors_enabled() && !self.is_streaming(),
            )
            .await?;
        let manifest_row_ranges = self
            .manifest_row_ranges(snapshot, index_entries.as_deref(), global_index_settings)
            .await?;
        if manifest_row_ranges.as_ref().is_some_and(Vec::is_empty) {
            if let Some(trace) = trace {
                trace.record_final_plan(0, 0, 0);
            }
            return Ok(Plan::new(Vec::new()).with_snapshot_id(snapshot.id()));
        }
        // Positional scans count all candidate row IDs. Pruning a preceding
        // manifest or file here would renumber the surviving rows; intersect
        // explicit/global-index ranges after assigning positions instead.
        let row_range_index = if data_evolution_enabled && self.row_position_selection().is_none() {
            manifest_row_ranges.clone().map(RowRangeIndex::create)
        } else {
            None
        };
        let entries = self
            .plan_manifest_entries_with_trace(
                source,
                row_range_index.as_ref(),
                trace.as_deref_mut(),
            )
            .await?;
        let effective_row_ranges = self
            .effective_row_ranges(
                snapshot,
                &entries,
                index_entries.as_deref(),
                global_index_settings,
                manifest_row_ranges,
            )
            .await?;
        self.plan_snapshot_from_entries(
            snapshot.clone(),
            entries,
            data_evolution_read_field_ids,
            index_entries,
            effective_row_ranges,
            trace,
        )
        .await
    }

    async fn plan_snapshot_from_entries(
        &self,
        snapshot: Snapshot,
        mut entries: Vec<ManifestEntry>,
        data_evolution_read_field_ids: Option<&HashSet<i32>>,
        index_entries: Option<Vec<IndexManifestEntry>>,
        effective_row_ranges: Option<Vec<RowRange>>,
        mut trace: Option<&mut ScanTrace>,
    ) -> crate::Result<Plan> {
        let table_path = self.table.location();
        let table_schema_id = self.table.schema().id();
        let table_fields = self.table.schema().fields();
        let schema_manager = self.table.schema_manager();
        let core_options = CoreOptions::new(self.table.schema().options());
        let data_evolution_enabled = core_options.data_evolution_enabled();
        let deletion_vectors_enabled =
            core_options.deletion_vectors_enabled() && !self.is_streaming();
        let target_split_size = core_options.source_split_target_size();
        let open_file_cost = core_options.source_split_open_file_cost();
        let partition_keys = self.table.schema().partition_keys();

        self.retain_shard_entries(&mut entries)?;

        let row_position_selection = self.row_position_selection();
        let append_row_position_selection = (!data_evolution_enabled)
            .then_some(row_position_selection)
            .flatten();
        // Data-evolution positions use the union of full candidate row-id
        // ranges, before group stats, projection or DVs change visible rows.
        // Ordinary append positions are selected from completed splits below,
        // after stats pruning and packing establish their physical order.
        let effective_row_ranges =
            if let Some(selection) = row_position_selection.filter(|_| data_evolution_enabled) {
                Some(selection.select(&entries, effective_row_ranges.as_deref())?)
            } else {
                effective_row_ranges
            };
        if effective_row_ranges.as_ref().is_some_and(Vec::is_empty) {
            if let Some(trace) = trace {
                trace.record_final_plan(0, 0, 0);
            }
            return Ok(Plan::new(Vec::new()).with_snapshot_id(snapshot.id()));
        }

        if entries.is_empty() {
            if let Some(trace) = trace {
                trace.record_final_plan(0, 0, 0);
            }
            return Ok(Plan::new(Vec::new()).with_snapshot_id(snapshot.id()));
        }

        // For non-data-evolution tables, cross-schema files were kept (fail-open)
        // by the pushdown. Apply the full schema-aware filter for those files.
        let stats_pruning_predicates = self.stats_pruning_predicates();
        let key_stats_predicates = self.key_stats_predicates(&stats_pruning_predicates);
        let entries = if stats_pruning_predicates.is_empty() || data_evolution_enabled {
            entries
        } else {
            let current_schema_id = self.table.schema().id();
            let has_cross_schema = entries
                .iter()
                .any(|e| e.file().schema_id != current_schema_id);
            if !has_cross_schema {
                if let Some(trace) = trace.as_deref_mut() {
                    trace.manifest_entries_after_cross_schema_stats = entries.len();
                }
                entries
            } else {
                let before = entries.len();
                let mut kept = Vec::with_capacity(entries.len());
                let mut schema_cache: HashMap<i64, Option<Arc<ResolvedStatsSchema>>> =
                    HashMap::new();
                for entry in entries {
                    if entry.file().schema_id == current_schema_id
                        || data_file_matches_predicates_for_table(
                            self.table,
                            entry.file(),
                            &stats_pruning_predicates,
                            &key_stats_predicates,
                            &mut schema_cache,
                        )
                        .await
                    {
                        kept.push(entry);
                    }
                }
                if let Some(trace) = trace.as_deref_mut() {
                    trace.manifest_entries_pruned_by_cross_schema_stats += before - kept.len();
                    trace.manifest_entries_after_cross_schema_stats = kept.len();
                }
                kept
            }
        };
        if entries.is_empty() {
            if let Some(trace) = trace {
                trace.record_final_plan(0, 0, 0);
            }
            return Ok(Plan::new(Vec::new()).with_snapshot_id(snapshot.id()));
        } else if let Some(trace) = trace.as_deref_mut() {
            if trace.manifest_entries_after_cross_schema_stats == 0 {
                trace.manifest_entries_after_cross_schema_stats = entries.len();
            }
        }

        if matches!(self.limit, Some(0)) {
            if let Some(trace) = trace {
                trace.record_final_plan_with_limit(0, 0, 0, 0, true);
            }
            return Ok(Plan::new(Vec::new()).with_snapshot_id(snapshot.id()));
        }

        // Group by (partition, bucket), decomposing entries to avoid cloning partition.
        let groups = group_data_files_by_partition_bucket(entries);
        let mut stats_schema_cache = HashMap::new();

        let snapshot_id = snapshot.id();
        let base_path = table_path.trim_end_matches('/');
        let mut splits = Vec::with_capacity(groups.len());

        let partition_computer = if !partition_keys.is_empty() {
            Some(PartitionComputer::new(
                partition_keys,
                self.table.schema().fields(),
                core_options.partition_default_name(),
                core_options.legacy_partition_name(),
            )?)
        } else {
            None
        };

        // Primary-key tables must keep key-overlapping files in one split so the
        // sort-merge reader sees every version of a key. The comparator decodes
        // the trimmed-PK min/max keys written by the kv writer.
        //
        // Materialized first-row / DV data keeps size-based packing. First-row
        // all-files scans and incremental scans retain L0 and must keep
        // overlapping versions together.
        let use_key_interval_packing = self.requires_key_merge();
        let pk_comparator = if use_key_interval_packing {
            KeyComparator::from_table_schema(self.table.schema())
        } else {
            None
        };

        // The index manifest was read before data manifests so global-index row
        // ranges can prune manifest I/O. Reuse it here for deletion vectors.
        let deletion_files_map = index_entries.as_deref().map(build_deletion_files_map);
        let index_file_in_data_file_dir = self
            .table
            .schema()
            .core_options()
            .index_file_in_data_file_dir();

        let mut data_file_field_ids_cache = DataFileFieldIdsCache::new();
        // Positional distribution precedes LIMIT. Building too few ordinary
        // append splits here could starve a later slice or shard.
        let can_push_down_limit = append_row_position_selection.is_none()
            && self.can_push_down_limit_hint(effective_row_ranges.as_deref());
        let mut limit_accumulator = match self.limit {
            Some(limit) if limit > 0 && can_push_down_limit => {
                Some(LimitPushdownAccumulator::new(limit))
            }
            _ => None,
        };

        'groups: for ((partition, bucket), (total_buckets, data_files)) in groups {
            let partition_row = BinaryRow::from_serialized_bytes(&partition)?;
            let bucket_path = bucket_path(
                &self.table.data_file_location(),
                partition_computer.as_ref(),
                &partition_row,
                bucket,
            )?;
            // Deletion vectors are index files, so they resolve against this bucket's
            // directory, now that it is known.
            let dv_location = IndexFileLocation::BucketLocal {
                table_path: base_path,
                bucket_path: &bucket_path,
                index_file_in_data_file_dir,
            };

            // Original `partition` Vec consumed by PartitionBucket for DV map lookup.
            let per_bucket_deletion_map = deletion_files_map
                .as_ref()
                .and_then(|map| map.get(&PartitionBucket::new(partition, bucket)));

            // Data-evolution reads merge overlapping row-id groups column-wise.
            let file_groups: Vec<SplitGroup> = if self.incremental_split_mode
                == Some(IncrementalSplitMode::Streaming)
                && !data_evolution_enabled
                && (!self.table.schema().primary_keys().is_empty() || core_options.bucket() >= 0)
            {
                vec![SplitGroup {
                    files: data_files,
                    raw_convertible: true,
                }]
            } else if data_evolution_enabled {
                let (row_id_groups, groups_pruned_by_row_ranges) =
                    data_evolution_row_range_groups(data_files, effective_row_ranges.as_deref())?;
                if let Some(trace) = trace.as_deref_mut() {
                    trace.data_evolution_groups_before_stats += row_id_groups.len();
                    trace.data_evolution_groups_pruned_by_row_ranges += groups_pruned_by_row_ranges;
                }

                // Filter groups by merged stats before splitting.
                let row_id_groups: Vec<Vec<DataFileMeta>> = if self.data_predicates.is_empty() {
                    row_id_groups
                } else {
                    let before = row_id_groups.len();
                    let mut groups = Vec::with_capacity(before);
                    for group in row_id_groups {
                        if data_evolution_group_matches_predicates_for_table(
                            self.table,
                            &group,
                            &self.data_predicates,
                            &mut stats_schema_cache,
                        )
                        .await
                        {
                            groups.push(group);
                        }
                    }
                    if let Some(trace) = trace.as_deref_mut() {
                        trace.data_evolution_groups_pruned_by_stats += before - groups.len();
                    }
                    groups
                };

                let row_id_groups = if let Some(read_field_ids) = data_evolution_read_field_ids {
                    if read_field_ids.is_empty() {
                        row_id_groups
                    } else {
                        let mut pruned = Vec::with_capacity(row_id_groups.len());
                        for group in row_id_groups {
                            pruned.push(
                                prune_data_evolution_group_by_read_fields(
                                    group,
                                    read_field_ids,
                                    deletion_vectors_enabled,
                                    table_schema_id,
                                    table_fields,
                                    schema_manager,
                                    &mut data_file_field_ids_cache,
                                )
                                .await?,
                            );
                        }
                        pruned
                    }
                } else {
                    row_id_groups
                };

                if self.row_position_selection().is_some() {
                    // Positional scans promise row-id order across groups. A
                    // projected group can become a singleton, so moving all
                    // multi-file groups first would change which rows a limit
                    // returns after slicing. Pack complete groups in order.
                    pack_for_ordered(
                        row_id_groups,
                        |group| {
                            group
                                .iter()
                                .map(|file| file.file_size)
                                .sum::<i64>()
                                .max(open_file_cost)
                        },
                        target_split_size,
                    )
                    .into_iter()
                    .map(|groups| SplitGroup {
                        raw_convertible: groups.iter().all(|group| group.len() == 1),
                        files: groups.into_iter().flatten().collect(),
                    })
                    .collect()
                } else {
                    let (singles, multis): (Vec<_>, Vec<_>) = row_id_groups
                        .into_iter()
                        .partition(|group| group.len() == 1);

                    let mut result = Vec::new();
                    for group in multis {
                        // Files sharing a row-id range hold column slices of the
                        // same logical rows; physical counts overcount them
                        // (Java DataEvolutionSplitGenerator: not raw convertible).
                        result.push(SplitGroup {
                            files: group,
                            raw_convertible: false,
                        });
                    }

                    let single_files: Vec<DataFileMeta> = singles.into_iter().flatten().collect();
                    for file_group in
                        split_for_batch(single_files, target_split_size, open_file_cost)
                    {
                        result.push(SplitGroup {
                            files: file_group,
                            raw_convertible: true,
                        });
                    }

                    result
                }
            } else if pk_comparator.is_some()
                && (deletion_vectors_enabled
                    || matches!(
                        core_options.merge_engine(),
                        Ok(crate::spec::MergeEngine::FirstRow)
                    ))
                && data_files.iter().all(|file| {
                    file.level != 0 && file.delete_row_count.is_none_or(|count| count == 0)
                })
            {
                // Java MergeTreeSplitGenerator packs materialized DV/first-row
                // files by size even across levels. Clustered files need not be
                // sorted by PK, so marking them as merge-required is unsafe.
                split_for_batch(data_files, target_split_size, open_file_cost)
                    .into_iter()
                    .map(|files| SplitGroup {
                        files,
                        raw_convertible: true,
                    })
                    .collect()
            } else if let Some(ref comparator) = pk_comparator {
                // Merge-tree path: keep key-overlapping files in one split and
                // mark which splits the sort-merge reader can skip (mirrors
                // Java MergeTreeSplitGenerator#splitForBatch). Only engines
                // whose writer deduplicates at flush guarantee a file never
                // holds two rows of one key, so only they may mark groups raw
                // convertible; see merge_tree_split_for_batch.
                let file_keys_unique = matches!(
                    core_options.merge_engine(),
                    Ok(crate::spec::MergeEngine::Deduplicate)
                        | Ok(crate::spec::MergeEngine::FirstRow)
                );
                merge_tree_split_for_batch(
                    data_files,
                    comparator,
                    target_split_size,
                    open_file_cost,
                    file_keys_unique,
                )
            } else {
                split_for_batch(data_files, target_split_size, open_file_cost)
                    .into_iter()
                    .map(|files| SplitGroup {
                        files,
                        raw_convertible: true,
                    })
                    .collect()
            };

            for group in file_groups {
                let SplitGroup {
                    files: file_group,
                    raw_convertible,
                } = group;
                let data_deletion_files = per_bucket_deletion_map.map(|per_bucket| {
                    file_group
                        .iter()
                        .map(|f| {
                            per_bucket
                                .get(&f.file_name)
                                .map(|unresolved| unresolved.resolve(&dv_location))
                        })
                        .collect::<Vec<Option<DeletionFile>>>()
                });

                let split_row_ranges =
                    split_row_ranges_for_files(effective_row_ranges.as_deref(), &file_group)?;
                if split_row_ranges
                    .as_deref()
                    .is_some_and(<[RowRange]>::is_empty)
                {
                    continue;
                }

                let mut builder = DataSplitBuilder::new()
                    .with_snapshot(snapshot_id)
                    .with_partition(partition_row.clone())
                    .with_bucket(bucket)
                    .with_bucket_path(bucket_path.clone())
                    .with_total_buckets(total_buckets)
                    .with_data_files(file_group)
                    .with_raw_convertible(raw_convertible)
                    .with_streaming(self.is_streaming());
                if let Some(files) = data_deletion_files {
                    builder = builder.with_data_deletion_files(files);
                }
                if let Some(row_ranges) = split_row_ranges {
                    builder = builder.with_row_ranges(row_ranges);
                }
                let split = builder.build()?;
                if let Some(accumulator) = limit_accumulator.as_mut() {
                    if accumulator.push(split) {
                        break 'groups;
                    }
                } else {
                    splits.push(split);
                }
            }
        }

        let (splits, split_candidates_built, limit_early_stopped) =
            if let Some(accumulator) = limit_accumulator {
                let result = accumulator.finish();
                (
                    result.splits,
                    result.split_candidates_built,
                    result.limit_early_stopped,
                )
            } else {
                let split_candidates_built = splits.len();
                (splits, split_candidates_built, false)
            };
        let splits = if let Some(selection) = append_row_position_selection {
            selection.select_append_splits(splits, core_options.row_tracking_enabled())?
        } else {
            splits
        };
        let splits = if let Some(config) = self.chunk_shuffle() {
            chunk_shuffle_splits(self.table, splits, config, self.shard()).await?
        } else {
            splits
        };
        let splits_before_limit = split_candidates_built;
        if let Some(trace) = trace {
            let final_files = splits.iter().map(|split| split.data_files().len()).sum();
            trace.record_final_plan_with_limit(
                split_candidates_built,
                splits_before_limit,
                splits.len(),
                final_files,
                limit_early_stopped,
            );
        }

        Ok(Plan::new(splits).with_snapshot_id(snapshot_id))
    }
}

#[cfg(test)]
mod tests {
    use super::{
        data_evolution_row_range_groups, data_file_overlaps_row_range_index,
        group_data_files_by_partition_bucket, manifest_file_overlaps_row_range_index,
        prune_data_evolution_group_by_read_fields, read_manifest_bytes_with_sidecar,
        retain_index_manifest_entry, retain_index_manifest_entry_for_scan, retain_manifest_buckets,
        retain_manifest_entry_row_ranges, retain_manifest_row_ranges, scan_predicate_field_ids,
        should_skip_level_zero_for_scan, split_row_ranges_for_files, LimitPushdownAccumulator,
        ManifestSidecarPruning, PaimonTableScan, RowRangeIndex, TableScan,
    };
    use crate::catalog::Identifier;
    use crate::io::FileIOBuilder;
    use crate::spec::{
        stats::BinaryTableStats, ArrayType, BinaryRow, BinaryRowBuilder, BucketFunctionType,
        ColumnMove, CommitKind, DataField, DataFileMeta, DataType, Datum, DeletionVectorMeta,
        FileKind, GlobalIndexMeta, IndexFileMeta, IndexManifestEntry, IntType, ManifestEntry,
        ManifestFileMeta, ManifestSidecar, ManifestSidecarBuilder, Predicate, PredicateBuilder,
        PredicateOperator, Schema as PaimonSchema, SchemaChange, Snapshot, TableSchema,
        VarCharType,
    };
    use crate::table::bucket_filter::{compute_target_buckets, extract_predicate_for_keys};
    use crate::table::partition_filter::PartitionFilter;
    use crate::table::source::{DataSplit, DataSplitBuilder, DeletionFile, RowRange};
    use crate::table::stats_filter::{
        data_evolution_group_matches_predicates, data_file_matches_predicates,
        data_file_matches_predicates_for_table, data_file_matches_predicates_with_key_stats,
        group_by_overlapping_row_id,
    };
    use crate::table::{CommitMessage, Table, TableCommit};
    use crate::Error;
    use bytes::Bytes;
    use chrono::{DateTime, Utc};
    use std::collections::{HashMap, HashSet};

    #[tokio::test]
    async fn test_engine_served_table_is_refused_at_plan() {
        let schema = crate::spec::Schema::builder()
            .column(
                "id",
                crate::spec::DataType::Int(crate::spec::IntType::new()),
            )
            .option("type", "iceberg-table")
            .build()
            .unwrap();
        let table = Table::new(
            crate::io::FileIOBuilder::new("file").build().unwrap(),
            crate::catalog::Identifier::new("default", "ice_t"),
            "/tmp/test-engine-served".to_string(),
            crate::spec::TableSchema::new(0, &schema),
            None,
        );
        let err = table
            .new_read_builder()
            .new_scan()
            .plan()
            .await
            .expect_err("an engine-served table must not plan as Paimon");
        assert!(
            matches!(err, crate::Error::Unsupported { ref message }
                if message.contains("cannot be served as a Paimon table")),
            "got {err:?}"
        );
    }

    /// Helper to build a DataFileMeta with data evolution fields.
    fn make_evo_file(
        name: &str,
        file_size: i64,
        row_count: i64,
        max_seq: i64,
        first_row_id: Option<i64>,
    ) -> DataFileMeta {
        DataFileMeta {
            file_name: name.to_string(),
            file_size,
            row_count,
            min_key: Vec::new(),
            max_key: Vec::new(),
            key_stats: BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new()),
            value_stats: BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new()),
            min_sequence_number: 0,
            max_sequence_number: max_seq,
            schema_id: 0,
            level: 0,
            extra_files: Vec::new(),
            creation_time: DateTime::<Utc>::from_timestamp(0, 0),
            delete_row_count: None,
            embedded_index: None,
            first_row_id,
            write_cols: None,
            external_path: None,
            file_source: None,
            value_stats_cols: None,
            column_max_sequence_numbers: None,
        }
    }

    fn make_evo_file_with_cols(
        name: &str,
        row_count: i64,
        max_seq: i64,
        first_row_id: i64,
        write_cols: &[&str],
    ) -> DataFileMeta {
        let mut file = make_evo_file(name, 10, row_count, max_seq, Some(first_row_id));
        file.write_cols = Some(write_cols.iter().map(|col| (*col).to_string()).collect());
        file
    }

    #[test]
    fn test_row_range_manifest_filters_fail_open_without_valid_metadata() {
        let index = RowRangeIndex::create(vec![RowRange::new(10, 20)]);
        let stats = BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new());

        let outside = ManifestFileMeta::new("outside".to_string(), 1, 1, 0, stats.clone(), 0)
            .with_row_id_stats(Some(30), Some(40));
        let missing = ManifestFileMeta::new("missing".to_string(), 1, 1, 0, stats.clone(), 0);
        let invalid = ManifestFileMeta::new("invalid".to_string(), 1, 1, 0, stats, 0)
            .with_row_id_stats(Some(40), Some(30));

        assert!(!manifest_file_overlaps_row_range_index(&outside, &index));
        assert!(manifest_file_overlaps_row_range_index(&missing, &index));
        assert!(manifest_file_overlaps_row_range_index(&invalid, &index));

        assert!(!data_file_overlaps_row_range_index(
            &make_evo_file("outside", 1, 5, 0, Some(30)),
            &index
        ));
        assert!(data_file_overlaps_row_range_index(
            &make_evo_file("missing", 1, 5, 0, None),
            &index
        ));
        assert!(data_file_overlaps_row_range_index(
            &make_evo_file("invalid", 1, 0, 0, Some(30)),
            &index
        ));
        assert!(data_file_overlaps_row_range_index(
            &make_evo_file("overflow", 1, 2, 0, Some(i64::MAX)),
            &index
        ));
    }

    #[test]
    fn test_manifest_bucket_pruning_is_exact_and_fails_open() {
        let fields = int_field();
        let predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(42))
            .unwrap();
        let target = *compute_target_buckets(&predicate, &fields, BucketFunctionType::Default, 8)
            .unwrap()
            .iter()
            .next()
            .unwrap();
        let other = (target + 1) % 8;
        let stats = BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new());
        let manifest = |name: &str, bucket: i32, total_buckets| {
            ManifestFileMeta::new(name.to_string(), 1, 1, 0, stats.clone(), 0)
                .with_bucket_level_stats(Some(bucket), Some(bucket), Some(0), Some(0))
                .with_total_buckets(total_buckets)
        };
        let mut manifests = vec![
            manifest("target", target, Some(8)),
            manifest("other", other, Some(8)),
            manifest("legacy", other, None),
            manifest("unassigned", -1, Some(8)),
            manifest("at-total", 8, Some(8)),
            manifest("above-total", 9, Some(8)),
        ];

        retain_manifest_buckets(
            &mut manifests,
            true,
            Some(&predicate),
            &fields,
            BucketFunctionType::Default,
        );

        assert_eq!(
            manifests
                .iter()
                .map(ManifestFileMeta::file_name)
                .collect::<Vec<_>>(),
            vec!["target", "legacy", "at-total", "above-total"]
        );
    }

    #[test]
    fn test_manifest_row_range_pruning_uses_each_envelope() {
        let index = RowRangeIndex::create(vec![RowRange::new(2, 2)]);
        let stats = BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new());
        let manifest = |name: &str, min, max| {
            ManifestFileMeta::new(name.to_string(), 1, 1, 0, stats.clone(), 0)
                .with_row_id_stats(Some(min), Some(max))
        };
        let mut manifests = vec![
            manifest("anchor", 0, 5),
            manifest("left-dedicated", 0, 1),
            manifest("right-dedicated", 4, 5),
            manifest("other-group", 10, 15),
        ];

        retain_manifest_row_ranges(&mut manifests, &index);

        assert_eq!(
            manifests
                .iter()
                .map(ManifestFileMeta::file_name)
                .collect::<Vec<_>>(),
            vec!["anchor"]
        );
    }

    #[test]
    fn test_manifest_row_range_pruning_fails_open_per_unknown_range() {
        let index = RowRangeIndex::create(vec![RowRange::new(2, 2)]);
        let stats = BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new());
        let mut manifests = vec![
            ManifestFileMeta::new("unknown".to_string(), 1, 1, 0, stats.clone(), 0),
            ManifestFileMeta::new("inverted".to_string(), 1, 1, 0, stats.clone(), 0)
                .with_row_id_stats(Some(20), Some(10)),
            ManifestFileMeta::new("one-sided".to_string(), 1, 1, 0, stats.clone(), 0)
                .with_row_id_stats(Some(0), None),
            ManifestFileMeta::new("outside".to_string(), 1, 1, 0, stats, 0)
                .with_row_id_stats(Some(10), Some(15)),
        ];

        retain_manifest_row_ranges(&mut manifests, &index);

        assert_eq!(
            manifests
                .iter()
                .map(ManifestFileMeta::file_name)
                .collect::<Vec<_>>(),
            vec!["unknown", "inverted", "one-sided"]
        );
    }

    #[test]
    fn test_manifest_entry_row_range_pruning_uses_each_file_range() {
        let index = RowRangeIndex::create(vec![RowRange::new(2, 2)]);
        let entry = |name: &str, first_row_id, row_count| {
            ManifestEntry::new(
                FileKind::Add,
                Vec::new(),
                0,
                1,
                make_evo_file(name, 1, row_count, 0, Some(first_row_id)),
                3,
            )
        };
        let entries = vec![
            entry("anchor", 0, 6),
            entry("left-dedicated", 0, 2),
            entry("right-dedicated", 4, 2),
            entry("other-group", 10, 2),
        ];

        let retained = retain_manifest_entry_row_ranges(entries, &index);

        assert_eq!(
            retained
                .iter()
                .map(|entry| entry.file().file_name.as_str())
                .collect::<Vec<_>>(),
            vec!["anchor"]
        );
    }

    #[test]
    fn test_manifest_entry_row_range_pruning_fails_open_per_file() {
        let index = RowRangeIndex::create(vec![RowRange::new(2, 2)]);
        let entry = |name: &str, bucket, first_row_id, row_count| {
            ManifestEntry::new(
                FileKind::Add,
                Vec::new(),
                bucket,
                2,
                make_evo_file(name, 1, row_count, 0, first_row_id),
                3,
            )
        };
        let entries = vec![
            entry("unknown-anchor", 0, None, 6),
            entry("zero-count", 0, Some(10), 0),
            entry("overflow", 0, Some(i64::MAX), 2),
            entry("bucket-0-outside", 0, Some(10), 2),
            entry("bucket-1-outside", 1, Some(10), 2),
        ];

        let retained = retain_manifest_entry_row_ranges(entries, &index);

        let mut names = retained
            .into_iter()
            .map(|entry| entry.file().file_name.clone())
            .collect::<Vec<_>>();
        names.sort();
        assert_eq!(names, vec!["overflow", "unknown-anchor", "zero-count"]);
    }

    #[test]
    fn test_data_evolution_row_range_group_rejects_unknown_range() {
        let files = vec![
            make_evo_file("unknown-anchor", 1, 6, 0, None),
            make_evo_file("left.blob", 1, 2, 0, Some(0)),
            make_evo_file("right.blob", 1, 2, 0, Some(4)),
        ];
        let ranges = [RowRange::new(2, 2)];

        for row_ranges in [None, Some(ranges.as_slice())] {
            let error = data_evolution_row_range_groups(files.clone(), row_ranges).unwrap_err();
            assert!(matches!(error, Error::DataInvalid { message, .. }
                if message == "First row id of 'unknown-anchor' should not be null."));
        }
    }

    #[test]
    fn test_split_row_ranges_rejects_unknown_or_non_overlapping_files() {
        let ranges = [RowRange::new(2, 2)];
        let unknown = make_evo_file("unknown", 1, 6, 0, None);
        let error = split_row_ranges_for_files(Some(&ranges), &[unknown]).unwrap_err();
        assert!(matches!(error, Error::DataInvalid { message, .. }
            if message.contains("missing or invalid row-id range")));

        let outside = make_evo_file("outside", 1, 2, 0, Some(10));
        assert_eq!(
            split_row_ranges_for_files(Some(&ranges), &[outside]).unwrap(),
            Some(Vec::new()),
            "a split holding none of the selected rows is dropped, not an error"
        );
    }

    pub(super) fn data_evolution_test_table(table_path: &str, schema: TableSchema) -> Table {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let schema = schema.copy_with_options(HashMap::from([(
            "data-evolution.enabled".to_string(),
            "true".to_string(),
        )]));
        Table::new(
            file_io,
            Identifier::new("test_db", "de_table"),
            table_path.to_string(),
            schema,
            None,
        )
    }

    pub(super) fn two_column_schema(id: i64, left: &str, right: &str) -> TableSchema {
        TableSchema::new(
            id,
            &PaimonSchema::builder()
                .column(left, DataType::Int(IntType::new()))
                .column(right, DataType::Int(IntType::new()))
                .build()
                .unwrap(),
        )
    }

    async fn write_schema_file(table: &Table, schema: &TableSchema) {
        let path = table.schema_manager().schema_path(schema.id());
        let dir = path.rsplit_once('/').map(|(dir, _)| dir).unwrap();
        table.file_io().mkdirs(dir).await.unwrap();
        let json = serde_json::to_vec(schema).unwrap();
        table
            .file_io()
            .new_output(&path)
            .unwrap()
            .write(Bytes::from(json))
            .await
            .unwrap();
    }

    fn file_names_from_files(files: &[DataFileMeta]) -> Vec<&str> {
        files.iter().map(|file| file.file_name.as_str()).collect()
    }

    #[test]
    fn test_partition_bucket_groups_preserve_manifest_order() {
        let entry = |partition: &[u8], bucket: i32, name: &str| {
            ManifestEntry::new(
                FileKind::Add,
                partition.to_vec(),
                bucket,
                2,
                make_evo_file(name, 1, 1, 1, None),
                2,
            )
        };
        let groups = group_data_files_by_partition_bucket(vec![
            entry(b"b", 1, "b-1.parquet"),
            entry(b"a", 0, "a.parquet"),
            entry(b"b", 0, "b-0.parquet"),
            entry(b"b", 1, "b-1-next.parquet"),
        ]);

        let ordered = groups
            .iter()
            .map(|((partition, bucket), (_, files))| {
                (partition.as_slice(), *bucket, file_names_from_files(files))
            })
            .collect::<Vec<_>>();
        assert_eq!(
            ordered,
            vec![
                (b"b".as_slice(), 1, vec!["b-1.parquet", "b-1-next.parquet"]),
                (b"a".as_slice(), 0, vec!["a.parquet"]),
                (b"b".as_slice(), 0, vec!["b-0.parquet"]),
            ]
        );
    }

    #[tokio::test]
    async fn test_append_plan_keeps_interleaved_partition_bucket_order() {
        let schema = PaimonSchema::builder()
            .column("p", DataType::VarChar(VarCharType::default()))
            .column("id", DataType::Int(IntType::new()))
            .partition_keys(["p"])
            .option("bucket", "2")
            .option("source.split.target-size", "1b")
            .option("source.split.open-file-cost", "1b")
            .build()
            .unwrap();
        let table = Table::new(
            FileIOBuilder::new("memory").build().unwrap(),
            Identifier::new("test_db", "interleaved_groups"),
            "memory:/interleaved_groups".to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        let entry = |partition: &str, bucket: i32, name: &str| {
            let mut row = BinaryRowBuilder::new(1);
            row.write_string(0, partition);
            ManifestEntry::new(
                FileKind::Add,
                row.build_serialized(),
                bucket,
                2,
                make_evo_file(name, 1, 1, 1, None),
                2,
            )
        };
        let entries = vec![
            entry("b", 1, "b-1.parquet"),
            entry("a", 0, "a-0.parquet"),
            entry("b", 0, "b-0.parquet"),
            entry("b", 1, "b-1-next.parquet"),
        ];
        for limit in [None, Some(3)] {
            let scan = PaimonTableScan::new(&table, None, Vec::new(), None, limit, None);
            let plan = scan
                .plan_snapshot_from_entries(
                    diff_snapshot(7),
                    entries.clone(),
                    None,
                    None,
                    None,
                    None,
                )
                .await
                .unwrap();
            let names = plan
                .splits()
                .iter()
                .flat_map(|split| split.data_files())
                .map(|file| file.file_name.as_str())
                .collect::<Vec<_>>();
            let expected = [
                "b-1.parquet",
                "b-1-next.parquet",
                "a-0.parquet",
                "b-0.parquet",
            ];
            assert_eq!(names, expected[..limit.unwrap_or(4)]);
            assert_eq!(plan.snapshot_id(), Some(7));
            assert!(plan.splits().iter().all(|split| split.total_buckets() == 2));
        }
    }

    #[test]
    fn test_merge_manifest_entries_keeps_in_place_upgraded_file() {
        // Reproduces a single-run compaction "upgrade": the SAME file name is
        // deleted at level 0 and re-added at a higher level (Paimon promotes a
        // lone sorted run in place instead of rewriting it). Netting ADD/DELETE
        // by file name alone (ignoring `level`) wrongly drops the upgraded file.
        // Matches Java `FileEntry.Identifier`, which includes `level`.
        use super::merge_manifest_entries;
        use crate::spec::ManifestEntry;

        let entry = |kind: FileKind, name: &str, level: i32| -> ManifestEntry {
            let mut file = make_evo_file(name, 1, 1, 1, None);
            file.level = level;
            ManifestEntry::new(kind, Vec::new(), 0, 1, file, 2)
        };

        let entries = vec![
            entry(FileKind::Add, "f.parquet", 0), // original level-0 write
            entry(FileKind::Delete, "f.parquet", 0), // compaction removes the L0 version
            entry(FileKind::Add, "f.parquet", 5), // same file upgraded to level 5
            entry(FileKind::Add, "g.parquet", 0), // unrelated fresh file
        ];

        let mut live: Vec<(String, i32)> = merge_manifest_entries(entries)
            .into_iter()
            .map(|e| (e.file().file_name.clone(), e.file().level))
            .collect();
        live.sort();
        assert_eq!(
            live,
            vec![("f.parquet".to_string(), 5), ("g.parquet".to_string(), 0)],
            "upgraded file (f@L5) must survive; only f@L0 is cancelled by the DELETE"
        );
    }

    fn file_names(groups: &[Vec<DataFileMeta>]) -> Vec<Vec<&str>> {
        groups
            .iter()
            .map(|g| g.iter().map(|f| f.file_name.as_str()).collect())
            .collect()
    }

    fn int_stats_row(value: Option<i32>) -> Vec<u8> {
        let mut builder = BinaryRowBuilder::new(1);
        match value {
            Some(value) => builder.write_int(0, value),
            None => builder.set_null_at(0),
        }
        builder.build_serialized()
    }

    fn partition_string_field() -> Vec<DataField> {
        vec![DataField::new(
            0,
            "dt".to_string(),
            DataType::VarChar(VarCharType::default()),
        )]
    }

    fn int_field() -> Vec<DataField> {
        vec![DataField::new(
            0,
            "id".to_string(),
            DataType::Int(IntType::new()),
        )]
    }

    fn test_data_file_meta(
        min_values: Vec<u8>,
        max_values: Vec<u8>,
        null_counts: Vec<Option<i64>>,
        row_count: i64,
    ) -> DataFileMeta {
        test_data_file_meta_with_schema(
            min_values,
            max_values,
            null_counts,
            row_count,
            0, // default schema_id
        )
    }

    fn test_data_file_meta_with_schema(
        min_values: Vec<u8>,
        max_values: Vec<u8>,
        null_counts: Vec<Option<i64>>,
        row_count: i64,
        schema_id: i64,
    ) -> DataFileMeta {
        DataFileMeta {
            file_name: "test.parquet".into(),
            file_size: 128,
            row_count,
            min_key: Vec::new(),
            max_key: Vec::new(),
            key_stats: BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new()),
            value_stats: BinaryTableStats::new(min_values, max_values, null_counts),
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id,
            level: 1,
            extra_files: Vec::new(),
            creation_time: Some(Utc::now()),
            delete_row_count: None,
            embedded_index: None,
            first_row_id: None,
            write_cols: None,
            external_path: None,
            file_source: None,
            value_stats_cols: None,
            column_max_sequence_numbers: None,
        }
    }

    fn scan_trace_test_table(table_path: &str) -> Table {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let schema = PaimonSchema::builder()
            .column("id", DataType::Int(IntType::new()))
            .build()
            .unwrap();
        let table_schema = TableSchema::new(0, &schema);
        Table::new(
            file_io,
            Identifier::new("test_db", "scan_trace"),
            table_path.to_string(),
            table_schema,
            None,
        )
    }

    fn scan_trace_small_split_table(table_path: &str) -> Table {
        scan_trace_test_table(table_path).copy_with_options(HashMap::from([
            ("source.split.target-size".to_string(), "1b".to_string()),
            ("source.split.open-file-cost".to_string(), "1b".to_string()),
        ]))
    }

    #[tokio::test]
    async fn test_plain_shard_uses_java_file_names_before_limit() {
        let table = scan_trace_small_split_table("memory:/plain_file_shards");
        setup_scan_trace_dirs(&table).await;
        // Java String.hashCode fixtures: Aa and BB collide at 2112;
        // polygenelubricants hashes to Integer.MIN_VALUE.
        let names = ["Aa", "BB", "polygenelubricants", "😀", "a"];
        let files = names
            .iter()
            .map(|name| stats_trace_file(name, 0, 1))
            .collect();
        TableCommit::new(table.clone(), "file-shards".into())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                files,
            )])
            .await
            .unwrap();

        // abs(hash % 3), rather than abs(hash) % 3 or floorMod(hash, 3).
        let expected = [
            vec!["Aa", "BB"],
            vec!["a", "😀"],
            vec!["polygenelubricants"],
        ];
        for (index, expected) in expected.iter().enumerate() {
            let scan = table
                .new_read_builder()
                .new_scan()
                .with_shard(index, 3)
                .unwrap();
            let plan = scan.plan().await.unwrap();
            let mut actual = plan
                .splits()
                .iter()
                .flat_map(|s| s.data_files())
                .map(|f| f.file_name.as_str())
                .collect::<Vec<_>>();
            actual.sort_unstable();
            assert_eq!(&actual, expected);
            assert_eq!(plan.snapshot_id(), Some(1));
            let limited = table
                .new_read_builder()
                .with_limit(1)
                .new_scan()
                .with_shard(index, 3)
                .unwrap()
                .plan()
                .await
                .unwrap();
            assert_eq!(limited.splits().len(), 1);
            assert!(expected.contains(&limited.splits()[0].data_files()[0].file_name.as_str()));
        }
        let empty = table
            .new_read_builder()
            .new_scan()
            .with_shard(5, 100)
            .unwrap()
            .plan()
            .await
            .unwrap();
        assert!(empty.splits().is_empty());
        assert_eq!(empty.snapshot_id(), Some(1));
    }

    #[tokio::test]
    async fn test_plain_pk_shards_keep_every_version_in_the_bucket() {
        for engine in ["deduplicate", "partial-update", "aggregation"] {
            let table = pk_stats_gate_table(&format!("memory:/bucket_shards_{engine}"))
                .copy_with_options(HashMap::from([
                    ("bucket".into(), "4".into()),
                    ("merge-engine".into(), engine.into()),
                    ("source.split.target-size".into(), "1b".into()),
                ]));
            setup_scan_trace_dirs(&table).await;
            let commit = TableCommit::new(table.clone(), "bucket-shards".into());
            for version in 0..2 {
                let messages = (0..4)
                    .map(|bucket| {
                        let mut file =
                            pk_stats_file(&format!("b{bucket}-v{version}"), (1, 2), (1, 2));
                        file.min_key = int_stats_row(Some(1));
                        file.max_key = int_stats_row(Some(2));
                        file.level = 0;
                        CommitMessage::new(
                            BinaryRowBuilder::new(0).build_serialized(),
                            bucket,
                            vec![file],
                        )
                    })
                    .collect();
                commit.commit(messages).await.unwrap();
            }
            for index in 0..6 {
                let mut builder = table.new_read_builder();
                builder.with_limit(1);
                let (plan, trace) = builder
                    .new_scan()
                    .with_shard(index, 6)
                    .unwrap()
                    .plan_with_trace()
                    .await
                    .unwrap();
                assert_eq!(plan.snapshot_id(), Some(2));
                assert_eq!(trace.final_splits, plan.splits().len());
                if index < 4 {
                    assert_eq!(plan.splits().len(), 1);
                    let split = &plan.splits()[0];
                    assert_eq!(split.bucket(), index as i32);
                    assert!(!split.raw_convertible());
                    assert_eq!(split.data_files().len(), 2);
                    let names = split
                        .data_files()
                        .iter()
                        .map(|f| f.file_name.as_str())
                        .collect::<HashSet<_>>();
                    assert_eq!(
                        names,
                        HashSet::from([
                            format!("b{index}-v0").as_str(),
                            format!("b{index}-v1").as_str()
                        ])
                    );
                } else {
                    assert!(plan.splits().is_empty());
                }
            }
            // Time travel and incremental batches use the same shard before
            // splitting. Neither may accidentally consult the newest state.
            let old =
                table.copy_with_options(HashMap::from([("scan.snapshot-id".into(), "1".into())]));
            let old_plan = old
                .new_read_builder()
                .new_scan()
                .with_shard(3, 4)
                .unwrap()
                .plan()
                .await
                .unwrap();
            assert_eq!(old_plan.snapshot_id(), Some(1));
            assert_eq!(old_plan.splits()[0].data_files()[0].file_name, "b3-v0");
            let delta = table
                .new_read_builder()
                .new_incremental_scan(crate::table::IncrementalScanMode::Delta, 1, 2)
                .with_shard(3, 4)
                .unwrap()
                .plan_combined_delta()
                .await
                .unwrap();
            assert_eq!(delta.snapshot_id(), Some(2));
            assert_eq!(delta.splits().len(), 1);
            assert!(delta.splits()[0].is_streaming());
            assert_eq!(delta.splits()[0].data_files()[0].file_name, "b3-v1");
        }
    }

    #[tokio::test]
    async fn test_plain_raw_pk_shards_use_file_names_instead_of_buckets() {
        for (engine, dv) in [("first-row", false), ("deduplicate", true)] {
            for all_files in [false, true] {
                let table =
                    pk_stats_gate_table(&format!("memory:/raw_shards_{engine}_{all_files}"))
                        .copy_with_options(HashMap::from([
                            ("merge-engine".into(), engine.into()),
                            ("deletion-vectors.enabled".into(), dv.to_string()),
                            ("source.split.target-size".into(), "1b".into()),
                        ]));
                setup_scan_trace_dirs(&table).await;
                let files = ["Aa", "BB", "polygenelubricants", "😀", "a"]
                    .iter()
                    .map(|name| pk_stats_file(name, (1, 2), (1, 2)))
                    .collect();
                TableCommit::new(table.clone(), "raw-shards".into())
                    .commit(vec![CommitMessage::new(
                        BinaryRowBuilder::new(0).build_serialized(),
                        0,
                        files,
                    )])
                    .await
                    .unwrap();
                let expected = [
                    vec!["Aa", "BB"],
                    vec!["a", "😀"],
                    vec!["polygenelubricants"],
                ];
                for (index, expected) in expected.iter().enumerate() {
                    let scan = table.new_read_builder().new_scan();
                    let scan = if all_files {
                        scan.with_scan_all_files()
                    } else {
                        scan
                    };
                    let plan = scan.with_shard(index, 3).unwrap().plan().await.unwrap();
                    let mut names = plan
                        .splits()
                        .iter()
                        .flat_map(|split| split.data_files())
                        .map(|file| file.file_name.as_str())
                        .collect::<Vec<_>>();
                    names.sort_unstable();
                    assert_eq!(&names, expected, "{engine}, all_files={all_files}");
                    assert!(plan.splits().iter().all(|split| split.bucket() == 0));
                }
                // Streaming reads retain L0 and still select by file name.
                let delta = table
                    .new_read_builder()
                    .new_incremental_scan(crate::table::IncrementalScanMode::Delta, 0, 1)
                    .with_shard(2, 3)
                    .unwrap()
                    .plan_combined_delta()
                    .await
                    .unwrap();
                assert_eq!(delta.splits().len(), 1);
                assert_eq!(
                    delta.splits()[0].data_files()[0].file_name,
                    "polygenelubricants"
                );
            }
        }
    }

    #[tokio::test]
    async fn test_plain_data_evolution_shards_keep_column_groups_in_the_bucket() {
        let table = data_evolution_test_table(
            "memory:/de_bucket_shards",
            two_column_schema(0, "id", "name"),
        )
        .copy_with_options(HashMap::from([("bucket".into(), "-1".into())]));
        setup_scan_trace_dirs(&table).await;
        let messages = vec![CommitMessage::new(
            BinaryRowBuilder::new(0).build_serialized(),
            0,
            vec![
                make_evo_file_with_cols("id", 2, 1, 0, &["id"]),
                make_evo_file_with_cols("name", 2, 2, 0, &["name"]),
            ],
        )];
        TableCommit::new(table.clone(), "de-shards".into())
            .commit(messages)
            .await
            .unwrap();
        for index in 0..3 {
            let plan = table
                .new_read_builder()
                .new_scan()
                .with_shard(index, 3)
                .unwrap()
                .plan()
                .await
                .unwrap();
            assert_eq!(plan.snapshot_id(), Some(1));
            if index == 0 {
                assert_eq!(plan.splits().len(), 1);
                assert_eq!(plan.splits()[0].bucket(), index as i32);
                assert_eq!(plan.splits()[0].data_files().len(), 2);
                assert!(!plan.splits()[0].raw_convertible());
            } else {
                assert!(plan.splits().is_empty());
            }
        }
    }

    pub(super) async fn setup_scan_trace_dirs(table: &Table) {
        table
            .file_io()
            .mkdirs(&format!("{}/snapshot/", table.location()))
            .await
            .unwrap();
        table
            .file_io()
            .mkdirs(&format!("{}/manifest/", table.location()))
            .await
            .unwrap();
    }

    fn stats_trace_file(name: &str, min_id: i32, max_id: i32) -> DataFileMeta {
        let mut file = test_data_file_meta(
            int_stats_row(Some(min_id)),
            int_stats_row(Some(max_id)),
            vec![Some(0)],
            2,
        );
        file.file_name = name.to_string();
        file
    }

    fn limit_test_table() -> Table {
        let file_io = FileIOBuilder::new("file").build().unwrap();
        let schema = PaimonSchema::builder().build().unwrap();
        let table_schema = TableSchema::new(0, &schema);
        Table::new(
            file_io,
            Identifier::new("test_db", "test_table"),
            "/tmp/test-table".to_string(),
            table_schema,
            None,
        )
    }

    #[test]
    fn test_scan_with_empty_row_ranges_is_preserved() {
        let table = limit_test_table();
        let scan = PaimonTableScan::new(&table, None, Vec::new(), None, None, None)
            .with_row_ranges(Vec::new());

        assert_eq!(scan.row_ranges, Some(Vec::new()));
    }

    fn limit_test_split(file_name: &str, row_count: i64) -> DataSplit {
        let mut file = test_data_file_meta(Vec::new(), Vec::new(), Vec::new(), row_count);
        file.file_name = file_name.to_string();

        DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(format!("file:/tmp/{file_name}"))
            .with_total_buckets(1)
            .with_data_files(vec![file])
            .build()
            .unwrap()
    }

    fn limit_test_split_with_unknown_merged_row_count(
        file_name: &str,
        row_count: i64,
    ) -> DataSplit {
        let mut file = test_data_file_meta(Vec::new(), Vec::new(), Vec::new(), row_count);
        file.file_name = file_name.to_string();

        DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path(format!("file:/tmp/{file_name}"))
            .with_total_buckets(1)
            .with_data_files(vec![file])
            .with_data_deletion_files(vec![Some(DeletionFile::new(
                format!("file:/tmp/{file_name}.dv"),
                0,
                0,
                None,
            ))])
            .build()
            .unwrap()
    }

    fn split_file_names(splits: &[DataSplit]) -> Vec<&str> {
        splits
            .iter()
            .map(|split| split.data_files()[0].file_name.as_str())
            .collect()
    }

    #[test]
    fn test_apply_limit_pushdown_zero_returns_empty() {
        let table = limit_test_table();
        let scan = TableScan::new(&table, None, vec![], None, Some(0), None);
        let splits = vec![
            limit_test_split("a.parquet", 2),
            limit_test_split("b.parquet", 3),
        ];

        let pruned = scan.apply_limit_pushdown(splits);

        assert!(pruned.is_empty());
    }

    /// Java semantics: unknown-count splits are skipped — they cannot prove
    /// progress toward the limit — and pruning commits once the counted
    /// splits alone cover the limit.
    #[test]
    fn test_apply_limit_pushdown_skips_unknown_merged_row_count() {
        let table = limit_test_table();
        let scan = TableScan::new(&table, None, vec![], None, Some(3), None);
        let splits = vec![
            limit_test_split("a.parquet", 2),
            limit_test_split_with_unknown_merged_row_count("b.parquet", 4),
            limit_test_split("c.parquet", 3),
        ];

        let pruned = scan.apply_limit_pushdown(splits);

        assert_eq!(split_file_names(&pruned), vec!["a.parquet", "c.parquet"]);
    }

    /// When counted splits never reach the limit, the original split list is
    /// returned unchanged (mirrors Java `applyPushDownLimit`).
    #[test]
    fn test_apply_limit_pushdown_returns_all_when_limit_not_reached() {
        let table = limit_test_table();
        let scan = TableScan::new(&table, None, vec![], None, Some(100), None);
        let splits = vec![
            limit_test_split("a.parquet", 2),
            limit_test_split_with_unknown_merged_row_count("b.parquet", 4),
            limit_test_split("c.parquet", 3),
        ];

        let pruned = scan.apply_limit_pushdown(splits);

        assert_eq!(
            split_file_names(&pruned),
            vec!["a.parquet", "b.parquet", "c.parquet"]
        );
    }

    /// A non-raw-convertible split (merge-needed PK split) has an unknown
    /// merged row count: its physical rows overcount merged versions, so it
    /// must not satisfy the limit on its own.
    #[test]
    fn test_apply_limit_pushdown_treats_merge_splits_as_unknown() {
        let table = limit_test_table();
        let scan = TableScan::new(&table, None, vec![], None, Some(3), None);

        let mut merge_file = test_data_file_meta(Vec::new(), Vec::new(), Vec::new(), 10);
        merge_file.file_name = "merge.parquet".to_string();
        let merge_split = DataSplitBuilder::new()
            .with_snapshot(1)
            .with_partition(BinaryRow::new(0))
            .with_bucket(0)
            .with_bucket_path("file:/tmp/merge.parquet".to_string())
            .with_total_buckets(1)
            .with_data_files(vec![merge_file])
            .with_raw_convertible(false)
            .build()
            .unwrap();
        assert_eq!(merge_split.merged_row_count(), None);

        let splits = vec![merge_split, limit_test_split("a.parquet", 3)];
        let pruned = scan.apply_limit_pushdown(splits);

        // The merge split is skipped; only the counted split commits pruning.
        assert_eq!(split_file_names(&pruned), vec!["a.parquet"]);
    }

    #[test]
    fn test_incremental_limit_accumulator_stops_after_known_count_reaches_limit() {
        let mut accumulator = LimitPushdownAccumulator::new(3);

        assert!(!accumulator.push(limit_test_split("a.parquet", 2)));
        assert!(
            !accumulator.push(limit_test_split_with_unknown_merged_row_count(
                "b.parquet",
                4
            ))
        );
        assert!(accumulator.push(limit_test_split("c.parquet", 3)));

        let result = accumulator.finish();
        assert!(result.limit_early_stopped);
        assert_eq!(result.split_candidates_built, 3);
        assert_eq!(
            split_file_names(&result.splits),
            vec!["a.parquet", "c.parquet"]
        );
    }

    #[test]
    fn test_incremental_limit_accumulator_does_not_truncate_on_oversized_limit() {
        // A limit above i64::MAX (e.g. a C caller passing SIZE_MAX) must not wrap
        // negative through a signed cast and early-stop after the first counted
        // split; real row counts can never reach it, so every split is kept.
        for limit in [usize::MAX, (i64::MAX as usize) + 1] {
            let mut accumulator = LimitPushdownAccumulator::new(limit);
            assert!(!accumulator.push(limit_test_split("a.parquet", 2)));
            assert!(!accumulator.push(limit_test_split("b.parquet", 3)));
            let result = accumulator.finish();
            assert!(
                !result.limit_early_stopped,
                "limit {limit} must not early-stop"
            );
            assert_eq!(
                split_file_names(&result.splits),
                vec!["a.parquet", "b.parquet"],
                "limit {limit} must keep all splits"
            );
        }
    }

    #[test]
    fn test_incremental_limit_accumulator_returns_fallback_when_limit_not_reached() {
        let mut accumulator = LimitPushdownAccumulator::new(100);

        assert!(!accumulator.push(limit_test_split("a.parquet", 2)));
        assert!(
            !accumulator.push(limit_test_split_with_unknown_merged_row_count(
                "b.parquet",
                4
            ))
        );
        assert!(!accumulator.push(limit_test_split("c.parquet", 3)));

        let result = accumulator.finish();
        assert!(!result.limit_early_stopped);
        assert_eq!(result.split_candidates_built, 3);
        assert_eq!(
            split_file_names(&result.splits),
            vec!["a.parquet", "b.parquet", "c.parquet"]
        );
    }

    #[test]
    fn test_first_row_skips_level_zero_by_default() {
        assert!(should_skip_level_zero_for_scan(
            false,
            true,
            false,
            false,
            Ok(crate::spec::MergeEngine::FirstRow),
        ));
    }

    #[test]
    fn test_first_row_dv_merge_on_read_keeps_level_zero() {
        // Java permits first-row DVs in pk-clustering-override tables.
        assert!(!should_skip_level_zero_for_scan(
            false,
            true,
            true,
            true,
            Ok(crate::spec::MergeEngine::FirstRow)
        ));
        assert!(should_skip_level_zero_for_scan(
            false,
            true,
            true,
            false,
            Ok(crate::spec::MergeEngine::FirstRow)
        ));
    }

    #[test]
    fn test_scan_all_files_disables_first_row_level_zero_skip() {
        assert!(!should_skip_level_zero_for_scan(
            true,
            true,
            false,
            false,
            Ok(crate::spec::MergeEngine::FirstRow),
        ));
    }

    #[test]
    fn test_dv_merge_on_read_controls_batch_level_zero_visibility() {
        assert!(should_skip_level_zero_for_scan(
            false,
            true,
            true,
            false,
            Ok(crate::spec::MergeEngine::Deduplicate),
        ));
        assert!(!should_skip_level_zero_for_scan(
            false,
            true,
            true,
            true,
            Ok(crate::spec::MergeEngine::Deduplicate),
        ));
    }

    #[test]
    fn test_partition_filter_decode_failure_fails_open() {
        let fields = partition_string_field();
        let predicate = PredicateBuilder::new(&fields)
            .equal("dt", Datum::String("2024-01-01".into()))
            .unwrap();

        // Range predicate to force Predicate variant (fail-open path)
        let filter = PartitionFilter::Predicate(predicate);
        assert!(filter.matches_entry(&[0xFF, 0x00]).unwrap());
    }

    #[test]
    fn test_partition_filter_eval_error_fails_fast() {
        let mut builder = BinaryRowBuilder::new(1);
        builder.write_string(0, "2024-01-01");
        let serialized = builder.build_serialized();

        let predicate = Predicate::Leaf {
            column: "dt".into(),
            index: 0,
            data_type: DataType::Array(ArrayType::new(DataType::Int(IntType::new()))),
            op: PredicateOperator::Eq,
            literals: vec![Datum::Int(42)],
        };

        let filter = PartitionFilter::Predicate(predicate);
        let err = filter
            .matches_entry(&serialized)
            .expect_err("eval_row error should propagate");

        assert!(
            matches!(&err, Error::Unsupported { message } if message.contains("extract_datum")),
            "Expected extract_datum unsupported error, got: {err:?}"
        );
    }

    const TEST_SCHEMA_ID: i64 = 0;
    fn test_schema_fields() -> Vec<DataField> {
        int_field()
    }

    #[test]
    fn test_group_by_overlapping_row_id_empty() {
        let result = group_by_overlapping_row_id(vec![]);
        assert!(result.is_empty());
    }

    #[test]
    fn test_group_by_overlapping_row_id_no_row_ids() {
        let files = vec![
            make_evo_file("a", 10, 100, 1, None),
            make_evo_file("b", 10, 100, 2, None),
        ];
        let groups = group_by_overlapping_row_id(files);
        assert_eq!(file_names(&groups), vec![vec!["a"], vec!["b"]]);
    }

    #[test]
    fn test_group_by_overlapping_row_id_same_range() {
        let files = vec![
            make_evo_file("a", 10, 100, 2, Some(0)),
            make_evo_file("b", 10, 100, 1, Some(0)),
        ];
        let groups = group_by_overlapping_row_id(files);
        assert_eq!(groups.len(), 1);
        assert_eq!(file_names(&groups), vec![vec!["a", "b"]]);
    }

    #[tokio::test]
    async fn test_row_position_selection_keeps_single_before_multi_group() {
        let schema = two_column_schema(0, "id", "name").copy_with_options(HashMap::from([(
            "source.split.target-size".to_string(),
            "1b".to_string(),
        )]));
        let table = data_evolution_test_table("memory:/row_position_selection_group_order", schema);
        setup_scan_trace_dirs(&table).await;
        TableCommit::new(table.clone(), "row-position-order".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![
                    make_evo_file_with_cols("early.parquet", 4, 1, 0, &["id", "name"]),
                    make_evo_file_with_cols("late-old.parquet", 4, 1, 4, &["id", "name"]),
                    make_evo_file_with_cols("late-new.parquet", 4, 2, 4, &["name"]),
                ],
            )])
            .await
            .unwrap();
        let mut reader = table.new_read_builder();
        reader.with_limit(1);
        let plan = reader
            .new_scan()
            .with_row_position_slice(2, 6)
            .unwrap()
            .plan()
            .await
            .unwrap();
        assert_eq!(plan.splits().len(), 2);
        assert_eq!(plan.splits()[0].data_files()[0].file_name, "early.parquet");
        assert_eq!(
            plan.splits()[0].row_ranges(),
            Some([RowRange::new(2, 3)].as_slice())
        );
        assert_eq!(
            plan.splits()[1].row_ranges(),
            Some([RowRange::new(4, 5)].as_slice())
        );
    }

    #[tokio::test]
    async fn test_row_position_selection_precedes_group_stats_and_limit() {
        let table = data_evolution_test_table(
            "memory:/row_position_selection_before_stats",
            two_column_schema(0, "id", "name"),
        );
        setup_scan_trace_dirs(&table).await;
        let files = [0, 3]
            .into_iter()
            .map(|start| {
                let mut file =
                    make_evo_file(&format!("range-{start}.parquet"), 10, 3, 1, Some(start));
                file.value_stats = BinaryTableStats::new(
                    two_int_stats_row(Some(start as i32), Some(0)),
                    two_int_stats_row(Some(start as i32 + 2), Some(0)),
                    vec![Some(0), Some(0)],
                );
                file
            })
            .collect();
        TableCommit::new(table.clone(), "row-position-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                files,
            )])
            .await
            .unwrap();
        let predicate = PredicateBuilder::new(table.schema().fields())
            .greater_or_equal("id", Datum::Int(3))
            .unwrap();
        let mut reader = table.new_read_builder();
        reader.with_filter(predicate).with_limit(1);

        let (empty, trace) = reader
            .new_scan()
            .with_row_position_shard(0, 2)
            .unwrap()
            .plan_with_trace()
            .await
            .unwrap();
        assert!(empty.splits().is_empty());
        assert_eq!(empty.snapshot_id(), Some(1));
        assert_eq!(trace.data_evolution_groups_pruned_by_stats, 1);

        let plan = reader
            .new_scan()
            .with_row_position_shard(1, 2)
            .unwrap()
            .plan()
            .await
            .unwrap();
        assert_eq!(plan.splits().len(), 1);
        assert_eq!(
            plan.splits()[0].data_files()[0].file_name,
            "range-3.parquet"
        );
        assert_eq!(
            plan.splits()[0].row_ranges(),
            Some([RowRange::new(3, 5)].as_slice())
        );
    }

    #[tokio::test]
    async fn test_row_position_selection_intersects_ranges_after_assignment() {
        let table = data_evolution_test_table(
            "memory:/row_position_selection_range_intersection",
            two_column_schema(0, "id", "name"),
        );
        setup_scan_trace_dirs(&table).await;
        TableCommit::new(table.clone(), "row-position-ranges".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![
                    make_evo_file("early.parquet", 10, 3, 1, Some(0)),
                    make_evo_file("late.parquet", 10, 3, 1, Some(3)),
                ],
            )])
            .await
            .unwrap();
        let mut reader = table.new_read_builder();
        reader.with_row_ranges(vec![RowRange::new(4, 4)]);
        let empty = reader
            .new_scan()
            .with_row_position_slice(0, 2)
            .unwrap()
            .plan()
            .await
            .unwrap();
        assert!(empty.splits().is_empty());
        assert_eq!(empty.snapshot_id(), Some(1));
        let selected = reader
            .new_scan()
            .with_row_position_slice(3, 6)
            .unwrap()
            .plan()
            .await
            .unwrap();
        assert_eq!(selected.splits().len(), 1);
        assert_eq!(
            selected.splits()[0].row_ranges(),
            Some([RowRange::new(4, 4)].as_slice())
        );
    }

    #[test]
    fn test_row_position_selection_accepts_append_and_rejects_mixed_modes() {
        let append = limit_test_table();
        assert!(append
            .new_read_builder()
            .new_scan()
            .with_row_position_shard(0, 1)
            .is_ok());
        let table = data_evolution_test_table(
            "memory:/row_position_selection_validation",
            two_column_schema(0, "id", "name"),
        );
        let reader = table.new_read_builder();
        assert!(reader
            .new_scan()
            .with_row_position_slice(0, 2)
            .unwrap()
            .with_row_position_shard(0, 1)
            .is_err());
        assert!(reader
            .new_scan()
            .with_row_position_shard(0, 1)
            .unwrap()
            .with_row_position_slice(0, 2)
            .is_err());
        assert!(reader
            .new_scan()
            .with_row_position_shard(0, 1)
            .unwrap()
            .with_row_position_shard(1, 2)
            .is_ok());
        assert!(reader
            .new_scan()
            .with_row_position_shard(0, 1)
            .unwrap()
            .with_chunk_shuffle(0, 1)
            .is_err());
        assert!(reader
            .new_scan()
            .with_row_position_shard(0, 1)
            .unwrap()
            .with_shard(0, 1)
            .is_err());
        assert!(reader
            .new_scan()
            .with_shard(0, 1)
            .unwrap()
            .with_row_position_shard(0, 1)
            .is_err());
        assert!(reader
            .new_scan()
            .with_chunk_shuffle(0, 1)
            .unwrap()
            .with_row_position_shard(0, 1)
            .is_err());
        assert!(reader
            .new_scan()
            .with_shard(0, 1)
            .unwrap()
            .with_chunk_shuffle(0, 1)
            .is_ok());
        assert!(reader
            .new_scan()
            .with_chunk_shuffle(0, 1)
            .unwrap()
            .with_shard(0, 1)
            .is_ok());
        assert!(reader.new_scan().with_shard(0, 0).is_err());
        assert!(reader.new_scan().with_shard(1, 1).is_err());
    }

    #[tokio::test]
    async fn test_data_evolution_row_ranges_prune_normal_groups() {
        let table_path = "memory:/de_row_range_prune_normal_groups";
        let table = data_evolution_test_table(table_path, two_column_schema(0, "id", "name"));
        setup_scan_trace_dirs(&table).await;

        TableCommit::new(table.clone(), "row-range-prune-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![
                    make_evo_file("a-new", 10, 101, 2, Some(0)),
                    make_evo_file("a-old", 10, 101, 1, Some(0)),
                    make_evo_file("b-new", 10, 101, 4, Some(400)),
                    make_evo_file("b-old", 10, 101, 3, Some(400)),
                ],
            )])
            .await
            .unwrap();

        let mut read_builder = table.new_read_builder();
        read_builder.with_row_ranges(vec![RowRange::new(0, 0)]);
        let (plan, trace) = read_builder.new_scan().plan_with_trace().await.unwrap();
        let planned_files = plan
            .splits()
            .iter()
            .flat_map(|split| split.data_files())
            .map(|file| file.file_name.as_str())
            .collect::<Vec<_>>();

        assert_eq!(planned_files, vec!["a-new", "a-old"]);
        assert_eq!(trace.manifest_entries_read, 4);
        assert_eq!(trace.manifest_entries_pruned_by_row_ranges, 2);
        assert_eq!(trace.manifest_entries_after_manifest_filters, 4);
        assert_eq!(trace.manifest_entries_after_merge, 4);
        assert_eq!(trace.data_evolution_groups_before_stats, 1);
        assert_eq!(trace.data_evolution_groups_pruned_by_row_ranges, 0);

        let snapshot = table
            .snapshot_manager()
            .get_latest_snapshot()
            .await
            .unwrap()
            .unwrap();
        let delta_plan = read_builder
            .new_scan()
            .plan_snapshot_delta(&snapshot)
            .await
            .unwrap();
        let delta_files = delta_plan
            .splits()
            .iter()
            .flat_map(|split| split.data_files())
            .map(|file| file.file_name.as_str())
            .collect::<Vec<_>>();
        assert_eq!(delta_files, vec!["a-new", "a-old"]);
    }

    #[tokio::test]
    async fn test_manifest_sidecar_read_uses_full_file_only_for_dense_selection() {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let manifest_path = "memory:/adaptive_manifest_read/manifest-test";
        let sidecar_path = ManifestSidecar::path(manifest_path);
        let mut header = b"Obj\x01".to_vec();
        header.resize(32, 0);
        let mut builder = ManifestSidecarBuilder::new(header.clone(), true, false);
        let mut offset = header.len() as u64;
        for (length, first_row_id) in [(200, 0), (50, 100), (200, 200)] {
            builder.begin_block(offset, length, 1).unwrap();
            builder
                .add(Some(first_row_id), 1, None, None, None)
                .unwrap();
            builder.end_block().unwrap();
            offset += length;
        }
        let sidecar = builder.serialize(offset, 3).unwrap();
        let manifest = ManifestFileMeta::new(
            "manifest-test".to_string(),
            offset as i64,
            3,
            0,
            BinaryTableStats::empty(),
            0,
        )
        .with_extra_files(Some(vec!["manifest-test.avro.sidecar".to_string()]));
        let mut avro = header.clone();
        avro.extend((0..450).map(|value| value as u8));
        file_io
            .new_output(manifest_path)
            .unwrap()
            .write(Bytes::from(avro.clone()))
            .await
            .unwrap();
        file_io
            .new_output(&sidecar_path)
            .unwrap()
            .write(Bytes::from(sidecar))
            .await
            .unwrap();

        let dense = RowRangeIndex::create(vec![RowRange::new(0, 0), RowRange::new(200, 200)]);
        let dense_bytes = read_manifest_bytes_with_sidecar(
            &file_io,
            manifest_path,
            &manifest,
            true,
            ManifestSidecarPruning {
                row_range_index: Some(&dense),
                partition_filter: None,
                partition_arity: 0,
                bucket_predicate: None,
                bucket_key_fields: &[],
                bucket_function_type: BucketFunctionType::Default,
            },
        )
        .await
        .unwrap();
        assert_eq!(dense_bytes.as_ref(), avro);

        let sparse = RowRangeIndex::create(vec![RowRange::new(0, 0)]);
        let sparse_bytes = read_manifest_bytes_with_sidecar(
            &file_io,
            manifest_path,
            &manifest,
            true,
            ManifestSidecarPruning {
                row_range_index: Some(&sparse),
                partition_filter: None,
                partition_arity: 0,
                bucket_predicate: None,
                bucket_key_fields: &[],
                bucket_function_type: BucketFunctionType::Default,
            },
        )
        .await
        .unwrap();
        let mut expected = header;
        let start = expected.len();
        expected.extend_from_slice(&avro[start..start + 200]);
        assert_eq!(sparse_bytes.as_ref(), expected);
    }

    #[tokio::test]
    async fn test_manifest_sidecar_prunes_avro_blocks_before_entry_decode() {
        const FILE_COUNT: usize = 1_000;
        let table_path = "memory:/manifest_sidecar_block_pruning";
        let schema = two_column_schema(0, "id", "name").copy_with_options(HashMap::from([(
            "manifest.sidecar.enabled".to_string(),
            "true".to_string(),
        )]));
        let table = data_evolution_test_table(table_path, schema);
        setup_scan_trace_dirs(&table).await;

        let files = (0..FILE_COUNT)
            .map(|row_id| {
                make_evo_file(
                    &format!("data-{row_id:04}.parquet"),
                    10,
                    1,
                    row_id as i64,
                    Some(row_id as i64),
                )
            })
            .collect();
        TableCommit::new(table.clone(), "manifest-sidecar-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                files,
            )])
            .await
            .unwrap();

        let mut reader = table.new_read_builder();
        reader.with_row_ranges(vec![RowRange::new(0, 0)]);
        let (plan, trace) = reader.new_scan().plan_with_trace().await.unwrap();
        let planned = plan
            .splits()
            .iter()
            .flat_map(|split| split.data_files())
            .map(|file| file.file_name.as_str())
            .collect::<Vec<_>>();

        assert_eq!(planned, vec!["data-0000.parquet"]);
        assert!(trace.manifest_entries_read > 0);
        assert!(
            trace.manifest_entries_read < FILE_COUNT,
            "the sidecar should avoid decoding non-overlapping Avro blocks"
        );
    }

    #[tokio::test]
    async fn test_row_range_trace_excludes_manifest_netting() {
        let table_path = "memory:/de_row_range_trace_netting";
        let table = data_evolution_test_table(table_path, two_column_schema(0, "id", "name"));
        setup_scan_trace_dirs(&table).await;

        let deleted = make_evo_file_with_cols("deleted.parquet", 10, 1, 0, &["id"]);
        let retained = make_evo_file_with_cols("retained.parquet", 10, 2, 0, &["id"]);
        let pruned = make_evo_file_with_cols("pruned.parquet", 10, 3, 100, &["id"]);
        let partition = BinaryRowBuilder::new(0).build_serialized();
        TableCommit::new(table.clone(), "row-range-netting-add".to_string())
            .commit(vec![CommitMessage::new(
                partition.clone(),
                0,
                vec![deleted.clone(), retained, pruned],
            )])
            .await
            .unwrap();

        let mut delete = CommitMessage::new(partition, 0, Vec::new());
        delete.deleted_files = vec![deleted];
        TableCommit::new(table.clone(), "row-range-netting-delete".to_string())
            .commit(vec![delete])
            .await
            .unwrap();

        let mut read_builder = table.new_read_builder();
        read_builder.with_row_ranges(vec![RowRange::new(0, 0)]);
        let (plan, trace) = read_builder.new_scan().plan_with_trace().await.unwrap();

        assert_eq!(
            plan.splits()[0].data_files()[0].file_name,
            "retained.parquet"
        );
        assert_eq!(trace.manifest_entries_read, 4);
        assert_eq!(trace.manifest_entries_after_manifest_filters, 4);
        assert_eq!(trace.manifest_entries_after_merge, 2);
        assert_eq!(trace.manifest_entries_pruned_by_row_ranges, 1);
    }

    #[tokio::test]
    async fn test_snapshot_delta_rejects_manifest_deletes_before_row_range_pruning() {
        let table_path = "memory:/de_delta_row_range_netting";
        let schema = two_column_schema(0, "id", "payload").copy_with_options(HashMap::from([(
            "manifest.sidecar.enabled".to_string(),
            "true".to_string(),
        )]));
        let table = data_evolution_test_table(table_path, schema);
        setup_scan_trace_dirs(&table).await;

        let deleted = make_evo_file_with_cols("deleted.blob", 100, 1, 0, &["payload"]);
        let partition = BinaryRowBuilder::new(0).build_serialized();
        TableCommit::new(table.clone(), "delta-netting-base".to_string())
            .commit(vec![CommitMessage::new(
                partition.clone(),
                0,
                vec![deleted.clone()],
            )])
            .await
            .unwrap();

        let anchor = make_evo_file_with_cols("anchor.parquet", 1_000, 2, 0, &["id"]);
        let mut replacement = CommitMessage::new(partition, 0, vec![anchor]);
        replacement.deleted_files = vec![deleted];
        TableCommit::new(table.clone(), "delta-netting-replacement".to_string())
            .commit(vec![replacement])
            .await
            .unwrap();

        let snapshot = table
            .snapshot_manager()
            .get_latest_snapshot()
            .await
            .unwrap()
            .unwrap();
        let mut read_builder = table.new_read_builder();
        read_builder.with_row_ranges(vec![RowRange::new(120, 129)]);
        let error = read_builder
            .new_scan()
            .plan_snapshot_delta(&snapshot)
            .await
            .unwrap_err();
        assert!(
            matches!(error, crate::Error::DataInvalid { ref message, .. }
            if message.contains("only ADD"))
        );
    }

    #[tokio::test]
    async fn test_data_evolution_prunes_files_without_projected_columns() {
        let table =
            data_evolution_test_table("memory:/de_prune_cols", two_column_schema(0, "id", "name"));
        let read_field_ids = HashSet::from([1]);
        let files = vec![
            make_evo_file_with_cols("id.parquet", 10, 1, 0, &["id"]),
            make_evo_file_with_cols("name.parquet", 10, 2, 0, &["name"]),
        ];
        let mut field_ids_cache = HashMap::new();

        let pruned = prune_data_evolution_group_by_read_fields(
            files,
            &read_field_ids,
            false,
            table.schema().id(),
            table.schema().fields(),
            table.schema_manager(),
            &mut field_ids_cache,
        )
        .await
        .unwrap();

        assert_eq!(file_names_from_files(&pruned), vec!["name.parquet"]);
    }

    #[tokio::test]
    async fn test_data_evolution_pruning_keeps_dv_anchor() {
        let table =
            data_evolution_test_table("memory:/de_prune_dv", two_column_schema(0, "id", "name"));
        let read_field_ids = HashSet::from([1]);
        let files = vec![
            make_evo_file_with_cols("new-name.parquet", 10, 5, 0, &["name"]),
            make_evo_file_with_cols("old-id.parquet", 10, 1, 0, &["id"]),
        ];
        let mut field_ids_cache = HashMap::new();

        let pruned = prune_data_evolution_group_by_read_fields(
            files,
            &read_field_ids,
            true,
            table.schema().id(),
            table.schema().fields(),
            table.schema_manager(),
            &mut field_ids_cache,
        )
        .await
        .unwrap();

        assert_eq!(
            file_names_from_files(&pruned),
            vec!["new-name.parquet", "old-id.parquet"]
        );
    }

    #[tokio::test]
    async fn test_data_evolution_pruning_keeps_row_count_representative() {
        let table = data_evolution_test_table(
            "memory:/de_prune_representative",
            two_column_schema(0, "id", "name"),
        );
        let read_field_ids = HashSet::from([2]);
        let files = vec![
            make_evo_file_with_cols("new-name.parquet", 10, 5, 0, &["name"]),
            make_evo_file_with_cols("old-id.parquet", 10, 1, 0, &["id"]),
        ];
        let mut field_ids_cache = HashMap::new();

        let pruned = prune_data_evolution_group_by_read_fields(
            files,
            &read_field_ids,
            false,
            table.schema().id(),
            table.schema().fields(),
            table.schema_manager(),
            &mut field_ids_cache,
        )
        .await
        .unwrap();

        assert_eq!(file_names_from_files(&pruned), vec!["old-id.parquet"]);
    }

    #[tokio::test]
    async fn test_data_evolution_stats_use_file_schema_after_evolution() {
        let old_schema = TableSchema::new(
            0,
            &PaimonSchema::builder()
                .column("id", DataType::Int(IntType::new()))
                .column("a", DataType::Int(IntType::new()))
                .column("b", DataType::Int(IntType::new()))
                .build()
                .unwrap(),
        );
        let cases = [
            (
                "drop",
                vec![SchemaChange::drop_column("a".into())],
                "b",
                Datum::Int(20),
            ),
            (
                "reorder",
                vec![SchemaChange::update_column_position(
                    ColumnMove::move_first("b".into()),
                )],
                "b",
                Datum::Int(20),
            ),
            (
                "rename",
                vec![SchemaChange::rename_column("b".into(), "renamed".into())],
                "renamed",
                Datum::Int(20),
            ),
            (
                "widen",
                vec![SchemaChange::update_column_type(
                    "a".into(),
                    DataType::Double(crate::spec::DoubleType::new()),
                )],
                "a",
                Datum::Double(10.0),
            ),
        ];
        for (name, changes, field, literal) in cases {
            let schema = old_schema.apply_changes(changes).unwrap();
            let table = data_evolution_test_table(&format!("memory:/de_stats_{name}"), schema);
            write_schema_file(&table, &old_schema).await;
            for dense in [false, true] {
                let mut file = make_evo_file("old.parquet", 10, 1, 1, Some(0));
                let mut stats = BinaryRowBuilder::new(if dense { 2 } else { 3 });
                if dense {
                    stats.write_int(0, 10);
                    stats.write_int(1, 20);
                    file.write_cols = Some(vec!["a".into(), "b".into()]);
                    file.value_stats_cols = Some(vec!["a".into(), "b".into()]);
                } else {
                    stats.write_int(0, 1);
                    stats.write_int(1, 10);
                    stats.write_int(2, 20);
                }
                let stats = stats.build_serialized();
                file.value_stats = BinaryTableStats::new(
                    stats.clone(),
                    stats,
                    vec![Some(0); if dense { 2 } else { 3 }],
                );
                let entries = vec![ManifestEntry::new(
                    FileKind::Add,
                    BinaryRowBuilder::new(0).build_serialized(),
                    0,
                    -1,
                    file,
                    0,
                )];
                let pb = PredicateBuilder::new(table.schema().fields());
                for (predicate, expected) in [
                    (pb.equal(field, literal.clone()).unwrap(), 1),
                    // Type changes cannot reuse old stats; matching unchanged
                    // fields can still reject this file after rename/reorder.
                    (
                        pb.equal(
                            field,
                            match literal {
                                Datum::Double(_) => Datum::Double(999.0),
                                _ => Datum::Int(999),
                            },
                        )
                        .unwrap(),
                        usize::from(name == "widen"),
                    ),
                ] {
                    let scan =
                        PaimonTableScan::new(&table, None, vec![predicate], None, None, None);
                    let plan = scan
                        .plan_snapshot_from_entries(
                            diff_snapshot_with_schema(7, table.schema().id()),
                            entries.clone(),
                            None,
                            None,
                            None,
                            None,
                        )
                        .await
                        .unwrap();
                    assert_eq!(plan.splits().len(), expected, "{name}, dense={dense}");
                    assert_eq!(plan.snapshot_id(), Some(7));
                }
            }
        }
    }

    #[tokio::test]
    async fn test_data_evolution_stats_require_unique_full_range_provider() {
        let table = data_evolution_test_table(
            "memory:/de_stats_providers",
            two_column_schema(0, "id", "value"),
        );
        let pb = PredicateBuilder::new(table.schema().fields());
        let make_file = |name: &str, first, count, seq, value| {
            let mut file = make_evo_file(name, 10, count, seq, Some(first));
            file.write_cols = Some(vec!["id".into()]);
            let mut row = BinaryRowBuilder::new(1);
            row.write_int(0, value);
            let row = row.build_serialized();
            file.value_stats = BinaryTableStats::new(row.clone(), row, vec![Some(0)]);
            file
        };
        for (name, files) in [
            (
                "partial",
                vec![make_file("old", 0, 10, 1, 5), make_file("new", 0, 5, 2, 20)],
            ),
            (
                "tied",
                vec![
                    make_file("left", 0, 10, 2, 20),
                    make_file("right", 0, 10, 2, 5),
                ],
            ),
            (
                "chain",
                vec![
                    make_file("left", 0, 5, 1, 20),
                    make_file("right", 4, 6, 2, 20),
                ],
            ),
        ] {
            for reverse in [false, true] {
                let mut files = files.clone();
                if reverse {
                    files.reverse();
                }
                let entries: Vec<_> = files
                    .into_iter()
                    .map(|file| {
                        ManifestEntry::new(
                            FileKind::Add,
                            BinaryRowBuilder::new(0).build_serialized(),
                            0,
                            -1,
                            file,
                            0,
                        )
                    })
                    .collect();
                for predicate in [
                    pb.equal("id", Datum::Int(5)).unwrap(),
                    pb.is_null("id").unwrap(),
                ] {
                    let plan =
                        PaimonTableScan::new(&table, None, vec![predicate], None, None, None)
                            .plan_snapshot_from_entries(
                                diff_snapshot_with_schema(7, 0),
                                entries.clone(),
                                None,
                                None,
                                None,
                                None,
                            )
                            .await
                            .unwrap();
                    assert_eq!(plan.splits().len(), 1, "{name}, reverse={reverse}");
                    assert_eq!(plan.splits()[0].data_files().len(), 2);
                }
            }
        }
    }

    #[test]
    fn test_data_evolution_stats_reject_inconsistent_field_stats() {
        let fields = vec![DataField::new(
            0,
            "id".into(),
            DataType::Int(IntType::new()),
        )];
        let predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(5))
            .unwrap();
        for (min, max, nulls) in [
            (Some(10), Some(10), -1),
            (Some(10), Some(10), 11),
            (None, Some(10), 0),
            (Some(10), None, 0),
            (Some(10), Some(1), 0),
            (Some(10), Some(10), 10),
        ] {
            let stats_row = |value: Option<i32>| {
                let mut row = BinaryRowBuilder::new(1);
                if let Some(value) = value {
                    row.write_int(0, value);
                } else {
                    row.set_null_at(0);
                }
                row.build_serialized()
            };
            let mut file = make_evo_file("invalid", 10, 10, 1, Some(0));
            file.value_stats =
                BinaryTableStats::new(stats_row(min), stats_row(max), vec![Some(nulls)]);
            assert!(
                data_evolution_group_matches_predicates(
                    &[file],
                    std::slice::from_ref(&predicate),
                    &fields
                ),
                "{min:?}, {max:?}, {nulls}"
            );
        }
    }

    #[tokio::test]
    async fn test_data_evolution_stats_distinguish_readded_fields_and_unknown_schemas() {
        let old_schema = two_column_schema(0, "id", "value");
        let schema = old_schema
            .apply_changes(vec![
                SchemaChange::drop_column("value".into()),
                SchemaChange::add_column("value".into(), DataType::Int(IntType::new())),
            ])
            .unwrap();
        let table = data_evolution_test_table("memory:/de_stats_readd", schema);
        write_schema_file(&table, &old_schema).await;
        let pb = PredicateBuilder::new(table.schema().fields());
        for file_schema_id in [0, 99] {
            let mut file = make_evo_file("old.parquet", 10, 1, 1, Some(0));
            file.schema_id = file_schema_id;
            // The old name exists, but it is not the re-added field's ID.
            file.write_cols = Some(vec!["value".into()]);
            for (predicate, expected) in [
                (
                    pb.equal("value", Datum::Int(20)).unwrap(),
                    usize::from(file_schema_id == 99),
                ),
                (pb.is_null("value").unwrap(), 1),
                (
                    pb.is_not_null("value").unwrap(),
                    usize::from(file_schema_id == 99),
                ),
                (Predicate::AlwaysFalse, 0),
            ] {
                let entries = vec![ManifestEntry::new(
                    FileKind::Add,
                    BinaryRowBuilder::new(0).build_serialized(),
                    0,
                    -1,
                    file.clone(),
                    0,
                )];
                let plan = PaimonTableScan::new(&table, None, vec![predicate], None, None, None)
                    .plan_snapshot_from_entries(
                        diff_snapshot_with_schema(7, table.schema().id()),
                        entries,
                        None,
                        None,
                        None,
                        None,
                    )
                    .await
                    .unwrap();
                assert_eq!(
                    plan.splits().len(),
                    expected,
                    "file schema {file_schema_id}"
                );
            }
        }
    }

    #[tokio::test]
    async fn test_data_evolution_pruning_matches_renamed_columns_by_field_id() {
        let schema_v0 = two_column_schema(0, "id", "old_name");
        let schema_v1 = two_column_schema(1, "id", "new_name");
        let table = data_evolution_test_table("memory:/de_prune_rename", schema_v1);
        write_schema_file(&table, &schema_v0).await;

        let read_field_ids = HashSet::from([1]);
        let mut file = make_evo_file_with_cols("renamed.parquet", 10, 1, 0, &["old_name"]);
        file.schema_id = 0;
        let pruned = prune_data_evolution_group_by_read_fields(
            vec![
                make_evo_file_with_cols("id.parquet", 10, 2, 0, &["id"]),
                file,
            ],
            &read_field_ids,
            false,
            table.schema().id(),
            table.schema().fields(),
            table.schema_manager(),
            &mut HashMap::new(),
        )
        .await
        .unwrap();

        assert_eq!(file_names_from_files(&pruned), vec!["renamed.parquet"]);
    }

    #[tokio::test]
    async fn test_data_evolution_pruning_keeps_normal_representative_for_vector_file() {
        let table =
            data_evolution_test_table("memory:/de_prune_vector", two_column_schema(0, "id", "emb"));
        let read_field_ids = HashSet::from([1]);
        let files = vec![
            make_evo_file_with_cols("data.parquet", 10, 1, 0, &["id"]),
            make_evo_file_with_cols("emb.vector.parquet", 10, 2, 0, &["emb"]),
        ];
        let mut field_ids_cache = HashMap::new();

        let pruned = prune_data_evolution_group_by_read_fields(
            files,
            &read_field_ids,
            false,
            table.schema().id(),
            table.schema().fields(),
            table.schema_manager(),
            &mut field_ids_cache,
        )
        .await
        .unwrap();

        assert_eq!(
            file_names_from_files(&pruned),
            vec!["emb.vector.parquet", "data.parquet"]
        );
    }

    #[tokio::test]
    async fn test_data_evolution_pruning_rejects_group_without_normal_representative() {
        let table = data_evolution_test_table(
            "memory:/de_prune_no_normal",
            two_column_schema(0, "id", "emb"),
        );
        let read_field_ids = HashSet::from([1]);
        let files = vec![
            make_evo_file_with_cols("emb-1.vector.parquet", 10, 1, 0, &["emb"]),
            make_evo_file_with_cols("emb-2.vector.parquet", 10, 2, 0, &["emb"]),
        ];
        let mut field_ids_cache = HashMap::new();

        let err = prune_data_evolution_group_by_read_fields(
            files,
            &read_field_ids,
            false,
            table.schema().id(),
            table.schema().fields(),
            table.schema_manager(),
            &mut field_ids_cache,
        )
        .await
        .unwrap_err();

        match err {
            Error::DataInvalid { message, .. } => {
                assert!(message.contains("requires at least one normal data file"));
            }
            other => panic!("unexpected error: {other:?}"),
        }
    }

    #[test]
    fn test_group_by_overlapping_row_id_overlapping_ranges() {
        let files = vec![
            make_evo_file("a", 10, 100, 1, Some(0)),
            make_evo_file("b", 10, 100, 2, Some(50)),
        ];
        let groups = group_by_overlapping_row_id(files);
        assert_eq!(groups.len(), 1);
        assert_eq!(file_names(&groups), vec![vec!["a", "b"]]);
    }

    #[test]
    fn test_group_by_overlapping_row_id_non_overlapping() {
        let files = vec![
            make_evo_file("b", 10, 100, 2, Some(100)),
            make_evo_file("a", 10, 100, 1, Some(0)),
        ];
        let groups = group_by_overlapping_row_id(files);
        assert_eq!(groups.len(), 2);
        assert_eq!(file_names(&groups), vec![vec!["a"], vec!["b"]]);
    }

    #[test]
    fn test_group_by_overlapping_row_id_mixed() {
        let files = vec![
            make_evo_file("a", 10, 100, 1, Some(0)),
            make_evo_file("b", 10, 100, 2, Some(0)),
            make_evo_file("c", 10, 100, 3, None),
            make_evo_file("d", 10, 100, 4, Some(200)),
        ];
        let groups = group_by_overlapping_row_id(files);
        assert_eq!(
            file_names(&groups),
            vec![vec!["c"], vec!["a", "b"], vec!["d"]]
        );
    }

    #[test]
    fn test_group_by_overlapping_row_id_preserves_input_order() {
        let files = vec![
            make_evo_file("a", 10, 100, 1, Some(0)),
            make_evo_file("b", 10, 100, 3, Some(0)),
            make_evo_file("c", 10, 100, 2, Some(0)),
        ];
        let groups = group_by_overlapping_row_id(files);
        assert_eq!(groups.len(), 1);
        assert_eq!(file_names(&groups), vec![vec!["a", "b", "c"]]);
    }

    #[test]
    fn test_data_file_matches_eq_prunes_out_of_range() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        let predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(30))
            .unwrap();

        assert!(!data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_composite_key_stats_in_primary_key_order() {
        let fields = vec![
            DataField::new(0, "key_a".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "payload".to_string(), DataType::Int(IntType::new())),
            DataField::new(2, "key_b".to_string(), DataType::Int(IntType::new())),
        ];
        let empty_stats = BinaryTableStats::empty();
        let mut file = test_data_file_meta(
            empty_stats.min_values().to_vec(),
            empty_stats.max_values().to_vec(),
            Vec::new(),
            5,
        );
        file.value_stats_cols = Some(Vec::new());
        // key_stats order is [key_b, key_a], independent of table field order.
        file.key_stats = BinaryTableStats::new(
            two_int_stats_row(Some(100), Some(10)),
            two_int_stats_row(Some(200), Some(20)),
            vec![Some(0), Some(0)],
        );
        let key_fields = vec!["key_b".to_string(), "key_a".to_string()];
        let pb = PredicateBuilder::new(&fields);

        let key_a_out_of_range = pb.equal("key_a", Datum::Int(150)).unwrap();
        assert!(!data_file_matches_predicates_with_key_stats(
            &file,
            std::slice::from_ref(&key_a_out_of_range),
            std::slice::from_ref(&key_a_out_of_range),
            TEST_SCHEMA_ID,
            &fields,
            &key_fields,
        ));

        let key_b_in_range = pb.equal("key_b", Datum::Int(150)).unwrap();
        assert!(data_file_matches_predicates_with_key_stats(
            &file,
            std::slice::from_ref(&key_b_in_range),
            std::slice::from_ref(&key_b_in_range),
            TEST_SCHEMA_ID,
            &fields,
            &key_fields,
        ));
    }

    #[tokio::test]
    async fn test_data_file_matches_key_stats_across_renamed_reordered_schema() {
        let old_schema = TableSchema::new(
            0,
            &PaimonSchema::builder()
                .column("payload", DataType::Int(IntType::new()))
                .column("old_b", DataType::Int(IntType::new()))
                .column("old_a", DataType::Int(IntType::new()))
                .primary_key(["old_b", "old_a"])
                .build()
                .unwrap(),
        );
        let current_schema = old_schema
            .apply_changes(vec![
                SchemaChange::rename_column("old_b".to_string(), "new_b".to_string()),
                SchemaChange::rename_column("old_a".to_string(), "new_a".to_string()),
                SchemaChange::update_column_position(ColumnMove::move_first("new_a".to_string())),
            ])
            .unwrap();
        let table = Table::new(
            FileIOBuilder::new("memory").build().unwrap(),
            Identifier::new("test_db", "cross_schema_key_stats"),
            "memory:/cross_schema_key_stats".to_string(),
            current_schema,
            None,
        );
        write_schema_file(&table, &old_schema).await;

        let empty_stats = BinaryTableStats::empty();
        let mut file = test_data_file_meta_with_schema(
            empty_stats.min_values().to_vec(),
            empty_stats.max_values().to_vec(),
            Vec::new(),
            5,
            old_schema.id(),
        );
        file.value_stats_cols = Some(Vec::new());
        // Old key_stats order is [old_b, old_a]. Current fields are reordered to
        // [new_a, payload, new_b], while field IDs remain [2, 0, 1].
        file.key_stats = BinaryTableStats::new(
            two_int_stats_row(Some(100), Some(10)),
            two_int_stats_row(Some(200), Some(20)),
            vec![Some(0), Some(0)],
        );

        let pb = PredicateBuilder::new(table.schema().fields());
        let new_a_out_of_range = pb.equal("new_a", Datum::Int(150)).unwrap();
        let new_b_in_range = pb.equal("new_b", Datum::Int(150)).unwrap();
        let mut schema_cache = HashMap::new();

        assert!(
            !data_file_matches_predicates_for_table(
                &table,
                &file,
                std::slice::from_ref(&new_a_out_of_range),
                std::slice::from_ref(&new_a_out_of_range),
                &mut schema_cache,
            )
            .await
        );
        assert!(
            data_file_matches_predicates_for_table(
                &table,
                &file,
                std::slice::from_ref(&new_b_in_range),
                std::slice::from_ref(&new_b_in_range),
                &mut schema_cache,
            )
            .await
        );
    }

    #[test]
    fn test_data_file_matches_corrupt_key_stats_fails_open() {
        let fields = int_field();
        let empty_stats = BinaryTableStats::empty();
        let mut file = test_data_file_meta(
            empty_stats.min_values().to_vec(),
            empty_stats.max_values().to_vec(),
            Vec::new(),
            5,
        );
        file.value_stats_cols = Some(Vec::new());
        file.key_stats = BinaryTableStats::new(vec![0], vec![0], vec![Some(0)]);
        let predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(30))
            .unwrap();

        assert!(data_file_matches_predicates_with_key_stats(
            &file,
            std::slice::from_ref(&predicate),
            std::slice::from_ref(&predicate),
            TEST_SCHEMA_ID,
            &fields,
            &["id".to_string()],
        ));
    }

    #[tokio::test]
    async fn test_plan_with_trace_records_between_data_stats_pruning() {
        let table_path = "memory:/test_plan_with_trace_records_between_data_stats_pruning";
        let table = scan_trace_test_table(table_path);
        setup_scan_trace_dirs(&table).await;

        TableCommit::new(table.clone(), "scan-trace-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![
                    stats_trace_file("stats-1.parquet", 1, 2),
                    stats_trace_file("stats-2.parquet", 10, 20),
                    stats_trace_file("stats-3.parquet", 100, 101),
                ],
            )])
            .await
            .unwrap();

        let fields = int_field();
        let pb = PredicateBuilder::new(&fields);
        let between = Predicate::and(vec![
            pb.greater_or_equal("id", Datum::Int(10)).unwrap(),
            pb.less_or_equal("id", Datum::Int(20)).unwrap(),
        ]);
        let mut reader = table.new_read_builder();
        reader.with_filter(between);
        let (_plan, trace) = reader.new_scan().plan_with_trace().await.unwrap();

        assert_eq!(
            trace.final_files, 1,
            "BETWEEN should keep only the overlapping stats range: {trace:?}"
        );
        assert!(
            trace.manifest_entries_pruned_by_data_stats >= 2,
            "BETWEEN should prune files outside the min/max range: {trace:?}"
        );
    }

    pub(super) fn pk_stats_gate_table(table_path: &str) -> Table {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let schema = PaimonSchema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["id"])
            .option("bucket", "1")
            .build()
            .unwrap();
        Table::new(
            file_io,
            Identifier::new("test_db", "pk_stats_gate"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        )
    }

    fn diff_test_table(table_path: &str) -> Table {
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let schema = PaimonSchema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["id"])
            .option("bucket", "1")
            .option("merge-engine", "deduplicate");
        Table::new(
            file_io,
            Identifier::new("test_db", "diff_gate"),
            table_path.to_string(),
            TableSchema::new(0, &schema.build().unwrap()),
            None,
        )
    }

    fn diff_snapshot(snapshot_id: i64) -> Snapshot {
        diff_snapshot_with_schema(snapshot_id, 0)
    }

    fn diff_snapshot_with_schema(snapshot_id: i64, schema_id: i64) -> Snapshot {
        Snapshot::builder()
            .version(1)
            .id(snapshot_id)
            .schema_id(schema_id)
            .base_manifest_list(String::new())
            .delta_manifest_list(String::new())
            .commit_user("test-user".to_string())
            .commit_identifier(snapshot_id)
            .commit_kind(CommitKind::APPEND)
            .time_millis(snapshot_id as u64)
            .build()
    }

    fn two_int_stats_row(id: Option<i32>, value: Option<i32>) -> Vec<u8> {
        let mut builder = BinaryRowBuilder::new(2);
        match id {
            Some(id) => builder.write_int(0, id),
            None => builder.set_null_at(0),
        }
        match value {
            Some(value) => builder.write_int(1, value),
            None => builder.set_null_at(1),
        }
        builder.build_serialized()
    }

    pub(super) fn pk_stats_file(
        name: &str,
        id_range: (i32, i32),
        value_range: (i32, i32),
    ) -> DataFileMeta {
        let mut file = test_data_file_meta(
            two_int_stats_row(Some(id_range.0), Some(value_range.0)),
            two_int_stats_row(Some(id_range.1), Some(value_range.1)),
            vec![Some(0), Some(0)],
            2,
        );
        file.file_name = name.to_string();
        file
    }

    /// Merge reads combine versions of a key across files, so scan planning
    /// must not prune a PK table's files by NON-key conjuncts: dropping the
    /// file that holds the newest version resurrects an older version from a
    /// surviving file — an error no post-merge residual can repair. Key
    /// conjuncts stay safe (every version of a key shares the key columns)
    /// and must still prune.
    #[tokio::test]
    async fn test_pk_table_stats_pruning_ignores_non_key_conjuncts() {
        let table_path = "memory:/test_pk_stats_gate";
        let table = pk_stats_gate_table(table_path);
        setup_scan_trace_dirs(&table).await;

        // Both files cover key id=1; the newer version's value (50) falls
        // outside the value predicate while the older one (150) matches.
        TableCommit::new(table.clone(), "pk-gate-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![
                    pk_stats_file("old-version.parquet", (1, 5), (100, 200)),
                    pk_stats_file("new-version.parquet", (1, 5), (10, 60)),
                ],
            )])
            .await
            .unwrap();

        let fields = vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "value".to_string(), DataType::Int(IntType::new())),
        ];
        let pb = PredicateBuilder::new(&fields);

        // Non-key conjunct: must NOT prune any file of a PK table.
        let value_filter = pb.greater_than("value", Datum::Int(90)).unwrap();
        let mut reader = table.new_read_builder();
        reader.with_filter(value_filter);
        let (plan, trace) = reader.new_scan().plan_with_trace().await.unwrap();
        assert_eq!(
            trace.manifest_entries_pruned_by_data_stats, 0,
            "non-key conjuncts must not file-prune a PK table: {trace:?}"
        );
        let planned_files: usize = plan.splits().iter().map(|s| s.data_files().len()).sum();
        assert_eq!(
            planned_files, 2,
            "both versions must reach the merge reader"
        );

        // Key conjunct: still prunes (id=9 outside both files' key range).
        let key_filter = pb.equal("id", Datum::Int(9)).unwrap();
        let mut reader = table.new_read_builder();
        reader.with_filter(key_filter);
        let (_plan, trace) = reader.new_scan().plan_with_trace().await.unwrap();
        assert!(
            trace.manifest_entries_pruned_by_data_stats >= 2,
            "key conjuncts must still prune PK-table files: {trace:?}"
        );
    }

    /// Enabling DV merge-on-read puts the table back on a key-merge path for
    /// visible level-0 files. Non-key stats pruning is therefore unsafe for the
    /// same reason as ordinary MOR: pruning the newest version can resurrect an
    /// older matching value.
    #[tokio::test]
    async fn test_dv_merge_on_read_stats_pruning_ignores_non_key_conjuncts() {
        let table_path = "memory:/test_dv_mor_stats_gate";
        let table = pk_stats_gate_table(table_path).copy_with_options(HashMap::from([
            ("deletion-vectors.enabled".to_string(), "true".to_string()),
            (
                "deletion-vectors.merge-on-read".to_string(),
                "true".to_string(),
            ),
        ]));
        setup_scan_trace_dirs(&table).await;

        let mut old = pk_stats_file("old-version.parquet", (1, 5), (100, 200));
        old.level = 1;
        let mut new = pk_stats_file("new-version.parquet", (1, 5), (10, 60));
        new.level = 1;
        TableCommit::new(table.clone(), "dv-mor-gate-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![old, new],
            )])
            .await
            .unwrap();

        let fields = vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "value".to_string(), DataType::Int(IntType::new())),
        ];
        let value_filter = PredicateBuilder::new(&fields)
            .greater_than("value", Datum::Int(90))
            .unwrap();
        let mut reader = table.new_read_builder();
        reader.with_filter(value_filter);
        let (plan, trace) = reader.new_scan().plan_with_trace().await.unwrap();

        assert_eq!(trace.manifest_entries_pruned_by_data_stats, 0);
        assert_eq!(
            plan.splits()
                .iter()
                .map(|split| split.data_files().len())
                .sum::<usize>(),
            2,
            "both key versions must reach the merge path"
        );
    }

    /// `merge-engine=first-row` PK tables read raw (no merge on the read
    /// path: planned with `skip_level_zero`, read via `DataFileReader`), so
    /// pruning a file by a non-key conjunct cannot resurrect anything — it
    /// drops exactly the rows the raw path's exact residual filter would
    /// drop. The key-only gate must exempt first-row and keep full-predicate
    /// stats pruning, matching the split-generation path.
    #[tokio::test]
    async fn test_first_row_table_stats_pruning_keeps_non_key_conjuncts() {
        let table_path = "memory:/test_first_row_stats_gate";
        let file_io = FileIOBuilder::new("memory").build().unwrap();
        let schema = PaimonSchema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("value", DataType::Int(IntType::new()))
            .primary_key(["id"])
            .option("bucket", "1")
            .option("merge-engine", "first-row")
            .build()
            .unwrap();
        let table = Table::new(
            file_io,
            Identifier::new("test_db", "first_row_stats_gate"),
            table_path.to_string(),
            TableSchema::new(0, &schema),
            None,
        );
        setup_scan_trace_dirs(&table).await;

        // Compacted (level 1) files: first-row planning skips level 0, so the
        // fixture files must sit above it to be planned at all. Distinct key
        // ranges; only file A's value range can match `value > 90`.
        TableCommit::new(table.clone(), "first-row-gate-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![
                    pk_stats_file("file-a.parquet", (1, 5), (100, 200)),
                    pk_stats_file("file-b.parquet", (6, 9), (10, 60)),
                ],
            )])
            .await
            .unwrap();

        let fields = vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "value".to_string(), DataType::Int(IntType::new())),
        ];
        let pb = PredicateBuilder::new(&fields);

        // Non-key conjunct: first-row reads raw, so full-predicate pruning
        // stays enabled — file-b (value stats [10, 60]) must be pruned.
        let value_filter = pb.greater_than("value", Datum::Int(90)).unwrap();
        let mut reader = table.new_read_builder();
        reader.with_filter(value_filter);
        let (plan, trace) = reader.new_scan().plan_with_trace().await.unwrap();
        assert!(
            trace.manifest_entries_pruned_by_data_stats >= 1,
            "first-row tables must keep full-predicate stats pruning: {trace:?}"
        );
        let planned_files: usize = plan.splits().iter().map(|s| s.data_files().len()).sum();
        assert_eq!(
            planned_files, 1,
            "only the value-matching file should be planned on first-row"
        );
    }

    #[tokio::test]
    async fn test_plan_with_trace_records_limit_early_stop_during_split_construction() {
        let table_path =
            "memory:/test_plan_with_trace_records_limit_early_stop_during_split_construction";
        let table = scan_trace_small_split_table(table_path);
        setup_scan_trace_dirs(&table).await;

        TableCommit::new(table.clone(), "scan-trace-limit-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![
                    stats_trace_file("limit-1.parquet", 1, 1),
                    stats_trace_file("limit-2.parquet", 2, 2),
                    stats_trace_file("limit-3.parquet", 3, 3),
                ],
            )])
            .await
            .unwrap();

        let (_full_plan, full_trace) = table
            .new_read_builder()
            .new_scan()
            .plan_with_trace()
            .await
            .unwrap();
        let mut limited_reader = table.new_read_builder();
        limited_reader.with_limit(2);
        let (_limited_plan, limited_trace) =
            limited_reader.new_scan().plan_with_trace().await.unwrap();

        assert_eq!(
            full_trace.final_splits, 3,
            "fixture should build three splits: {full_trace:?}"
        );
        assert!(!full_trace.limit_early_stopped);
        assert_eq!(full_trace.split_candidates_built, full_trace.final_splits);
        assert!(limited_trace.limit_early_stopped);
        assert!(
            limited_trace.split_candidates_built < full_trace.split_candidates_built,
            "limited trace should show construction-time stop: full={full_trace:?}, limited={limited_trace:?}"
        );
        assert_eq!(limited_trace.final_splits, 1);
    }

    #[tokio::test]
    async fn test_plan_with_trace_zero_limit_records_no_split_candidates() {
        let table_path = "memory:/test_plan_with_trace_zero_limit_records_no_split_candidates";
        let table = scan_trace_small_split_table(table_path);
        setup_scan_trace_dirs(&table).await;

        TableCommit::new(table.clone(), "scan-trace-zero-limit-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![
                    stats_trace_file("zero-1.parquet", 1, 1),
                    stats_trace_file("zero-2.parquet", 2, 2),
                ],
            )])
            .await
            .unwrap();

        let mut reader = table.new_read_builder();
        reader.with_limit(0);
        let (plan, trace) = reader.new_scan().plan_with_trace().await.unwrap();

        assert!(plan.splits().is_empty());
        assert!(trace.limit_early_stopped);
        assert_eq!(trace.split_candidates_built, 0);
        assert_eq!(trace.final_splits, 0);
    }

    #[test]
    fn test_data_file_matches_in_prunes_when_all_literals_out_of_range() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        let predicate = PredicateBuilder::new(&fields)
            .is_in("id", vec![Datum::Int(1), Datum::Int(30)])
            .unwrap();

        assert!(!data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_in_keeps_when_any_literal_in_range() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        let predicate = PredicateBuilder::new(&fields)
            .is_in("id", vec![Datum::Int(1), Datum::Int(15), Datum::Int(30)])
            .unwrap();

        assert!(data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_in_prunes_all_null_file() {
        let fields = int_field();
        let file = test_data_file_meta(int_stats_row(None), int_stats_row(None), vec![Some(5)], 5);
        let predicate = PredicateBuilder::new(&fields)
            .is_in("id", vec![Datum::Int(10)])
            .unwrap();

        assert!(!data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_in_with_corrupt_stats_fails_open() {
        let fields = int_field();
        let file = test_data_file_meta(Vec::new(), Vec::new(), vec![Some(0)], 5);
        let predicate = PredicateBuilder::new(&fields)
            .is_in("id", vec![Datum::Int(30)])
            .unwrap();

        assert!(data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_in_with_inverted_stats_fails_open() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(20)),
            int_stats_row(Some(10)),
            vec![Some(0)],
            5,
        );
        let predicate = PredicateBuilder::new(&fields)
            .is_in("id", vec![Datum::Int(15)])
            .unwrap();

        assert!(data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_not_in_keeps_when_bounds_differ() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        let predicate = PredicateBuilder::new(&fields)
            .is_not_in("id", vec![Datum::Int(10), Datum::Int(20)])
            .unwrap();

        assert!(data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_is_null_prunes_when_null_count_is_zero() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        let predicate = PredicateBuilder::new(&fields).is_null("id").unwrap();

        assert!(!data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_is_not_null_prunes_all_null_file() {
        let fields = int_field();
        let file = test_data_file_meta(int_stats_row(None), int_stats_row(None), vec![Some(5)], 5);
        let predicate = PredicateBuilder::new(&fields).is_not_null("id").unwrap();

        assert!(!data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_or_prunes_when_no_child_matches() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        let pb = PredicateBuilder::new(&fields);
        let predicate = Predicate::or(vec![
            pb.less_than("id", Datum::Int(5)).unwrap(),
            pb.greater_than("id", Datum::Int(25)).unwrap(),
        ]);

        assert!(!data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_or_keeps_when_any_child_matches() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        let pb = PredicateBuilder::new(&fields);
        let predicate = Predicate::or(vec![
            pb.less_than("id", Datum::Int(15)).unwrap(),
            pb.greater_than("id", Datum::Int(25)).unwrap(),
        ]);

        assert!(data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_not_prunes_when_inner_must_match() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(10)),
            vec![Some(0)],
            5,
        );
        let predicate = Predicate::negate(
            PredicateBuilder::new(&fields)
                .equal("id", Datum::Int(10))
                .unwrap(),
        );

        assert!(!data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_not_fails_open_when_inner_not_certain() {
        let fields = int_field();
        let file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        let predicate = Predicate::negate(
            PredicateBuilder::new(&fields)
                .equal("id", Datum::Int(10))
                .unwrap(),
        );

        assert!(data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_evolution_group_matches_or_prunes_when_no_child_matches() {
        let fields = int_field();
        let mut file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        file.first_row_id = Some(0);
        let pb = PredicateBuilder::new(&fields);
        let predicate = Predicate::or(vec![
            pb.less_than("id", Datum::Int(5)).unwrap(),
            pb.greater_than("id", Datum::Int(25)).unwrap(),
        ]);

        assert!(!data_evolution_group_matches_predicates(
            &[file],
            &[predicate],
            &fields,
        ));
    }

    #[test]
    fn test_data_evolution_group_matches_or_keeps_when_any_child_matches() {
        let fields = int_field();
        let mut file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        file.first_row_id = Some(0);
        let pb = PredicateBuilder::new(&fields);
        let predicate = Predicate::or(vec![
            pb.less_than("id", Datum::Int(15)).unwrap(),
            pb.greater_than("id", Datum::Int(25)).unwrap(),
        ]);

        assert!(data_evolution_group_matches_predicates(
            &[file],
            &[predicate],
            &fields,
        ));
    }

    #[test]
    fn test_data_evolution_group_is_not_pruned_by_a_row_id_predicate() {
        let fields = int_field();
        let mut file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
        );
        file.first_row_id = Some(0);
        let row_id =
            crate::spec::row_id_leaf(crate::spec::PredicateOperator::GtEq, vec![Datum::Long(100)]);

        assert!(data_evolution_group_matches_predicates(
            std::slice::from_ref(&file),
            std::slice::from_ref(&row_id),
            &fields,
        ));
        assert!(data_evolution_group_matches_predicates(
            &[file],
            &[Predicate::negate(row_id)],
            &fields,
        ));
    }

    #[test]
    fn test_data_evolution_group_matches_not_prunes_when_inner_must_match() {
        let fields = int_field();
        let mut file = test_data_file_meta(
            int_stats_row(Some(10)),
            int_stats_row(Some(10)),
            vec![Some(0)],
            5,
        );
        file.first_row_id = Some(0);
        let predicate = Predicate::negate(
            PredicateBuilder::new(&fields)
                .equal("id", Datum::Int(10))
                .unwrap(),
        );

        assert!(!data_evolution_group_matches_predicates(
            &[file],
            &[predicate],
            &fields,
        ));
    }

    #[test]
    fn test_data_file_matches_corrupt_stats_fails_open() {
        let fields = int_field();
        let file = test_data_file_meta(Vec::new(), Vec::new(), vec![Some(0)], 5);
        let predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(30))
            .unwrap();

        assert!(data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_schema_mismatch_fails_open() {
        let fields = int_field();
        let file = test_data_file_meta_with_schema(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
            5,
        );
        let predicate = PredicateBuilder::new(&fields)
            .equal("id", Datum::Int(30))
            .unwrap();

        assert!(data_file_matches_predicates(
            &file,
            &[predicate],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_always_false_prunes_despite_schema_mismatch() {
        let file = test_data_file_meta_with_schema(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
            99,
        );

        assert!(!data_file_matches_predicates(
            &file,
            &[Predicate::AlwaysFalse],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_data_file_matches_always_true_keeps_file_despite_schema_mismatch() {
        let file = test_data_file_meta_with_schema(
            int_stats_row(Some(10)),
            int_stats_row(Some(20)),
            vec![Some(0)],
            5,
            99,
        );

        assert!(data_file_matches_predicates(
            &file,
            &[Predicate::AlwaysTrue],
            TEST_SCHEMA_ID,
            &test_schema_fields(),
        ));
    }

    #[test]
    fn test_build_deletion_files_map_preserves_cardinality() {
        let entries = vec![IndexManifestEntry {
            version: 1,
            kind: FileKind::Add,
            partition: vec![1, 2, 3],
            bucket: 7,
            index_file: IndexFileMeta {
                index_type: "DELETION_VECTORS".into(),
                file_name: "index-file".into(),
                file_size: 128,
                row_count: 1,
                deletion_vectors_ranges: Some(indexmap::IndexMap::from([(
                    "data-file.parquet".into(),
                    DeletionVectorMeta {
                        offset: 11,
                        length: 22,
                        cardinality: Some(33),
                    },
                )])),
                external_path: None,
                global_index_meta: None,
            },
        }];

        let map = super::build_deletion_files_map(&entries);

        let by_bucket = map
            .get(&super::PartitionBucket::new(vec![1, 2, 3], 7))
            .expect("partition bucket should exist");
        let unresolved = by_bucket
            .get("data-file.parquet")
            .expect("deletion file should exist");

        // Default layout: no external path, index files not in the data-file dir.
        assert_eq!(
            unresolved.resolve(&super::IndexFileLocation::BucketLocal {
                table_path: "file:/tmp/table",
                bucket_path: "file:/tmp/table/bucket-7",
                index_file_in_data_file_dir: false,
            }),
            DeletionFile::new("file:/tmp/table/index/index-file".into(), 11, 22, Some(33))
        );
    }

    #[test]
    fn test_deletion_vector_paths_follow_index_file_layout() {
        let dv = super::UnresolvedDeletionFile {
            file_name: "index-file".into(),
            external_path: None,
            offset: 11,
            length: 22,
            cardinality: Some(33),
        };

        // Index files under the table index directory (the default).
        assert_eq!(
            dv.resolve(&super::IndexFileLocation::BucketLocal {
                table_path: "file:/tmp/table",
                bucket_path: "file:/tmp/table/pt=1/bucket-7",
                index_file_in_data_file_dir: false,
            })
            .path(),
            "file:/tmp/table/index/index-file"
        );

        // Index files kept beside the bucket's data files.
        assert_eq!(
            dv.resolve(&super::IndexFileLocation::BucketLocal {
                table_path: "file:/tmp/table",
                bucket_path: "file:/tmp/table/pt=1/bucket-7",
                index_file_in_data_file_dir: true,
            })
            .path(),
            "file:/tmp/table/pt=1/bucket-7/index-file"
        );
    }

    #[test]
    fn test_deletion_vector_external_path_wins_over_both_layouts() {
        let dv = super::UnresolvedDeletionFile {
            file_name: "index-file".into(),
            external_path: Some("s3://other/dv/index-file".into()),
            offset: 0,
            length: 1,
            cardinality: None,
        };

        for index_file_in_data_file_dir in [false, true] {
            assert_eq!(
                dv.resolve(&super::IndexFileLocation::BucketLocal {
                    table_path: "file:/tmp/table",
                    bucket_path: "file:/tmp/table/bucket-0",
                    index_file_in_data_file_dir,
                })
                .path(),
                "s3://other/dv/index-file"
            );
        }
    }

    #[test]
    fn test_build_deletion_files_map_carries_external_path() {
        let entries = vec![IndexManifestEntry {
            version: 1,
            kind: FileKind::Add,
            partition: vec![9],
            bucket: 2,
            index_file: IndexFileMeta {
                index_type: "DELETION_VECTORS".into(),
                file_name: "index-file".into(),
                file_size: 128,
                row_count: 1,
                deletion_vectors_ranges: Some(indexmap::IndexMap::from([(
                    "data-file.parquet".into(),
                    DeletionVectorMeta {
                        offset: 1,
                        length: 2,
                        cardinality: None,
                    },
                )])),
                external_path: Some("s3://other/dv/index-file".into()),
                global_index_meta: None,
            },
        }];

        let map = super::build_deletion_files_map(&entries);
        let dv = map
            .get(&super::PartitionBucket::new(vec![9], 2))
            .expect("partition bucket should exist")
            .get("data-file.parquet")
            .expect("deletion file should exist");

        assert_eq!(
            dv.external_path.as_deref(),
            Some("s3://other/dv/index-file")
        );
    }

    #[test]
    fn test_retain_index_manifest_entries_for_active_consumers() {
        let entry = |index_type: &str| IndexManifestEntry {
            version: 1,
            kind: FileKind::Add,
            partition: Vec::new(),
            bucket: 0,
            index_file: IndexFileMeta {
                index_type: index_type.to_string(),
                file_name: format!("{index_type}.idx"),
                file_size: 1,
                row_count: 1,
                deletion_vectors_ranges: None,
                external_path: None,
                global_index_meta: None,
            },
        };
        let entries = [
            entry("DELETION_VECTORS"),
            entry("btree"),
            entry("bitmap"),
            entry("HASH"),
        ];
        let retained = |global_index_needed, deletion_vectors_needed| {
            entries
                .iter()
                .filter(|entry| {
                    retain_index_manifest_entry(entry, global_index_needed, deletion_vectors_needed)
                })
                .map(|entry| entry.index_file.index_type.as_str())
                .collect::<Vec<_>>()
        };

        assert!(retained(false, false).is_empty());
        assert_eq!(retained(false, true), vec!["DELETION_VECTORS"]);
        assert_eq!(retained(true, false), vec!["btree", "bitmap"]);
        assert_eq!(
            retained(true, true),
            vec!["DELETION_VECTORS", "btree", "bitmap"]
        );

        let mut deleted = entry("btree");
        deleted.kind = FileKind::Delete;
        assert!(!retain_index_manifest_entry(&deleted, true, false));
    }

    #[test]
    fn test_retain_index_manifest_entries_for_selected_partitions() {
        let partition = |value| {
            let mut builder = BinaryRowBuilder::new(1);
            builder.write_int(0, value);
            builder.build_serialized()
        };
        let matching_partition = partition(7);
        let filter = PartitionFilter::from_partition_set(
            HashSet::from([matching_partition.clone()]),
            &[DataField::new(
                0,
                "dt".to_string(),
                DataType::Int(IntType::new()),
            )],
        )
        .unwrap();
        let predicate_field_ids = HashSet::from([1]);
        let entry = |partition, index_type: &str| IndexManifestEntry {
            version: 1,
            kind: FileKind::Add,
            partition,
            bucket: 0,
            index_file: IndexFileMeta {
                index_type: index_type.to_string(),
                file_name: "btree.idx".to_string(),
                file_size: 1,
                row_count: 1,
                deletion_vectors_ranges: None,
                external_path: None,
                global_index_meta: (index_type == "btree").then_some(GlobalIndexMeta {
                    row_range_start: 0,
                    row_range_end: 0,
                    index_field_id: 1,
                    extra_field_ids: None,
                    index_meta: None,
                    source_meta: None,
                }),
            },
        };

        assert!(retain_index_manifest_entry_for_scan(
            &entry(matching_partition.clone(), "btree"),
            true,
            false,
            Some(&filter),
            &predicate_field_ids,
        )
        .unwrap());
        assert!(!retain_index_manifest_entry_for_scan(
            &entry(partition(8), "btree"),
            true,
            false,
            Some(&filter),
            &predicate_field_ids,
        )
        .unwrap());
        assert!(!retain_index_manifest_entry_for_scan(
            &entry(partition(8), "DELETION_VECTORS"),
            true,
            true,
            Some(&filter),
            &predicate_field_ids,
        )
        .unwrap());
        assert!(retain_index_manifest_entry_for_scan(
            &entry(matching_partition, "DELETION_VECTORS"),
            false,
            true,
            Some(&filter),
            &predicate_field_ids,
        )
        .unwrap());
    }

    #[test]
    fn test_retain_index_manifest_entries_for_predicate_fields() {
        let entry = |index_field_id, extra_field_ids| IndexManifestEntry {
            version: 1,
            kind: FileKind::Add,
            partition: Vec::new(),
            bucket: 0,
            index_file: IndexFileMeta {
                index_type: "btree".to_string(),
                file_name: format!("btree-{index_field_id}.idx"),
                file_size: 1,
                row_count: 1,
                deletion_vectors_ranges: None,
                external_path: None,
                global_index_meta: Some(GlobalIndexMeta {
                    row_range_start: 0,
                    row_range_end: 0,
                    index_field_id,
                    extra_field_ids,
                    index_meta: None,
                    source_meta: None,
                }),
            },
        };
        let predicate_field_ids = HashSet::from([2]);
        let retained = |entry: &IndexManifestEntry| {
            retain_index_manifest_entry_for_scan(entry, true, false, None, &predicate_field_ids)
                .unwrap()
        };

        assert!(retained(&entry(2, None)));
        assert!(retained(&entry(1, Some(vec![2]))));
        assert!(!retained(&entry(1, Some(vec![3]))));

        let mut missing_meta = entry(2, None);
        missing_meta.index_file.global_index_meta = None;
        assert!(
            retained(&missing_meta),
            "malformed sorted entries must reach scanner validation"
        );
    }

    #[test]
    fn test_scan_predicate_field_ids_resolve_by_name() {
        let fields = vec![
            DataField::new(10, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(20, "value".to_string(), DataType::Int(IntType::new())),
        ];
        let predicate = Predicate::and(vec![
            PredicateBuilder::new(&fields)
                .equal("value", Datum::Int(1))
                .unwrap(),
            crate::spec::row_id_leaf(PredicateOperator::Eq, vec![Datum::Long(7)]),
        ]);

        assert_eq!(
            scan_predicate_field_ids(&[predicate], &fields),
            HashSet::from([20])
        );
    }

    #[tokio::test]
    async fn test_skip_index_manifest_without_active_consumer() {
        let table = Table::new(
            FileIOBuilder::new("memory").build().unwrap(),
            Identifier::new("test_db", "index_manifest_gate"),
            "memory:/index_manifest_gate".to_string(),
            TableSchema::new(
                0,
                &PaimonSchema::builder()
                    .column("id", DataType::Int(IntType::new()))
                    .build()
                    .unwrap(),
            ),
            None,
        );
        let snapshot = Snapshot::builder()
            .version(3)
            .id(1)
            .schema_id(0)
            .base_manifest_list(String::new())
            .delta_manifest_list(String::new())
            .index_manifest(Some("missing-index-manifest".to_string()))
            .commit_user("test-user".to_string())
            .commit_identifier(1)
            .commit_kind(CommitKind::APPEND)
            .time_millis(1)
            .build();
        let scan = PaimonTableScan::new(&table, None, Vec::new(), None, None, None);

        let entries = scan
            .read_index_manifest_entries(&snapshot, false, false)
            .await
            .unwrap();
        assert!(entries.is_none());
    }

    // ======================== Bucket predicate filtering ========================

    fn bucket_key_fields() -> Vec<DataField> {
        vec![DataField::new(
            0,
            "id".to_string(),
            DataType::Int(IntType::new()),
        )]
    }

    #[test]
    fn test_extract_predicate_for_keys_eq() {
        let fields = vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(
                1,
                "name".to_string(),
                DataType::VarChar(VarCharType::default()),
            ),
        ];
        let pb = PredicateBuilder::new(&fields);
        let filter = Predicate::and(vec![
            pb.equal("id", Datum::Int(42)).unwrap(),
            pb.equal("name", Datum::String("alice".into())).unwrap(),
        ]);

        let keys = vec!["id".to_string()];
        let extracted = extract_predicate_for_keys(&filter, &fields, &keys);
        assert!(extracted.is_some());
        match extracted.unwrap() {
            Predicate::Leaf {
                column, index, op, ..
            } => {
                assert_eq!(column, "id");
                assert_eq!(index, 0); // remapped to key index
                assert_eq!(op, PredicateOperator::Eq);
            }
            other => panic!("expected Leaf, got {other:?}"),
        }
    }

    #[test]
    fn test_extract_predicate_for_keys_no_match() {
        let fields = vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(
                1,
                "name".to_string(),
                DataType::VarChar(VarCharType::default()),
            ),
        ];
        let pb = PredicateBuilder::new(&fields);
        let filter = pb.equal("name", Datum::String("alice".into())).unwrap();

        let keys = vec!["id".to_string()];
        let extracted = extract_predicate_for_keys(&filter, &fields, &keys);
        assert!(extracted.is_none());
    }

    #[test]
    fn test_compute_target_buckets_single_eq() {
        let fields = bucket_key_fields();
        // Build a bucket predicate (already projected to bucket key space, index=0)
        let pred = Predicate::Leaf {
            column: "id".into(),
            index: 0,
            data_type: DataType::Int(IntType::new()),
            op: PredicateOperator::Eq,
            literals: vec![Datum::Int(42)],
        };

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Default, 4);
        assert!(buckets.is_some());
        let buckets = buckets.unwrap();
        assert_eq!(buckets.len(), 1);
        // The bucket should be deterministic
        let bucket = *buckets.iter().next().unwrap();
        assert!((0..4).contains(&bucket));
    }

    #[test]
    fn test_compute_target_buckets_in_predicate() {
        let fields = bucket_key_fields();
        let pred = Predicate::Leaf {
            column: "id".into(),
            index: 0,
            data_type: DataType::Int(IntType::new()),
            op: PredicateOperator::In,
            literals: vec![Datum::Int(1), Datum::Int(2), Datum::Int(3)],
        };

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Default, 4);
        assert!(buckets.is_some());
        let buckets = buckets.unwrap();
        // Should have at most 3 buckets (could be fewer if some hash to the same bucket)
        assert!(!buckets.is_empty());
        assert!(buckets.len() <= 3);
        for &b in &buckets {
            assert!((0..4).contains(&b));
        }
    }

    #[test]
    fn test_compute_target_buckets_range_returns_none() {
        let fields = bucket_key_fields();
        let pred = Predicate::Leaf {
            column: "id".into(),
            index: 0,
            data_type: DataType::Int(IntType::new()),
            op: PredicateOperator::Gt,
            literals: vec![Datum::Int(10)],
        };

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Default, 4);
        assert!(
            buckets.is_none(),
            "Range predicates cannot determine target buckets"
        );
    }

    #[test]
    fn test_compute_target_buckets_composite_key() {
        let fields = vec![
            DataField::new(0, "a".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "b".to_string(), DataType::Int(IntType::new())),
        ];
        let pred = Predicate::And(vec![
            Predicate::Leaf {
                column: "a".into(),
                index: 0,
                data_type: DataType::Int(IntType::new()),
                op: PredicateOperator::Eq,
                literals: vec![Datum::Int(1)],
            },
            Predicate::Leaf {
                column: "b".into(),
                index: 1,
                data_type: DataType::Int(IntType::new()),
                op: PredicateOperator::Eq,
                literals: vec![Datum::Int(2)],
            },
        ]);

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Default, 8);
        assert!(buckets.is_some());
        let buckets = buckets.unwrap();
        assert_eq!(buckets.len(), 1);
        let bucket = *buckets.iter().next().unwrap();
        assert!((0..8).contains(&bucket));
    }

    #[test]
    fn test_compute_target_buckets_partial_key_returns_none() {
        // Only one of two bucket key fields has an eq predicate
        let fields = vec![
            DataField::new(0, "a".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "b".to_string(), DataType::Int(IntType::new())),
        ];
        let pred = Predicate::Leaf {
            column: "a".into(),
            index: 0,
            data_type: DataType::Int(IntType::new()),
            op: PredicateOperator::Eq,
            literals: vec![Datum::Int(1)],
        };

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Default, 8);
        assert!(
            buckets.is_none(),
            "Partial bucket key should not determine target buckets"
        );
    }

    #[test]
    fn test_compute_target_buckets_string_key() {
        let fields = vec![DataField::new(
            0,
            "name".to_string(),
            DataType::VarChar(VarCharType::default()),
        )];
        let pred = Predicate::Leaf {
            column: "name".into(),
            index: 0,
            data_type: DataType::VarChar(VarCharType::default()),
            op: PredicateOperator::Eq,
            literals: vec![Datum::String("alice".into())],
        };

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Default, 4);
        assert!(buckets.is_some());
        let buckets = buckets.unwrap();
        assert_eq!(buckets.len(), 1);
        let bucket = *buckets.iter().next().unwrap();
        assert!((0..4).contains(&bucket));
    }

    #[test]
    fn test_compute_target_buckets_mod_function() {
        let fields = bucket_key_fields();
        let pred = Predicate::Leaf {
            column: "id".into(),
            index: 0,
            data_type: DataType::Int(IntType::new()),
            op: PredicateOperator::Eq,
            literals: vec![Datum::Int(-3)],
        };

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Mod, 5);
        assert_eq!(buckets, Some(HashSet::from([2])));
    }

    #[test]
    fn test_compute_target_buckets_hive_function() {
        let fields = vec![
            DataField::new(0, "id".to_string(), DataType::Int(IntType::new())),
            DataField::new(
                1,
                "name".to_string(),
                DataType::VarChar(VarCharType::default()),
            ),
        ];
        let pred = Predicate::And(vec![
            Predicate::Leaf {
                column: "id".into(),
                index: 0,
                data_type: DataType::Int(IntType::new()),
                op: PredicateOperator::Eq,
                literals: vec![Datum::Int(7)],
            },
            Predicate::Leaf {
                column: "name".into(),
                index: 1,
                data_type: DataType::VarChar(VarCharType::default()),
                op: PredicateOperator::Eq,
                literals: vec![Datum::String("hello".into())],
            },
        ]);

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Hive, 8);
        assert_eq!(buckets, Some(HashSet::from([3])));
    }

    #[test]
    fn test_compute_target_buckets_is_null() {
        let fields = bucket_key_fields();
        let pred = Predicate::Leaf {
            column: "id".into(),
            index: 0,
            data_type: DataType::Int(IntType::new()),
            op: PredicateOperator::IsNull,
            literals: vec![],
        };

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Default, 4);
        assert!(buckets.is_some(), "IsNull should determine a target bucket");
        let buckets = buckets.unwrap();
        assert_eq!(buckets.len(), 1);
        let bucket = *buckets.iter().next().unwrap();
        assert!((0..4).contains(&bucket));

        // Verify it matches the expected bucket from a null BinaryRow
        let mut builder = BinaryRowBuilder::new(1);
        builder.set_null_at(0);
        let expected = (builder.build().hash_code() % 4).abs();
        assert_eq!(bucket, expected);
    }

    #[test]
    fn test_compute_target_buckets_composite_key_with_null() {
        let fields = vec![
            DataField::new(0, "a".to_string(), DataType::Int(IntType::new())),
            DataField::new(1, "b".to_string(), DataType::Int(IntType::new())),
        ];
        // a = 1 AND b IS NULL
        let pred = Predicate::And(vec![
            Predicate::Leaf {
                column: "a".into(),
                index: 0,
                data_type: DataType::Int(IntType::new()),
                op: PredicateOperator::Eq,
                literals: vec![Datum::Int(1)],
            },
            Predicate::Leaf {
                column: "b".into(),
                index: 1,
                data_type: DataType::Int(IntType::new()),
                op: PredicateOperator::IsNull,
                literals: vec![],
            },
        ]);

        let buckets = compute_target_buckets(&pred, &fields, BucketFunctionType::Default, 8);
        assert!(
            buckets.is_some(),
            "Composite key with IsNull should determine a target bucket"
        );
        let buckets = buckets.unwrap();
        assert_eq!(buckets.len(), 1);
        let bucket = *buckets.iter().next().unwrap();
        assert!((0..8).contains(&bucket));
    }

    #[tokio::test]
    async fn test_plan_fails_closed_when_query_auth_enabled() {
        // Every scan-planning path must fail closed, including `with_scan_all_files`
        // (read-facing system tables like `files` use it to expose metadata).
        let table = crate::table::query_auth_table();
        let rb = table.new_read_builder();
        for scan in [rb.new_scan(), rb.new_scan().with_scan_all_files()] {
            let err = scan.plan().await.unwrap_err();
            assert!(
                matches!(err, crate::Error::Unsupported { ref message } if message.contains("query-auth.enabled")),
                "scan planning must fail closed (scan_all_files or not)"
            );
        }
    }

    #[tokio::test]
    async fn test_dynamic_option_cannot_disable_query_auth_at_plan() {
        // Copying the table with the option off must not weaken a stored `true`.
        let table =
            crate::table::query_auth_table().copy_with_options(std::collections::HashMap::from([
                ("query-auth.enabled".to_string(), "false".to_string()),
            ]));
        let err = table
            .new_read_builder()
            .new_scan()
            .plan()
            .await
            .unwrap_err();
        assert!(
            matches!(err, crate::Error::Unsupported { ref message } if message.contains("query-auth.enabled")),
            "a dynamic override must not disable query-auth"
        );
    }

    #[tokio::test]
    async fn test_diff_rejects_bucket_rescale_from_snapshot_schemas() {
        let table = diff_test_table("memory:/diff_bucket_rescale_gate");
        let before_schema = table.schema().clone();
        let after_schema = before_schema
            .apply_changes(vec![crate::spec::SchemaChange::set_option(
                "bucket".to_string(),
                "2".to_string(),
            )])
            .unwrap();
        write_schema_file(&table, &before_schema).await;
        write_schema_file(&table, &after_schema).await;

        let scan = PaimonTableScan::new(&table, None, Vec::new(), None, None, None);
        let before = diff_snapshot_with_schema(1, before_schema.id());
        let after = diff_snapshot_with_schema(2, after_schema.id());

        let err = scan.plan_snapshot_diff(&before, &after).await.unwrap_err();
        assert!(
            matches!(err, crate::Error::Unsupported { ref message } if message.contains("bucket rescale")),
            "Diff must reject bucket rescale even when both snapshots are empty"
        );
    }

    #[tokio::test]
    async fn test_diff_rejects_row_id_filters() {
        let table = diff_test_table("memory:/diff_row_id_gate");
        let mut builder = table.new_read_builder();
        let filter = Predicate::Leaf {
            column: crate::spec::ROW_ID_FIELD_NAME.to_string(),
            index: 0,
            data_type: DataType::BigInt(crate::spec::BigIntType::new()),
            op: PredicateOperator::GtEq,
            literals: vec![Datum::Long(10)],
        };
        builder.with_filter(filter);
        let scan = builder.new_scan();
        let before = diff_snapshot(1);
        let after = diff_snapshot(2);

        let err = scan.plan_snapshot_diff(&before, &after).await.unwrap_err();
        assert!(
            matches!(err, crate::Error::Unsupported { ref message } if message.contains("_ROW_ID")),
            "Diff must reject _ROW_ID row-range filters instead of dropping them"
        );
    }

    #[test]
    fn diff_full_state_disables_global_index_row_range_optimization() {
        assert!(!super::should_use_global_index_row_range_optimization(
            true, true, true, true,
        ));
        assert!(super::should_use_global_index_row_range_optimization(
            false, true, true, true,
        ));
    }

    #[tokio::test]
    async fn test_plan_snapshot_metadata_distinguishes_uncommitted_and_empty_results() {
        let table = scan_trace_small_split_table("memory:/plan_snapshot_metadata");
        setup_scan_trace_dirs(&table).await;

        let builder = table.new_read_builder();
        let plan = builder.new_scan().plan().await.unwrap();
        assert!(plan.splits().is_empty());
        assert_eq!(plan.snapshot_id(), None);

        TableCommit::new(table.clone(), "plan-metadata-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![stats_trace_file("metadata.parquet", 1, 1)],
            )])
            .await
            .unwrap();

        let plan = builder.new_scan().plan().await.unwrap();
        assert_eq!(plan.splits().len(), 1);
        assert_eq!(plan.snapshot_id(), Some(1));
        assert_eq!(plan.splits()[0].snapshot_id(), 1);

        let mut limited = table.new_read_builder();
        limited.with_limit(0);
        let empty = limited.new_scan().plan().await.unwrap();
        assert!(empty.splits().is_empty());
        assert_eq!(empty.snapshot_id(), Some(1));
        let (empty, trace) = limited.new_scan().plan_with_trace().await.unwrap();
        assert!(empty.splits().is_empty());
        assert_eq!(empty.snapshot_id(), trace.snapshot_id);
        assert_eq!(empty.snapshot_id(), Some(1));

        let snapshot = table
            .snapshot_manager()
            .get_latest_snapshot()
            .await
            .unwrap()
            .unwrap();
        let delta = limited
            .new_scan()
            .plan_snapshot_delta(&snapshot)
            .await
            .unwrap();
        assert!(delta.splits().is_empty());
        assert_eq!(delta.snapshot_id(), Some(1));
        let changelog = builder
            .new_scan()
            .plan_snapshot_changelog(&snapshot)
            .await
            .unwrap();
        assert!(changelog.splits().is_empty());
        assert_eq!(changelog.snapshot_id(), Some(1));
    }

    #[tokio::test]
    async fn test_plan_rejects_invalid_scan_manifest_parallelism() {
        let table =
            scan_trace_test_table("memory:/invalid_scan_manifest_parallelism").copy_with_options(
                HashMap::from([("scan.manifest.parallelism".to_string(), "0".to_string())]),
            );
        setup_scan_trace_dirs(&table).await;

        TableCommit::new(table.clone(), "manifest-parallelism-test".to_string())
            .commit(vec![CommitMessage::new(
                BinaryRowBuilder::new(0).build_serialized(),
                0,
                vec![stats_trace_file("parallelism.parquet", 1, 1)],
            )])
            .await
            .unwrap();

        let error = table
            .new_read_builder()
            .new_scan()
            .plan()
            .await
            .unwrap_err();
        assert!(matches!(error, Error::DataInvalid { message, .. }
            if message.contains("scan.manifest.parallelism")));
    }

    #[tokio::test]
    async fn test_plan_snapshot_metadata_preserves_pruned_historical_snapshot() {
        let table = scan_trace_small_split_table("memory:/plan_historical_snapshot_metadata");
        setup_scan_trace_dirs(&table).await;
        for id in 1..=2 {
            TableCommit::new(table.clone(), "historical-metadata-test".to_string())
                .commit(vec![CommitMessage::new(
                    BinaryRowBuilder::new(0).build_serialized(),
                    0,
                    vec![stats_trace_file(&format!("metadata-{id}.parquet"), id, id)],
                )])
                .await
                .unwrap();
        }
        let table = table.copy_with_options(HashMap::from([(
            "scan.snapshot-id".to_string(),
            "1".to_string(),
        )]));
        let mut builder = table.new_read_builder();
        let predicate = PredicateBuilder::new(table.schema().fields())
            .equal("id", Datum::Int(99))
            .unwrap();
        builder.with_filter(predicate);
        let plan = builder.new_scan().plan().await.unwrap();
        assert!(plan.splits().is_empty());
        assert_eq!(plan.snapshot_id(), Some(1));
        let (plan, trace) = builder.new_scan().plan_with_trace().await.unwrap();
        assert!(plan.splits().is_empty());
        assert_eq!(plan.snapshot_id(), trace.snapshot_id);
        assert_eq!(plan.snapshot_id(), Some(1));

        let mut ranges = table.new_read_builder();
        ranges.with_row_ranges(vec![]);
        let empty = ranges.new_scan().plan().await.unwrap();
        assert!(empty.splits().is_empty());
        assert_eq!(empty.snapshot_id(), Some(1));
    }
}
