//! Every setting of `paimon_wire_table_options`, and the log hook, reached from C and shown to
//! change what the library does (tests/c/settings.c).

mod support;

use support::{c_program, expected_rows, run_ok, Layout, Warehouse};

/// The value of the first `key=value` line.
fn value<'a>(stdout: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}=");
    stdout
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {key}= in:\n{stdout}"))
}

/// Runs `settings WHAT WAREHOUSE` on a fresh warehouse holding `db.orders`.
fn run_settings(what: &str) -> (Warehouse, String) {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::AppendPartitioned);
    let stdout = run_ok(&c_program("settings"), &[what, warehouse.path()]);
    println!("settings {what}:\n{stdout}");
    (warehouse, stdout)
}

/// Runs `settings hash WAREHOUSE` on a fresh warehouse holding `db.orders` with dynamic
/// buckets (HASH indexes).
fn run_hash_budget() -> (Warehouse, String) {
    let warehouse = Warehouse::new();
    warehouse.create_orders("orders", Layout::PrimaryKeyDynamicBuckets);
    let stdout = run_ok(&c_program("settings"), &["hash", warehouse.path()]);
    println!("settings hash:\n{stdout}");
    (warehouse, stdout)
}

/// The header's value of an error-code constant.
fn error_code(name: &str) -> String {
    let constant = format!("PAIMON_WIRE_ERROR_CODE_{name}");
    support::header_error_codes()
        .into_iter()
        .find_map(|(n, value)| (n == constant).then_some(value))
        .unwrap_or_else(|| panic!("no {constant}"))
}

#[test]
fn a_decode_limit_below_the_payload_size_refuses_it_with_limit_exceeded() {
    let (_warehouse, stdout) = run_settings("limit");
    let payload_bytes: usize = value(&stdout, "payload_bytes").parse().unwrap();
    assert!(payload_bytes > 16, "{stdout}");
    assert_eq!(
        value(&stdout, "limited_code"),
        error_code("LIMIT_EXCEEDED"),
        "{stdout}"
    );
    let message = value(&stdout, "limited_message");
    assert!(message.contains("16"), "{message}");
    assert!(message.contains(&payload_bytes.to_string()), "{message}");
    // The same payload passes the default limits.
    assert_eq!(value(&stdout, "default_code"), "0", "{stdout}");
}

#[test]
fn runtime_threads_are_started_and_named_with_the_prefix() {
    let (_warehouse, stdout) = run_settings("threads");
    assert_eq!(
        value(&stdout, "zero_blocking_code"),
        error_code("INVALID_ARGUMENT")
    );
    assert_eq!(value(&stdout, "named_before_open"), "0", "{stdout}");
    // Two worker threads at least (plus blocking-pool threads, at most 3, for file I/O).
    let named: usize = value(&stdout, "named_while_open").parse().unwrap();
    assert!((2..=5).contains(&named), "{stdout}");
}

#[test]
fn the_log_callback_receives_the_librarys_and_the_paimon_crates_records() {
    let (_warehouse, stdout) = run_settings("log");
    assert_eq!(
        value(&stdout, "bad_level_code"),
        error_code("INVALID_ARGUMENT")
    );
    let records: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("record "))
        .collect();
    // Level 4 is DEBUG, 2 WARN.
    assert!(
        records
            .iter()
            .any(|r| r.starts_with("record level=4 target=paimon_wire ")
                && r.contains("opened table db.orders")),
        "{stdout}"
    );
    assert!(
        records
            .iter()
            .any(|r| r.starts_with("record level=2 target=paimon::") && r.contains("User-Agent")),
        "{stdout}"
    );
    assert_eq!(value(&stdout, "s3_open_failed"), "1");
    // The S3 secret key given to the open never reaches the callback (the request signer
    // logs it at DEBUG; only the paimon crate's and this library's DEBUG records pass).
    assert!(!stdout.contains("s3cr3t-value"), "{stdout}");
    for record in &records {
        let target = record.split("target=").nth(1).unwrap_or("");
        assert!(
            record.starts_with("record level=1")
                || record.starts_with("record level=2")
                || record.starts_with("record level=3")
                || target.starts_with("paimon"),
            "{record}"
        );
    }
    assert!(stdout.contains("records_after_unregister=0"), "{stdout}");
}

