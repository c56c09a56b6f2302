//! The header's version macros, what the library reports and the shared library's SONAME
//! agree with the crate version in Cargo.toml and with the ABI version.

mod support;

use std::process::Command;

use support::{c_program, run_ok};

/// The `key=value` fields of the version program's output.
fn field<'a>(stdout: &'a str, key: &str) -> &'a str {
    stdout
        .split_whitespace()
        .find_map(|f| f.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {stdout:?}"))
}

#[test]
fn header_macros_and_library_report_the_cargo_version_and_one_abi() {
    let stdout = run_ok(&c_program("version"), &[]);
    // The crate takes `version.workspace = true`: this is the workspace's version.
    let version = env!("CARGO_PKG_VERSION").to_string();
    assert_eq!(field(&stdout, "header"), version, "{stdout}");
    assert_eq!(field(&stdout, "library"), version, "{stdout}");
    assert_eq!(
        field(&stdout, "library_abi"),
        field(&stdout, "abi"),
        "{stdout}"
    );
}

#[test]
fn the_shared_library_is_named_by_its_abi_version() {
    let stdout = run_ok(&c_program("version"), &[]);
    let abi = field(&stdout, "abi").to_string();
    let output = Command::new("readelf")
        .arg("-d")
        .arg(support::shared_library())
        .output()
        .expect("readelf (binutils) is installed");
    assert!(output.status.success());
    let dynamic = String::from_utf8(output.stdout).unwrap();
    let soname = dynamic
        .lines()
        .find(|line| line.contains("(SONAME)"))
        .unwrap_or_else(|| panic!("no SONAME:\n{dynamic}"));
    assert!(
        soname.contains(&format!("[libpaimon_wire.so.{abi}]")),
        "{soname}"
    );
}
