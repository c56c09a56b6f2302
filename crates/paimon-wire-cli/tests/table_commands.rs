//! `demo`, `validate`, `commit` and table-aware `inspect` on real local tables, with
//! payloads written by real worker processes (the hidden `worker` subcommand).

mod common;

use std::path::Path;

use arrow_array::RecordBatch;
use common::{failure, path_in, run, success};
use paimon_wire::{deserialize_list, envelope, serialize_list, CommitMessage, SerializerVersion};

const TABLE: &str = "demo.events";

/// Rows in `table` of the warehouse at `warehouse`, read with the paimon crate directly
/// (not through the CLI under test).
fn count_rows(warehouse: &str, table: &str) -> usize {
    let (_, batches) = common::read_table(warehouse, table);
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// The value of the demo report line starting with `key`.
fn report_line<'a>(stdout: &'a str, key: &str) -> &'a str {
    stdout
        .lines()
        .map(str::trim_start)
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key} line in {stdout}"))
        .trim()
}

fn demo_end_to_end(workers: u32, rows: u64, partitions: u32) {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "warehouse");
    let stdout = success(&run(
        &[
            "demo",
            "--workers",
            &workers.to_string(),
            "--rows",
            &rows.to_string(),
            "--partitions",
            &partitions.to_string(),
            "--warehouse",
            &warehouse,
        ],
        None,
    ));
    assert_eq!(
        report_line(&stdout, "read back"),
        format!(
            "{rows} rows in {partitions} partitions: every id from 0 to {} exactly once",
            rows - 1
        )
    );
    assert_eq!(report_line(&stdout, "snapshot"), "1");
    assert!(
        report_line(&stdout, "payloads").starts_with(&format!("{workers} x serializer version 14")),
        "{stdout}"
    );
    // Every worker wrote every partition: one message per (worker, partition).
    let expected_messages = workers * partitions;
    assert_eq!(
        report_line(&stdout, "messages"),
        format!("{expected_messages} received, {expected_messages} after merge")
    );
    for phase in [
        "create table",
        "workers write",
        "validate + merge",
        "commit",
        "read back",
    ] {
        assert!(report_line(&stdout, "phases").contains(phase), "{stdout}");
    }
    // Read independently of the CLI.
    assert_eq!(count_rows(&warehouse, TABLE), rows as usize);
}

#[test]
fn demo_with_one_worker() {
    demo_end_to_end(1, 20_000, 4);
}

#[test]
fn demo_with_eight_workers() {
    demo_end_to_end(8, 40_000, 3);
}

#[test]
fn demo_defaults_run_in_a_temporary_warehouse() {
    let stdout = success(&run(&["demo"], None));
    assert!(
        report_line(&stdout, "warehouse").ends_with("(temporary, removed on exit)"),
        "{stdout}"
    );
    assert_eq!(
        report_line(&stdout, "read back"),
        "100000 rows in 4 partitions: every id from 0 to 99999 exactly once"
    );
    let warehouse = report_line(&stdout, "warehouse")
        .trim_end_matches("(temporary, removed on exit)")
        .trim();
    assert!(!Path::new(warehouse).exists(), "{warehouse} left behind");
}

#[test]
fn demo_refuses_an_existing_table() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "warehouse");
    let args = ["demo", "--rows", "10", "--warehouse", &warehouse];
    success(&run(&args, None));
    let line = failure(&run(&args, None), 1);
    assert!(line.contains("demo.events"), "{line}");
}

/// A warehouse with an empty demo table (`demo --rows 0` creates it and commits nothing)
/// and one payload per worker, written by `paimon-wire worker` and not committed.
struct Written {
    dir: tempfile::TempDir,
    warehouse: String,
    payloads: Vec<String>,
}

const USER: &str = "cli-test-job";

