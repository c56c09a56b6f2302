//! The single-process C programs under valgrind memcheck: `bad_input` (every kind of bad
//! input through the C API) and `lifecycle` (write, prepare, serialize, deserialize, merge,
//! commit once, abort, discard). Zero invalid accesses and zero lost bytes. The multi-process
//! programs run without valgrind (tests/distributed_write.rs): they use the same calls.
//!
//! Memory still reachable at exit is allowed (and not counted as an error by valgrind).

mod support;

use std::path::Path;
use std::process::Command;

use support::{c_program, expected_rows, Layout, Warehouse};

/// Runs `program` under `valgrind --leak-check=full --error-exitcode=99` and returns its
/// stdout after checking valgrind found nothing. `tests/valgrind.supp` suppresses one
/// block: Rust's standard library's handle of the calling thread (see the file).
fn memcheck(program: &Path, args: &[&str]) -> String {
    let suppressions = support::crate_dir().join("tests/valgrind.supp");
    let output = Command::new("valgrind")
        .args([
            "--leak-check=full",
            "--error-exitcode=99",
            "--num-callers=50",
        ])
        .arg(format!("--suppressions={}", suppressions.display()))
        .arg(program)
        .args(args)
        .output()
        .expect("valgrind is installed (apt-get install valgrind)");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let report = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.status.success(),
        "{} under valgrind failed with {}:\nstdout:\n{stdout}\nvalgrind:\n{report}",
        program.display(),
        output.status
    );
    assert!(report.contains("ERROR SUMMARY: 0 errors"), "{report}");
    for lost in ["definitely lost", "indirectly lost", "possibly lost"] {
        if let Some(line) = report.lines().find(|line| line.contains(lost)) {
            assert!(
                line.contains(&format!("{lost}: 0 bytes")),
                "{line}\n{report}"
            );
        }
    }
    stdout
}

#[test]
fn bad_input_through_the_c_api_gives_the_documented_errors_without_leaks() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    warehouse.create_orders("other", Layout::AppendUnpartitionedBuckets);
    warehouse.create_orders("postponed", Layout::PostponePrimaryKey);
    let stdout = memcheck(&c_program("bad_input"), &[warehouse.path()]);
    assert!(stdout.contains(", 0 failed"), "{stdout}");
    // Nothing of it was committed.
    assert!(warehouse.snapshots("orders").is_empty());
}

#[test]
fn lifecycle_commits_once_and_abort_and_discard_leave_no_files() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    let stdout = memcheck(&c_program("lifecycle"), &[warehouse.path()]);

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
