//! Opening the table a coordinator binds to: a filesystem warehouse and a `database.table`
//! name.

use paimon::catalog::{Catalog, Identifier};
use paimon::{CatalogOptions, FileSystemCatalog, Options};

use super::error::{CoordinatorError, CoordinatorResult};

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
/// path or a URI the paimon crate's file IO supports, e.g. `file:///data/warehouse`).
pub async fn open_table(warehouse: &str, name: &str) -> CoordinatorResult<paimon::table::Table> {
    let identifier = parse_table_name(name)?;
    let mut options = Options::new();
    options.set(CatalogOptions::WAREHOUSE, warehouse);
    let catalog = FileSystemCatalog::new(options)
        .map_err(|e| CoordinatorError::paimon(format!("opening the warehouse {warehouse:?}"), e))?;
    catalog
        .get_table(&identifier)
        .await
        .map_err(|e| CoordinatorError::paimon(format!("opening table {name} in {warehouse:?}"), e))
}
