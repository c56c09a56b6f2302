//! What the coordinator knows about its table, read once when it is bound ([`TableRules`]):
//! the partition keys, bucket mode, schema history, external roots, key type and levels every
//! rule reads.

use std::collections::BTreeSet;

use paimon::spec::{CoreOptions, DataField};
use paimon::table::Table;

use super::keys::KeyType;
use super::limits::{
    BucketMode, DATA_EXTERNAL_PATHS_OPTION, DATA_EXTERNAL_PATHS_STRATEGY_OPTION,
    GLOBAL_INDEX_EXTERNAL_PATH_OPTION,
};
use super::paths::canonical_root;
use crate::coordinator::binding::{Binding, WriteKind};
use crate::coordinator::error::{CoordinatorError, CoordinatorResult};

fn configured_roots(options: &std::collections::HashMap<String, String>, key: &str) -> Vec<String> {
    options
        .get(key)
        .map(|value| {
            value
                .split(',')
                .map(str::trim)
                .filter(|root| !root.is_empty())
                .map(|root| root.trim_end_matches('/').to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Refuses an external root that another table could share (rule `external-path`, at bind).
///
/// Writers put an external file at `<root>/<partition>/bucket-<n>/<file>`: nothing in that
/// path names the table. Two tables configured with one root write into the same
/// directories, so a coordinator of one could not tell the other's files from its own — it
/// would accept the other table's messages, and its abort would delete the other table's
/// live files. Detecting a shared root would mean reading every table of every catalog that
/// can reach the store, which no coordinator can; instead every root must name its table: it
/// ends with `<database>/<table>` or `<database>.db/<table>`, or lies inside the table's own
/// directory.
fn check_table_unique_root(table: &Table, option: &str, root: &str) -> CoordinatorResult<()> {
    let identifier = table.identifier();
    let (database, name) = (identifier.database(), identifier.object());
    let canonical = canonical_root(root);
    let trimmed = canonical.trim_end_matches('/');
    let location = canonical_root(table.location());
    let location = location.trim_end_matches('/');
    let inside_table = trimmed == location || trimmed.starts_with(&format!("{location}/"));
    let names_table = [
        format!("/{database}/{name}"),
        format!("/{database}.db/{name}"),
    ]
    .iter()
    .any(|suffix| trimmed.ends_with(suffix.as_str()));
    if inside_table || names_table {
        return Ok(());
    }
    Err(CoordinatorError::Unsupported {
        reason: format!(
            "table {database}.{name} sets {option} to root {root:?}, which does not name the \
             table; another table could share it, and a coordinator could then not tell that \
             table's external files from this one's (rule external-path). Give every table its \
             own root ending in /{database}.db/{name} (or /{database}/{name}), or one inside \
             the table's directory"
        ),
    })
}

/// What the coordinator knows about its table, read once when it is bound.
#[derive(Debug, Clone)]
pub(crate) struct TableRules {
    pub(crate) table: Table,
    pub(crate) table_name: String,
    pub(crate) partition_fields: Vec<DataField>,
    pub(crate) field_ids: BTreeSet<i32>,
    pub(crate) bucket_option: i32,
    pub(crate) bucket_mode: BucketMode,
    pub(crate) write_kind: WriteKind,
    pub(crate) allow_deletes: bool,
    pub(crate) allow_compaction: bool,
    pub(crate) primary_keys: bool,
    /// Whether the table orders rows by `sequence.field` rather than by sequence number.
    pub(crate) sequence_field: bool,
    pub(crate) schema_ids: BTreeSet<i64>,
    pub(crate) data_external_roots: Vec<String>,
    pub(crate) global_index_external_root: Option<String>,
    pub(crate) entropy_inject: bool,
    /// The table's key type (empty without a primary key).
    pub(crate) key_type: KeyType,
    /// The table's number of LSM levels (Java `CoreOptions#numLevels`).
    pub(crate) num_levels: i32,
}

/// Java `CoreOptions#numLevels`: `num-levels`, else `num-sorted-run.compaction-trigger` + 1
/// (the trigger defaults to 5).
pub(crate) fn num_levels(options: &std::collections::HashMap<String, String>) -> i32 {
    let parse = |key: &str| options.get(key).and_then(|v| v.trim().parse::<i32>().ok());
    parse("num-levels")
        .unwrap_or_else(|| {
            parse("num-sorted-run.compaction-trigger")
                .unwrap_or(5)
                .saturating_add(1)
        })
        .max(1)
}

impl TableRules {
    /// Reads the rules of `table` for messages committed under `binding`.
    pub(crate) async fn load(table: &Table, binding: &Binding) -> CoordinatorResult<Self> {
        let write_kind = binding.write_kind;
        let schema = table.schema();
        let table_name = table.identifier().full_name();
        let options = CoreOptions::new(schema.options());
        if options.is_format_table() {
            return Err(CoordinatorError::Unsupported {
                reason: format!(
                    "table {table_name} is a format table; its messages use Java's \
                     TwoPhaseCommitMessage, not CommitMessageSerializer"
                ),
            });
        }
        let bucket_option = options.bucket();
        let bucket_mode =
            BucketMode::from_table_option(bucket_option, !schema.primary_keys().is_empty())
                .ok_or_else(|| CoordinatorError::Unsupported {
                    reason: format!(
                "table {table_name} has bucket = {bucket_option}, which Paimon does not define"
            ),
                })?;
        if write_kind == WriteKind::PostponeFixedBucket && bucket_mode != BucketMode::Postpone {
            return Err(CoordinatorError::Unsupported {
                reason: format!(
                    "a postpone fixed-bucket coordinator needs a postpone table (bucket = -2), \
                     but table {table_name} is {bucket_mode}; bind a standard coordinator"
                ),
            });
        }
        let mut schema_ids: BTreeSet<i64> = table
            .schema_manager()
            .list_all_ids()
            .await
            .map_err(|e| {
                CoordinatorError::paimon(format!("listing the schemas of table {table_name}"), e)
            })?
            .into_iter()
            .collect();
        schema_ids.insert(schema.id());
        let data_external_roots = configured_roots(schema.options(), DATA_EXTERNAL_PATHS_OPTION);
        let global_index_external_root =
            configured_roots(schema.options(), GLOBAL_INDEX_EXTERNAL_PATH_OPTION)
                .into_iter()
                .next();
        for (option, root) in data_external_roots
            .iter()
            .map(|r| (DATA_EXTERNAL_PATHS_OPTION, r))
            .chain(
                global_index_external_root
                    .iter()
                    .map(|r| (GLOBAL_INDEX_EXTERNAL_PATH_OPTION, r)),
            )
        {
            check_table_unique_root(table, option, root)?;
        }
        let entropy_inject = schema
            .options()
            .get(DATA_EXTERNAL_PATHS_STRATEGY_OPTION)
            .is_some_and(|s| s.trim().eq_ignore_ascii_case("entropy-inject"));
        Ok(Self {
            table: table.clone(),
            table_name,
            partition_fields: schema.partition_fields(),
            field_ids: schema.fields().iter().map(DataField::id).collect(),
            bucket_option,
            bucket_mode,
            write_kind,
            allow_deletes: binding.allow_deletes,
            allow_compaction: binding.allow_compaction,
            primary_keys: !schema.primary_keys().is_empty(),
            sequence_field: !options.sequence_fields().is_empty(),
            schema_ids,
            data_external_roots,
            global_index_external_root,
            entropy_inject,
            key_type: KeyType::new(schema.fields(), &schema.trimmed_primary_keys()),
            num_levels: num_levels(schema.options()),
        })
    }

    /// The table's key type (empty without a primary key).
    pub(crate) fn key_type(&self) -> &KeyType {
        &self.key_type
    }

    /// The table's number of LSM levels; compaction results lie below it.
    pub(crate) fn num_levels(&self) -> i32 {
        self.num_levels
    }

    pub(crate) fn table_name(&self) -> &str {
        &self.table_name
    }

    pub(crate) fn bucket_mode(&self) -> BucketMode {
        self.bucket_mode
    }

    pub(crate) fn has_primary_keys(&self) -> bool {
        self.primary_keys
    }

    /// Whether rows of one key are ordered by sequence number: a primary-key table without
    /// `sequence.field`, whose buckets are written by one writer each (not postpone).
    pub(crate) fn orders_by_sequence_number(&self) -> bool {
        self.primary_keys
            && !self.sequence_field
            && self.bucket_mode != BucketMode::Postpone
            && self.write_kind == WriteKind::Standard
    }

    pub(crate) fn partition_fields(&self) -> &[DataField] {
        &self.partition_fields
    }

    pub(crate) fn write_kind(&self) -> WriteKind {
        self.write_kind
    }

    /// The directory of `bucket` in `partition`, relative to the table's root, as the
    /// writers' external path provider appends it to an external root
    /// (`pt=a/bucket-0`; `data/pt=a/bucket-0` with `data-file.path-directory = data`).
    /// `None` when the data directory is not under the table (an absolute
    /// `data-file.path-directory`), where no external path can be checked.
    pub(crate) fn relative_bucket_path(&self, partition: &[u8], bucket: i32) -> Option<String> {
        let absolute = paimon::table::TableCommit::new(self.table.clone(), String::new())
            .bucket_path(partition, bucket)
            .ok()?;
        let root = format!("{}/", self.table.location().trim_end_matches('/'));
        absolute.strip_prefix(&root).map(str::to_string)
    }
}
