//! Opening the table a coordinator binds to (a warehouse with catalog options and a
//! `database.table` name), and creating one from an Arrow schema.

use std::collections::HashMap;

use paimon::catalog::Identifier;
use paimon::spec::Schema;

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

/// File formats the paimon crate reads and writes only when a cargo feature compiles them in:
/// the format's name as a table option spells it, and the feature (of paimon-wire, the CLI,
/// the C library and the Python module alike).
const FEATURE_GATED_FILE_FORMATS: [(&str, &str, bool); 1] = [("orc", "orc", cfg!(feature = "orc"))];

/// Refuses a table whose files this build cannot read or write: its `file.format` (or a level
/// of `file.format.per.level`) names a format whose cargo feature is not compiled in. The
/// error names the table, the option and the feature, before any file is touched.
pub fn check_file_format_compiled(
    name: &str,
    table_options: &HashMap<String, String>,
) -> CoordinatorResult<()> {
    let formats = table_options
        .get("file.format")
        .map(|format| ("file.format", format.as_str()))
        .into_iter()
        .chain(
            table_options
                .get("file.format.per.level")
                .into_iter()
                .flat_map(|levels| {
                    // `0:avro,3:orc`: level:format pairs.
                    levels
                        .split(',')
                        .filter_map(|pair| pair.split_once(':').map(|(_, format)| format.trim()))
                        .map(|format| ("file.format.per.level", format))
                }),
        );
    for (option, format) in formats {
        let gated = FEATURE_GATED_FILE_FORMATS
            .iter()
            .find(|(gated, _, _)| format.eq_ignore_ascii_case(gated));
        if let Some((_, feature, false)) = gated {
            return Err(CoordinatorError::Unsupported {
                reason: format!(
                    "table {name} stores its files as {format} ({option}), and this build has \
                     no {format} support: build with the cargo feature `{feature}` (of \
                     paimon-wire, the CLI, the C library or the Python module)"
                ),
            });
        }
    }
    Ok(())
}

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
    let table = catalog
        .get_table(&identifier)
        .await
        .map_err(|e| paimon_error(format!("opening table {name} in {warehouse:?}"), e, options))?;
    check_file_format_compiled(name, table.schema().options())?;
    Ok(table)
}

/// A table to create: its columns, keys and options.
#[derive(Debug, Clone)]
pub struct TableDefinition {
    /// The columns, in order: each field's name, type and nullability.
    pub columns: arrow_schema::Schema,
    /// The partition key columns, by name.
    pub partition_keys: Vec<String>,
    /// The primary key columns, by name (empty for an append table).
    pub primary_keys: Vec<String>,
    /// Paimon table options, e.g. `bucket` = `4`.
    pub options: HashMap<String, String>,
}

impl TableDefinition {
    /// The paimon schema of this definition: Arrow types converted as the paimon crate
    /// converts them (a type it cannot store fails naming the column).
    pub fn to_schema(&self) -> CoordinatorResult<Schema> {
        let mut builder = Schema::builder();
        for field in self.columns.fields() {
            let data_type =
                paimon::arrow::arrow_to_paimon_type(field.data_type(), field.is_nullable())
                    .map_err(|e| {
                        CoordinatorError::paimon(format!("converting column {:?}", field.name()), e)
                    })?;
            builder = builder.column(field.name().clone(), data_type);
        }
        builder
            .partition_keys(self.partition_keys.clone())
            .primary_key(self.primary_keys.clone())
            .options(self.options.clone())
            .build()
            .map_err(|e| CoordinatorError::paimon("building the table's schema", e))
    }
}

/// Creates table `name` (`database.table`, with its database if needed) in `warehouse` with
/// catalog options (as [`open_table_with_options`] takes them), and opens it. A table that
/// exists is an error unless `ignore_if_exists`; then it is opened as it is, whatever its
/// definition. No error carries a secret option's value.
pub async fn create_table_with_options(
    warehouse: &str,
    name: &str,
    definition: &TableDefinition,
    ignore_if_exists: bool,
    options: &WarehouseOptions,
) -> CoordinatorResult<paimon::table::Table> {
    let identifier = parse_table_name(name)?;
    check_file_format_compiled(name, &definition.options)?;
    let schema = definition.to_schema()?;
    let catalog = open_catalog(warehouse, options).await?;
    catalog
        .create_database(identifier.database(), true, HashMap::new())
        .await
        .map_err(|e| {
            let database = identifier.database();
            paimon_error(
                format!("creating database {database:?} in {warehouse:?}"),
                e,
                options,
            )
        })?;
    catalog
        .create_table(&identifier, schema, ignore_if_exists)
        .await
        .map_err(|e| {
            paimon_error(
                format!("creating table {name} in {warehouse:?}"),
                e,
                options,
            )
        })?;
    catalog
        .get_table(&identifier)
        .await
        .map_err(|e| paimon_error(format!("opening table {name} in {warehouse:?}"), e, options))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::{check_file_format_compiled, is_fixed_table_option};
    use crate::coordinator::CoordinatorError;

    #[test]
    fn a_feature_gated_file_format_is_refused_naming_its_feature_unless_compiled() {
        let cases = [
            ("file.format", "orc"),
            ("file.format", "ORC"),
            ("file.format.per.level", "0:avro, 3:orc"),
        ];
        for (option, value) in cases {
            let options = HashMap::from([(option.to_string(), value.to_string())]);
            let result = check_file_format_compiled("db.t", &options);
            if cfg!(feature = "orc") {
                assert!(result.is_ok(), "{option}={value}: {result:?}");
                continue;
            }
            match result {
                Err(CoordinatorError::Unsupported { reason }) => {
                    assert!(reason.contains("table db.t"), "{reason}");
                    assert!(reason.contains(option), "{reason}");
                    assert!(reason.contains("cargo feature `orc`"), "{reason}");
                }
                other => panic!("{option}={value}: {other:?}"),
            }
        }
        for (option, value) in [
            ("file.format", "parquet"),
            ("file.format", "avro"),
            ("file.format.per.level", "0:avro,1:parquet"),
        ] {
            let options = HashMap::from([(option.to_string(), value.to_string())]);
            assert!(
                check_file_format_compiled("db.t", &options).is_ok(),
                "{value}"
            );
        }
        assert!(check_file_format_compiled("db.t", &HashMap::new()).is_ok());
    }

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
