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

//! Data-level stats predicate filtering for manifest entries and data evolution groups.

use super::Table;
use crate::arrow::schema_evolution::create_index_mapping;
use crate::predicate_stats::{
    data_leaf_may_match, data_leaf_must_match, missing_field_may_match, missing_field_must_match,
    predicates_may_match_with_schema, StatsAccessor,
};
use crate::spec::{
    extract_datum, is_row_tracking_column, BinaryRow, DataField, DataFileMeta, DataType, Datum,
    Predicate,
};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub(super) struct FileStatsRows {
    pub(super) row_count: i64,
    min_values: Option<BinaryRow>,
    max_values: Option<BinaryRow>,
    null_counts: Vec<Option<i64>>,
    supports_in_min_max_pruning: bool,
    /// Maps schema field index → stats index. `None` means identity mapping
    /// (stats cover all schema fields in order). `Some` maps dense stats such
    /// as `value_stats_cols`, `write_cols`, or trimmed primary-key stats.
    stats_col_mapping: Option<Vec<Option<usize>>>,
}

fn dense_stats_col_mapping(
    schema_fields: &[DataField],
    stats_columns: &[String],
) -> Vec<Option<usize>> {
    let col_index: HashMap<&str, usize> = stats_columns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    schema_fields
        .iter()
        .map(|field| col_index.get(field.name()).copied())
        .collect()
}

impl FileStatsRows {
    /// Build a `FileStatsRows` for manifest-level partition stats (no column mapping).
    pub(super) fn for_manifest_partition(
        row_count: i64,
        min_values: Option<BinaryRow>,
        max_values: Option<BinaryRow>,
        null_counts: Vec<Option<i64>>,
    ) -> Self {
        Self {
            row_count,
            min_values,
            max_values,
            null_counts,
            supports_in_min_max_pruning: false,
            stats_col_mapping: None,
        }
    }

    /// Build file stats from a data file, respecting `value_stats_cols`.
    ///
    /// When `value_stats_cols` is `None`, stats cover all fields in `schema_fields` order.
    /// When `value_stats_cols` is `Some`, stats are in dense mode — only covering those
    /// columns, and the mapping from schema field index to stats index is built by name.
    pub(super) fn from_data_file(file: &DataFileMeta, schema_fields: &[DataField]) -> Self {
        let stats_col_mapping = file
            .value_stats_cols
            .as_ref()
            .or(file.write_cols.as_ref())
            .map(|cols| dense_stats_col_mapping(schema_fields, cols));

        Self {
            row_count: file.row_count,
            min_values: BinaryRow::from_serialized_bytes(file.value_stats.min_values()).ok(),
            max_values: BinaryRow::from_serialized_bytes(file.value_stats.max_values()).ok(),
            null_counts: file.value_stats.null_counts().clone(),
            supports_in_min_max_pruning: true,
            stats_col_mapping,
        }
    }

    /// Build file stats from `_KEY_STATS`.
    ///
    /// Key stats are dense and follow the table's trimmed primary-key order
    /// (primary-key columns with partition columns removed).
    pub(super) fn from_key_stats(
        file: &DataFileMeta,
        schema_fields: &[DataField],
        key_fields: &[String],
    ) -> Self {
        Self {
            row_count: file.row_count,
            min_values: BinaryRow::from_serialized_bytes(file.key_stats.min_values()).ok(),
            max_values: BinaryRow::from_serialized_bytes(file.key_stats.max_values()).ok(),
            null_counts: file.key_stats.null_counts().clone(),
            supports_in_min_max_pruning: true,
            stats_col_mapping: Some(dense_stats_col_mapping(schema_fields, key_fields)),
        }
    }

    /// Resolve a schema field index to the corresponding stats index.
    fn stats_index(&self, schema_index: usize) -> Option<usize> {
        match &self.stats_col_mapping {
            None => Some(schema_index),
            Some(mapping) => mapping.get(schema_index).copied().flatten(),
        }
    }