fn written(workers: u32, rows: u64, extra_worker_args: &[&str]) -> Written {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = path_in(&dir, "warehouse");
    let created = success(&run(
        &["demo", "--rows", "0", "--warehouse", &warehouse],
        None,
    ));
    assert_eq!(
        report_line(&created, "snapshot"),
        "none (nothing to commit)"
    );
    let mut payloads = Vec::new();
    for index in 0..workers {
        let output = path_in(&dir, &format!("worker-{index}.bin"));
        let mut args = vec![
            "worker",
            "--warehouse",
            &warehouse,
            "--table",
            TABLE,
            "--commit-user",
            USER,
            "--partitions",
            "3",
        ];
        let index_s = index.to_string();
        let workers_s = workers.to_string();
        let rows_s = rows.to_string();
        args.extend([
            "--index",
            &index_s,
            "--workers",
            &workers_s,
            "--rows",
            &rows_s,
            "--output",
            &output,
        ]);
        args.extend(extra_worker_args);
        success(&run(&args, None));
        payloads.push(output);
    }
    Written {
        dir,
        warehouse,
        payloads,
    }
}

/// `commit` of `files` (raw version 14 payloads) as [`USER`] under `identifier`.
fn commit_args<'a>(w: &'a Written, identifier: &'a str, files: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["commit", "--warehouse", &w.warehouse, "--table", TABLE];
    args.extend([
        "--commit-user",
        USER,
        "--identifier",
        identifier,
        "--version",
        "14",
    ]);
    args.extend(files);
    args
}

/// `validate` of `files` (raw version 14 payloads).
fn validate_args<'a>(w: &'a Written, files: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["validate", "--warehouse", &w.warehouse, "--table", TABLE];
    args.extend(["--version", "14"]);
    args.extend(files);
    args
}

/// Writes the messages of worker 0's payload, changed by `edit`, as payload `name`.
fn crafted(w: &Written, name: &str, edit: impl FnOnce(&mut Vec<CommitMessage>)) -> String {
    let real = std::fs::read(&w.payloads[0]).unwrap();
    let mut messages = deserialize_list(SerializerVersion::V14, &real).unwrap();
    edit(&mut messages);
    let path = path_in(&w.dir, name);
    std::fs::write(
        &path,
        serialize_list(&messages, SerializerVersion::V14).unwrap(),
    )
    .unwrap();
    path
}

impl Written {
    fn payload_paths(&self) -> Vec<&str> {
        self.payloads.iter().map(String::as_str).collect()
    }
}

#[test]
fn commit_is_idempotent_per_identifier() {
    let w = written(3, 3_000, &[]);
    let first_run = run(&commit_args(&w, "7", &w.payload_paths()), None);
    let first = success(&first_run);
    assert!(
        first_run.stderr.is_empty(),
        "without --verbose, no log lines: {}",
        String::from_utf8_lossy(&first_run.stderr)
    );
    let last = first.lines().last().unwrap();
    assert!(
        last.starts_with("committed snapshot 1: "),
        "the demo's empty commit made no snapshot, so this is the first: {first}"
    );
    assert!(last.contains("3000 row(s)"), "{last}");
    assert_eq!(count_rows(&w.warehouse, TABLE), 3_000);

    let mut verbose_args = commit_args(&w, "7", &w.payload_paths());
    verbose_args.push("-v");
    let again_run = run(&verbose_args, None);
    let again = success(&again_run);
    // -v shows the coordinator's INFO record of the outcome on stderr, and no DEBUG record.
    let log = String::from_utf8_lossy(&again_run.stderr);
    assert!(
        log.lines().any(
            |line| line.starts_with("paimon-wire: INFO paimon_wire::coordinator: ")
                && line.contains("identifier 7: AlreadyCommitted { snapshot_id: Some(1) }")
        ),
        "{log}"
    );
    assert!(!log.contains(" DEBUG "), "{log}");
    assert_eq!(
        again.lines().last().unwrap(),
        format!(
            "identifier 7 of commit user \"{USER}\" was already committed in snapshot 1; \
             nothing committed"
        )
    );
    assert_eq!(count_rows(&w.warehouse, TABLE), 3_000);
}

