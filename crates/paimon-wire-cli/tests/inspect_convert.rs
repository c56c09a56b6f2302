//! `paimon-wire inspect` and `convert` on payloads built here, and every way a payload or a
//! command line can be wrong.

mod common;

use common::{failure, messages_for_v7, path_in, run, succeeded, success};
use paimon_wire::dump::messages_to_json;
use paimon_wire::{deserialize_list, serialize_list, SerializerVersion};

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = path_in(dir, name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn inspect_json_is_the_core_dump_at_every_writable_version() {
    let dir = tempfile::tempdir().unwrap();
    let messages = messages_for_v7();
    for version in SerializerVersion::WRITABLE
        .into_iter()
        .filter(|v| v.as_i32() >= 7)
    {
        let payload = serialize_list(&messages, version).unwrap();
        let file = write(&dir, &format!("v{version}.bin"), &payload);
        let stdout = success(&run(
            &["inspect", "--version", &version.to_string(), &file],
            None,
        ));
        let printed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let expected = messages_to_json(&deserialize_list(version, &payload).unwrap());
        assert_eq!(printed, expected, "version {version}");
        assert_eq!(printed.as_array().unwrap().len(), 2);
    }
}

#[test]
fn inspect_reads_stdin() {
    let payload = serialize_list(&messages_for_v7(), SerializerVersion::V14).unwrap();
    let stdout = success(&run(&["inspect", "--version", "14", "-"], Some(&payload)));
    let printed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed, messages_to_json(&messages_for_v7()));
}

#[test]
fn inspect_table_summarizes_each_message() {
    let payload = serialize_list(&messages_for_v7(), SerializerVersion::V7).unwrap();
    let stdout = success(&run(
        &["inspect", "--version", "7", "--format", "table", "-"],
        Some(&payload),
    ));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "stdin: serializer version 7, {} bytes, 2 messages",
            payload.len()
        )
    );
    let field = |message: usize, name: &str| -> Vec<String> {
        let start = lines
            .iter()
            .position(|l| *l == format!("message {message}"))
            .unwrap();
        let line = lines[start..]
            .iter()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {stdout}"));
        line.split_whitespace().skip(1).map(String::from).collect()
    };
    let messages = messages_for_v7();
    assert_eq!(
        field(0, "partition"),
        vec![paimon_wire::dump::hex(&messages[0].partition)]
    );
    assert_eq!(
        field(0, "partition values").join(" "),
        "values untyped ('2024-01-01', 3)"
    );
    assert_eq!(
        field(1, "partition values").join(" "),
        "values untyped ('a-longer-partition-value', -2)"
    );
    assert_eq!(field(0, "bucket"), vec!["1"]);
    assert_eq!(field(0, "total_buckets"), vec!["4"]);
    assert_eq!(field(0, "check_from_snapshot"), vec!["-"]);
    // files, bytes, rows
    assert_eq!(field(0, "new_files"), vec!["2", "1234", "15"]);
    assert_eq!(field(0, "new_index_files"), vec!["1", "77", "15"]);
    assert_eq!(field(0, "compact_before"), vec!["0", "0", "0"]);
    assert_eq!(field(1, "new_files"), vec!["1", "42", "1"]);
    assert_eq!(field(1, "compact_before"), vec!["1", "500", "8"]);
}

#[test]
fn convert_round_trips_between_versions() {
    let dir = tempfile::tempdir().unwrap();
    let messages = messages_for_v7();
    let v14 = serialize_list(&messages, SerializerVersion::V14).unwrap();
    let input = write(&dir, "in.bin", &v14);
    let mut previous = input.clone();
    let mut previous_version = 14;
    // Down through every release version that carries these messages, then back to 14.
    for to in [13, 12, 11, 10, 7, 14] {
        let out = path_in(&dir, &format!("v{to}.bin"));
        success(&run(
            &[
                "convert",
                "--from-version",
                &previous_version.to_string(),
                "--to-version",
                &to.to_string(),
                &previous,
                &out,
            ],
            None,
        ));
        let version = SerializerVersion::try_from(to).unwrap();
        let converted = std::fs::read(&out).unwrap();
        assert_eq!(
            converted,
            serialize_list(&messages, version).unwrap(),
            "version {to}"
        );
        previous = out;
        previous_version = to;
    }
    assert_eq!(std::fs::read(&previous).unwrap(), v14);
}

