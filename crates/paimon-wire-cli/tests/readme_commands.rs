//! Every command of the `sh` blocks of README.md, crates/paimon-wire-cli/README.md and
//! docs/ENGINES.md runs and
//! exits 0, so an example that no longer works (a payload inspected at the wrong version, a
//! `commit` without `--version`) fails here instead of in a user's terminal.
//!
//! Each README runs in its own sandbox directory, line by line and in order, through `bash`
//! with the built binary first on `PATH`. The placeholders the examples use are made real:
//! `/tmp/wh` and `W` are the sandbox's warehouse, `/tmp/payloads` its payload directory,
//! `db.t` the demo's table `demo.events`; `payload.bin` (at the version the line names),
//! `in.bin`, `worker-0.bin`/`worker-1.bin` (`worker-*.bin`), `framed.bin` and `framed-v11.bin`
//! are written by `paimon-wire worker` just before the line that needs them; `fixtures/` is
//! the repository's. `cargo run -p paimon-wire-cli --` is the built binary. A demo of more than
//! 100,000 rows runs with 20,000. Lines on an object store (`s3://`) and other `cargo`
//! commands are skipped (scripts/test-s3 runs the CLI on S3).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run, succeeded, BIN};

/// The README files whose commands run, relative to this crate.
const READMES: [&str; 3] = ["../../README.md", "README.md", "../../docs/ENGINES.md"];

/// The shell commands of the `sh` blocks of `markdown`: continuation lines joined, comments
/// after ` #` cut.
fn sh_commands(markdown: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let code = line.split(" #").next().unwrap_or("").trim_end();
        if let Some(head) = code.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(code);
        let command = pending.split_whitespace().collect::<Vec<_>>().join(" ");
        pending.clear();
        if !command.is_empty() {
            commands.push(command);
        }
    }
    commands
}

/// `command` with the placeholders of the examples made real for `sandbox`; `None` for a
/// command this test does not run: those that need a server (S3, a REST catalog; their
/// equivalents run in `scripts/test-s3` and `scripts/test-rest`).
fn runnable(command: &str, sandbox: &Path) -> Option<String> {
    let command = command.replace("cargo run -p paimon-wire-cli --", "paimon-wire");
    if command.contains("s3://")
        || command.contains("rest.properties")
        || !command.contains("paimon-wire ")
    {
        return None;
    }
    let sandbox = sandbox.display().to_string();
    let mut words: Vec<String> = command
        .replace("/tmp/wh", &format!("{sandbox}/wh"))
        .replace("/tmp/payloads", &format!("{sandbox}/payloads"))
        .split(' ')
        .map(str::to_string)
        .collect();
    for i in 1..words.len() {
        let value = &words[i];
        match words[i - 1].as_str() {
            "--warehouse" if value == "W" => words[i] = format!("{sandbox}/wh"),
            "--table" if value == "db.t" => words[i] = "demo.events".into(),
            "--rows" if value.parse::<u64>().is_ok_and(|rows| rows > 100_000) => {
                words[i] = "20000".into()
            }
            _ => {}
        }
    }
    Some(words.join(" "))
}

/// The value of `--flag N` in `command`, if any.
fn flag_value(command: &str, flag: &str) -> Option<String> {
    let mut words = command.split(' ');
    words.find(|w| *w == flag)?;
    words.next().map(str::to_string)
}

/// Writes payload `file` of the demo's table in `sandbox` (creating the table first if the
/// warehouse has none): worker `index` of 2, at `version`, in an envelope if `envelope`.
fn write_payload(sandbox: &Path, file: &str, index: u32, version: &str, envelope: bool) {
    let warehouse = sandbox.join("wh");
    let created = warehouse.join("demo.db").join("events").exists();
    let warehouse = warehouse.display().to_string();
    if !created {
        succeeded(&run(
            &["demo", "--rows", "0", "--warehouse", &warehouse],
            None,
        ));
    }
    let output = sandbox.join(file).display().to_string();
    let index = index.to_string();
    let mut args = vec![
        "worker",
        "--warehouse",
        &warehouse,
        "--table",
        "demo.events",
        "--commit-user",
        "job-42",
        "--index",
        &index,
        "--workers",
        "2",
        "--rows",
        "2000",
        "--partitions",
        "2",
        "--version",
        version,
        "--output",
        &output,
    ];
    if envelope {
        args.push("--envelope");
    }
    succeeded(&run(&args, None));
}

/// Writes the placeholder payloads `command` names that the sandbox lacks (`payload.bin` at
/// the version the command names, every time).
fn prepare_payloads(command: &str, sandbox: &Path) {
    let missing = |file: &str| !sandbox.join(file).exists() && command.contains(file);
    if command.contains("payload.bin") {
        let version = flag_value(command, "--version").unwrap_or_else(|| "14".into());
        write_payload(sandbox, "payload.bin", 0, &version, false);
    }
    if missing("in.bin") {
        let version = flag_value(command, "--from-version").unwrap_or_else(|| "14".into());
        write_payload(sandbox, "in.bin", 0, &version, false);
    }
    for (index, file) in ["worker-0.bin", "worker-1.bin"].into_iter().enumerate() {
        let named = command.contains(file) || command.contains("worker-*.bin");
        if named && !sandbox.join(file).exists() {
            write_payload(sandbox, file, index as u32, "14", false);
        }
    }
    if missing("framed.bin") {
        write_payload(sandbox, "framed.bin", 0, "14", true);
    }
    if missing("framed-v11.bin") {
        write_payload(sandbox, "framed-v11.bin", 0, "11", true);
    }
}

fn run_readme(readme: &Path) -> usize {
    let markdown = std::fs::read_to_string(readme).unwrap();
    let sandbox = tempfile::tempdir().unwrap();
    let repo_fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    std::os::unix::fs::symlink(&repo_fixtures, sandbox.path().join("fixtures")).unwrap();
    let bin_dir = PathBuf::from(BIN).parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for command in sh_commands(&markdown) {
        let Some(line) = runnable(&command, sandbox.path()) else {
            println!("skipped: {command}");
            continue;
        };
        prepare_payloads(&line, sandbox.path());
        let output = Command::new("bash")
            .args(["-c", &format!("set -o pipefail; {line}")])
            .current_dir(sandbox.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: `{command}` exited with {} (run as `{line}`):\n{}",
            readme.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        println!("ok: {command}");
        ran += 1;
    }
    ran
}

#[test]
fn every_readme_command_runs() {
    for readme in READMES {
        let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join(readme);
        let ran = run_readme(&readme);
        // The main README has the demo and five operator commands, the CLI's a dozen.
        assert!(ran >= 5, "{}: only {ran} commands ran", readme.display());
    }
}
