//! `paimon-wire compact`: plans the compaction of a table ([`paimon_wire::compaction`]), runs
//! every task in a worker process (`compact-task`, at most `--parallelism` at once), and
//! commits the workers' payloads once through the coordinator with verified compaction.
//!
//! The commit user is `paimon-wire-compact` unless given, and the commit identifier is the
//! snapshot the plan read: a later plan reads a later snapshot, so identifiers increase per
//! user, and the same command rerun after a crash that published its snapshot plans anew from
//! the compacted table (nothing is compacted twice).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use paimon_wire::compaction::{plan_compaction, CompactionError, CompactionTask};
use paimon_wire::coordinator::{Binding, CommitOutcome, Coordinator};
use paimon_wire::{serialize_list, SerializerVersion};

use crate::error::{CliError, CliResult};
use crate::output::stdout_line;
use crate::table::{block_on, open, TableArgs};

/// `compact --warehouse W --table DB.T [--full] [--parallelism N] [--commit-user U]`.
#[derive(Debug, clap::Args)]
pub struct CompactArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// Compact every bucket with at least two small files, instead of those with
    /// `compaction.min.file-num` (default 5).
    #[arg(long)]
    pub full: bool,
    /// Worker processes running tasks at once (default: the machine's cores).
    #[arg(long, value_name = "N")]
    pub parallelism: Option<usize>,
    /// The commit user of the compaction's snapshot.
    #[arg(long, value_name = "U", default_value = "paimon-wire-compact")]
    pub commit_user: String,
}

/// `compact-task --warehouse W --table DB.T TASK OUT`: one task, run by `compact`.
#[derive(Debug, clap::Args)]
pub struct CompactTaskArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// The task, as `compact` wrote it.
    #[arg(value_name = "TASK")]
    pub task: PathBuf,
    /// Where to write the payload of the task's commit message.
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
}

fn compaction_error(e: CompactionError) -> CliError {
    CliError::input(e.to_string())
}

/// Plans, runs every task in a worker process and commits once.
pub fn run(args: &CompactArgs) -> CliResult<()> {
    let started = std::time::Instant::now();
    let table = block_on(open(&args.table))??;
    let name = args.table.table.as_str();
    let plan = block_on(plan_compaction(&table, args.full))?.map_err(compaction_error)?;
    let planned = started.elapsed();
    let Some(snapshot_id) = plan.snapshot_id().filter(|_| !plan.is_empty()) else {
        return stdout_line(format_args!(
            "nothing to compact in table {name}{}",
            plan.snapshot_id()
                .map(|id| format!(" (snapshot {id})"))
                .unwrap_or_default()
        ));
    };
    let inputs: usize = plan.tasks().iter().map(|t| t.input_files().len()).sum();
    let input_bytes: i64 = plan.tasks().iter().map(CompactionTask::input_bytes).sum();
    stdout_line(format_args!(
        "planned {} task(s) from snapshot {snapshot_id}: {inputs} file(s), {input_bytes} bytes",
        plan.tasks().len()
    ))?;

    let dir = tempfile::Builder::new()
        .prefix("paimon-wire-compact-")
        .tempdir()
        .map_err(|e| CliError::input(format!("cannot make a temporary directory: {e}")))?;
    let mut jobs = Vec::with_capacity(plan.tasks().len());
    for (index, task) in plan.tasks().iter().enumerate() {
        let task_file = dir.path().join(format!("task-{index}.json"));
        std::fs::write(&task_file, task.to_bytes())
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", task_file.display())))?;
        jobs.push((task_file, dir.path().join(format!("task-{index}.bin"))));
    }
    let parallelism = args
        .parallelism
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, jobs.len());
    let coordinator = block_on(Coordinator::bind(
        table,
        Binding::append(args.commit_user.clone()).with_verified_compaction(),
    ))??;
    // From here on a failure before the commit leaves the finished tasks' results to nobody:
    // they are deleted before the error is reported.
    let rewriting = std::time::Instant::now();
    let merged = run_workers(args, &jobs, parallelism)
        .and_then(|()| decode_results(&coordinator, &jobs))
        .inspect_err(|_| discard_results(&coordinator, &jobs))?;
    let rewritten = rewriting.elapsed();
    let committing = std::time::Instant::now();
    let outputs: usize = merged
        .messages()
        .iter()
        .map(|m| m.compact_after.len())
        .sum();
    let output_bytes: i64 = merged
        .messages()
        .iter()
        .flat_map(|m| &m.compact_after)
        .map(|f| f.file_size)
        .sum();
    let identifier = snapshot_id;
    let outcome = block_on(coordinator.commit(merged.clone(), identifier))?;
    let committed = committing.elapsed();
    match outcome {
        Ok(CommitOutcome::Committed { snapshot_id }) => stdout_line(format_args!(
            "compacted {inputs} file(s) ({input_bytes} bytes) into {outputs} file(s) \
             ({output_bytes} bytes) in {} bucket(s): snapshot {snapshot_id} (plan {:.2} s, \
             rewrite {:.2} s, verify and commit {:.2} s)",
            plan.tasks().len(),
            planned.as_secs_f64(),
            rewritten.as_secs_f64(),
            committed.as_secs_f64()
        )),
        Ok(CommitOutcome::AlreadyCommitted { snapshot_id }) => stdout_line(format_args!(
            "already committed (identifier {identifier}{})",
            snapshot_id
                .map(|id| format!(", snapshot {id}"))
                .unwrap_or_default()
        )),
        Ok(CommitOutcome::NothingToCommit) => stdout_line(format_args!("nothing to commit")),
        Err(error) => {
            // The results of a refused compaction are nobody's: delete them, unless the
            // outcome is unknown (abort then refuses and keeps them).
            let _ = block_on(coordinator.abort(&merged));
            Err(match error {
                // Another compaction planned from the same snapshot committed first.
                paimon_wire::CoordinatorError::IdentifierReused { snapshot_id, .. } => {
                    CliError::input(format!(
                        "another compaction planned from snapshot {identifier} committed first \
                         (snapshot {snapshot_id}); this one committed nothing and its results \
                         were deleted: run compact again to compact what is left"
                    ))
                }
                error => error.into(),
            })
        }
    }
}