#[test]
fn validate_accepts_real_payloads_and_rejects_a_crafted_one() {
    let w = written(2, 100, &[]);
    let stdout = success(&run(&validate_args(&w, &w.payload_paths()), None));
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[lines.len() - 2]
            .starts_with("valid: 2 payload(s) for table demo.events: 6 message(s)"),
        "{stdout}"
    );
    // It says which rules it ran: every rule, the table-state ones included.
    let rules = lines[lines.len() - 1];
    assert!(rules.starts_with("rules checked: "), "{rules}");
    for rule in paimon_wire::coordinator::Rule::ALL {
        assert!(
            rules.contains(rule.name()),
            "{} missing: {rules}",
            rule.name()
        );
    }
    assert!(rules.contains("against the table's state: "), "{rules}");

    // validate runs the table-state rules as commit does (issue 25): once the payloads are
    // committed, validating them again refuses them as already live, as a rerun of commit
    // under a new identifier would.
    success(&run(&commit_args(&w, "1", &w.payload_paths()), None));
    let line = failure(&run(&validate_args(&w, &w.payload_paths()), None), 1);
    assert!(line.contains("already-live"), "{line}");
    let line = failure(&run(&commit_args(&w, "2", &w.payload_paths()), None), 1);
    assert!(line.contains("already-live"), "{line}");

    // A data file name that climbs out of its bucket directory.
    let escape = crafted(&w, "escape.bin", |messages| {
        messages[1].new_files[0].file_name = "../../escape.parquet".into();
    });
    let line = failure(&run(&validate_args(&w, &[&escape]), None), 1);
    assert!(line.contains("escape.bin"), "{line}");
    assert!(line.contains("plain-file-name"), "{line}");
    assert!(line.contains("message 1"), "{line}");

    // A bucket the bucket-unaware table can't have, committed: refused, nothing written.
    let bucket = crafted(&w, "bucket.bin", |messages| messages[0].bucket = 3);
    let line = failure(&run(&commit_args(&w, "3", &[&bucket]), None), 1);
    assert!(line.contains("rule bucket"), "{line}");
    assert_eq!(count_rows(&w.warehouse, TABLE), 100);
}

/// Many payload files are decoded together (two threads), and the answer is the one of
/// decoding them one after the other: one line per file in order, and a refusal naming the
/// first file refused, the files before it listed as valid, nothing committed.
#[test]
fn many_files_decode_together_and_a_refusal_names_the_first_file_refused() {
    let w = written(3, 300, &[]);
    let escape = crafted(&w, "escape.bin", |messages| {
        messages[0].new_files[0].file_name = "../escape.parquet".into();
    });
    let missing = path_in(&w.dir, "missing.bin");
    let (first, second, third) = (&w.payloads[0], &w.payloads[1], &w.payloads[2]);

    let out = run(
        &commit_args(&w, "1", &[first, second, &escape, third, &missing]),
        None,
    );
    let line = failure(&out, 1);
    assert!(line.contains("escape.bin"), "{line}");
    assert!(line.contains("plain-file-name"), "{line}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with(&format!("{first}: valid, serializer version 14")),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with(&format!("{second}: valid, serializer version 14")),
        "{stdout}"
    );
    assert_eq!(count_rows(&w.warehouse, TABLE), 0);

    // A file that cannot be read, after valid ones: its read error is the answer.
    let line = failure(&run(&commit_args(&w, "1", &[first, &missing]), None), 1);
    assert!(
        line.contains("cannot read") && line.contains("missing.bin"),
        "{line}"
    );
    assert_eq!(count_rows(&w.warehouse, TABLE), 0);

    let stdout = success(&run(&commit_args(&w, "1", &[first, second, third]), None));
    let lines: Vec<&str> = stdout.lines().collect();
    for (line, path) in lines.iter().zip([first, second, third]) {
        assert!(
            line.starts_with(&format!("{path}: valid, serializer version 14, ")),
            "{stdout}"
        );
        assert!(line.contains("100 row(s)"), "{stdout}");
    }
    assert_eq!(count_rows(&w.warehouse, TABLE), 300);
}

