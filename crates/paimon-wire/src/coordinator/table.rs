//! Opening the table a coordinator binds to: a warehouse (with catalog options) and a
//! `database.table` name.

use paimon::catalog::Identifier;

use crate::warehouse::{open_catalog, paimon_error, WarehouseOptions};

use super::error::{CoordinatorError, CoordinatorResult};

/// Table options that fix how the table's files are laid out or how a key's rows are ordered:
/// a job must not override them for its own use of the table (as Paimon Java refuses them
/// as dynamic options), since writers would then put files where the table does not expect
/// them, and the coordinator would check them against the overridden rules.
const FIXED_TABLE_OPTIONS: [&str; 14] = [
    "bucket",
    "bucket-key",
    "primary-key",
    "partition",
    "partition.default-name",
    "merge-engine",
    "sequence.field",
    "rowkind.field",
    "data-file.path-directory",
    "index-file-in-data-file-dir",
    "type",
    // Where external files go: a job's own roots would let its payloads point outside the
    // table's (see rule external-path and the table-unique root check at bind).
    "data-file.external-paths",
    "data-file.external-paths.strategy",
    "global-index.external-path",
];

/// Whether `key` is a table option a job may not override for its own use of the table
/// (the table's layout and key order; see the list in the source).
pub fn is_fixed_table_option(key: &str) -> bool {
    FIXED_TABLE_OPTIONS.contains(&key)
}

/// Splits `database.table` into an [`Identifier`]. Exactly one dot, both sides non-empty.
pub fn parse_table_name(name: &str) -> CoordinatorResult<Identifier> {
    let invalid = |reason: &str| CoordinatorError::InvalidTableName {
        name: name.to_string(),
        reason: reason.to_string(),
    };
    let (database, table) = name
        .split_once('.')
        .ok_or_else(|| invalid("expected database.table"))?;
    if database.is_empty() || table.is_empty() {
        return Err(invalid("database and table names must not be empty"));
    }
    if table.contains('.') {
        return Err(invalid(
            "expected exactly one '.' between database and table",
        ));
    }
    Ok(Identifier::new(database, table))
}

/// Opens table `name` (`database.table`) in the filesystem warehouse at `warehouse` (a local
/// path or a URI whose storage backend is compiled in, e.g. `file:///data/warehouse`), with
/// no catalog options. See [`open_table_with_options`].
pub async fn open_table(warehouse: &str, name: &str) -> CoordinatorResult<paimon::table::Table> {
    open_table_with_options(warehouse, name, &WarehouseOptions::new()).await
}

/// Opens table `name` (`database.table`) in `warehouse` with catalog options (storage
/// endpoint, region, credentials; `metastore=rest` with `uri`/`token` for a REST catalog).
/// A URI whose backend is not compiled in is [`CoordinatorError::StorageBackendNotCompiled`];
/// no error carries a secret option's value.
pub async fn open_table_with_options(
    warehouse: &str,
    name: &str,
    options: &WarehouseOptions,
) -> CoordinatorResult<paimon::table::Table> {
    let identifier = parse_table_name(name)?;
    let catalog = open_catalog(warehouse, options).await?;
    catalog
        .get_table(&identifier)
        .await
        .map_err(|e| paimon_error(format!("opening table {name} in {warehouse:?}"), e, options))
}

#[cfg(test)]
mod tests {
    use super::is_fixed_table_option;

    #[test]
    fn layout_and_external_path_options_are_fixed_for_a_job() {
        for fixed in [
            "bucket",
            "primary-key",
            "merge-engine",
            "data-file.external-paths",
            "data-file.external-paths.strategy",
            "global-index.external-path",
        ] {
            assert!(is_fixed_table_option(fixed), "{fixed}");
        }
        for free in ["write-buffer-size", "target-file-size", "file.compression"] {
            assert!(!is_fixed_table_option(free), "{free}");
        }
    }
}
