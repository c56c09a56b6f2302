//! Prints the side-by-side table of one `scripts/bench` run: criterion's results for
//! paimon-wire and the `paimon` crate, the Java harness's `bench` lines, and the
//! `decode-memory` lines, with throughput, ratios and the targets BENCHMARKS.md sets.
//!
//! `bench-report --criterion DIR [--criterion-kept-heap DIR] [--criterion-mimalloc DIR]
//! --java FILE --memory FILE`
//!
//! `--criterion-kept-heap` holds a second criterion run of the same benchmarks in a process
//! whose allocator keeps freed memory (`scripts/bench` sets glibc's trim and mmap thresholds),
//! as a JVM keeps its committed heap: the difference is the kernel's cost of handing fresh
//! pages to a process that gave its memory back. `--criterion-mimalloc` holds a run with
//! mimalloc as the process's allocator (the bench crate's `mimalloc` feature).
//!
//! Ratios compare the time one implementation takes for the whole workload (the same
//! messages), so they equal the ratio of messages/s. Java 2.0.0 reads and writes version 12
//! and the `paimon` crate version 14; paimon-wire is measured at both, and the target checks
//! use the same bytes as the reference (v12 against Java, v14 against the crate).

use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use paimon_wire_bench::{MESSAGES, W3_WORKERS};

/// One measured (workload, implementation, operation, version).
#[derive(Debug, Clone)]
struct Row {
    workload: String,
    implementation: String,
    op: String,
    version: String,
    /// Whose memory policy the run used: `glibc` (the process default), `kept heap` (glibc
    /// told to keep freed memory), `mimalloc` or `JVM`.
    memory: &'static str,
    bytes: u64,
    messages: u64,
    /// Median time for the whole workload.
    nanos: f64,
}

impl Row {
    fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / self.nanos * 1e3
    }

    fn messages_per_s(&self) -> f64 {
        self.messages as f64 / self.nanos * 1e9
    }
}

fn messages_of(workload: &str) -> u64 {
    match workload {
        "W3" => W3_WORKERS as u64,
        _ => MESSAGES as u64,
    }
}

/// Criterion's `GROUP/FUNCTION/new/{benchmark,estimates}.json` for functions named
/// `op/implementation/version`.
fn criterion_rows(dir: &Path, memory: &'static str) -> Result<Vec<Row>, Box<dyn Error>> {
    let mut rows = Vec::new();
    for group in std::fs::read_dir(dir)? {
        let group = group?.path();
        if !group.is_dir() {
            continue;
        }
        for function in std::fs::read_dir(&group)? {
            let new = function?.path().join("new");
            let Ok(benchmark) = std::fs::read_to_string(new.join("benchmark.json")) else {
                continue;
            };
            let benchmark: serde_json::Value = serde_json::from_str(&benchmark)?;
            let estimates: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(new.join("estimates.json"))?)?;
            let (Some(workload), Some(function_id)) = (
                benchmark["group_id"].as_str(),
                benchmark["function_id"].as_str(),
            ) else {
                continue;
            };
            let parts: Vec<&str> = function_id.split('/').collect();
            let [op, implementation, version] = parts[..] else {
                continue;
            };
            let (Some(bytes), Some(nanos)) = (
                benchmark["throughput"]["Bytes"].as_u64(),
                estimates["median"]["point_estimate"].as_f64(),
            ) else {
                continue;
            };
            rows.push(Row {
                workload: workload.to_string(),
                implementation: implementation.to_string(),
                op: op.to_string(),
                version: version.trim_start_matches('v').to_string(),
                memory,
                bytes,
                messages: messages_of(workload),
                nanos,
            });
        }
    }
    Ok(rows)
}

/// The Java harness's `bench release=R version=V file=wN-... op=OP bytes=N messages=M
/// median_ns=T ...` lines.
fn java_rows(path: &Path) -> Result<Vec<Row>, Box<dyn Error>> {
    let mut rows = Vec::new();
    for line in std::fs::read_to_string(path)?.lines() {
        if !line.starts_with("bench ") {
            continue;
        }
        let f = paimon_wire_bench::key_value_fields(line);
        let get = |key: &str| {
            f.get(key)
                .copied()
                .ok_or_else(|| format!("no {key}= in Java line {line:?}"))
        };
        let workload = get("file")?
            .split('-')
            .next()
            .unwrap_or_default()
            .to_uppercase();
        rows.push(Row {
            workload,
            implementation: format!("java-{}", get("release")?),
            op: get("op")?.to_string(),
            version: get("version")?.to_string(),
            memory: "JVM",
            bytes: get("bytes")?.parse()?,
            messages: get("messages")?.parse()?,
            nanos: get("median_ns")?.parse()?,
        });
    }
    Ok(rows)
}

/// The operation a row is compared on: every Java encoder counts as `encode`.
fn kind(op: &str) -> &str {
    if op.starts_with("encode") {
        "encode"
    } else if op == "view" {
        // A view parse does a decode's job for a reader of the payload: compared with decodes.
        "decode"
    } else {
        op
    }
}