#[test]
fn validate_and_commit_refuse_a_payload_over_the_decode_limits() {
    let w = written(1, 100, &[]);
    // The worker wrote 3 partitions: 3 messages, one data file each.
    let mut args = validate_args(&w, &w.payload_paths());
    args.extend(["--max-messages", "3", "--max-files", "3"]);
    success(&run(&args, None));

    let mut args = validate_args(&w, &w.payload_paths());
    args.extend(["--max-files", "2"]);
    let line = failure(&run(&args, None), 1);
    assert!(line.contains("worker-0.bin"), "{line}");
    assert!(
        line.contains("decode limit max_files = 2: it has 3 files"),
        "{line}"
    );

    let size = std::fs::metadata(&w.payloads[0]).unwrap().len();
    let too_small = (size - 1).to_string();
    let mut args = commit_args(&w, "1", &w.payload_paths());
    args.extend(["--max-payload-bytes", &too_small]);
    let line = failure(&run(&args, None), 1);
    assert!(line.contains("max_payload_bytes"), "{line}");
    assert_eq!(count_rows(&w.warehouse, TABLE), 0);
}

#[test]
fn two_payloads_naming_one_file_differently_do_not_merge() {
    let w = written(2, 100, &[]);
    let conflicting = crafted(&w, "conflicting.bin", |messages| {
        messages[0].new_files[0].row_count += 1;
    });
    let line = failure(
        &run(&validate_args(&w, &[&w.payloads[0], &conflicting]), None),
        1,
    );
    assert!(line.contains("merging the payloads"), "{line}");
}

#[test]
fn validate_and_commit_read_envelopes_without_a_version() {
    let w = written(2, 50, &["--envelope", "--version", "7"]);
    for payload in &w.payloads {
        assert!(envelope::is_envelope(&std::fs::read(payload).unwrap()));
    }
    let mut args = vec!["commit", "--warehouse", &w.warehouse, "--table", TABLE];
    args.extend(["--commit-user", USER, "--identifier", "1"]);
    args.extend(w.payloads.iter().map(String::as_str));
    let stdout = success(&run(&args, None));
    assert!(stdout.contains("serializer version 7"), "{stdout}");
    assert!(stdout
        .lines()
        .last()
        .unwrap()
        .starts_with("committed snapshot"));
    assert_eq!(count_rows(&w.warehouse, TABLE), 50);
}

#[test]
fn table_errors_are_one_line() {
    let w = written(1, 10, &[]);
    let missing_table = failure(
        &run(
            &[
                "validate",
                "--warehouse",
                &w.warehouse,
                "--table",
                "demo.nope",
                "--version",
                "14",
                &w.payloads[0],
            ],
            None,
        ),
        1,
    );
    assert!(missing_table.contains("demo.nope"), "{missing_table}");
    let bad_name = failure(
        &run(
            &[
                "validate",
                "--warehouse",
                &w.warehouse,
                "--table",
                "no_dot",
                &w.payloads[0],
            ],
            None,
        ),
        2,
    );
    assert!(bad_name.contains("database.table"), "{bad_name}");
    let raw_without_version = failure(
        &run(
            &[
                "validate",
                "--warehouse",
                &w.warehouse,
                "--table",
                TABLE,
                &w.payloads[0],
            ],
            None,
        ),
        2,
    );
    assert!(
        raw_without_version.contains("--version"),
        "{raw_without_version}"
    );
}

