//! `paimon-wire-compat`: the Rust side of the live checks against real Paimon releases
//! (`scripts/java-interop`). The Java side is the harness in `compat/java`.
//!
//! ```text
//! gen --version V [--seed S] [--count N] --out F.bin --json F.json
//!     deterministic messages filling every field V carries, serialized at V, and their dump
//! java-roundtrip --version V --java-json J.json [--decode-only] [--out OUT.bin] F.bin
//!     decode Java's payload, compare with Java's dump, re-encode at V byte-identically
//! compare-json EXPECTED.json ACTUAL.json
//!     equal JSON values, or the first differing path
//! refuse --version V [--seed S] --dropped-out F.bin --dropped-json F.json
//!     V refuses a field only a newer version carries, by name; writes the message without it
//! create-table | write | read [--options-file F]
//!     the paimon crate on a warehouse (local, or s3:// etc. with catalog options from F, the
//!     `KEY=VALUE` file `paimon-wire --options-file` reads; see `table`)
//! ```
//!
//! Exit codes: 0 pass, 1 a check failed (one line on stderr says which), 2 usage.

mod buckets;
mod generate;
mod json_diff;
mod refusal;
mod table;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use paimon_wire::dump::messages_to_json;
use paimon_wire::warehouse::{parse_options_file, WarehouseOptions};
use paimon_wire::{deserialize_list, serialize_list, SerializerVersion};
use serde_json::Value;

use crate::table::TableKind;

/// The seed of the Rust-written messages in the matrix.
pub const MATRIX_SEED: u64 = 20_250_101;
/// How many messages each Rust-written matrix payload holds at least.
pub const MATRIX_COUNT: usize = 20;
/// How many it may hold at most: more are drawn until every field is filled.
pub const MATRIX_MAX_COUNT: usize = 200;

#[derive(Debug, Parser)]
#[command(
    name = "paimon-wire-compat",
    about = "Rust side of the live Java interop checks"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write deterministic messages filling every field the version carries, and their dump.
    Gen {
        #[arg(long, value_parser = parse_version)]
        version: SerializerVersion,
        #[arg(long, default_value_t = MATRIX_SEED)]
        seed: u64,
        /// At least this many messages; more are drawn until every field is filled.
        #[arg(long, default_value_t = MATRIX_COUNT)]
        count: usize,
        #[arg(long)]
        out: PathBuf,
        #[arg(long)]
        json: PathBuf,
    },
    /// Decode a payload Java wrote, compare with Java's dump, re-encode it byte-identically.
    JavaRoundtrip {
        #[arg(long, value_parser = parse_version)]
        version: SerializerVersion,
        /// Java's canonical dump of the payload (the harness's `generate --out-json`).
        #[arg(long)]
        java_json: PathBuf,
        /// Only decode and compare (the 0.5-0.7 legacy v2 layout is read, never written).
        #[arg(long)]
        decode_only: bool,
        /// Where to write Rust's re-encoding (at the same version).
        #[arg(long)]
        out: Option<PathBuf>,
        payload: PathBuf,
    },
    /// Compare two JSON files as values; print the first differing path.
    CompareJson { expected: PathBuf, actual: PathBuf },
    /// Check that a version refuses, by name, a field only a newer version carries.
    Refuse {
        #[arg(long, value_parser = parse_version)]
        version: SerializerVersion,
        #[arg(long, default_value_t = MATRIX_SEED)]
        seed: u64,
        /// Where to write the message with that field dropped (at the version).
        #[arg(long)]
        dropped_out: PathBuf,
        /// Where to write the dump of what the version should read back from it.
        #[arg(long)]
        dropped_json: PathBuf,
    },
    /// Create a table of the interop checks with the paimon crate.
    CreateTable {
        #[arg(long)]
        warehouse: String,
        /// Catalog options, one `KEY=VALUE` a line (as `paimon-wire --options-file`).
        #[arg(long)]
        options_file: Option<PathBuf>,
        #[arg(long)]
        table: String,
        #[arg(long, value_enum)]
        kind: TableKind,
    },
    /// A worker: write rows FROM..TO with the paimon crate and serialize its messages.
    Write {
        #[arg(long)]
        warehouse: String,
        /// Catalog options, one `KEY=VALUE` a line (as `paimon-wire --options-file`).
        #[arg(long)]
        options_file: Option<PathBuf>,
        #[arg(long)]
        table: String,
        #[arg(long)]
        commit_user: String,
        /// `FROM:TO`, TO exclusive.
        #[arg(long, value_parser = parse_range)]
        rows: (i32, i32),
        #[arg(long, default_value = "v")]
        value_prefix: String,
        /// Write the rows in this many batches, preparing a commit after each, and report one
        /// message per (partition, bucket) with every flush's files: one writer that rolled
        /// many files (the split-payload flows).
        #[arg(long, default_value_t = 1)]
        flushes: usize,
        /// `I/N`: on a dynamic-bucket table, be assigner I of N and write only its rows.
        #[arg(long, value_parser = parse_assigner)]
        assigner: Option<(i32, i32)>,
        #[arg(long, value_parser = parse_version)]
        version: SerializerVersion,
        #[arg(long)]
        out: PathBuf,
    },
    /// Check that paimon-wire's AssignerRouter routes every row of a dynamic-bucket table that
    /// N Java assigners wrote from empty to the assigner that owns its bucket.
    CheckAssigners {
        #[arg(long)]
        warehouse: String,
        #[arg(long)]
        table: String,
        #[arg(long)]
        assigners: i32,
    },
    /// Check that paimon-wire's BucketRouter puts every row of the tables Java wrote into
    /// database `buckets` (harness `bucket-tables`) into the bucket Java chose.
    CheckBuckets {
        #[arg(long)]
        warehouse: String,
        /// Rows Java wrote into each table.
        #[arg(long, default_value_t = 300)]
        rows: usize,
    },
    /// Print every row of the table's latest snapshot (`rows N`, then `id TAB pt TAB v`).
    Read {
        #[arg(long)]
        warehouse: String,
        /// Catalog options, one `KEY=VALUE` a line (as `paimon-wire --options-file`).
        #[arg(long)]
        options_file: Option<PathBuf>,
        #[arg(long)]
        table: String,
    },
}