#[test]
fn convert_uses_stdin_and_stdout() {
    let v14 = serialize_list(&messages_for_v7(), SerializerVersion::V14).unwrap();
    let out = run(
        &[
            "convert",
            "--from-version",
            "14",
            "--to-version",
            "7",
            "-",
            "-",
        ],
        Some(&v14),
    );
    succeeded(&out);
    assert_eq!(
        out.stdout,
        serialize_list(&messages_for_v7(), SerializerVersion::V7).unwrap()
    );
}

#[test]
fn lossy_downgrade_is_refused_naming_field_and_version_unless_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = messages_for_v7();
    messages[1].check_from_snapshot = Some(12);
    let input = write(
        &dir,
        "in.bin",
        &serialize_list(&messages, SerializerVersion::V14).unwrap(),
    );
    let out = path_in(&dir, "out.bin");
    let args = [
        "convert",
        "--from-version",
        "14",
        "--to-version",
        "13",
        &input,
        &out,
    ];
    let line = failure(&run(&args, None), 1);
    assert!(line.contains("check_from_snapshot"), "{line}");
    assert!(line.contains("version 13"), "{line}");
    assert!(line.contains("--drop"), "{line}");
    assert!(!std::path::Path::new(&out).exists());

    let mut dropping = args.to_vec();
    dropping.extend(["--drop", "check_from_snapshot"]);
    success(&run(&dropping, None));
    let back = deserialize_list(SerializerVersion::V13, &std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(back[1].check_from_snapshot, None);
    messages[1].check_from_snapshot = None;
    assert_eq!(messages_to_json(&back), messages_to_json(&messages));

    // Version 3 can't carry total_buckets either: both must be named to go through.
    let to_v3 = [
        "convert",
        "--from-version",
        "14",
        "--to-version",
        "3",
        "--drop",
        "check_from_snapshot",
        &input,
        &out,
    ];
    let line = failure(&run(&to_v3, None), 1);
    assert!(line.contains("total_buckets"), "{line}");
    assert!(line.contains("version 3"), "{line}");
    let mut both = to_v3.to_vec();
    both.extend(["--drop", "total_buckets"]);
    success(&run(&both, None));
}

#[test]
fn bad_payloads_exit_1_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let v14 = serialize_list(&messages_for_v7(), SerializerVersion::V14).unwrap();
    let truncated = write(&dir, "truncated.bin", &v14[..v14.len() / 2]);
    let garbage = write(&dir, "garbage.bin", b"this is not a payload at all\n");
    let huge_count = write(&dir, "huge.bin", &[0x7f, 0xff, 0xff, 0xff, 0, 0]);
    let empty = write(&dir, "empty.bin", b"");
    let v14_file = write(&dir, "v14.bin", &v14);
    let missing = path_in(&dir, "missing.bin");
    let cases: [(&str, &str, &str); 6] = [
        (&truncated, "14", "truncated"),
        (&garbage, "14", "version 14"),
        (&huge_count, "14", "messages"),
        (&empty, "14", "truncated"),
        (&v14_file, "3", "version 3"),
        (&missing, "14", "cannot read"),
    ];
    for (file, version, expected) in cases {
        for format in ["json", "table"] {
            let line = failure(
                &run(
                    &["inspect", "--version", version, "--format", format, file],
                    None,
                ),
                1,
            );
            assert!(line.contains(expected), "{file}: {line}");
        }
        let line = failure(
            &run(
                &[
                    "convert",
                    "--from-version",
                    version,
                    "--to-version",
                    "14",
                    file,
                    &path_in(&dir, "out.bin"),
                ],
                None,
            ),
            1,
        );
        assert!(line.contains(expected), "{file}: {line}");
    }
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    let payload = serialize_list(&messages_for_v7(), SerializerVersion::V14).unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &[
                "validate",
                "--warehouse",
                "w",
                "--table",
                "db.t",
                "--hash-index-budget",
                "0",
                "-",
            ],
            "--hash-index-budget",
        ),
        (
            &[
                "convert",
                "--to-version",
                "14",
                "--wrap",
                "--frame",
                "dpcm",
                "-",
                "-",
            ],
            "--frame",
        ),
        (
            &["inspect", "--version", "15", "-"],
            "supported versions are 1 to 14",
        ),
        (
            &["inspect", "--version", "x", "-"],
            "not a serializer version",
        ),
        (&["inspect", "-"], "--version"),
        (
            &["inspect", "--version", "14", "--format", "yaml", "-"],
            "yaml",
        ),
        (
            &[
                "convert",
                "--from-version",
                "14",
                "--to-version",
                "7",
                "--drop",
                "nonsense",
                "-",
                "-",
            ],
            "droppable fields are",
        ),
        (&["frobnicate"], "frobnicate"),
    ];
    for (args, expected) in cases {
        let line = failure(&run(args, Some(&payload)), 2);
        assert!(line.contains(expected), "{args:?}: {line}");
    }
}

