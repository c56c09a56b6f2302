//! `paimon-wire`: inspect, convert, validate and commit Paimon commit-message payloads, and
//! run the distributed-write demo.
//!
//! Every subcommand is a thin door into the `paimon-wire` core: this binary parses
//! arguments, reads and writes files, and prints; the core decodes, validates and commits.
//! Failures print one line, `paimon-wire: error: ...`, and exit 1 (bad input) or 2 (usage).

mod compact;
mod convert;
mod coordinate;
mod demo;
mod error;
mod inspect;
mod output;
mod partition;
mod payload;
mod split;
mod table;
mod verbose;
mod workers;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use paimon_wire::{dpcm, envelope, LossyField, SerializerVersion};

use crate::coordinate::{CommitOptions, PayloadFiles};
use crate::error::{CliError, CliResult, EXIT_PANIC, EXIT_USAGE};
use crate::inspect::InspectFormat;
use crate::partition::PartitionDecoder;
use crate::payload::{display_source, parse_version, Framing};
use crate::table::TableArgs;

/// The name every error line starts with.
const PROGRAM: &str = "paimon-wire";

#[derive(Debug, Parser)]
#[command(
    name = "paimon-wire",
    version,
    about = "Inspect, convert, validate and commit Apache Paimon commit-message payloads",
    long_about = "Inspect, convert, validate and commit Apache Paimon commit-message payloads: \
                  the bytes of Paimon Java's CommitMessageSerializer (versions 1 to 14), raw or \
                  in a paimon-wire envelope or an Apache Doris DPCM frame (each detected by its \
                  magic, PWIR or DPCM)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Show the library's log records on stderr: -v what was committed (INFO), -vv what the
    /// coordinator and the paimon crate do (DEBUG), -vvv everything (TRACE). Secret option
    /// values are replaced in every line.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the messages of a payload (canonical JSON dump, or a table per message).
    Inspect(InspectArgs),
    /// Re-encode a payload at another serializer version.
    Convert(ConvertArgs),
    /// Split a payload into payloads of at most --max-bytes each (for an RPC frame limit):
    /// standard payloads any Java release reading the version decodes, written to OUT-DIR as
    /// part-<index>-of-<count>.bin. `validate` and `commit` take the directory as one worker.
    Split(SplitArgs),
    /// Check payloads against a table — every rule `commit` runs, the table's state
    /// included — and that they merge; commits nothing, and lists the rules it ran.
    Validate {
        #[command(flatten)]
        table: TableArgs,
        #[command(flatten)]
        options: coordinate::ValidateOptions,
        #[command(flatten)]
        payloads: PayloadFiles,
    },
    /// Validate, merge and commit payloads to a table once under a commit identifier.
    Commit {
        #[command(flatten)]
        table: TableArgs,
        #[command(flatten)]
        options: CommitOptions,
        #[command(flatten)]
        payloads: PayloadFiles,
    },
    /// Run the distributed write end to end: create a partitioned table, start worker
    /// processes that write rows and send payloads, validate, merge and commit once, and
    /// read the table back.
    Demo(demo::DemoArgs),
    /// One worker process of the demo (started by `demo`).
    #[command(hide = true)]
    Worker(demo::worker::WorkerArgs),
    /// Compact a table: plan what to rewrite in each bucket (an append table's small files, a
    /// primary-key table's sorted runs, with Paimon's options), rewrite each bucket in a worker
    /// process, and commit once with the compaction verified (inputs and results read and
    /// compared).
    Compact(compact::CompactArgs),
    /// One compaction task (started by `compact`).
    #[command(hide = true)]
    CompactTask(compact::CompactTaskArgs),
}

