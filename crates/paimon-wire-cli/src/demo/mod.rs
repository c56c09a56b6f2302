//! `paimon-wire demo`: the project's main job, end to end on one machine.
//!
//! 1. create a partitioned append table in a warehouse (a temporary one by default);
//! 2. start N worker processes (this binary's hidden `worker` subcommand), each writing its
//!    share of generated rows through the paimon crate's `TableWrite` and emitting its
//!    commit messages as a payload on stdout (or into `--payload-dir`);
//! 3. the coordinator (the core's [`Coordinator`]) decodes and validates every payload
//!    against the table and merges them;
//! 4. it commits them once, as one snapshot;
//! 5. the table is read back and every id checked to be there exactly once.
//!
//! It prints rows, files, payload bytes, the snapshot id and the time of each phase.

pub mod data;
pub mod worker;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
use futures::TryStreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use paimon_wire::coordinator::{
    open_table_with_options, Binding, BoundMessages, CommitOutcome, Coordinator,
};
use paimon_wire::paimon::table::Table;
use paimon_wire::warehouse::{is_rest_catalog, warehouse_scheme, WarehouseOptions};
use paimon_wire::SerializerVersion;

use crate::error::{CliError, CliResult};
use crate::output::stdout_line;
use crate::payload::{parse_version, unframe, Framing};
use crate::table::{block_on, CatalogOptionArgs};

/// Arguments of `paimon-wire demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// Number of worker processes.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub workers: u32,
    /// Rows to write, split evenly over the workers.
    #[arg(long, value_name = "R", default_value_t = 100_000)]
    pub rows: u64,
    /// Number of partitions the rows spread over.
    #[arg(long, value_name = "P", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub partitions: u32,
    /// Warehouse to create the table in (kept afterwards): a directory, or a URI whose
    /// storage backend is compiled in (`s3://bucket/path` with --option/--options-file for
    /// the endpoint and credentials), or a REST catalog's warehouse name (with
    /// `metastore=rest`, `uri` and `token`); a temporary directory, removed at the end, if not
    /// given.
    #[arg(long, value_name = "DIR|URI")]
    pub warehouse: Option<String>,
    /// Catalog options, handed to every worker through a private file (never on their
    /// command lines).
    #[command(flatten)]
    pub options: CatalogOptionArgs,
    /// The table to create, as `database.table`; it must not exist yet.
    #[arg(long, value_name = "DB.T", default_value = "demo.events", value_parser = crate::table::parse_table_arg)]
    pub table: String,
    /// Serializer version the workers write their payloads at.
    #[arg(long = "version", value_name = "N", value_parser = parse_version, default_value = "14")]
    pub version: SerializerVersion,
    /// Workers frame their payloads in envelopes.
    #[arg(long)]
    pub envelope: bool,
    /// Workers write their payloads as files `worker-<i>.bin` in this directory (kept
    /// afterwards) instead of sending them on stdout.
    #[arg(long, value_name = "DIR")]
    pub payload_dir: Option<PathBuf>,
}

