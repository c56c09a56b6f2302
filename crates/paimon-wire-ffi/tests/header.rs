//! The checked-in C header is what cbindgen generates from the crate today, and the README's C
//! example compiles against it: its worker half and its coordinator half, each the body of a
//! function, with what the README leaves to the engine (`CHECK`, `send_to_coordinator`, the
//! Arrow structs, the received payloads) declared around them, built with
//! `cc -fsyntax-only -Wall -Wextra -Werror`. A renamed function, a changed argument list or a
//! result field that moved fails here.

use std::path::Path;
use std::process::Command;

#[test]
fn checked_in_header_matches_the_rust_source() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml is readable");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);

    let header_path = crate_dir.join("include/paimon_wire.h");
    let checked_in = std::fs::read(&header_path).unwrap_or_default();
    if generated == checked_in {
        return;
    }
    if std::env::var_os("PAIMON_WIRE_BLESS").is_some() {
        std::fs::write(&header_path, &generated).expect("header is writable");
        return;
    }
    panic!(
        "{} is out of date with the Rust source; regenerate it with\n  \
         PAIMON_WIRE_BLESS=1 cargo test -p paimon-wire-ffi --test header\nand commit it",
        header_path.display()
    );
}

/// The ```c block under `## C` in the repository's README.md.
fn readme_c_example() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    readme
        .split_once("\n## C\n")
        .and_then(|(_, rest)| rest.split_once("```c\n"))
        .and_then(|(_, rest)| rest.split_once("```\n"))
        .map(|(block, _)| block.to_string())
        .expect("README.md has a ```c block under ## C")
}

#[test]
fn the_readme_c_example_compiles_against_the_header() {
    let example = readme_c_example();
    let (worker, coordinator) = example
        .split_once("/* coordinator */")
        .expect("the example has a worker part, then a /* coordinator */ part");
    let program = format!(
        r#"#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "paimon_wire.h"
#define CHECK(error) ((void)(error))
enum {{ N = 2 }};
static void send_to_coordinator(const uint8_t *data, size_t len, int32_t version) {{
  (void)data; (void)len; (void)version;
}}
void worker(struct ArrowArray array, struct ArrowSchema schema) {{
{worker}
}}
void coordinator(const uint8_t *const *data, const size_t *len, const int32_t *version) {{
{coordinator}
}}
"#
    );
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("readme_example.c");
    std::fs::write(&source, program).unwrap();
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let output = Command::new(&compiler)
        .args([
            "-std=c11",
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-I",
        ])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("include"))
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        output.status.success(),
        "README.md's C example does not compile against paimon_wire.h:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
