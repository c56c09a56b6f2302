//! Helpers shared by the CLI tests: running the built binary and building payloads.

#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

use paimon_wire::paimon::spec::{
    BigIntType, BinaryRow, DataFileMeta, DataType, Datum, IndexFileMeta, IntType, VarCharType,
};
use paimon_wire::{table_stats, CommitMessage};

/// The `paimon-wire` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_paimon-wire");

/// Runs `paimon-wire args...` with `stdin` (empty if `None`).
pub fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn paimon-wire");
    {
        let mut input = child.stdin.take().expect("stdin");
        if let Some(bytes) = stdin {
            // A command that fails before reading stdin closes it early; that is not an
            // error of the test.
            match input.write_all(bytes) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    panic!("write stdin: {e}")
                }
                _ => {}
            }
        }
    }
    child.wait_with_output().expect("wait for paimon-wire")
}

/// Asserts `out` succeeded and returns its stdout as text.
pub fn success(out: &Output) -> String {
    succeeded(out);
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

/// Asserts `out` succeeded.
pub fn succeeded(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts `out` failed with `code`, printing exactly one line `paimon-wire: error: ...`
/// on stderr and no panic; returns that line.
pub fn failure(out: &Output, code: i32) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "panic in stderr: {stderr}");
    assert!(
        !stderr.contains("RUST_BACKTRACE"),
        "backtrace hint: {stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {stderr}");
    assert!(
        lines[0].starts_with("paimon-wire: error: "),
        "unexpected prefix: {stderr}"
    );
    lines[0].to_string()
}

/// A serialized partition row `(dt STRING, hr INT)`.
pub fn partition(dt: &str, hr: i32) -> Vec<u8> {
    let dt = Datum::String(dt.to_string());
    let hr = Datum::Int(hr);
    let string = DataType::VarChar(VarCharType::string_type());
    let int = DataType::Int(IntType::new());
    BinaryRow::from_datums(&[(Some(&dt), &string), (Some(&hr), &int)]).to_serialized_bytes()
}

fn long_row(value: i64) -> Vec<u8> {
    let datum = Datum::Long(value);
    let bigint = DataType::BigInt(BigIntType::new());
    BinaryRow::from_datums(&[(Some(&datum), &bigint)]).to_serialized_bytes()
}

fn empty_row() -> Vec<u8> {
    BinaryRow::new(0).to_serialized_bytes()
}

/// A data file with the fields every version carries set, and `size`/`rows` as given.
pub fn data_file(name: &str, size: i64, rows: i64) -> DataFileMeta {
    DataFileMeta {
        file_name: name.into(),
        file_size: size,
        row_count: rows,
        min_key: empty_row(),
        max_key: empty_row(),
        key_stats: table_stats(empty_row(), empty_row(), vec![]),
        value_stats: table_stats(long_row(1), long_row(rows), vec![Some(0)]),
        min_sequence_number: 0,
        max_sequence_number: rows - 1,
        schema_id: 0,
        level: 0,
        extra_files: vec![],
        creation_time: chrono::DateTime::from_timestamp_millis(1_700_000_000_123),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(0),
        value_stats_cols: None,
        external_path: None,
        first_row_id: None,
        write_cols: None,
        column_max_sequence_numbers: None,
    }
}

/// An index file.
pub fn index_file(name: &str, size: i64, rows: i64) -> IndexFileMeta {
    IndexFileMeta {
        index_type: "HASH".into(),
        file_name: name.into(),
        file_size: size,
        row_count: rows,
        deletion_vectors_ranges: None,
        external_path: None,
        global_index_meta: None,
    }
}

/// Two messages that version 7 (Paimon 1.1) and later can carry without loss: two
/// partitions, new files, an index file, `total_buckets` set, `check_from_snapshot` unset.
pub fn messages_for_v7() -> Vec<CommitMessage> {
    let mut first = CommitMessage::new(
        partition("2024-01-01", 3),
        1,
        vec![
            data_file("data-a.parquet", 1000, 10),
            data_file("data-b.parquet", 234, 5),
        ],
    );
    first.total_buckets = Some(4);
    first.new_index_files = vec![index_file("index-a", 77, 15)];
    let mut second = CommitMessage::new(
        partition("a-longer-partition-value", -2),
        0,
        vec![data_file("data-c.parquet", 42, 1)],
    );
    second.total_buckets = Some(4);
    second.compact_before = vec![data_file("data-old.parquet", 500, 8)];
    vec![first, second]
}

/// `name` inside `dir`, as a string for command lines.
pub fn path_in(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

/// Runs `future` to completion on a new single-threaded runtime.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// Every row of `table` (`database.table`) in the warehouse at `warehouse`, and the table
/// itself, read with the paimon crate directly (not through the CLI under test).
pub fn read_table(
    warehouse: &str,
    table: &str,
) -> (
    paimon_wire::paimon::table::Table,
    Vec<arrow_array::RecordBatch>,
) {
    read_table_with_options(warehouse, table, &Default::default())
}

/// [`read_table`] with catalog options (an object store's endpoint and keys, a REST catalog).
pub fn read_table_with_options(
    warehouse: &str,
    table: &str,
    options: &paimon_wire::warehouse::WarehouseOptions,
) -> (
    paimon_wire::paimon::table::Table,
    Vec<arrow_array::RecordBatch>,
) {
    use futures::TryStreamExt;
    block_on(async {
        let table = paimon_wire::coordinator::open_table_with_options(warehouse, table, options)
            .await
            .unwrap();
        let builder = table.new_read_builder();
        let plan = builder.new_scan().plan().await.unwrap();
        let batches = builder
            .new_read()
            .unwrap()
            .to_arrow(plan.splits())
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        (table, batches)
    })
}
