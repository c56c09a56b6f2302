//! The table options shared by the subcommands that read a table, and the async runtime
//! they run the core's coordinator on.

use std::future::Future;

use std::path::PathBuf;

use paimon_wire::coordinator::{open_table_with_options, parse_table_name};
use paimon_wire::paimon::table::Table;
use paimon_wire::warehouse::{parse_option_assignment, parse_options_file, WarehouseOptions};
use paimon_wire::CoordinatorError;

use crate::error::{CliError, CliResult};
use crate::partition::{PartitionColumn, PartitionDecoder};

/// `--warehouse W --table DB.T [--option KEY=VALUE]... [--options-file FILE]`.
#[derive(Debug, Clone, clap::Args)]
pub struct TableArgs {
    /// The warehouse: a local path, or a URI whose storage backend is compiled in
    /// (`s3://bucket/path`, `oss://...`, ...), or a REST catalog's warehouse name.
    #[arg(long, value_name = "W", value_parser = parse_warehouse)]
    pub warehouse: String,
    /// The table, as `database.table`.
    #[arg(long, value_name = "DB.T", value_parser = parse_table_arg)]
    pub table: String,
    /// Catalog options (endpoint, region, credentials, `metastore=rest`, ...).
    #[command(flatten)]
    pub options: CatalogOptionArgs,
}

/// `--option KEY=VALUE` (repeatable) and `--options-file FILE`: catalog and table options.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CatalogOptionArgs {
    /// A catalog option, `KEY=VALUE` (repeatable), e.g. `s3.endpoint=http://127.0.0.1:9000`,
    /// `s3.region=us-east-1`, `s3.path-style-access=true`, `metastore=rest`. Overrides the
    /// same key from --options-file. Prefer the file for credentials: a command line is
    /// visible to other users of the machine.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub option: Vec<String>,
    /// A file of catalog options, one `KEY=VALUE` per line (`#` starts a comment line), so
    /// secrets (`s3.access-key`, `s3.secret-key`, `token`, ...) stay off the command line.
    #[arg(long, value_name = "FILE")]
    pub options_file: Option<PathBuf>,
}

impl CatalogOptionArgs {
    /// The options: the file's, then each `--option` (a later one wins). Errors name the
    /// file, line or argument, never a value.
    pub fn resolve(&self) -> CliResult<WarehouseOptions> {
        let mut options = match &self.options_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    CliError::input(format!(
                        "cannot read the options file {}: {e}",
                        path.display()
                    ))
                })?;
                parse_options_file(&text)
                    .map_err(|e| CliError::usage(format!("options file {}, {e}", path.display())))?
            }
            None => WarehouseOptions::new(),
        };
        for (index, assignment) in self.option.iter().enumerate() {
            let (key, value) =
                parse_option_assignment(assignment, &format!("--option number {}", index + 1))
                    .map_err(|e| CliError::usage(e.to_string()))?;
            options.insert(key, value);
        }
        crate::verbose::remember_secrets(&options);
        Ok(options)
    }
}

/// Checks a `--warehouse` value: not empty. What it is (a path, a URI, a REST catalog's
/// warehouse name) depends on the options, so [`resolve_warehouse`] reads it later.
pub fn parse_warehouse(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("the warehouse must not be empty".to_string());
    }
    Ok(s.to_string())
}

/// The warehouse as the paimon crate takes it ([`paimon_wire::warehouse::resolve_warehouse`]:
/// a REST catalog's warehouse name as given, a local path made absolute).
pub fn resolve_warehouse(warehouse: &str, options: &WarehouseOptions) -> CliResult<String> {
    paimon_wire::warehouse::resolve_warehouse(warehouse, options).map_err(CliError::input)
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
            CoordinatorError::OutcomeUnknown { .. } => CliError::OutcomeUnknown(e.to_string()),
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
    let options = args.options.resolve()?;
    let warehouse = resolve_warehouse(&args.warehouse, &options)?;
    Ok(open_table_with_options(&warehouse, &args.table, &options).await?)
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
