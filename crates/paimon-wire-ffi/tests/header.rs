//! The checked-in C header is what cbindgen generates from the crate today.

use std::path::Path;

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