#[test]
fn a_table_option_override_changes_the_written_file_format() {
    let (warehouse, stdout) = run_settings("format");
    assert_eq!(
        value(&stdout, "empty_key_code"),
        error_code("INVALID_ARGUMENT")
    );
    assert_eq!(value(&stdout, "avro_code"), "0", "{stdout}");
    let files = warehouse.data_files("orders");
    assert!(!files.is_empty());
    for file in &files {
        assert_eq!(file.extension().unwrap(), "avro", "{}", file.display());
    }
    // The table's own option is unchanged: the rows read back through it.
    assert_eq!(
        warehouse.rows("orders"),
        expected_rows(0, 10, &["2024-01-01", "2024-01-02"])
    );
    // ORC only with the `orc` feature: without it, the override is refused at open, naming
    // the option and the feature, before any file is written.
    if cfg!(feature = "orc") {
        assert_eq!(value(&stdout, "orc_open_code"), "0", "{stdout}");
    } else {
        assert_eq!(
            value(&stdout, "orc_open_code"),
            error_code("UNSUPPORTED"),
            "{stdout}"
        );
        let message = value(&stdout, "orc_open_message");
        assert!(message.contains("file.format"), "{message}");
        assert!(message.contains("cargo feature `orc`"), "{message}");
    }
}

#[test]
fn turning_arrow_validation_off_skips_the_full_check() {
    let (_warehouse, stdout) = run_settings("validation");
    assert_eq!(
        value(&stdout, "validated_code"),
        error_code("ARROW"),
        "{stdout}"
    );
    assert!(
        value(&stdout, "validated_message").contains("UTF"),
        "{stdout}"
    );
    assert_eq!(value(&stdout, "unvalidated_code"), "0", "{stdout}");
}

#[test]
fn a_hash_index_budget_below_a_commits_hash_index_checks_refuses_it_before_publishing() {
    let (warehouse, stdout) = run_hash_budget();
    assert_eq!(
        value(&stdout, "default_budget"),
        paimon_wire_core::coordinator::DEFAULT_HASH_INDEX_BUDGET.to_string()
    );
    assert_eq!(
        value(&stdout, "zero_budget_code"),
        error_code("INVALID_ARGUMENT"),
        "{stdout}"
    );
    assert!(
        value(&stdout, "zero_budget_message").contains("`bytes` is 0"),
        "{stdout}"
    );
    // 1 KiB: the first commit and, with a live index to check against, the next are refused
    // by rule `bounds`, naming the budget.
    for label in ["tiny", "tiny_again"] {
        assert_eq!(
            value(&stdout, &format!("{label}_code")),
            error_code("VALIDATION_FAILED"),
            "{stdout}"
        );
        let message = value(&stdout, &format!("{label}_message"));
        assert!(message.contains("rule bounds broken"), "{message}");
        assert!(
            message.contains("above the HASH index budget of 1024 bytes"),
            "{message}"
        );
    }
    // The default budget commits the payload the tiny one refused, a budget of 2 MiB the next.
    assert_eq!(value(&stdout, "default_code"), "0", "{stdout}");
    assert_eq!(value(&stdout, "default_snapshot"), "1", "{stdout}");
    assert_eq!(value(&stdout, "roomy_code"), "0", "{stdout}");
    assert_eq!(value(&stdout, "roomy_snapshot"), "2", "{stdout}");
    // Nothing of the refused commits was published: two snapshots, the two committed
    // payloads' rows.
    assert_eq!(warehouse.snapshots("orders").len(), 2);
    assert_eq!(
        warehouse.rows("orders"),
        expected_rows(0, 20, &["2024-01-01", "2024-01-02"])
    );
}
