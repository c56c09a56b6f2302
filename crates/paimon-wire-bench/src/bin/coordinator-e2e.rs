//! The coordinator's whole job, end to end, on payload files: read each worker's
//! payload file, decode and validate it (`Coordinator::deserialize`), merge, and commit once
//! (manifests, manifest lists and the snapshot written) on a fresh real local table.
//!
//! ```text
//! coordinator-e2e write append|pk|append-one-worker DIR [PAYLOADS]
//!     writes the workload's payload files DIR/NNNNNNN.bin at version 12 (the version Paimon
//!     2.0.0 reads): `append` = W3-style payloads (one message of 100 new files each; 1,000
//!     payloads by default, i.e. W3), `pk` = the primary-key workload (1,000 payloads),
//!     `append-one-worker` = W3's 10^5 files as one worker's payload, one message per
//!     partition (a writer that rolled ~3,300 files in each), for the split-payload flows
//! coordinator-e2e run append|pk DIR [--iterations N] [--warmup N] [--version V] [--staged]
//!     times N commits (after N warm-up ones), each on a fresh table in a new temp warehouse
//! ```
//!
//! With `--staged` the payloads go through a staged commit (`Coordinator::begin`, then
//! `StagedCommit::add_payload` for each payload file, read a few ahead by a thread, then
//! `commit`): the streamed path, for the workloads here, which only add files. The line printed then says
//! `impl=paimon-wire-staged`, and its `files` counts changelog files too
//! (`StagedCommit::file_count`).
//!
//! `run` reads a directory of `part-<index>-of-<count>.bin` files (a split set, as
//! `paimon-wire split` writes it) as one worker's set with `Coordinator::deserialize_parts`.
//!
//! `run` prints one line, the same format as the Java harness's `commit-bench`:
//! `commit-bench impl=paimon-wire kind=K payloads=P files=F iterations=N median_ns=T min_ns=T
//! max_ns=T vmhwm_kb=R`, where `files` counts the data files committed and `vmhwm_kb` is the
//! process's peak resident set size (`VmHWM` of /proc/self/status) at the end. The time of
//! each stage of each iteration goes to stderr. One process
//! per workload and size, so peaks do not mix.
//!
//! Before the timer, the data and changelog files the payloads add are created empty in the
//! fresh table (from `DIR/files.list`, which `write` makes): the commit checks that they exist,
//! in Java as in the paimon crate. Timed per iteration: opening the table and binding the coordinator, reading every payload
//! file, `Coordinator::deserialize` of each, `merge`, and `commit` (which checks the table's
//! state first). Not timed: creating the empty table and deleting the warehouse afterwards.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use paimon_wire::coordinator::{open_table, Binding, CommitOutcome, Coordinator, PayloadPart};
use paimon_wire::{serialize_list, SerializerVersion};
use paimon_wire_bench::{
    append_workers, create_pk_table, create_w3_table, pk_workers, proc_status_kib,
};

/// With the `mimalloc` feature the whole process allocates through mimalloc.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Error = Box<dyn std::error::Error>;

const USAGE: &str = "usage: coordinator-e2e write append|pk|append-one-worker DIR [PAYLOADS] | \
    coordinator-e2e run append|pk DIR [--iterations N] [--warmup N] [--version V] [--staged]";

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("write") => write(&args[1..]),
        Some("run") => run(&args[1..]),
        _ => Err(USAGE.into()),
    }
}

fn write(args: &[String]) -> Result<(), Error> {
    let [kind, dir, rest @ ..] = args else {
        return Err(USAGE.into());
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir)?;
    let version = SerializerVersion::V12;
    let mut bytes = 0usize;
    let mut list = std::io::BufWriter::new(std::fs::File::create(dir.join(FILE_LIST))?);
    let mut write_one = |i: usize, messages: Vec<paimon_wire::CommitMessage>| {
        let payload = serialize_list(&messages, version)?;
        bytes += payload.len();
        std::fs::write(dir.join(format!("{i:07}.bin")), payload)?;
        for m in &messages {
            // The workloads' partition rows are one INT (`dt`): arity, null bits, the slot.
            let dt = i32::from_le_bytes(m.partition[12..16].try_into()?);
            for f in m.new_files.iter().chain(&m.new_changelog_files) {
                writeln!(list, "dt={dt}/bucket-{}/{}", m.bucket, f.file_name)?;
            }
        }
        Ok::<_, Error>(())
    };
    let count = match kind.as_str() {
        "append" => {
            let payloads = match rest {
                [] => paimon_wire_bench::W3_WORKERS,
                [n] => n.parse()?,
                _ => return Err(USAGE.into()),
            };
            for (i, messages) in append_workers(payloads).enumerate() {
                write_one(i, messages)?;
            }
            payloads
        }
        "append-one-worker" => {
            write_one(0, paimon_wire_bench::w3_one_worker())?;
            1
        }
        "pk" => {
            for (i, messages) in pk_workers().enumerate() {
                write_one(i, messages)?;
            }
            paimon_wire_bench::PK_WORKERS
        }
        _ => return Err(format!("unknown workload {kind}").into()),
    };
    list.flush()?;
    println!(
        "{}: {count} payloads at v{version}, {bytes} bytes",
        dir.display()
    );
    Ok(())
}