/// How long each phase took, in order.
struct Phases(Vec<(&'static str, Duration)>);

impl Phases {
    fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        self.0.push((name, start.elapsed()));
        out
    }
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> CliResult<()> {
    let started = Instant::now();
    let mut phases = Phases(Vec::new());

    let options = args.options.resolve()?;
    // The workers read the options from a file only this user can read (tempfile creates
    // it 0600), so credentials are never on a command line; removed when the demo ends.
    let options_file = write_options_file(&options)?;
    let (warehouse, temporary) = match &args.warehouse {
        // A REST catalog's warehouse is a name the server knows: no directory to make.
        Some(name) if is_rest_catalog(&options) => (PathBuf::from(name), None),
        None if is_rest_catalog(&options) => {
            return Err(CliError::usage(
                "a REST catalog (metastore=rest) needs --warehouse: the warehouse name the \
                 server knows",
            ))
        }
        Some(uri) if warehouse_scheme(uri).is_some_and(|scheme| scheme != "file") => {
            (PathBuf::from(uri), None)
        }
        Some(dir) => (absolute_dir(Path::new(dir))?, None),
        None => {
            let temp = tempfile::Builder::new()
                .prefix("paimon-wire-demo-")
                .tempdir()
                .map_err(|e| {
                    CliError::input(format!("cannot create a temporary warehouse: {e}"))
                })?;
            (temp.path().to_path_buf(), Some(temp))
        }
    };
    let warehouse_str = warehouse
        .to_str()
        .ok_or_else(|| CliError::input("the warehouse path is not UTF-8"))?
        .to_string();
    let payload_dir = match &args.payload_dir {
        Some(dir) => Some(absolute_dir(dir)?),
        None => None,
    };
    let commit_user = format!("paimon-wire-demo-{}", std::process::id());

    phases.time("create table", || {
        block_on(data::create_table(&warehouse_str, &args.table, &options))
    })??;

    let payloads = phases.time("workers write", || {
        run_workers(
            args,
            &warehouse_str,
            options_file.as_ref().map(|file| file.path()),
            &commit_user,
            payload_dir.as_deref(),
        )
    })?;

    let report = block_on(coordinate(
        args,
        &warehouse_str,
        &options,
        &commit_user,
        &payloads,
        &mut phases,
    ))??;

    let total = started.elapsed();
    print_report(
        args,
        &warehouse,
        temporary.is_some(),
        &payloads,
        &report,
        &phases,
        total,
    )
}

/// Writes `options` (when there are any) to a new private temporary file the workers read
/// with `--options-file`.
fn write_options_file(options: &WarehouseOptions) -> CliResult<Option<tempfile::NamedTempFile>> {
    if options.is_empty() {
        return Ok(None);
    }
    let cannot = |e: std::io::Error| {
        CliError::input(format!(
            "cannot write the workers' options to a temporary file: {e}"
        ))
    };
    let mut file = tempfile::Builder::new()
        .prefix("paimon-wire-demo-options-")
        .tempfile()
        .map_err(cannot)?;
    let mut text = String::from("# catalog options of a paimon-wire demo (removed at its end)\n");
    for (key, value) in options {
        if value.contains('\n') || value.contains('\r') {
            return Err(CliError::usage(format!(
                "the value of option {key} contains a line break"
            )));
        }
        text.push_str(&format!("{key}={value}\n"));
    }
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(cannot)?;
    Ok(Some(file))
}

fn absolute_dir(dir: &Path) -> CliResult<PathBuf> {
    std::fs::create_dir_all(dir)
        .and_then(|()| dir.canonicalize())
        .map_err(|e| CliError::input(format!("cannot use directory {}: {e}", dir.display())))
}

/// What one worker process produced.
struct WorkerOutput {
    payload: Vec<u8>,
}

/// Starts every worker, shows their progress, waits for all of them and collects their
/// payloads. Fails naming the first worker that failed and its error line.
fn run_workers(
    args: &DemoArgs,
    warehouse: &str,
    options_file: Option<&Path>,
    commit_user: &str,
    payload_dir: Option<&Path>,
) -> CliResult<Vec<WorkerOutput>> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::input(format!("cannot find this program to start workers: {e}")))?;
    let bar = ProgressBar::new(args.rows);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} workers {bar:40} {human_pos}/{human_len} rows ({elapsed}, eta {eta})",
    ) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(100));

    let mut children = Vec::with_capacity(args.workers as usize);
    for index in 0..args.workers {
        let output = payload_dir.map(|dir| dir.join(format!("worker-{index}.bin")));
        let spawned = spawn_worker(
            &exe,
            args,
            warehouse,
            options_file,
            commit_user,
            index,
            output.as_deref(),
        );
        match spawned {
            Ok(child) => children.push((index, child, output)),
            Err(e) => {
                // Don't leave the workers already started running behind us.
                for (_, mut child, _) in children {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                bar.finish_and_clear();
                return Err(e);
            }
        }
    }

    let results: Vec<CliResult<WorkerOutput>> = std::thread::scope(|scope| {
        let handles: Vec<_> = children
            .into_iter()
            .map(|(index, child, output)| {
                let bar = &bar;
                scope.spawn(move || collect_worker(index, child, output.as_deref(), bar))
            })
            .collect();
        crate::workers::join_all(handles)
    });
    bar.finish_and_clear();
    results.into_iter().collect()
}

fn spawn_worker(
    exe: &Path,
    args: &DemoArgs,
    warehouse: &str,
    options_file: Option<&Path>,
    commit_user: &str,
    index: u32,
    output: Option<&Path>,
) -> CliResult<Child> {
    let mut command = Command::new(exe);
    command
        .arg("worker")
        .args(["--warehouse", warehouse])
        .args(["--table", &args.table])
        .args(["--commit-user", commit_user])
        .args(["--index", &index.to_string()])
        .args(["--workers", &args.workers.to_string()])
        .args(["--rows", &args.rows.to_string()])
        .args(["--partitions", &args.partitions.to_string()])
        .args(["--version", &args.version.to_string()])
        .arg("--progress")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    if args.envelope {
        command.arg("--envelope");
    }
    if let Some(file) = options_file {
        command.arg("--options-file").arg(file);
    }
    match output {
        Some(path) => {
            command.arg("--output").arg(path).stdout(Stdio::null());
        }
        None => {
            command.args(["--output", "-"]).stdout(Stdio::piped());
        }
    }
    command
        .spawn()
        .map_err(|e| CliError::input(format!("cannot start worker {index}: {e}")))
}