/// Every task's payload, decoded and merged as one compaction.
fn decode_results(
    coordinator: &Coordinator,
    jobs: &[(PathBuf, PathBuf)],
) -> CliResult<paimon_wire::BoundMessages> {
    let mut parts = Vec::with_capacity(jobs.len());
    for (_, payload_file) in jobs {
        let bytes = std::fs::read(payload_file)
            .map_err(|e| CliError::input(format!("cannot read {}: {e}", payload_file.display())))?;
        parts.push(coordinator.deserialize(SerializerVersion::CURRENT, &bytes)?);
    }
    Ok(coordinator.merge(parts)?)
}

/// Deletes the results of every task that finished (its payload is there), for a compaction
/// that will not be committed. Best effort: a payload that does not decode is skipped.
fn discard_results(coordinator: &Coordinator, jobs: &[(PathBuf, PathBuf)]) {
    for (_, payload_file) in jobs {
        let Ok(bytes) = std::fs::read(payload_file) else {
            continue;
        };
        if let Ok(messages) = coordinator.deserialize(SerializerVersion::CURRENT, &bytes) {
            let _ = block_on(coordinator.abort(&messages));
        }
    }
}

/// Runs every task in a `compact-task` process, `parallelism` at a time, with a progress
/// bar on a terminal. After a task fails no other task starts; fails naming the first task
/// that failed and its error line.
fn run_workers(
    args: &CompactArgs,
    jobs: &[(PathBuf, PathBuf)],
    parallelism: usize,
) -> CliResult<()> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::input(format!("cannot find this program to start workers: {e}")))?;
    let bar = ProgressBar::new(jobs.len() as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} compacting {bar:40} {pos}/{len} buckets ({elapsed})",
    ) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(100));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Vec<CliResult<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..parallelism)
            .map(|_| {
                scope.spawn(|| -> CliResult<()> {
                    loop {
                        let index = next.fetch_add(1, Ordering::SeqCst);
                        let Some((task, output)) = jobs.get(index) else {
                            return Ok(());
                        };
                        if failed.load(Ordering::SeqCst) {
                            return Ok(());
                        }
                        run_task_process(&exe, args, index, task, output)
                            .inspect_err(|_| failed.store(true, Ordering::SeqCst))?;
                        bar.inc(1);
                    }
                })
            })
            .collect();
        crate::workers::join_all(handles)
    });
    bar.finish_and_clear();
    results.into_iter().collect()
}

fn run_task_process(
    exe: &Path,
    args: &CompactArgs,
    index: usize,
    task: &Path,
    output: &Path,
) -> CliResult<()> {
    let mut command = Command::new(exe);
    command
        .arg("compact-task")
        .args(["--warehouse", &args.table.warehouse])
        .args(["--table", &args.table.table]);
    for option in &args.table.options.option {
        command.args(["--option", option]);
    }
    if let Some(file) = &args.table.options.options_file {
        command.arg("--options-file").arg(file);
    }
    let out = command
        .arg(task)
        .arg(output)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            let errors: Vec<String> = child
                .stderr
                .take()
                .map(|err| BufReader::new(err).lines().map_while(Result::ok).collect())
                .unwrap_or_default();
            child.wait().map(|status| (status, errors))
        })
        .map_err(|e| CliError::input(format!("cannot run compaction task {index}: {e}")))?;
    let (status, errors) = out;
    if status.success() {
        return Ok(());
    }
    let reason =
        crate::workers::last_error_line(&errors).unwrap_or_else(|| format!("exit status {status}"));
    Err(CliError::input(format!(
        "compaction task {index} failed: {reason}"
    )))
}

/// One task: rewrites its files and writes its commit message's payload.
pub fn run_task(args: &CompactTaskArgs) -> CliResult<()> {
    let table = block_on(open(&args.table))??;
    let bytes = std::fs::read(&args.task)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", args.task.display())))?;
    let task = CompactionTask::from_bytes(&bytes).map_err(compaction_error)?;
    let message = block_on(task.run(&table))?.map_err(compaction_error)?;
    let payload = serialize_list(&[message], SerializerVersion::CURRENT)
        .map_err(|e| CliError::input(e.to_string()))?;
    std::fs::write(&args.output, payload)
        .map_err(|e| CliError::input(format!("cannot write {}: {e}", args.output.display())))
}