#[test]
fn inspect_shows_typed_partition_values_with_the_table() {
    let w = written(1, 10, &[]);
    let stdout = success(&run(
        &[
            "inspect",
            "--version",
            "14",
            "--format",
            "table",
            "--warehouse",
            &w.warehouse,
            "--table",
            TABLE,
            &w.payloads[0],
        ],
        None,
    ));
    let values: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("partition values"))
        .map(str::trim)
        .collect();
    let mut sorted = values.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        vec![
            "(region='region-0')",
            "(region='region-1')",
            "(region='region-2')"
        ],
        "{stdout}"
    );
}

#[test]
fn inspect_and_convert_detect_envelopes() {
    let dir = tempfile::tempdir().unwrap();
    let raw = serialize_list(&common::messages_for_v7(), SerializerVersion::V11).unwrap();
    let framed = path_in(&dir, "framed.bin");
    std::fs::write(&framed, envelope::wrap(SerializerVersion::V11, &raw)).unwrap();

    // No --version needed; the table header says it was an envelope.
    let table = success(&run(&["inspect", "--format", "table", &framed], None));
    assert!(
        table
            .lines()
            .next()
            .unwrap()
            .contains("envelope, serializer version 11"),
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&success(&run(&["inspect", &framed], None))).unwrap();
    assert_eq!(
        json,
        paimon_wire::dump::messages_to_json(
            &deserialize_list(SerializerVersion::V11, &raw).unwrap()
        )
    );

    // A contradicting --version, a corrupted envelope, a raw payload where one is required.
    let line = failure(&run(&["inspect", "--version", "14", &framed], None), 1);
    assert!(
        line.contains("envelope says serializer version 11"),
        "{line}"
    );
    let mut corrupted = std::fs::read(&framed).unwrap();
    let last = corrupted.len() - 1;
    corrupted[last] ^= 0x40;
    let corrupt = path_in(&dir, "corrupt.bin");
    std::fs::write(&corrupt, &corrupted).unwrap();
    let line = failure(&run(&["inspect", &corrupt], None), 1);
    assert!(line.contains("CRC32C"), "{line}");
    let raw_file = path_in(&dir, "raw.bin");
    std::fs::write(&raw_file, &raw).unwrap();
    let line = failure(
        &run(
            &["inspect", "--envelope", "--version", "11", &raw_file],
            None,
        ),
        1,
    );
    assert!(line.contains("PWIR"), "{line}");

    // convert: envelope in, raw out; raw in, envelope out.
    let out = path_in(&dir, "out.bin");
    success(&run(&["convert", "--to-version", "7", &framed, &out], None));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        serialize_list(&common::messages_for_v7(), SerializerVersion::V7).unwrap()
    );
    success(&run(
        &[
            "convert",
            "--from-version",
            "11",
            "--to-version",
            "12",
            "--wrap",
            &raw_file,
            &out,
        ],
        None,
    ));
    let (version, inner) = {
        let bytes = std::fs::read(&out).unwrap();
        let (v, p) = envelope::unwrap(&bytes).unwrap();
        (v, p.to_vec())
    };
    assert_eq!(version, SerializerVersion::V12);
    assert_eq!(
        inner,
        serialize_list(&common::messages_for_v7(), SerializerVersion::V12).unwrap()
    );
}

