//! The README's Rust example is the marked part of `examples/readme.rs`, word for word, so the
//! code the README shows compiles and runs (`cargo test` runs the example's own test, which
//! runs its `main`).

use std::path::Path;

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
}

#[test]
fn the_readme_shows_the_marked_part_of_the_example() {
    let example =
        std::fs::read_to_string(repository().join("crates/paimon-wire/examples/readme.rs"))
            .unwrap();
    let marked = example
        .split_once("// README begin\n")
        .and_then(|(_, rest)| rest.split_once("// README end\n"))
        .map(|(marked, _)| marked)
        .expect("examples/readme.rs has README begin/end markers");
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap();
    let shown = readme
        .split_once("## Rust\n")
        .and_then(|(_, rest)| rest.split_once("```rust\n"))
        .and_then(|(_, rest)| rest.split_once("```\n"))
        .map(|(block, _)| block)
        .expect("README.md has a ```rust block under ## Rust");
    assert_eq!(
        shown, marked,
        "README.md's Rust example differs from the marked part of examples/readme.rs: copy it over"
    );
}
