//! The default build's dependencies stay lean (issue 43): `cargo tree` of the CLI with its
//! default features must not contain a crate that only an opt-in feature needs, and its crate
//! count stays under a ceiling, so a dependency that slips back into the default build (and
//! into every newcomer's first compile, every CI run and the C library) fails here, naming
//! the crate and what brought it in.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Crates the default build must not contain, each with the feature that is meant to bring it
/// in (README, "Prerequisites and cost", has what each costs to compile).
const OPT_IN_ONLY: &[(&str, &str)] = &[
    ("orc-rust", "orc"),
    // The whole `arrow` crate (with arrow-csv and chrono-tz) comes only through orc-rust; the
    // default build uses the arrow-* crates it needs.
    ("arrow", "orc"),
    ("arrow-csv", "orc"),
    ("chrono-tz", "orc"),
    ("prost", "orc"),
    ("opendal-service-oss", "object-stores"),
    ("opendal-service-gcs", "object-stores"),
    ("opendal-service-azdls", "object-stores"),
    ("opendal-service-cos", "object-stores"),
    ("opendal-service-obs", "object-stores"),
    ("reqsign-google", "object-stores"),
    ("rsa", "object-stores"),
    ("opendal-service-hdfs-native", "storage-hdfs"),
    // A test-only crate of the paimon crate: a dev-dependency since vendor patch 29.
    ("pretty_assertions", "(none: tests only)"),
];

/// Crates the default build compiles once: two versions of one of these doubles a large
/// compile (reqwest 0.12 beside 0.13 did until vendor patch 29).
const ONE_VERSION_ONLY: &[&str] = &[
    "reqwest",
    "hyper",
    "hyper-util",
    "tokio",
    "arrow-array",
    "parquet",
];

/// The most crates (distinct name and version, normal dependencies) the default CLI build may
/// have. 308 when this test was written (370 before the diet); raise it only with a reason in
/// the commit, after looking at what `cargo tree -p paimon-wire-cli -e normal` added.
const MAX_DEFAULT_CRATES: usize = 320;

fn default_cli_tree() -> String {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .current_dir(&workspace)
        .args([
            "tree",
            "-p",
            "paimon-wire-cli",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--locked",
            "--offline",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("cargo tree prints UTF-8")
}

#[test]
fn the_default_cli_build_has_no_opt_in_crate_and_stays_under_its_crate_ceiling() {
    let tree = default_cli_tree();
    let crates: BTreeSet<(&str, &str)> = tree
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some((words.next()?, words.next()?))
        })
        .collect();
    assert!(
        crates.iter().any(|(name, _)| *name == "paimon"),
        "the tree names the paimon crate: {tree}"
    );

    let back: Vec<String> = OPT_IN_ONLY
        .iter()
        .filter(|(name, _)| crates.iter().any(|(present, _)| present == name))
        .map(|(name, feature)| format!("{name} (meant for feature {feature})"))
        .collect();
    assert!(
        back.is_empty(),
        "the default CLI build contains crates only an opt-in feature should bring: {}; \
         `cargo tree -p paimon-wire-cli -e normal -i <crate>` shows what brought each in",
        back.join(", ")
    );
    for name in ONE_VERSION_ONLY {
        let versions: Vec<&str> = crates
            .iter()
            .filter(|(present, _)| present == name)
            .map(|(_, version)| *version)
            .collect();
        assert!(
            versions.len() <= 1,
            "the default CLI build compiles {name} {} times: {versions:?}",
            versions.len()
        );
    }
    assert!(
        crates.len() <= MAX_DEFAULT_CRATES,
        "the default CLI build has {} crates, over the ceiling of {MAX_DEFAULT_CRATES}",
        crates.len()
    );
}