#[test]
fn commit_refuses_deletes_unless_allowed_and_refuses_files_already_committed() {
    let w = written(2, 200, &[]);
    let first = w.payloads[0].as_str();
    success(&run(&commit_args(&w, "1", &[first]), None));
    assert_eq!(count_rows(&w.warehouse, TABLE), 100);

    // Worker 1's files, plus messages deleting worker 0's (committed) files.
    let deleting = {
        let read = |path: &str| {
            deserialize_list(SerializerVersion::V14, &std::fs::read(path).unwrap()).unwrap()
        };
        let mut messages = read(&w.payloads[1]);
        for mut committed in read(&w.payloads[0]) {
            committed.deleted_files = std::mem::take(&mut committed.new_files);
            messages.push(committed);
        }
        let path = path_in(&w.dir, "deleting.bin");
        std::fs::write(
            &path,
            serialize_list(&messages, SerializerVersion::V14).unwrap(),
        )
        .unwrap();
        path
    };
    let refused = failure(&run(&commit_args(&w, "2", &[&deleting]), None), 1);
    assert!(refused.contains("rule change-kind broken"), "{refused}");
    assert!(refused.contains("--allow-deletes"), "{refused}");
    assert_eq!(count_rows(&w.warehouse, TABLE), 100);

    // Worker 0's committed files sent again under a new identifier: refused against the
    // table's state.
    let again = crafted(&w, "again.bin", |_| {});
    let refused = failure(&run(&commit_args(&w, "2", &[&again]), None), 1);
    assert!(refused.contains("rule already-live broken"), "{refused}");
    assert_eq!(count_rows(&w.warehouse, TABLE), 100);

    // With --allow-deletes the deletion commits: worker 0's rows go, worker 1's arrive.
    let mut args = commit_args(&w, "2", &[&deleting]);
    args.push("--allow-deletes");
    success(&run(&args, None));
    assert_eq!(count_rows(&w.warehouse, TABLE), 100);
}

/// `split --max-bytes MAX --version 14 INPUT OUT_DIR`.
fn split(max_bytes: u32, input: &str, out_dir: &str) -> std::process::Output {
    let max_bytes = max_bytes.to_string();
    run(
        &[
            "split",
            "--max-bytes",
            &max_bytes,
            "--version",
            "14",
            input,
            out_dir,
        ],
        None,
    )
}

/// `split --frame dpcm` writes each payload as an Apache Doris frame, header within the
/// limit; `commit` takes the set and a framed payload without `--version` (the frames carry
/// it) and refuses a part framed at another version than the set's.
#[test]
fn split_sets_of_dpcm_frames_commit_once() {
    let w = written(2, 300, &[]);
    let set = path_in(&w.dir, "set");
    let out = success(&run(
        &[
            "split",
            "--max-bytes",
            "1024",
            "--frame",
            "dpcm",
            "--version",
            "14",
            &w.payloads[0],
            &set,
        ],
        None,
    ));
    let mut names: Vec<String> = std::fs::read_dir(&set)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(names.len() >= 2, "{out}");
    let mut messages = 0;
    for name in &names {
        let bytes = std::fs::read(Path::new(&set).join(name)).unwrap();
        assert!(bytes.len() <= 1024, "{name}: {} bytes", bytes.len());
        let (version, body) = paimon_wire::dpcm::unframe(&bytes).unwrap();
        assert_eq!(version, SerializerVersion::V14, "{name}");
        messages += deserialize_list(version, body).unwrap().len();
    }
    let whole = deserialize_list(
        SerializerVersion::V14,
        &std::fs::read(&w.payloads[0]).unwrap(),
    )
    .unwrap();
    assert_eq!(messages, whole.len());

    // Worker 1's payload as its own frame.
    let framed = path_in(&w.dir, "worker-1.dpcm");
    success(&run(
        &[
            "convert",
            "--from-version",
            "14",
            "--to-version",
            "14",
            "--frame",
            "dpcm",
            &w.payloads[1],
            &framed,
        ],
        None,
    ));

    // A part framed at version 13 in a set of version 14 frames is refused by its offset.
    let mixed = path_in(&w.dir, "mixed");
    std::fs::create_dir(&mixed).unwrap();
    for name in &names {
        std::fs::copy(Path::new(&set).join(name), Path::new(&mixed).join(name)).unwrap();
    }
    let first_part = Path::new(&mixed).join(&names[0]);
    let older = path_in(&w.dir, "older.dpcm");
    success(&run(
        &[
            "convert",
            "--to-version",
            "13",
            "--frame",
            "dpcm",
            first_part.to_str().unwrap(),
            &older,
        ],
        None,
    ));
    std::fs::copy(&older, &first_part).unwrap();
    let line = failure(&run(&commit_args(&w, "1", &[&mixed, &framed]), None), 1);
    assert!(
        line.contains("serializer version 13 at offset 4, but the payload was sent as version 14"),
        "{line}"
    );
    assert_eq!(count_rows(&w.warehouse, TABLE), 0);

    // Without --version: the frames carry it.
    let commit = |identifier: &str| {
        let mut args = vec!["commit", "--warehouse", &w.warehouse, "--table", TABLE];
        args.extend([
            "--commit-user",
            USER,
            "--identifier",
            identifier,
            &set,
            &framed,
        ]);
        run(&args, None)
    };
    success(&commit("1"));
    assert_eq!(count_rows(&w.warehouse, TABLE), 300);
    let again = success(&commit("1"));
    assert!(again.contains("already committed"), "{again}");
    assert_eq!(count_rows(&w.warehouse, TABLE), 300);
}