/// Reads a worker's payload (stdout) and progress (stderr) until it exits.
fn collect_worker(
    index: u32,
    mut child: Child,
    output: Option<&Path>,
    bar: &ProgressBar,
) -> CliResult<WorkerOutput> {
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (stdout_bytes, errors) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut bytes = Vec::new();
            match stdout {
                Some(mut out) => out.read_to_end(&mut bytes).map(|_| bytes),
                None => Ok(bytes),
            }
        });
        let mut errors = Vec::new();
        if let Some(err) = stderr {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                match line
                    .strip_prefix(worker::PROGRESS_PREFIX)
                    .and_then(|n| n.trim().parse::<u64>().ok())
                {
                    Some(rows) => bar.inc(rows),
                    None => errors.push(line),
                }
            }
        }
        let stdout_bytes = reader
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("stdout reader failed")));
        (stdout_bytes, errors)
    });
    let status = child
        .wait()
        .map_err(|e| CliError::input(format!("waiting for worker {index}: {e}")))?;
    if !status.success() {
        return Err(worker_failed(index, status, &errors));
    }
    let payload = match output {
        Some(path) => std::fs::read(path).map_err(|e| {
            CliError::input(format!(
                "cannot read worker {index}'s payload {}: {e}",
                path.display()
            ))
        })?,
        None => stdout_bytes
            .map_err(|e| CliError::input(format!("cannot read worker {index}'s payload: {e}")))?,
    };
    Ok(WorkerOutput { payload })
}

fn worker_failed(index: u32, status: ExitStatus, errors: &[String]) -> CliError {
    let reason =
        crate::workers::last_error_line(errors).unwrap_or_else(|| "no error message".to_string());
    CliError::input(format!("worker {index} failed ({status}): {reason}"))
}

/// What the coordinator did and what was read back.
struct CoordinatorReport {
    messages_received: usize,
    merged_messages: usize,
    data_files: usize,
    data_file_bytes: i64,
    reported_rows: i64,
    outcome: CommitOutcome,
    rows_read: u64,
    rows_per_partition: BTreeMap<String, u64>,
}

async fn coordinate(
    args: &DemoArgs,
    warehouse: &str,
    options: &WarehouseOptions,
    commit_user: &str,
    payloads: &[WorkerOutput],
    phases: &mut Phases,
) -> CliResult<CoordinatorReport> {
    let start = Instant::now();
    let table = open_table_with_options(warehouse, &args.table, options).await?;
    let coordinator = Coordinator::bind(table, Binding::append(commit_user)).await?;
    let mut parts = Vec::with_capacity(payloads.len());
    let mut messages_received = 0;
    for (index, worker) in payloads.iter().enumerate() {
        let source = PathBuf::from(format!("worker {index}"));
        let unframed = unframe(
            &source,
            &worker.payload,
            Some(args.version),
            Framing::Detect,
        )?;
        let bound = coordinator
            .deserialize(unframed.version, unframed.raw)
            .map_err(|e| CliError::input(format!("worker {index}'s payload: {e}")))?;
        messages_received += bound.len();
        parts.push(bound);
    }
    let merged: BoundMessages = coordinator
        .merge(parts)
        .map_err(|e| CliError::input(format!("merging the payloads: {e}")))?;
    phases.0.push(("validate + merge", start.elapsed()));

    let merged_messages = merged.len();
    let data_files = merged.data_file_count();
    let reported_rows = merged.reported_row_count();
    let data_file_bytes = merged
        .messages()
        .iter()
        .flat_map(|m| &m.new_files)
        .map(|f| f.file_size)
        .fold(0i64, i64::saturating_add);

    let start = Instant::now();
    let outcome = coordinator.commit(merged, 1).await?;
    phases.0.push(("commit", start.elapsed()));

    let start = Instant::now();
    let (rows_read, rows_per_partition) = read_back(coordinator.table(), args.rows).await?;
    phases.0.push(("read back", start.elapsed()));

    Ok(CoordinatorReport {
        messages_received,
        merged_messages,
        data_files,
        data_file_bytes,
        reported_rows,
        outcome,
        rows_read,
        rows_per_partition,
    })
}