/// The payload files of `dir`, in name order.
fn payload_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .filter(|p| {
            p.as_ref()
                .map_or(true, |p| p.extension() == Some("bin".as_ref()))
        })
        .collect::<Result<_, _>>()?;
    files.sort();
    if files.is_empty() {
        return Err(format!("no payload files (*.bin) in {}", dir.display()).into());
    }
    Ok(files)
}

/// The list `write` makes of every data and changelog file the payloads add, one path
/// relative to the table directory a line.
const FILE_LIST: &str = "files.list";

/// Creates every file of `dir`'s file list, empty, under `table_dir`: the commit checks that
/// the files it adds exist (the paimon crate's filter-and-commit path, as Java's
/// `filterAndCommit` does), and workers would have written them.
fn create_listed_files(dir: &Path, table_dir: &Path) -> Result<(), Error> {
    let list = std::fs::read_to_string(dir.join(FILE_LIST))?;
    let mut made = std::collections::HashSet::new();
    for line in list.lines() {
        let path = table_dir.join(line);
        let parent = path.parent().ok_or("a listed file without a directory")?;
        if made.insert(parent.to_path_buf()) {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::File::create(&path)?;
    }
    Ok(())
}

/// A fresh table of workload `kind` in a new temp warehouse, holding the (empty) files the
/// payloads in `dir` add; and the table's name.
async fn fresh_table(kind: &str, dir: &Path) -> Result<(tempfile::TempDir, &'static str), Error> {
    let warehouse = tempfile::tempdir()?;
    let path = warehouse.path().to_str().ok_or("temp dir is not UTF-8")?;
    let name = match kind {
        "append" => create_w3_table(path).await?,
        "pk" => create_pk_table(path).await?,
        _ => return Err(format!("unknown workload {kind}").into()),
    };
    let table_dir = name.split_once('.').map_or(name, |(_, table)| table);
    create_listed_files(dir, &warehouse.path().join("db.db").join(table_dir))?;
    Ok((warehouse, name))
}

/// A coordinator bound to a fresh table of workload `kind` ([`fresh_table`]), the warehouse
/// holding it, and the time the timed part started: just before the table was opened.
async fn bound_to_fresh_table(
    kind: &str,
    dir: &Path,
) -> Result<(tempfile::TempDir, Instant, Coordinator), Error> {
    let (warehouse, name) = fresh_table(kind, dir).await?;
    let path = warehouse.path().to_str().ok_or("temp dir is not UTF-8")?;
    let start = Instant::now();
    let table = open_table(path, name).await?;
    let coordinator = Coordinator::bind(table, Binding::append("coordinator-e2e")).await?;
    Ok((warehouse, start, coordinator))
}

/// A commit on a fresh table publishes snapshot 1.
fn expect_first_snapshot(outcome: CommitOutcome) -> Result<(), Error> {
    if outcome != (CommitOutcome::Committed { snapshot_id: 1 }) {
        return Err(format!("expected snapshot 1 committed, got {outcome:?}").into());
    }
    Ok(())
}

/// One commit of every payload file on a fresh table: the timed part and the data files
/// committed.
async fn commit_once(
    kind: &str,
    dir: &Path,
    files: &[PathBuf],
    version: SerializerVersion,
) -> Result<(Duration, usize), Error> {
    let (_warehouse, start, coordinator) = bound_to_fresh_table(kind, dir).await?;
    let mut parts = Vec::with_capacity(files.len());
    let split_set = split_set_parts(files);
    if let Some(indexes) = split_set {
        let payloads = files
            .iter()
            .map(std::fs::read)
            .collect::<Result<Vec<_>, _>>()?;
        let set: Vec<PayloadPart<'_>> = indexes
            .iter()
            .zip(&payloads)
            .map(|(&(index, count), bytes)| PayloadPart {
                index,
                count,
                bytes,
            })
            .collect();
        parts.push(coordinator.deserialize_parts(version, &set)?);
    } else {
        // Read when the coordinator's helper takes them, so only a few are held at once.
        let read_error = std::sync::Mutex::new(None);
        let payloads = files.iter().map(|file| {
            std::fs::read(file).unwrap_or_else(|error| {
                let mut first = read_error.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert_with(|| format!("{}: {error}", file.display()));
                Vec::new()
            })
        });
        let decoded = coordinator.deserialize_all(version, payloads);
        if let Some(error) = read_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(error.into());
        }
        parts = decoded?;
    }
    let decoded = start.elapsed();
    let merged = coordinator.merge(parts)?;
    let data_files = merged.data_file_count();
    let merged_at = start.elapsed();
    let outcome = coordinator.commit(merged, 1).await?;
    let elapsed = start.elapsed();
    eprintln!(
        "stages: open+bind+read+decode+validate {:.3} s, merge {:.3} s, commit {:.3} s",
        decoded.as_secs_f64(),
        (merged_at - decoded).as_secs_f64(),
        (elapsed - merged_at).as_secs_f64()
    );
    expect_first_snapshot(outcome)?;
    Ok((elapsed, data_files))
}