/// `split` writes `part-<index>-of-<count>.bin` files within the limit; `validate` and
/// `commit` take the directory as one worker (refusing it with a payload missing), and a
/// rerun commits nothing.
#[test]
fn split_sets_commit_once_and_only_whole() {
    let w = written(2, 300, &[]);
    let set = path_in(&w.dir, "set");
    let out = success(&split(1024, &w.payloads[0], &set));
    let mut names: Vec<String> = std::fs::read_dir(&set)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let count = names.len();
    assert!(count >= 2, "{out}");
    assert!(
        out.contains(&format!("send each with its index and the count {count}")),
        "{out}"
    );
    let whole = deserialize_list(
        SerializerVersion::V14,
        &std::fs::read(&w.payloads[0]).unwrap(),
    )
    .unwrap();
    let mut messages = 0;
    for (index, name) in names.iter().enumerate() {
        assert_eq!(name, &format!("part-{index:05}-of-{count:05}.bin"));
        let bytes = std::fs::read(Path::new(&set).join(name)).unwrap();
        assert!(bytes.len() <= 1024, "{name}: {} bytes", bytes.len());
        messages += deserialize_list(SerializerVersion::V14, &bytes)
            .unwrap()
            .len();
    }
    assert_eq!(messages, whole.len());

    // A second split into the same directory is refused.
    let line = failure(&split(1024, &w.payloads[0], &set), 1);
    assert!(line.contains("already holds a split set"), "{line}");

    // Without payload 1 the set is refused, nothing committed.
    let gap = path_in(&w.dir, "gap");
    std::fs::create_dir(&gap).unwrap();
    for name in names.iter().filter(|n| !n.starts_with("part-00001-")) {
        std::fs::copy(Path::new(&set).join(name), Path::new(&gap).join(name)).unwrap();
    }
    let line = failure(
        &run(&commit_args(&w, "1", &[&gap, &w.payloads[1]]), None),
        1,
    );
    assert!(line.contains("payloads are missing (index 1)"), "{line}");
    assert_eq!(count_rows(&w.warehouse, TABLE), 0);

    let validated = success(&run(&validate_args(&w, &[&set, &w.payloads[1]]), None));
    assert!(validated.contains("valid split set"), "{validated}");
    success(&run(&commit_args(&w, "1", &[&set, &w.payloads[1]]), None));
    assert_eq!(count_rows(&w.warehouse, TABLE), 300);
    let again = success(&run(&commit_args(&w, "1", &[&set, &w.payloads[1]]), None));
    assert!(again.contains("already committed"), "{again}");
    assert_eq!(count_rows(&w.warehouse, TABLE), 300);
}

#[test]
fn split_refuses_a_limit_one_file_does_not_fit() {
    let w = written(1, 50, &[]);
    let set = path_in(&w.dir, "set");
    let line = failure(&split(256, &w.payloads[0], &set), 1);
    assert!(line.contains("a payload holding only data file"), "{line}");
    assert!(!Path::new(&set).exists() || std::fs::read_dir(&set).unwrap().next().is_none());
}
