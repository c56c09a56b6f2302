//! libpaimon_wire can be linked into one binary next to apache/paimon-rust's own C binding:
//! every symbol it exports and every name its header declares starts with `paimon_wire_` /
//! `PAIMON_WIRE_`, and none is one of upstream's names (tests/fixtures/upstream-c-symbols.txt,
//! read from upstream's source by scripts/upstream-c-symbols).

mod support;

use std::collections::BTreeSet;
use std::process::Command;

/// Upstream's names of one kind (`fn` or `type`) from the fixture.
fn upstream_names(kind: &str) -> BTreeSet<String> {
    let path = support::crate_dir().join("tests/fixtures/upstream-c-symbols.txt");
    let text = std::fs::read_to_string(&path).expect("fixture is readable");
    let names: BTreeSet<String> = text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| line.split_once(' '))
        .filter(|(k, _)| *k == kind)
        .map(|(_, name)| name.trim().to_string())
        .collect();
    assert!(!names.is_empty(), "no `{kind}` lines in {}", path.display());
    names
}

/// The dynamic symbols `libpaimon_wire.so` defines, as `nm -D --defined-only` lists them.
fn exported_symbols() -> BTreeSet<String> {
    let library = support::shared_library();
    let output = Command::new("nm")
        .args(["-D", "--defined-only", "--format=posix"])
        .arg(&library)
        .output()
        .expect("nm (binutils) is installed");
    assert!(
        output.status.success(),
        "nm failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        // `NAME TYPE VALUE SIZE`; only code and data symbols, not the version nodes.
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let name = fields.next()?;
            let kind = fields.next()?;
            matches!(kind, "T" | "D" | "B" | "R" | "W" | "V" | "i").then(|| name.to_string())
        })
        .collect()
}

/// Names the checked-in header declares at file scope: `(functions, every name)`, every name
/// being the functions, typedef names, enum constants and macros.
fn header_names() -> (BTreeSet<String>, BTreeSet<String>) {
    let header = support::header();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let functions = support::header_functions();
    let mut names = BTreeSet::new();
    for line in header.lines() {
        let line = line.trim();
        if line.starts_with("//") || line.starts_with('*') || line.starts_with("/*") {
            continue;
        }
        let words: Vec<&str> = line
            .split(|c| !is_word(c))
            .filter(|w| !w.is_empty())
            .collect();
        match words.as_slice() {
            ["typedef", "struct" | "enum", name, ..] | ["define", name, ..] => {
                names.insert(name.to_string());
            }
            // An enum constant: `PAIMON_WIRE_..._X = 1,`.
            [name, ..] if name.starts_with("PAIMON") && line.contains('=') => {
                names.insert(name.to_string());
            }
            _ => {}
        }
        // The name closing a typedef: `} name;`.
        if let Some(name) = line
            .strip_prefix("} ")
            .and_then(|rest| rest.strip_suffix(';'))
        {
            names.insert(name.to_string());
        }
    }
    names.extend(functions.iter().cloned());
    (functions, names)
}

/// Prefixes of the C functions Rust dependencies export from the shared library:
/// `crc_fast_` is crc-fast's C API (crc-fast comes with opendal's S3 service).
const DEPENDENCY_EXPORT_PREFIXES: &[&str] = &["crc_fast_"];

#[test]
fn every_exported_symbol_is_prefixed_and_none_is_upstreams() {
    let ours = exported_symbols();
    // The exported C API is exactly the functions the header declares.
    let (declared, _) = header_names();
    let exported_c: BTreeSet<String> = ours
        .iter()
        .filter(|name| name.starts_with("paimon"))
        .cloned()
        .collect();
    assert_eq!(
        exported_c, declared,
        "exported (left) vs declared in the header (right)"
    );
    let unprefixed: Vec<&String> = ours
        .iter()
        .filter(|name| !name.starts_with("paimon_wire_"))
        // C functions a Rust dependency defines, which rustc exports from every cdylib that
        // links it (a linker version script cannot hide them: rustc's own script lists them);
        // they are not part of our API and are not upstream names either (checked below).
        .filter(|name| {
            !DEPENDENCY_EXPORT_PREFIXES
                .iter()
                .any(|p| name.starts_with(p))
        })
        .collect();
    assert!(
        unprefixed.is_empty(),
        "exported without the paimon_wire_ prefix: {unprefixed:?}"
    );
    let upstream = upstream_names("fn");
    let shared: Vec<&String> = ours.intersection(&upstream).collect();
    assert!(shared.is_empty(), "exported by upstream too: {shared:?}");
    let upstream_prefixed: Vec<&String> = upstream
        .iter()
        .filter(|name| name.starts_with("paimon_wire_"))
        .collect();
    assert!(
        upstream_prefixed.is_empty(),
        "upstream uses our prefix: {upstream_prefixed:?}"
    );
}

#[test]
fn every_header_name_is_prefixed_and_none_is_upstreams() {
    let (_, ours) = header_names();
    assert!(ours.contains("paimon_wire_table_open"), "{ours:?}");
    assert!(ours.contains("paimon_wire_error"), "{ours:?}");
    assert!(
        ours.contains("PAIMON_WIRE_ERROR_CODE_NULL_POINTER"),
        "{ours:?}"
    );
    // The Arrow C Data Interface keeps its standard names and guard, shared by every header
    // that declares it; and our own include guard.
    let standard = [
        "ARROW_C_DATA_INTERFACE",
        "ARROW_FLAG_DICTIONARY_ORDERED",
        "ARROW_FLAG_NULLABLE",
        "ARROW_FLAG_MAP_KEYS_SORTED",
        "PAIMON_WIRE_H",
    ];
    let unprefixed: Vec<&String> = ours
        .iter()
        .filter(|name| !standard.contains(&name.as_str()))
        .filter(|name| !name.starts_with("paimon_wire_") && !name.starts_with("PAIMON_WIRE_"))
        .collect();
    assert!(
        unprefixed.is_empty(),
        "declared without the prefix: {unprefixed:?}"
    );
    let upstream: BTreeSet<String> = upstream_names("type")
        .union(&upstream_names("fn"))
        .cloned()
        .collect();
    let shared: Vec<&String> = ours.intersection(&upstream).collect();
    assert!(
        shared.is_empty(),
        "declared by upstream's header too: {shared:?}"
    );
}