#[derive(Debug, Args)]
struct InspectArgs {
    /// Serializer version of a raw payload (1 to 14); an envelope or a DPCM frame carries
    /// its own.
    #[arg(long = "version", value_name = "N", value_parser = parse_version)]
    version: Option<SerializerVersion>,
    /// Require the input to be an envelope (otherwise detected by its magic).
    #[arg(long)]
    envelope: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = InspectFormat::Json)]
    format: InspectFormat,
    /// Show partition values with this warehouse's table's partition types (with --table);
    /// without it, `--format table` guesses them from the row's slots.
    #[arg(long, value_name = "W", requires = "table", value_parser = table::parse_warehouse)]
    warehouse: Option<String>,
    /// The table whose partition types to use, as `database.table` (with --warehouse).
    #[arg(long, value_name = "DB.T", requires = "warehouse")]
    table: Option<String>,
    /// Catalog options for --warehouse.
    #[command(flatten)]
    options: table::CatalogOptionArgs,
    /// The payload file, or `-` for stdin.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

#[derive(Debug, Args)]
struct SplitArgs {
    /// The largest payload to write, in bytes (at least 256).
    #[arg(long, value_name = "N")]
    max_bytes: usize,
    /// Serializer version of a raw input payload (1 to 14); an envelope or a DPCM frame
    /// carries its own.
    #[arg(long = "version", value_name = "N", value_parser = parse_version)]
    version: Option<SerializerVersion>,
    /// Serializer version to write (default: the input's).
    #[arg(long, value_name = "M", value_parser = parse_version)]
    to_version: Option<SerializerVersion>,
    /// A field the target version cannot carry that may be dropped (repeatable).
    #[arg(long = "drop", value_name = "FIELD", value_parser = parse_lossy_field)]
    drop: Vec<LossyField>,
    /// Require the input to be an envelope (otherwise detected by its magic).
    #[arg(long)]
    envelope: bool,
    /// How to frame each payload written: raw (the version travels beside it) or dpcm (an
    /// Apache Doris frame, header included in --max-bytes).
    #[arg(long, value_enum, default_value = "raw")]
    frame: split::PartFrame,
    /// The input payload, or `-` for stdin.
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// The directory to write the payloads into (created if missing; must hold no split set).
    #[arg(value_name = "OUT-DIR")]
    out_dir: PathBuf,
}

/// How `convert` frames its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OutputFrame {
    /// The raw payload (Java's `serializeList` bytes); the version travels beside it.
    Raw,
    /// A paimon-wire envelope (`PWIR`: version, length, CRC32C).
    Envelope,
    /// An Apache Doris frame (`DPCM`: version, length).
    Dpcm,
}

#[derive(Debug, Args)]
struct ConvertArgs {
    /// Serializer version of a raw input payload (1 to 14); an envelope or a DPCM frame
    /// carries its own.
    #[arg(long, value_name = "N", value_parser = parse_version)]
    from_version: Option<SerializerVersion>,
    /// Serializer version to write: 2, 3, 6, 7 or 10-14 (what Paimon releases 0.5 to 2.0 write,
    /// and 13 and 14, newer than any Java release; 1 is read only).
    #[arg(long, value_name = "M", value_parser = parse_version)]
    to_version: SerializerVersion,
    /// A field the target version cannot carry that may be dropped (repeatable), e.g.
    /// `total_buckets`, `check_from_snapshot`, `file_source`.
    #[arg(long = "drop", value_name = "FIELD", value_parser = parse_lossy_field)]
    drop: Vec<LossyField>,
    /// Require the input to be an envelope (otherwise detected by its magic).
    #[arg(long)]
    envelope: bool,
    /// Write the output in an envelope (which carries the version and a checksum); the same
    /// as `--frame envelope`.
    #[arg(long, conflicts_with = "frame")]
    wrap: bool,
    /// How to frame the output: `raw` (the default), `envelope` (paimon-wire's, with the
    /// version and a checksum) or `dpcm` (Apache Doris's: magic, version and length).
    #[arg(long, value_name = "KIND", value_enum)]
    frame: Option<OutputFrame>,
    /// The input payload, or `-` for stdin.
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// Where to write the converted payload, or `-` for stdout.
    #[arg(value_name = "OUT")]
    output: PathBuf,
}

fn framing(require_envelope: bool) -> Framing {
    if require_envelope {
        Framing::Envelope
    } else {
        Framing::Detect
    }
}

fn parse_lossy_field(s: &str) -> Result<LossyField, String> {
    s.parse()
}

