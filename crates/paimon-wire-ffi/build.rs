//! Gives the shared library its SONAME, `libpaimon_wire.so.<ABI>`, where `<ABI>` is
//! `PAIMON_WIRE_ABI_VERSION` in src/version.rs, the one place the number is written.

use std::path::Path;

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let source = Path::new(&manifest_dir).join("src/version.rs");
    println!("cargo:rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(&source).expect("src/version.rs is readable");
    let abi = abi_version(&text)
        .expect("src/version.rs declares `pub const PAIMON_WIRE_ABI_VERSION: u32 = N;`");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpaimon_wire.so.{abi}");
    }
}

/// The `N` of `pub const PAIMON_WIRE_ABI_VERSION: u32 = N;`.
fn abi_version(text: &str) -> Option<u32> {
    let line = text
        .lines()
        .find(|line| line.starts_with("pub const PAIMON_WIRE_ABI_VERSION: u32 ="))?;
    let value = line.split('=').nth(1)?.trim().trim_end_matches(';').trim();
    value.parse().ok()
}