    fn stats_null_count(&self, stats_index: usize) -> Option<i64> {
        self.null_counts.get(stats_index).copied().flatten()
    }
}

impl StatsAccessor for FileStatsRows {
    fn row_count(&self) -> i64 {
        self.row_count
    }

    fn null_count(&self, index: usize) -> Option<i64> {
        let stats_index = self.stats_index(index)?;
        self.stats_null_count(stats_index)
    }

    fn min_value(&self, index: usize, data_type: &DataType) -> Option<Datum> {
        let stats_index = self.stats_index(index)?;
        self.min_values
            .as_ref()
            .and_then(|row| extract_stats_datum(row, stats_index, data_type))
    }

    fn max_value(&self, index: usize, data_type: &DataType) -> Option<Datum> {
        let stats_index = self.stats_index(index)?;
        self.max_values
            .as_ref()
            .and_then(|row| extract_stats_datum(row, stats_index, data_type))
    }

    fn supports_in_min_max_pruning(&self) -> bool {
        self.supports_in_min_max_pruning
    }
}

#[derive(Debug)]
pub(super) struct ResolvedStatsSchema {
    file_fields: Vec<DataField>,
    field_mapping: Vec<Option<usize>>,
    key_fields: Vec<String>,
}

fn identity_field_mapping(num_fields: usize) -> Vec<Option<usize>> {
    (0..num_fields).map(Some).collect()
}

fn normalize_field_mapping(mapping: Option<Vec<i32>>, num_fields: usize) -> Vec<Option<usize>> {
    mapping
        .map(|field_mapping| {
            field_mapping
                .into_iter()
                .map(|index| usize::try_from(index).ok())
                .collect()
        })
        .unwrap_or_else(|| identity_field_mapping(num_fields))
}

fn has_always_false(predicates: &[Predicate], key_predicates: &[Predicate]) -> bool {
    predicates
        .iter()
        .chain(key_predicates)
        .any(|p| matches!(p, Predicate::AlwaysFalse))
}

fn matches_file_stats(
    file: &DataFileMeta,
    predicates: &[Predicate],
    key_predicates: &[Predicate],
    field_mapping: &[Option<usize>],
    schema_fields: &[DataField],
    key_fields: &[String],
) -> bool {
    let value_stats = FileStatsRows::from_data_file(file, schema_fields);
    if !predicates_may_match_with_schema(predicates, &value_stats, field_mapping, schema_fields) {
        return false;
    }

    if key_predicates.is_empty() {
        return true;
    }

    let key_stats = FileStatsRows::from_key_stats(file, schema_fields, key_fields);
    predicates_may_match_with_schema(key_predicates, &key_stats, field_mapping, schema_fields)
}

/// Check whether a data file *may* contain rows matching all `predicates`.
///
/// Value predicates are evaluated against `_VALUE_STATS`; primary-key
/// predicates are additionally evaluated against `_KEY_STATS`. Both sources
/// must report that the file may match.
///
/// Pruning is evaluated per file and fails open when stats cannot be
/// interpreted safely, including schema mismatches, incompatible stats arity,
/// and missing or corrupted stats.
pub(super) fn data_file_matches_predicates_with_key_stats(
    file: &DataFileMeta,
    predicates: &[Predicate],
    key_predicates: &[Predicate],
    current_schema_id: i64,
    schema_fields: &[DataField],
    key_fields: &[String],
) -> bool {
    if predicates.is_empty() && key_predicates.is_empty() {
        return true;
    }

    if has_always_false(predicates, key_predicates) {
        return false;
    }

    if file.schema_id != current_schema_id {
        return true;
    }

    let field_mapping = identity_field_mapping(schema_fields.len());
    matches_file_stats(
        file,
        predicates,
        key_predicates,
        &field_mapping,
        schema_fields,
        key_fields,
    )
}

