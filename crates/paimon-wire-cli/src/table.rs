//! The table options shared by the subcommands that read a table, and the async runtime
//! they run the core's coordinator on.

use std::future::Future;

use paimon_wire::coordinator::{open_table, parse_table_name};
use paimon_wire::paimon::table::Table;
use paimon_wire::CoordinatorError;

use crate::error::{CliError, CliResult};
use crate::partition::{PartitionColumn, PartitionDecoder};

/// `--warehouse W --table DB.T`.
#[derive(Debug, Clone, clap::Args)]
pub struct TableArgs {
    /// The filesystem warehouse (a local path or a URI the paimon crate supports).
    #[arg(long, value_name = "W", value_parser = parse_warehouse)]
    pub warehouse: String,
    /// The table, as `database.table`.
    #[arg(long, value_name = "DB.T", value_parser = parse_table_arg)]
    pub table: String,
}

/// A warehouse as the paimon crate takes it: a URI as given, a local path made absolute
/// (the crate refuses relative paths).
pub fn parse_warehouse(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("the warehouse must not be empty".to_string());
    }
    if s.contains("://") || s.starts_with("file:") {
        return Ok(s.to_string());
    }
    let absolute = std::path::absolute(s).map_err(|e| format!("cannot resolve {s:?}: {e}"))?;
    absolute
        .into_os_string()
        .into_string()
        .map_err(|_| format!("the warehouse path {s:?} is not UTF-8"))
}

/// Checks a `--table` value with the core's parser, so a bad name is a usage error.
pub fn parse_table_arg(s: &str) -> Result<String, String> {
    parse_table_name(s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

impl From<CoordinatorError> for CliError {
    fn from(e: CoordinatorError) -> Self {
        match e {
            CoordinatorError::InvalidTableName { .. } => CliError::usage(e.to_string()),
            CoordinatorError::CommitConflict { .. } => CliError::CommitConflict(e.to_string()),
            _ => CliError::input(e.to_string()),
        }
    }
}

/// Runs `future` to completion on a single-threaded runtime (the CLI does one thing at a
/// time; the demo's parallelism is in its worker processes).
pub fn block_on<F: Future>(future: F) -> CliResult<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::input(format!("cannot start the async runtime: {e}")))?;
    Ok(runtime.block_on(future))
}

/// Opens the table named by `args` (async).
pub async fn open(args: &TableArgs) -> CliResult<Table> {
    Ok(open_table(&args.warehouse, &args.table).await?)
}

/// Shows partitions with the partition columns of `table`.
pub fn partition_decoder(table: &Table) -> PartitionDecoder {
    PartitionDecoder::Typed(
        table
            .schema()
            .partition_fields()
            .into_iter()
            .map(|field| PartitionColumn {
                name: field.name().to_string(),
                data_type: field.data_type().clone(),
            })
            .collect(),
    )
}