fn parse_version(s: &str) -> Result<SerializerVersion, String> {
    let n: i32 = s.parse().map_err(|_| format!("not a version: {s}"))?;
    SerializerVersion::try_from(n).map_err(|e| e.to_string())
}

fn parse_assigner(s: &str) -> Result<(i32, i32), String> {
    let (id, n) = s.split_once('/').ok_or("expected I/N")?;
    let id: i32 = id.parse().map_err(|_| format!("not a number: {id}"))?;
    let n: i32 = n.parse().map_err(|_| format!("not a number: {n}"))?;
    if !(0..n).contains(&id) {
        return Err(format!("assigner {id} is not one of 0..{n}"));
    }
    Ok((id, n))
}

fn parse_range(s: &str) -> Result<(i32, i32), String> {
    let (from, to) = s.split_once(':').ok_or("expected FROM:TO")?;
    let from: i32 = from.parse().map_err(|_| format!("not a number: {from}"))?;
    let to: i32 = to.parse().map_err(|_| format!("not a number: {to}"))?;
    if from > to {
        return Err(format!("FROM {from} is after TO {to}"));
    }
    Ok((from, to))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("paimon-wire-compat: {e}");
            ExitCode::from(1)
        }
    }
}

type Result<T, E = String> = std::result::Result<T, E>;

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The catalog options of `--options-file` (none without it). Errors name the line, never a
/// value.
fn read_options(path: Option<&Path>) -> Result<WarehouseOptions> {
    let Some(path) = path else {
        return Ok(WarehouseOptions::new());
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_options_file(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn read_json(path: &Path) -> Result<Value> {
    serde_json::from_slice(&read_file(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

fn write_json(path: &Path, value: &Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).expect("JSON values serialize");
    text.push('\n');
    write_file(path, text.as_bytes())
}

fn block_on<F: std::future::Future>(future: F) -> Result<F::Output> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?
        .block_on(future))
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::Gen {
            version,
            seed,
            count,
            out,
            json,
        } => {
            let max = count.max(MATRIX_MAX_COUNT);
            let messages = generate::messages_filling_every_field(version, seed, count, max)
                .map_err(|unfilled| {
                    format!(
                        "seed {seed}: {max} messages leave fields of version {version} \
                         unfilled: {unfilled:?}"
                    )
                })?;
            let bytes = serialize_list(&messages, version).map_err(|e| e.to_string())?;
            write_file(&out, &bytes)?;
            write_json(&json, &messages_to_json(&messages))?;
            println!(
                "wrote {} messages at version {version}, {} bytes",
                messages.len(),
                bytes.len()
            );
        }
        Command::JavaRoundtrip {
            version,
            java_json,
            decode_only,
            out,
            payload,
        } => {
            let bytes = read_file(&payload)?;
            let name = payload.display();
            let messages = deserialize_list(version, &bytes).map_err(|e| format!("{name}: {e}"))?;
            if let Some(d) =
                json_diff::first_difference(&read_json(&java_json)?, &messages_to_json(&messages))
            {
                return Err(format!("{name}: Rust's reading differs from Java's at {d}"));
            }
            let again = serialize_list(&messages, version).map_err(|e| format!("{name}: {e}"))?;
            if !decode_only && again != bytes {
                let at = again.iter().zip(&bytes).position(|(a, b)| a != b);
                return Err(format!(
                    "{name}: re-encoded at version {version}, {} bytes differ from Java's {} \
                     (first difference at byte {})",
                    again.len(),
                    bytes.len(),
                    at.unwrap_or(again.len().min(bytes.len()))
                ));
            }
            if let Some(out) = out {
                write_file(&out, &again)?;
            }
            println!(
                "{name}: {} messages decoded as Java did{}",
                messages.len(),
                if decode_only {
                    ""
                } else {
                    ", re-encoded byte-identically"
                }
            );
        }
        Command::CompareJson { expected, actual } => {
            if let Some(d) =
                json_diff::first_difference(&read_json(&expected)?, &read_json(&actual)?)
            {
                return Err(format!(
                    "{} differs from {}: {d}",
                    actual.display(),
                    expected.display()
                ));
            }
            let n = read_json(&expected)?.as_array().map_or(0, Vec::len);
            println!("equal: {n} messages");
        }
        Command::Refuse {
            version,
            seed,
            dropped_out,
            dropped_json,
        } => {
            let r = refusal::refusal_for(version)
                .ok_or_else(|| format!("version {version} carries every field"))?;
            let (error, dropped) = refusal::check(&r, seed)?;
            write_file(&dropped_out, &dropped)?;
            let expected = refusal::without_field(&r, refusal::message_with_field(&r, seed));
            write_json(&dropped_json, &messages_to_json(&[expected]))?;
            println!("refused {}: {error}", r.field);
        }
        Command::CreateTable {
            warehouse,
            options_file,
            table,
            kind,
        } => {
            let options = read_options(options_file.as_deref())?;
            block_on(table::create(&warehouse, &options, &table, kind))??;
            println!("created {kind:?} table {table}");
        }
        Command::Write {
            warehouse,
            options_file,
            table,
            commit_user,
            rows,
            value_prefix,
            flushes,
            assigner,
            version,
            out,
        } => {
            let options = read_options(options_file.as_deref())?;
            let (bytes, n) = block_on(table::write(
                &warehouse,
                &options,
                &table,
                &commit_user,
                table::WrittenRows {
                    range: rows,
                    value_prefix: &value_prefix,
                    flushes,
                    assigner,
                },
                version,
            ))??;
            write_file(&out, &bytes)?;
            println!(
                "wrote rows {}..{}: {n} message(s), version {version}, {} bytes",
                rows.0,
                rows.1,
                bytes.len()
            );
        }
        Command::CheckBuckets { warehouse, rows } => {
            let checked = block_on(buckets::check(&warehouse, rows))??;
            for c in &checked {
                println!(
                    "{}: {} rows in {} buckets, every bucket as Java's",
                    c.table, c.rows, c.buckets
                );
            }
            println!("bucket routing matches Java on {} tables", checked.len());
        }
        Command::CheckAssigners {
            warehouse,
            table,
            assigners,
        } => {
            let (rows, buckets) =
                block_on(buckets::check_assigners(&warehouse, &table, assigners))??;
            println!(
                "{table}: {rows} rows in {buckets} buckets, every row routed to the assigner \
                 that owns its bucket, as Java's"
            );
        }
        Command::Read {
            warehouse,
            options_file,
            table,
        } => {
            let options = read_options(options_file.as_deref())?;
            let rows = block_on(table::read(&warehouse, &options, &table))??;
            let mut text = format!("rows {}\n", rows.len());
            for row in rows {
                text.push_str(&row);
                text.push('\n');
            }
            // a reader that stops early (`| head`) is not an error
            match std::io::stdout().lock().write_all(text.as_bytes()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    return Err(format!("writing to stdout: {e}"));
                }
                _ => {}
            }
        }
    }
    Ok(())
}