#[cfg(test)]
pub(super) fn data_file_matches_predicates(
    file: &DataFileMeta,
    predicates: &[Predicate],
    current_schema_id: i64,
    schema_fields: &[DataField],
) -> bool {
    data_file_matches_predicates_with_key_stats(
        file,
        predicates,
        &[],
        current_schema_id,
        schema_fields,
        &[],
    )
}

async fn resolve_stats_schema(
    table: &Table,
    file_schema_id: i64,
    schema_cache: &mut HashMap<i64, Option<Arc<ResolvedStatsSchema>>>,
) -> Option<Arc<ResolvedStatsSchema>> {
    if let Some(cached) = schema_cache.get(&file_schema_id) {
        return cached.clone();
    }

    let table_schema = table.schema();
    let current_fields = table_schema.fields();
    let resolved = if file_schema_id == table_schema.id() {
        Some(Arc::new(ResolvedStatsSchema {
            file_fields: current_fields.to_vec(),
            field_mapping: identity_field_mapping(current_fields.len()),
            key_fields: table_schema.trimmed_primary_keys(),
        }))
    } else {
        let file_schema = table.schema_manager().schema(file_schema_id).await.ok()?;
        let file_fields = file_schema.fields().to_vec();
        Some(Arc::new(ResolvedStatsSchema {
            field_mapping: normalize_field_mapping(
                create_index_mapping(current_fields, &file_fields),
                current_fields.len(),
            ),
            file_fields,
            key_fields: file_schema.trimmed_primary_keys(),
        }))
    };

    schema_cache.insert(file_schema_id, resolved.clone());
    resolved
}

pub(super) async fn data_file_matches_predicates_for_table(
    table: &Table,
    file: &DataFileMeta,
    predicates: &[Predicate],
    key_predicates: &[Predicate],
    schema_cache: &mut HashMap<i64, Option<Arc<ResolvedStatsSchema>>>,
) -> bool {
    if predicates.is_empty() && key_predicates.is_empty() {
        return true;
    }

    if has_always_false(predicates, key_predicates) {
        return false;
    }

    if file.schema_id == table.schema().id() {
        return data_file_matches_predicates_with_key_stats(
            file,
            predicates,
            key_predicates,
            table.schema().id(),
            table.schema().fields(),
            &table.schema().trimmed_primary_keys(),
        );
    }

    let Some(resolved) = resolve_stats_schema(table, file.schema_id, schema_cache).await else {
        return true;
    };

    matches_file_stats(
        file,
        predicates,
        key_predicates,
        &resolved.field_mapping,
        &resolved.file_fields,
        &resolved.key_fields,
    )
}

fn extract_stats_datum(row: &BinaryRow, index: usize, data_type: &DataType) -> Option<Datum> {
    let min_row_len = BinaryRow::cal_fix_part_size_in_bytes(row.arity()) as usize;
    if index >= row.arity() as usize || row.data().len() < min_row_len {
        return None;
    }

    match extract_datum(row, index, data_type) {
        Ok(Some(datum)) => Some(datum),
        Ok(None) | Err(_) => None,
    }
}

/// Check whether a data-evolution file group *may* contain rows matching all `predicates`.
///
/// In data evolution mode, a logical row can be spread across multiple files with
/// different column sets. After `group_by_overlapping_row_id`, each group contains
/// files with overlapping row ID ranges. A field can use stats only from a
/// unique latest provider covering the entire group, interpreted by field ID
/// in that provider's schema.
///
/// Reference: [DataEvolutionFileStoreScan.evolutionStats](https://github.com/apache/paimon/blob/master/paimon-core/src/main/java/org/apache/paimon/operation/DataEvolutionFileStoreScan.java)
pub(super) async fn data_evolution_group_matches_predicates_for_table(
    table: &Table,
    group: &[DataFileMeta],
    predicates: &[Predicate],
    schema_cache: &mut HashMap<i64, Option<Arc<ResolvedStatsSchema>>>,
) -> bool {
    if has_always_false(predicates, &[]) {
        return false;
    }
    if predicates
        .iter()
        .all(|p| matches!(p, Predicate::AlwaysTrue))
    {
        return true;
    }
    let mut schemas = Vec::with_capacity(group.len());
    for file in group {
        let Some(schema) = resolve_stats_schema(table, file.schema_id, schema_cache).await else {
            // Unknown file schemas cannot establish either field absence or stats layout.
            return true;
        };
        schemas.push(schema);
    }
    data_evolution_group_matches_resolved_predicates(
        group,
        predicates,
        table.schema().fields(),
        &schemas,
    )
}

