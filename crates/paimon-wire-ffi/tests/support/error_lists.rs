//! The header's per-function error lists, checked against the codes the functions return.
//!
//! Each function's doc comment in `include/paimon_wire.h` names the error codes it can return
//! (`PAIMON_WIRE_ERROR_CODE_...`, and "those of `paimon_wire_...`", "as for `paimon_wire_...`" or
//! "errors as `paimon_wire_...`" for another function's list); NULL_POINTER, WRONG_HANDLE_KIND and INTERNAL are the header's
//! general rules and may come from any function. The C test programs record every error the
//! library returns (tests/c/common.h, from the library's DEBUG record of it); after a program
//! ran, [`check_recorded_errors`] fails naming each function that returned a code its list
//! does not name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{header, header_error_codes};

/// The environment variable the C programs record errors to (tests/c/common.h).
pub const ERROR_LOG_VARIABLE: &str = "PAIMON_WIRE_TEST_ERROR_LOG";

/// The codes any function may return (the header's top comment).
const GENERAL_CODES: [&str; 3] = [
    "PAIMON_WIRE_ERROR_CODE_NULL_POINTER",
    "PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND",
    "PAIMON_WIRE_ERROR_CODE_INTERNAL",
];

/// The name of the function `line` of the header declares, if it declares one: a line
/// `<type> paimon_...(` that is not a comment.
pub fn declared_function(line: &str) -> Option<&str> {
    let line = line.trim_start();
    if line.starts_with("//") || line.starts_with('*') || line.starts_with("/*") {
        return None;
    }
    let before = &line[..line.find('(')?];
    let name_start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(|i| i + 1)?;
    let name = &before[name_start..];
    name.starts_with("paimon_").then_some(name)
}

/// The words of `text` that start with `prefix` and go on with `[A-Za-z0-9_]`.
fn words_after<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.match_indices(prefix)
        .map(|(start, _)| {
            let rest = &text[start..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// Every declared function with the codes its doc comment names (the lists it refers to
/// resolved).
pub fn documented_errors() -> BTreeMap<String, BTreeSet<String>> {
    let header = header();
    let lines: Vec<&str> = header.lines().collect();
    let mut own: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut refers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(name) = declared_function(line) else {
            continue;
        };
        let mut first = index;
        while first > 0 && lines[first - 1].trim_start().starts_with("//") {
            first -= 1;
        }
        let doc = lines[first..index].join(" ").replace("// ", "");
        let codes = words_after(&doc, "PAIMON_WIRE_ERROR_CODE_")
            .into_iter()
            .map(str::to_string)
            .collect();
        let others = ["those of `", "as for `", "errors as `"]
            .iter()
            .flat_map(|phrase| {
                doc.match_indices(phrase)
                    .map(|(at, _)| words_after(&doc[at + phrase.len()..], "paimon_wire_")[0])
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        own.insert(name.to_string(), codes);
        refers.insert(name.to_string(), others);
    }
    let mut documented = own.clone();
    // Lists that refer to lists that refer on: resolve until nothing changes.
    loop {
        let mut changed = false;
        for (name, others) in &refers {
            let inherited: BTreeSet<String> = others
                .iter()
                .flat_map(|other| documented.get(other).cloned().unwrap_or_default())
                .collect();
            let codes = documented
                .get_mut(name)
                .expect("every function has an entry");
            let before = codes.len();
            codes.extend(inherited);
            changed |= codes.len() != before;
        }
        if !changed {
            return documented;
        }
    }
}

/// Fails naming every error recorded in `log` (written by `program`) that the returning
/// function's documented list does not name.
pub fn check_recorded_errors(program: &Path, log: &Path) {
    let Ok(recorded) = std::fs::read_to_string(log) else {
        return; // the program returned no error at all
    };
    let names: BTreeMap<String, String> = header_error_codes()
        .into_iter()
        .map(|(name, value)| (value, name))
        .collect();
    let documented = documented_errors();
    let mut undocumented = BTreeSet::new();
    for line in recorded.lines() {
        let mut words = line.split_whitespace();
        let (Some(function), Some("returned"), Some("error"), Some(value)) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            panic!("{}: an unexpected error record: {line}", program.display());
        };
        let code = names
            .get(value)
            .unwrap_or_else(|| panic!("error code {value} is not in the header: {line}"));
        let listed = documented
            .get(function)
            .unwrap_or_else(|| panic!("{function} is not declared in the header: {line}"));
        if !listed.contains(code) && !GENERAL_CODES.contains(&code.as_str()) {
            undocumented.insert(format!("{function} returned {code}, e.g. {line}"));
        }
    }
    assert!(
        undocumented.is_empty(),
        "{} saw errors that paimon_wire.h does not list for the function returning them \
         (add them to its doc comment):\n{}",
        program.display(),
        undocumented.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_parser_reads_lists_and_references() {
    let documented = documented_errors();
    let open = &documented["paimon_wire_table_open"];
    assert!(
        open.contains("PAIMON_WIRE_ERROR_CODE_TABLE_NOT_FOUND"),
        "{open:?}"
    );
    // "Errors: those of `paimon_wire_table_open`, and ...WRONG_HANDLE_KIND"
    let with_options = &documented["paimon_wire_table_open_with_options"];
    assert!(with_options.is_superset(open), "{with_options:?}");
    assert_eq!(declared_function("// paimon_wire_x(a)"), None);
    assert_eq!(
        declared_function("paimon_wire_error *paimon_wire_error_free(paimon_wire_error *error);"),
        Some("paimon_wire_error_free")
    );
}