/// Reads every row of the table and checks that ids `0..expected` are there exactly once.
async fn read_back(table: &Table, expected: u64) -> CliResult<(u64, BTreeMap<String, u64>)> {
    let reading = |e: &dyn std::fmt::Display| CliError::input(format!("reading back: {e}"));
    let builder = table.new_read_builder();
    let plan = builder.new_scan().plan().await.map_err(|e| reading(&e))?;
    let batches: Vec<RecordBatch> = builder
        .new_read()
        .map_err(|e| reading(&e))?
        .to_arrow(plan.splits())
        .map_err(|e| reading(&e))?
        .try_collect()
        .await
        .map_err(|e| reading(&e))?;
    let mut ids = Vec::new();
    let mut per_partition = BTreeMap::new();
    for batch in &batches {
        let id_column = batch
            .column_by_name("id")
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
            .ok_or_else(|| CliError::input("reading back: no BIGINT column id"))?;
        let regions = batch
            .column_by_name(data::PARTITION_COLUMN)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
            .ok_or_else(|| CliError::input("reading back: no STRING column region"))?;
        ids.extend(id_column.iter().flatten());
        for region in regions.iter().flatten() {
            *per_partition.entry(region.to_string()).or_insert(0u64) += 1;
        }
    }
    ids.sort_unstable();
    let rows = ids.len() as u64;
    let exact = rows == expected
        && ids
            .iter()
            .enumerate()
            .all(|(i, id)| u64::try_from(*id).ok() == Some(i as u64));
    if !exact {
        let duplicates = ids.windows(2).filter(|w| w[0] == w[1]).count();
        return Err(CliError::input(format!(
            "read back {rows} rows, expected ids 0..{expected} exactly once ({duplicates} \
             duplicate ids)"
        )));
    }
    Ok((rows, per_partition))
}

fn print_report(
    args: &DemoArgs,
    warehouse: &Path,
    temporary: bool,
    payloads: &[WorkerOutput],
    report: &CoordinatorReport,
    phases: &Phases,
    total: Duration,
) -> CliResult<()> {
    let sizes: Vec<usize> = payloads.iter().map(|p| p.payload.len()).collect();
    let payload_bytes: usize = sizes.iter().sum();
    let snapshot = match report.outcome {
        CommitOutcome::Committed { snapshot_id } => snapshot_id.to_string(),
        CommitOutcome::AlreadyCommitted { snapshot_id } => format!(
            "{} (already committed)",
            snapshot_id.map_or_else(|| "unknown".to_string(), |id| id.to_string())
        ),
        CommitOutcome::NothingToCommit => "none (nothing to commit)".to_string(),
    };
    let phase_list: Vec<String> = phases
        .0
        .iter()
        .map(|(name, d)| format!("{name} {}", human_duration(*d)))
        .collect();
    stdout_line(format_args!(
        "paimon-wire demo: {} worker processes wrote {} rows into {} partitions of {}",
        args.workers, args.rows, args.partitions, args.table
    ))?;
    stdout_line(format_args!(
        "  warehouse      {}{}",
        warehouse.display(),
        if temporary {
            " (temporary, removed on exit)"
        } else {
            ""
        }
    ))?;
    if let Some(dir) = &args.payload_dir {
        stdout_line(format_args!(
            "  payload files  {}/worker-<i>.bin",
            dir.display()
        ))?;
    }
    stdout_line(format_args!(
        "  payloads       {} x serializer version {}{}, {payload_bytes} bytes (min {}, max {} per worker)",
        payloads.len(),
        args.version,
        if args.envelope { " in envelopes" } else { "" },
        sizes.iter().min().copied().unwrap_or(0),
        sizes.iter().max().copied().unwrap_or(0)
    ))?;
    stdout_line(format_args!(
        "  messages       {} received, {} after merge",
        report.messages_received, report.merged_messages
    ))?;
    stdout_line(format_args!(
        "  data files     {} new, {} bytes, {} rows reported by workers",
        report.data_files, report.data_file_bytes, report.reported_rows
    ))?;
    stdout_line(format_args!("  snapshot       {snapshot}"))?;
    let ids = match args.rows {
        0 => "no rows, as written".to_string(),
        rows => format!("every id from 0 to {} exactly once", rows - 1),
    };
    stdout_line(format_args!(
        "  read back      {} rows in {} partitions: {ids}",
        report.rows_read,
        report.rows_per_partition.len()
    ))?;
    stdout_line(format_args!(
        "  phases         {} (total {})",
        phase_list.join(", "),
        human_duration(total)
    ))
}

fn human_duration(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        format!("{:.2} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}