/// The fastest row of `workload` and op kind whose implementation starts with `prefix`,
/// among rows of memory policy `memory` if given.
fn best<'a>(
    rows: &'a [Row],
    workload: &str,
    op: &str,
    prefix: &str,
    memory: Option<&str>,
) -> Option<&'a Row> {
    rows.iter()
        .filter(|r| r.workload == workload && kind(&r.op) == op)
        .filter(|r| r.implementation.starts_with(prefix))
        .filter(|r| memory.is_none_or(|m| r.memory == m))
        .min_by(|a, b| a.nanos.total_cmp(&b.nanos))
}

/// The row measuring exactly (`workload`, `op`, `implementation`, `version`, `memory`).
fn find<'a>(
    rows: &'a [Row],
    workload: &str,
    op: &str,
    implementation: &str,
    version: &str,
    memory: &str,
) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.workload == workload
            && r.op == op
            && r.implementation == implementation
            && r.version == version
            && r.memory == memory
    })
}

fn ratio(reference: Option<&Row>, row: &Row) -> String {
    match reference {
        Some(reference) if kind(&reference.op) == kind(&row.op) => {
            format!("{:.2}×", reference.nanos / row.nanos)
        }
        _ => "—".into(),
    }
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

const GLIBC: &str = "glibc";
const KEPT_HEAP: &str = "kept heap";
const MIMALLOC: &str = "mimalloc";
/// The memory policies shown beside the default one.
const ALTERNATIVES: [&str; 2] = [KEPT_HEAP, MIMALLOC];

fn report<'r>(rows: &'r [Row], memory: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| workload | implementation | op | version | memory | payload MB | time ms | MB/s | messages/s | vs Java | vs paimon crate |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|");
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by_key(|r| {
        let implementation = if r.implementation.starts_with("java") {
            0
        } else if r.implementation == "paimon-crate" {
            1
        } else {
            2
        };
        (
            r.workload.clone(),
            kind(&r.op).to_string(),
            ALTERNATIVES.iter().position(|m| *m == r.memory),
            implementation,
            r.op.clone(),
            r.version.clone(),
        )
    });
    for row in sorted {
        let java = best(rows, &row.workload, kind(&row.op), "java", None);
        // The crate is compared under the same memory policy.
        let crate_ = best(
            rows,
            &row.workload,
            kind(&row.op),
            "paimon-crate",
            Some(row.memory),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.0} | {:.0} | {} | {} |",
            row.workload,
            row.implementation,
            row.op,
            row.version,
            row.memory,
            row.bytes as f64 / 1e6,
            row.nanos / 1e6,
            row.mb_per_s(),
            row.messages_per_s(),
            if row.implementation.starts_with("java") {
                "1×".into()
            } else {
                ratio(java, row)
            },
            if row.implementation == "paimon-crate" {
                "1×".into()
            } else {
                ratio(crate_, row)
            },
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Targets (paimon-wire with the default allocator; other allocators in parentheses):"
    );
    // " (1.23× kept heap, 2.34× mimalloc)" for the alternatives `ratio` has numbers for.
    let others = |ratio: &dyn Fn(&'static str) -> Option<f64>| {
        let parts: Vec<String> = ALTERNATIVES
            .iter()
            .filter_map(|memory| ratio(memory).map(|r| format!("{r:.2}× {memory}")))
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        }
    };
    for workload in ["W1", "W2"] {
        for op in ["decode", "encode"] {
            let java = best(rows, workload, op, "java", None);
            let v12 = |memory: &'static str| find(rows, workload, op, "paimon-wire", "12", memory);
            let v14 = |memory: &'static str| find(rows, workload, op, "paimon-wire", "14", memory);
            let crate_v14 =
                |memory: &'static str| find(rows, workload, op, "paimon-crate", "14", memory);
            // For decoding, a clone of the same messages bounds any decoder's ratio.
            let floor = |memory: &'static str| {
                (op == "decode")
                    .then(|| find(rows, workload, "floor", "clone+drop", "-", memory))
                    .flatten()
            };
            let ratio = |reference: Option<&Row>, row: Option<&Row>| match (reference, row) {
                (Some(reference), Some(row)) => Some(reference.nanos / row.nanos),
                _ => None,
            };
            let bound = |reference: &dyn Fn(&'static str) -> Option<&'r Row>| match ratio(
                reference(GLIBC),
                floor(GLIBC),
            ) {
                Some(r) => format!(
                    "; bound: a decoder as fast as a clone of its output would reach {r:.2}×{}",
                    others(&|memory| ratio(reference(memory), floor(memory)))
                ),
                None => String::new(),
            };
            if let Some(r) = ratio(java, v12(GLIBC)) {
                let _ = writeln!(
                    out,
                    "- {workload} {op} ≥ 3× Java (v12, same bytes; Java's fastest: {}): {r:.2}×{} — {}{}",
                    java.map_or("?", |j| j.op.as_str()),
                    others(&|memory| ratio(java, v12(memory))),
                    verdict(r >= 3.0),
                    bound(&|_: &'static str| java)
                );
            }
            if let Some(r) = ratio(crate_v14(GLIBC), v14(GLIBC)) {
                let _ = writeln!(
                    out,
                    "- {workload} {op} ≥ 2× the paimon crate (v14, same bytes): {r:.2}×{} — {}{}",
                    others(&|memory| ratio(crate_v14(memory), v14(memory))),
                    verdict(r >= 2.0),
                    bound(&crate_v14)
                );
            }
        }
    }
    // Views: the up-front check against Java's decode of the same bytes, and
    // materializing owned values from a parsed view against cloning the same values.
    for workload in ["W1", "W2"] {
        let java = best(rows, workload, "decode", "java", None);
        let view = |memory: &'static str| find(rows, workload, "view", "paimon-wire", "12", memory);
        if let (Some(java), Some(view_row)) = (java, view(GLIBC)) {
            let r = java.nanos / view_row.nanos;
            let _ = writeln!(
                out,
                "- {workload} decode through views ≥ 3× Java (v12, same bytes; PayloadView::parse vs Java's decode): {r:.2}×{} — {}",
                others(&|memory| view(memory).map(|v| java.nanos / v.nanos)),
                verdict(r >= 3.0)
            );
        }
        let materialize =
            |memory: &'static str| find(rows, workload, "materialize", "paimon-wire", "14", memory);
        let floor = |memory: &'static str| find(rows, workload, "floor", "clone+drop", "-", memory);
        if let (Some(m), Some(f)) = (materialize(GLIBC), floor(GLIBC)) {
            let r = m.nanos / f.nanos;
            let extra = others(&|memory| match (materialize(memory), floor(memory)) {
                (Some(m), Some(f)) => Some(m.nanos / f.nanos),
                _ => None,
            });
            let _ = writeln!(
                out,
                "- {workload} materializing owned values from a view within 10% of the clone floor: {r:.2}× the floor{extra} — {}",
                verdict(r <= 1.10)
            );
        }
    }
    for line in memory.lines().filter(|l| l.starts_with("memory ")) {
        let f = paimon_wire_bench::key_value_fields(line);
        let number = |key: &str| f.get(key).and_then(|v| v.parse::<f64>().ok());
        if let (Some(bytes), Some(peak), Some(retained)) =
            (number("bytes"), number("peak_extra"), number("retained"))
        {
            let r = peak / bytes;
            let _ = writeln!(
                out,
                "- {} v{} decode peak ≤ 3×S: S = {:.2} MB, peak extra {:.2} MB = {r:.2}×S (the messages keep {:.2}×S; {} allocations) — {}",
                f.get("workload").unwrap_or(&"?"),
                f.get("version").unwrap_or(&"?"),
                bytes / 1e6,
                peak / 1e6,
                retained / bytes,
                f.get("allocations").unwrap_or(&"?"),
                verdict(r <= 3.0)
            );
        }
    }
    let w3 = |memory| {
        find(
            rows,
            "W3",
            "decode+validate+merge",
            "paimon-wire",
            "14",
            memory,
        )
    };
    if let Some(row) = w3(GLIBC) {
        let seconds = row.nanos / 1e9;
        let _ = writeln!(
            out,
            "- W3 (1,000 payloads, 100,000 files) decoded, validated and merged < 0.5 s: {seconds:.3} s{} — {}",
            {
                let parts: Vec<String> = ALTERNATIVES
                    .iter()
                    .filter_map(|memory| w3(memory).map(|k| format!("{:.3} s {memory}", k.nanos / 1e9)))
                    .collect();
                if parts.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", parts.join(", "))
                }
            },
            verdict(seconds < 0.5)
        );
    }
    out
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut criterion = None;
    let mut kept_heap = None;
    let mut mimalloc = None;
    let mut java = None;
    let mut memory = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().map(PathBuf::from);
        match flag.as_str() {
            "--criterion" => criterion = value,
            "--criterion-kept-heap" => kept_heap = value,
            "--criterion-mimalloc" => mimalloc = value,
            "--java" => java = value,
            "--memory" => memory = value,
            _ => return Err(format!("unknown argument {flag}").into()),
        }
    }
    let usage =
        "usage: bench-report --criterion DIR [--criterion-kept-heap DIR] --java FILE --memory FILE";
    let mut rows = criterion_rows(&criterion.ok_or(usage)?, GLIBC)?;
    if let Some(dir) = kept_heap {
        rows.extend(criterion_rows(&dir, KEPT_HEAP)?);
    }
    if let Some(dir) = mimalloc {
        rows.extend(criterion_rows(&dir, MIMALLOC)?);
    }
    rows.extend(java_rows(&java.ok_or(usage)?)?);
    let memory = std::fs::read_to_string(memory.ok_or(usage)?)?;
    print!("{}", report(&rows, &memory));
    Ok(())
}