fn main() -> ExitCode {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return report_clap_error(e),
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // No secret of a warehouse this run opened shows, in any spelling, whatever
            // the error quotes (the coordinator's errors hide them already).
            let message = paimon_wire::secrets::redact_remembered(&e.to_string());
            output::stderr_line(format_args!("{PROGRAM}: error: {message}"));
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(cli: Cli) -> CliResult<()> {
    verbose::install(cli.verbose);
    match cli.command {
        Command::Inspect(args) => run_inspect(args),
        Command::Convert(args) => run_convert(args),
        Command::Split(args) => run_split(args),
        Command::Validate {
            table,
            options,
            payloads,
        } => coordinate::validate(&table, &payloads, &options),
        Command::Commit {
            table,
            options,
            payloads,
        } => coordinate::commit(&table, &payloads, &options),
        Command::Demo(args) => demo::run(&args),
        Command::Worker(args) => demo::worker::run(&args),
        Command::Compact(args) => compact::run(&args),
        Command::CompactTask(args) => compact::run_task(&args),
    }
}

fn run_inspect(args: InspectArgs) -> CliResult<()> {
    let bytes = payload::read_input(&args.file)?;
    let unframed = payload::unframe(&args.file, &bytes, args.version, framing(args.envelope))?;
    let source = display_source(&args.file);
    let inspected = inspect::Inspected::read(&unframed, &source, args.format)?;
    let partitions = match (args.warehouse, args.table) {
        (Some(warehouse), Some(table)) => {
            let table = TableArgs {
                warehouse,
                table,
                options: args.options,
            };
            let opened = table::block_on(table::open(&table))??;
            table::partition_decoder(&opened)
        }
        _ => PartitionDecoder::Untyped,
    };
    let text = inspect::render(&inspected, &unframed, bytes.len(), &source, &partitions)?;
    payload::write_output(Path::new(payload::STDIO), text.as_bytes())
}

fn run_convert(args: ConvertArgs) -> CliResult<()> {
    let decoded = payload::read_payload(&args.input, args.from_version, framing(args.envelope))?;
    let bytes = convert::convert(&decoded, args.to_version, &args.drop)?;
    let frame = if args.wrap {
        OutputFrame::Envelope
    } else {
        args.frame.unwrap_or(OutputFrame::Raw)
    };
    let bytes = match frame {
        OutputFrame::Raw => bytes,
        OutputFrame::Envelope => envelope::wrap(args.to_version, &bytes),
        OutputFrame::Dpcm => dpcm::frame(args.to_version, &bytes)
            .map_err(|e| CliError::input(format!("{}: {e}", args.output.display())))?,
    };
    payload::write_output(&args.output, &bytes)
}

fn run_split(args: SplitArgs) -> CliResult<()> {
    let decoded = payload::read_payload(&args.input, args.version, framing(args.envelope))?;
    let to = args.to_version.unwrap_or(decoded.version);
    split::split_to_dir(
        &decoded,
        to,
        &args.drop,
        args.max_bytes,
        args.frame,
        &args.out_dir,
    )
}

/// Help and `--version` go to stdout with exit 0; every other clap error becomes one line
/// on stderr with exit code 2.
fn report_clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
            // clap's message is a paragraph (the error and its details, such as the missing
            // arguments or the possible values), then usage; keep the paragraph, on one line.
            let rendered = e.render().to_string();
            let paragraph: Vec<&str> = rendered
                .lines()
                .map(str::trim)
                .skip_while(|l| l.is_empty())
                .take_while(|l| !l.is_empty())
                .collect();
            let message = paragraph.join(" ");
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            output::stderr_line(format_args!(
                "{PROGRAM}: error: {message} (try '{PROGRAM} --help')"
            ));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// No code path should panic; if a bug makes one, print one line instead of a backtrace
/// and exit 101.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = CliError::input(format!("internal error: {message}{location}"));
        output::stderr_line(format_args!("{PROGRAM}: error: {message}"));
        std::process::exit(EXIT_PANIC);
    }));
}