/// Payload files a staged commit's reader thread reads ahead of the commit.
const PAYLOADS_READ_AHEAD: usize = 8;

/// [`commit_once`] through a staged commit: each payload added and dropped in turn. A thread
/// reads the files a few ahead ([`PAYLOADS_READ_AHEAD`]), as an engine's transport receives
/// the next payloads while the coordinator takes one (the one-shot form reads them on the
/// coordinator's helper thread likewise).
async fn commit_staged(
    kind: &str,
    dir: &Path,
    files: &[PathBuf],
    version: SerializerVersion,
) -> Result<(Duration, usize), Error> {
    let (_warehouse, start, coordinator) = bound_to_fresh_table(kind, dir).await?;
    let mut staged = coordinator.begin(1);
    let (read, payloads) = std::sync::mpsc::sync_channel(PAYLOADS_READ_AHEAD);
    let to_read = files.to_vec();
    let reader = std::thread::spawn(move || {
        for file in to_read {
            let bytes =
                std::fs::read(&file).map_err(|error| format!("{}: {error}", file.display()));
            let failed = bytes.is_err();
            // The commit stopped taking payloads: nothing is left to read for.
            if read.send(bytes).is_err() || failed {
                return;
            }
        }
    });
    for bytes in payloads {
        staged.add_payload(version, &bytes?).await?;
    }
    reader
        .join()
        .map_err(|_| "the payload reader thread panicked")?;
    let path_taken = staged.path();
    let data_files = staged.file_count();
    let added = start.elapsed();
    let outcome = staged.commit().await?;
    let elapsed = start.elapsed();
    eprintln!(
        "stages ({path_taken:?}): open+bind+read+add {:.3} s, commit {:.3} s",
        added.as_secs_f64(),
        (elapsed - added).as_secs_f64()
    );
    expect_first_snapshot(outcome)?;
    Ok((elapsed, data_files))
}

/// The index and count of every file when all are named as a split set
/// (`part-<index>-of-<count>.bin`, as `paimon-wire split` writes them).
fn split_set_parts(files: &[PathBuf]) -> Option<Vec<(u32, u32)>> {
    files
        .iter()
        .map(|file| paimon_wire::split::parse_part_file_name(file.file_name()?.to_str()?))
        .collect()
}

fn run(args: &[String]) -> Result<(), Error> {
    let [kind, dir, options @ ..] = args else {
        return Err(USAGE.into());
    };
    let (mut iterations, mut warmup, mut version) = (5usize, 1usize, SerializerVersion::V12);
    let mut staged = false;
    let mut options = options.iter();
    while let Some(option) = options.next() {
        if option == "--staged" {
            staged = true;
            continue;
        }
        let value = options.next().ok_or(USAGE)?;
        match option.as_str() {
            "--iterations" => iterations = value.parse()?,
            "--warmup" => warmup = value.parse()?,
            "--version" => version = SerializerVersion::try_from(value.parse::<i32>()?)?,
            _ => return Err(USAGE.into()),
        }
    }
    if iterations == 0 {
        return Err("--iterations must be at least 1".into());
    }
    let files = payload_files(Path::new(dir))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut times = Vec::with_capacity(iterations);
    let mut data_files = 0;
    for i in 0..warmup + iterations {
        let (elapsed, committed) = if staged {
            runtime.block_on(commit_staged(kind, Path::new(dir), &files, version))?
        } else {
            runtime.block_on(commit_once(kind, Path::new(dir), &files, version))?
        };
        data_files = committed;
        if i >= warmup {
            times.push(elapsed);
        }
    }
    times.sort();
    println!(
        "commit-bench impl={} kind={kind} payloads={} files={data_files} iterations={iterations} \
         median_ns={} min_ns={} max_ns={} vmhwm_kb={}",
        if staged {
            "paimon-wire-staged"
        } else {
            "paimon-wire"
        },
        files.len(),
        times[times.len() / 2].as_nanos(),
        times[0].as_nanos(),
        times[times.len() - 1].as_nanos(),
        proc_status_kib("VmHWM")?
    );
    Ok(())
}
