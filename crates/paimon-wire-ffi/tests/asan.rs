//! The single-process C programs again, built with AddressSanitizer (and its LeakSanitizer):
//! `bad_input` (every kind of bad input through the C API) and `lifecycle` (write, prepare,
//! serialize, deserialize, merge, commit once, abort, discard). Zero reports.
//!
//! What covers what: valgrind memcheck (tests/valgrind.rs) checks every instruction of the
//! process, the Rust library's included, for invalid reads and writes and lost blocks, but
//! only at the granularity of whole heap blocks and slowly. AddressSanitizer instruments the C
//! side at compile time (it also catches overflows of stack and global buffers, and
//! use-after-return, which memcheck cannot see), and its allocator, which serves the Rust
//! library too, catches double and foreign frees and leaks across the boundary. The Rust code
//! itself runs instrumented under ASan in the fuzz targets (fuzz/, scripts/fuzz-smoke).

mod support;

use support::{asan_run, c_program_asan, expected_rows, Layout, Warehouse};

#[test]
fn bad_input_through_the_c_api_under_address_sanitizer() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    warehouse.create_orders("other", Layout::AppendUnpartitionedBuckets);
    warehouse.create_orders("postponed", Layout::PostponePrimaryKey);
    let stdout = asan_run(&c_program_asan("bad_input"), &[warehouse.path()]);
    println!("{stdout}");
    assert!(stdout.contains(", 0 failed"), "{stdout}");
    assert!(warehouse.snapshots("orders").is_empty());
}

#[test]
fn lifecycle_under_address_sanitizer() {
    let warehouse = Warehouse::new();
    // The program creates its table (paimon_wire_table_create).
    asan_run(&c_program_asan("lifecycle"), &[warehouse.path()]);
    let partitions = ["2024-01-01", "2024-01-02", "2024-01-03"];
    assert_eq!(warehouse.rows("orders"), expected_rows(0, 100, &partitions));
}