#[cfg(test)]
pub(super) fn data_evolution_group_matches_predicates(
    group: &[DataFileMeta],
    predicates: &[Predicate],
    table_fields: &[DataField],
) -> bool {
    let schema = Arc::new(ResolvedStatsSchema {
        file_fields: table_fields.to_vec(),
        field_mapping: identity_field_mapping(table_fields.len()),
        key_fields: Vec::new(),
    });
    data_evolution_group_matches_resolved_predicates(
        group,
        predicates,
        table_fields,
        &vec![schema; group.len()],
    )
}

fn data_evolution_group_matches_resolved_predicates(
    group: &[DataFileMeta],
    predicates: &[Predicate],
    table_fields: &[DataField],
    schemas: &[Arc<ResolvedStatsSchema>],
) -> bool {
    if predicates.is_empty() || group.is_empty() {
        return true;
    }

    if predicates
        .iter()
        .any(|p| matches!(p, Predicate::AlwaysFalse))
    {
        return false;
    }
    if predicates
        .iter()
        .all(|p| matches!(p, Predicate::AlwaysTrue))
    {
        return true;
    }

    let ranges: Option<Vec<_>> = group
        .iter()
        .map(|file| {
            let start = file.first_row_id?;
            let end = start.checked_add(file.row_count)?;
            (end > start).then_some((start, end))
        })
        .collect();
    let Some(ranges) = ranges else {
        return true;
    };
    let start = ranges.iter().map(|range| range.0).min().unwrap();
    let end = ranges.iter().map(|range| range.1).max().unwrap();
    let Some(row_count) = end.checked_sub(start) else {
        return true;
    };

    // Resolve providers by field ID in each file's schema, then choose the latest
    // provider. Column names in write_cols/value_stats_cols belong to that schema.
    let mut sorted_files: Vec<_> = group.iter().zip(schemas).collect();
    sorted_files.sort_by_key(|(file, _)| std::cmp::Reverse(file.max_sequence_number));
    let per_file_columns: Vec<_> = sorted_files
        .iter()
        .map(|(file, schema)| file_data_columns(file, &schema.file_fields))
        .collect();
    let mut field_sources = vec![None; table_fields.len()];
    let mut usable_provider = vec![false; table_fields.len()];
    for field_idx in 0..table_fields.len() {
        let mut providers =
            sorted_files
                .iter()
                .enumerate()
                .filter_map(|(file_idx, (file, schema))| {
                    let old_idx = schema.field_mapping[field_idx]?;
                    per_file_columns[file_idx]
                        .contains(&schema.file_fields[old_idx].name())
                        .then_some((file_idx, *file))
                });
        if let Some((file_idx, file)) = providers.next() {
            field_sources[field_idx] = Some((file_idx, field_idx));
            let tied = providers
                .next()
                .is_some_and(|(_, next)| next.max_sequence_number == file.max_sequence_number);
            usable_provider[field_idx] =
                !tied && file.first_row_id == Some(start) && file.row_count == row_count;
        }
    }

    let file_stats: Vec<FileStatsRows> = sorted_files
        .iter()
        .map(|(file, schema)| {
            let mut stats = FileStatsRows::from_data_file(file, &schema.file_fields);
            let mapping = table_fields
                .iter()
                .enumerate()
                .map(|(idx, field)| {
                    let old_idx = schema.field_mapping[idx]?;
                    // Java ignores stats for changed types. Keep the field's provider
                    // but mark its stats unknown, rather than treating it as absent/null.
                    if !usable_provider[idx]
                        || schema.file_fields[old_idx].data_type() != field.data_type()
                        || !valid_evolution_stats(&stats, old_idx, field.data_type(), row_count)
                    {
                        return None;
                    }
                    stats.stats_index(old_idx)
                })
                .collect();
            stats.stats_col_mapping = Some(mapping);
            stats
        })
        .collect();

    predicates.iter().all(|predicate| {
        data_evolution_predicate_may_match(
            predicate,
            table_fields,
            &field_sources,
            &file_stats,
            row_count,
        )
    })
}