#[test]
fn writing_an_unwritable_version_is_bad_input() {
    let payload = serialize_list(&messages_for_v7(), SerializerVersion::V14).unwrap();
    let line = failure(
        &run(
            &[
                "convert",
                "--from-version",
                "14",
                "--to-version",
                "9",
                "-",
                "-",
            ],
            Some(&payload),
        ),
        1,
    );
    assert!(line.contains("version 9"), "{line}");
}

#[test]
fn help_and_version_succeed() {
    let help = success(&run(&["--help"], None));
    assert!(
        help.contains("inspect") && help.contains("convert"),
        "{help}"
    );
    let version = success(&run(&["--version"], None));
    assert!(version.starts_with("paimon-wire "), "{version}");
}

#[test]
fn a_reader_that_goes_away_ends_output_quietly() {
    // `paimon-wire inspect ... | head -c 10`: far more output than a pipe buffers, and the
    // reader closes after 10 bytes.
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let messages: Vec<_> = (0..200).flat_map(|_| messages_for_v7()).collect();
    let payload = serialize_list(&messages, SerializerVersion::V14).unwrap();
    let mut child = Command::new(common::BIN)
        .args(["inspect", "--version", "14", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&payload).unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(&first[..2], b"[\n");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Apache Doris's DPCM frames (issue 42): `convert --frame dpcm` writes one, every command
/// that reads a payload detects it by its magic (no `--version` needed), and a bad frame is
/// refused with one line naming what is wrong and where.
#[test]
fn dpcm_frames_are_written_by_convert_and_detected_on_input() {
    let dir = tempfile::tempdir().unwrap();
    let messages = messages_for_v7();
    let v14 = serialize_list(&messages, SerializerVersion::V14).unwrap();
    let input = write(&dir, "in.bin", &v14);
    let framed = path_in(&dir, "framed.dpcm");
    success(&run(
        &[
            "convert",
            "--from-version",
            "14",
            "--to-version",
            "13",
            "--frame",
            "dpcm",
            &input,
            &framed,
        ],
        None,
    ));
    let bytes = std::fs::read(&framed).unwrap();
    let v13 = serialize_list(&messages, SerializerVersion::V13).unwrap();
    // The layout Doris's frontend reads: magic, big-endian version and body length, body.
    let mut expected = b"DPCM".to_vec();
    expected.extend_from_slice(&13i32.to_be_bytes());
    expected.extend_from_slice(&(v13.len() as i32).to_be_bytes());
    expected.extend_from_slice(&v13);
    assert_eq!(bytes, expected);

    // Read back without --version: detected by its magic, at the frame's version.
    let summary = success(&run(&["inspect", "--format", "table", &framed], None));
    assert!(
        summary.contains("DPCM frame, serializer version 13"),
        "{summary}"
    );
    let json = success(&run(&["inspect", &framed], None));
    let printed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(printed, messages_to_json(&messages));
    // Converted back to a raw payload, the frame's body is the payload.
    let raw = path_in(&dir, "raw.bin");
    success(&run(
        &["convert", "--to-version", "13", &framed, &raw],
        None,
    ));
    assert_eq!(std::fs::read(&raw).unwrap(), v13);

    // A --version that disagrees with the frame, and bad frames.
    let line = failure(&run(&["inspect", "--version", "14", &framed], None), 1);
    assert!(
        line.contains("DPCM frame says serializer version 13"),
        "{line}"
    );
    let truncated = write(&dir, "truncated.dpcm", &bytes[..bytes.len() - 1]);
    let trailing = write(&dir, "trailing.dpcm", &[&bytes[..], b"x"].concat());
    let mut negative = bytes.clone();
    negative[8..12].copy_from_slice(&(-5i32).to_be_bytes());
    let negative = write(&dir, "negative.dpcm", &negative);
    let mut unknown = bytes.clone();
    unknown[4..8].copy_from_slice(&99i32.to_be_bytes());
    let unknown = write(&dir, "unknown.dpcm", &unknown);
    for (file, words) in [
        (&truncated, "DPCM frame truncated"),
        (&trailing, "one frame is one payload"),
        (&negative, "declares a body of -5 bytes at offset 8"),
        (&unknown, "serializer version 99 at offset 4"),
    ] {
        let line = failure(&run(&["inspect", file], None), 1);
        assert!(line.contains(words), "{file}: {words:?} not in {line}");
    }
}
