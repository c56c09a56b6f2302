//! The single-process C programs under valgrind memcheck: `bad_input` (every kind of bad
//! input through the C API), `lifecycle` (write, prepare, serialize, deserialize, merge,
//! commit once, abort, discard), `split`, `deserialize_all` and `compaction`. Zero invalid accesses and zero lost bytes (see
//! `support::memcheck`). The multi-process programs of tests/distributed_write.rs run under
//! valgrind in the append-table test.

mod support;

use support::{c_program, expected_rows, memcheck, Layout, Warehouse};

#[test]
fn bad_input_through_the_c_api_gives_the_documented_errors_without_leaks() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    warehouse.create_orders("other", Layout::AppendUnpartitionedBuckets);
    warehouse.create_orders("postponed", Layout::PostponePrimaryKey);
    let stdout = memcheck(&c_program("bad_input"), &[warehouse.path()]);
    println!("{stdout}");
    assert!(stdout.contains(", 0 failed"), "{stdout}");
    // Nothing of it was committed.
    assert!(warehouse.snapshots("orders").is_empty());
}

#[test]
fn lifecycle_commits_once_and_abort_and_discard_leave_no_files() {
    let warehouse = Warehouse::new();
    // The program creates its table (paimon_wire_table_create).
    let stdout = memcheck(&c_program("lifecycle"), &[warehouse.path()]);

    // The table it created from the batch's Arrow schema is the one the paimon crate
    // creates from the same columns.
    warehouse.create_orders("expected", Layout::AppendPartitioned);
    let (created, expected) = (warehouse.table("orders"), warehouse.table("expected"));
    assert_eq!(created.schema().fields(), expected.schema().fields());
    assert_eq!(created.schema().partition_keys(), ["dt"]);
    assert!(created.schema().primary_keys().is_empty());

    let partitions = ["2024-01-01", "2024-01-02", "2024-01-03"];
    assert_eq!(warehouse.rows("orders"), expected_rows(0, 100, &partitions));
    assert_eq!(
        warehouse.snapshots("orders"),
        vec![(1, "life".to_string(), 1)]
    );
    // Only the committed files remain: the aborted and the discarded writes left none.
    let committed: usize = stdout
        .split_whitespace()
        .find_map(|field| field.strip_prefix("data_files="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no data_files= in {stdout}"));
    assert!(committed >= 3, "{stdout}");
    assert_eq!(warehouse.data_files("orders").len(), committed, "{stdout}");
}

/// `split`: a worker's messages as payloads of at most 1 KiB through the C API; a set with a
/// payload missing and limits that cannot hold a file refused with their codes; the set
/// reversed, with a payload twice, committed once — under memcheck.
#[test]
fn split_payloads_through_the_c_api_commit_every_row_once_without_leaks() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    let stdout = memcheck(&c_program("split"), &[warehouse.path()]);
    println!("{stdout}");
    for expected in [
        "ok INVALID_ARGUMENT: ",
        "ok LIMIT_EXCEEDED: ",
        "ok SPLIT_SET_INCOMPLETE: ",
        "committed snapshot 1",
    ] {
        assert!(stdout.contains(expected), "{expected:?} in {stdout}");
    }
    let payloads: usize = stdout
        .split_whitespace()
        .find_map(|field| field.strip_prefix("payloads="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no payloads= in {stdout}"));
    assert!(payloads >= 2, "{stdout}");
    let partitions = ["2024-01-01", "2024-01-02"];
    assert_eq!(warehouse.rows("orders"), expected_rows(0, 200, &partitions));
    assert_eq!(warehouse.snapshots("orders").len(), 1);
}

/// `deserialize_all`: four workers' payloads (one at serializer version 12, one DPCM-framed)
/// decoded and merged in one call; a payload cut short and a version no release wrote refused
/// with their codes and the payload named, nothing committed; then committed once — under
/// memcheck.
#[test]
fn many_payloads_decoded_in_one_call_commit_every_row_once_without_leaks() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    let stdout = memcheck(&c_program("deserialize_all"), &[warehouse.path()]);
    println!("{stdout}");
    for expected in [
        "ok MALFORMED_PAYLOAD: payload 2 (counting from 0 in the order given): ",
        "ok UNSUPPORTED_VERSION: payloads[3].version: ",
        "rows=200",
        "committed snapshot 1",
    ] {
        assert!(stdout.contains(expected), "{expected:?} in {stdout}");
    }
    let partitions = ["2024-01-01", "2024-01-02"];
    assert_eq!(warehouse.rows("orders"), expected_rows(0, 200, &partitions));
    assert_eq!(
        warehouse.snapshots("orders"),
        vec![(1, "all".to_string(), 1)]
    );
}

/// `compaction`: six jobs' files planned, run and committed as one verified compaction through
/// the C API, a second plan empty, bytes that are no task refused — under memcheck. Every row
/// is there once and each partition is one file.
#[test]
fn a_compaction_through_the_c_api_commits_once_without_leaks() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    let stdout = memcheck(&c_program("compaction"), &[warehouse.path()]);
    println!("{stdout}");
    for expected in [
        "tasks=2",
        "compacted snapshot 7",
        "second plan: 0 task(s)",
        "ok INVALID_ARGUMENT: not a compaction task",
    ] {
        assert!(stdout.contains(expected), "{expected:?} in {stdout}");
    }
    let partitions = ["2024-01-01", "2024-01-02"];
    let mut expected = Vec::new();
    for _ in 0..6 {
        expected.extend(expected_rows(0, 20, &partitions));
    }
    expected.sort();
    let mut rows = warehouse.rows("orders");
    rows.sort();
    assert_eq!(rows, expected);
    assert_eq!(warehouse.snapshots("orders").len(), 7);
}