/// Java DataEvolutionFileStoreScan.isValidStats: inconsistent statistics must
/// not become evidence that an entire row-id group can be dropped.
fn valid_evolution_stats(
    stats: &FileStatsRows,
    index: usize,
    data_type: &DataType,
    row_count: i64,
) -> bool {
    let Some(stats_index) = stats.stats_index(index) else {
        return false;
    };
    if [&stats.min_values, &stats.max_values].iter().any(|row| {
        row.as_ref().is_none_or(|row| {
            stats_index >= row.arity() as usize
                || row.data().len() < BinaryRow::cal_fix_part_size_in_bytes(row.arity()) as usize
        })
    }) {
        return false;
    }
    let nulls = stats.null_count(index);
    if nulls.is_some_and(|count| count < 0 || count > row_count) {
        return false;
    }
    match (
        stats.min_value(index, data_type),
        stats.max_value(index, data_type),
    ) {
        (None, None) => true,
        (Some(min), Some(max)) => {
            nulls != Some(row_count)
                && matches!(
                    min.partial_cmp(&max),
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                )
        }
        _ => false,
    }
}

/// Resolve which columns a file actually contains (for field source resolution).
/// Uses `write_cols` if present, otherwise assumes all table fields.
/// This is distinct from `file_stats_columns` which resolves stats coverage.
fn file_data_columns<'a>(file: &'a DataFileMeta, table_fields: &'a [DataField]) -> Vec<&'a str> {
    match &file.write_cols {
        Some(cols) => cols.iter().map(|s| s.as_str()).collect(),
        None => table_fields.iter().map(|f| f.name()).collect(),
    }
}

fn data_evolution_predicate_may_match(
    predicate: &Predicate,
    table_fields: &[DataField],
    field_sources: &[Option<(usize, usize)>],
    file_stats: &[FileStatsRows],
    row_count: i64,
) -> bool {
    match predicate {
        Predicate::AlwaysTrue => true,
        Predicate::AlwaysFalse => false,
        Predicate::And(children) => children.iter().all(|child| {
            data_evolution_predicate_may_match(
                child,
                table_fields,
                field_sources,
                file_stats,
                row_count,
            )
        }),
        Predicate::Or(children) => children.iter().any(|child| {
            data_evolution_predicate_may_match(
                child,
                table_fields,
                field_sources,
                file_stats,
                row_count,
            )
        }),
        Predicate::Not(inner) => !data_evolution_predicate_must_match(
            inner,
            table_fields,
            field_sources,
            file_stats,
            row_count,
        ),
        // Row-tracking metadata has no logical column stats, so never prune a group on it.
        Predicate::Leaf { column, .. } if is_row_tracking_column(column) => true,
        Predicate::Leaf {
            index,
            data_type,
            op,
            literals,
            ..
        } => {
            let Some(source) = field_sources.get(*index).copied().flatten() else {
                return missing_field_may_match(*op, row_count);
            };
            let (file_idx, field_index) = source;
            let stats = &file_stats[file_idx];
            let stats_data_type = table_fields
                .get(*index)
                .map(|f| f.data_type())
                .unwrap_or(data_type);
            data_leaf_may_match(
                field_index,
                stats_data_type,
                data_type,
                *op,
                literals,
                stats,
            )
        }
    }
}

