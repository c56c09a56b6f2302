//! The C++ header `include/paimon_wire.hpp`: C++ programs in `tests/cpp/` built with
//! `c++ -std=c++17 -Wall -Wextra -Werror` against it and the static library. A distributed
//! write with C++ worker processes and a C++ coordinator process; C errors thrown as
//! `paimon_wire::Error` with their codes; and every C function of the header wrapped.

mod support;

use std::collections::BTreeSet;
use std::thread;

use support::{cpp_program, crate_dir, expected_rows, run_ok, Layout, Warehouse};

const PARTITIONS: &[&str] = &["2024-01-01", "2024-01-02", "2024-01-03"];

/// Three C++ worker processes write at once, a C++ coordinator process commits their
/// payloads once; every row reads back once (with the paimon crate) in one snapshot, and a
/// rerun of the coordinator with the same identifier commits nothing.
#[test]
fn cpp_workers_and_cpp_coordinator_commit_every_row_once() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    let worker = cpp_program("worker");
    let partitions = PARTITIONS.join(",");
    let payloads: Vec<String> = thread::scope(|scope| {
        let jobs: Vec<_> = (0..3)
            .map(|w: i64| {
                let out = warehouse.scratch(&format!("cpp-{w}.payload"));
                let (worker, warehouse, partitions) = (&worker, &warehouse, &partitions);
                scope.spawn(move || {
                    let first = (w * 100).to_string();
                    let stdout = run_ok(
                        worker,
                        &[
                            warehouse.path(),
                            "db.orders",
                            "cpp-job",
                            &first,
                            "100",
                            partitions,
                            &out,
                        ],
                    );
                    assert!(stdout.contains("rows=100"), "{stdout}");
                    out
                })
            })
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap()).collect()
    });

    let coordinator = cpp_program("coordinator");
    let args = |id: &'static str| {
        let mut args = vec![warehouse.path(), "db.orders", "cpp-job", id];
        args.extend(payloads.iter().map(String::as_str));
        args
    };
    let outcome = run_ok(&coordinator, &args("1"));
    assert!(outcome.starts_with("committed snapshot=1 "), "{outcome}");
    assert!(outcome.contains("rows=300"), "{outcome}");
    assert_eq!(warehouse.rows("orders"), expected_rows(0, 300, PARTITIONS));
    assert_eq!(
        warehouse.snapshots("orders"),
        vec![(1, "cpp-job".to_string(), 1)]
    );

    let again = run_ok(&coordinator, &args("1"));
    assert!(
        again.starts_with("already-committed snapshot=1 "),
        "{again}"
    );
    assert_eq!(warehouse.snapshots("orders").len(), 1);
}

/// Each C error reaches C++ as `paimon_wire::Error` carrying the C code (the program checks
/// the code of every case and prints one `ok` line per case).
#[test]
fn cpp_errors_are_exceptions_with_the_c_error_code() {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    let stdout = run_ok(&cpp_program("errors"), &[warehouse.path()]);
    let ok_lines = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert!(stdout.contains("failures=0"), "{stdout}");
    assert_eq!(ok_lines, 26, "{stdout}");
    // The twenty-six errors, the ABI check and two checks of Table::create.
    assert!(stdout.contains("checks=29 "), "{stdout}");
    let created = warehouse.table("created");
    assert_eq!(created.schema().primary_keys(), ["dt", "id"]);
    assert_eq!(created.schema().partition_keys(), ["dt"]);
}

/// The identifiers of C++ source `text`, comments left out (`//` to the end of a line, and
/// `/* ... */`).
fn code_identifiers(text: &str) -> BTreeSet<String> {
    let mut code = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let line_comment = rest.find("//");
        let block_comment = rest.find("/*");
        match (line_comment, block_comment) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                code.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |end| &rest[l + end..]);
            }
            (_, Some(b)) => {
                code.push_str(&rest[..b]);
                rest = rest[b..].find("*/").map_or("", |end| &rest[b + end + 2..]);
            }
            _ => {
                code.push_str(rest);
                rest = "";
            }
        }
    }
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|token| !token.is_empty())
        .map(str::to_string)
        .collect()
}

/// Every function the C header declares is called (or, for the free functions, named as an
/// owner's deleter) in the code of the C++ header, so the wrapper keeps up with the C API.
#[test]
fn the_cpp_header_calls_every_function_of_the_c_header() {
    let include = crate_dir().join("include");
    let wrapper = std::fs::read_to_string(include.join("paimon_wire.hpp")).unwrap();
    let functions = support::header_functions();
    // The header declares about thirty functions; a parser that found few is broken.
    assert!(functions.len() >= 25, "{functions:?}");
    let used = code_identifiers(&wrapper);
    let missing: Vec<&String> = functions
        .iter()
        .filter(|name| !used.contains(*name))
        .collect();
    assert!(
        missing.is_empty(),
        "paimon_wire.hpp does not use {missing:?}: wrap them"
    );
}

#[test]
fn comments_do_not_count_as_uses() {
    let used = code_identifiers("a(); // b()\n/* c()\n d() */ e<f>;\n");
    assert_eq!(
        used,
        ["a", "e", "f"].into_iter().map(String::from).collect()
    );
}