fn data_evolution_predicate_must_match(
    predicate: &Predicate,
    table_fields: &[DataField],
    field_sources: &[Option<(usize, usize)>],
    file_stats: &[FileStatsRows],
    row_count: i64,
) -> bool {
    match predicate {
        Predicate::AlwaysTrue => row_count > 0,
        Predicate::AlwaysFalse => false,
        Predicate::And(children) => children.iter().all(|child| {
            data_evolution_predicate_must_match(
                child,
                table_fields,
                field_sources,
                file_stats,
                row_count,
            )
        }),
        Predicate::Or(children) => children.iter().any(|child| {
            data_evolution_predicate_must_match(
                child,
                table_fields,
                field_sources,
                file_stats,
                row_count,
            )
        }),
        Predicate::Not(inner) => !data_evolution_predicate_may_match(
            inner,
            table_fields,
            field_sources,
            file_stats,
            row_count,
        ),
        // Stats cannot decide `_ROW_ID`, so it never provably matches.
        Predicate::Leaf { column, .. } if is_row_tracking_column(column) => false,
        Predicate::Leaf {
            index,
            data_type,
            op,
            literals,
            ..
        } => {
            let Some(source) = field_sources.get(*index).copied().flatten() else {
                return missing_field_must_match(*op, row_count);
            };
            let (file_idx, field_index) = source;
            let stats = &file_stats[file_idx];
            let stats_data_type = table_fields
                .get(*index)
                .map(|f| f.data_type())
                .unwrap_or(data_type);
            data_leaf_must_match(
                field_index,
                stats_data_type,
                data_type,
                *op,
                literals,
                stats,
            )
        }
    }
}

/// Groups data files by overlapping `row_id_range` for data evolution.
///
/// Groups are sorted by row ID range. Files whose row ID ranges overlap are merged into
/// the same group while preserving their input order. Files without `first_row_id` become
/// their own group.
///
/// Reference: [DataEvolutionSplitGenerator](https://github.com/apache/paimon/blob/master/paimon-core/src/main/java/org/apache/paimon/table/source/DataEvolutionSplitGenerator.java)
pub(crate) fn group_by_overlapping_row_id(files: Vec<DataFileMeta>) -> Vec<Vec<DataFileMeta>> {
    let mut indexed_files: Vec<(usize, DataFileMeta)> = files.into_iter().enumerate().collect();
    indexed_files.sort_by(|(a_index, a), (b_index, b)| {
        match (a.row_id_range(), b.row_id_range()) {
            (None, None) => a_index.cmp(b_index),
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some((a_start, a_end)), Some((b_start, b_end))) => a_start
                .cmp(&b_start)
                .then_with(|| a_end.cmp(&b_end))
                .then_with(|| a_index.cmp(b_index)),
        }
    });

    let mut result: Vec<Vec<DataFileMeta>> = Vec::new();
    let mut current_group: Vec<(usize, DataFileMeta)> = Vec::new();
    let mut current_range_end: i64 = i64::MIN;

    let restore_input_order = |mut group: Vec<(usize, DataFileMeta)>| {
        group.sort_by_key(|(index, _)| *index);
        group.into_iter().map(|(_, file)| file).collect()
    };

    for (index, file) in indexed_files {
        match file.row_id_range() {
            None => {
                if !current_group.is_empty() {
                    result.push(restore_input_order(std::mem::take(&mut current_group)));
                    current_range_end = i64::MIN;
                }
                result.push(vec![file]);
            }
            Some((start, end)) => {
                if current_group.is_empty() || start <= current_range_end {
                    if end > current_range_end {
                        current_range_end = end;
                    }
                    current_group.push((index, file));
                } else {
                    result.push(restore_input_order(std::mem::take(&mut current_group)));
                    current_range_end = end;
                    current_group.push((index, file));
                }
            }
        }
    }
    if !current_group.is_empty() {
        result.push(restore_input_order(current_group));
    }
    result
}
