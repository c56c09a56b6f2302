//! Deterministic commit messages for the live matrix: the property tests' strategies
//! (`crates/paimon-wire/tests/common`, one generator for both), driven by a seeded RNG, so
//! a seed names the same messages on every machine.
//!
//! The strategies fill every field a version can carry. Two things they produce that Java
//! does not read back as written are changed here:
//! - a data file without a creation time: Java writes the null bit but reads the field back
//!   without a null check, as epoch 0. Every data file gets one.
//! - statistics with no null counts and arity-0 min and max rows whose bytes are not the
//!   empty row (8 zero bytes): Java reads every such triple as `SimpleStats.EMPTY_STATS`,
//!   whose rows are the empty row. They get the empty row.

use std::collections::BTreeSet;

use paimon_wire::paimon::spec::DataFileMeta;
use paimon_wire::{table_stats, CommitMessage, SerializerVersion};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

#[path = "../../../crates/paimon-wire/tests/common/mod.rs"]
mod strategies;

pub use strategies::Capabilities;

/// A seeded source of values from the property tests' strategies.
pub struct Sampler {
    runner: TestRunner,
}

impl Sampler {
    /// A sampler whose values depend only on `seed`.
    pub fn new(seed: u64) -> Self {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        Self {
            runner: TestRunner::new_with_rng(
                Config::default(),
                TestRng::from_seed(RngAlgorithm::ChaCha, &key),
            ),
        }
    }

    fn sample<S: Strategy>(&mut self, strategy: &S) -> S::Value {
        strategy
            .new_tree(&mut self.runner)
            .expect("the message strategies never reject a value")
            .current()
    }

    /// One message holding only what `version` carries, every data file with a creation
    /// time.
    pub fn message(&mut self, version: SerializerVersion) -> CommitMessage {
        let mut m = self.sample(&strategies::message(version));
        for (i, file) in data_files_mut(&mut m).enumerate() {
            if file.creation_time.is_none() {
                // deterministic, and before 1970 for every other file (Java keeps the sign)
                let millis = 1_700_000_000_000i64 - (i as i64 % 2) * 1_800_000_000_000;
                file.creation_time = chrono::DateTime::from_timestamp_millis(millis);
            }
            canonical_empty_stats(file);
        }
        m
    }

    /// One data file with everything `version` carries.
    pub fn data_file(&mut self, version: SerializerVersion) -> DataFileMeta {
        let mut f = self.sample(&strategies::data_file(Capabilities::of(version)));
        f.creation_time = chrono::DateTime::from_timestamp_millis(1_700_000_000_000);
        canonical_empty_stats(&mut f);
        f
    }
}

/// A serialized empty `BinaryRow`: arity 0, then the 8-byte header, all zero.
const EMPTY_ROW: [u8; 12] = [0; 12];

/// Replaces key and value statistics that Java reads as `EMPTY_STATS` with exactly those.
fn canonical_empty_stats(file: &mut DataFileMeta) {
    let arity_0 = |row: &[u8]| row.len() >= 4 && row[..4] == [0, 0, 0, 0];
    for stats in [&mut file.key_stats, &mut file.value_stats] {
        if arity_0(stats.min_values())
            && arity_0(stats.max_values())
            && stats.null_counts().is_empty()
        {
            *stats = table_stats(EMPTY_ROW.to_vec(), EMPTY_ROW.to_vec(), Vec::new());
        }
    }
}

/// `count` messages of `version` for `seed`.
#[cfg(test)]
pub fn messages(version: SerializerVersion, seed: u64, count: usize) -> Vec<CommitMessage> {
    let mut sampler = Sampler::new(seed);
    (0..count).map(|_| sampler.message(version)).collect()
}

/// At least `min_count` messages of `version` for `seed`, and more, up to `max_count`, until
/// every field `version` carries is filled in one of them (see [`unfilled_fields`]). Returns
/// the fields still unfilled at `max_count` as the error.
pub fn messages_filling_every_field(
    version: SerializerVersion,
    seed: u64,
    min_count: usize,
    max_count: usize,
) -> Result<Vec<CommitMessage>, Vec<String>> {
    let mut sampler = Sampler::new(seed);
    let mut out: Vec<CommitMessage> = (0..min_count).map(|_| sampler.message(version)).collect();
    loop {
        let unfilled = unfilled_fields(version, &paimon_wire::dump::messages_to_json(&out));
        if unfilled.is_empty() {
            return Ok(out);
        }
        if out.len() >= max_count {
            return Err(unfilled);
        }
        out.push(sampler.message(version));
    }
}

fn data_files_mut(m: &mut CommitMessage) -> impl Iterator<Item = &mut DataFileMeta> {
    m.new_files
        .iter_mut()
        .chain(m.deleted_files.iter_mut())
        .chain(m.new_changelog_files.iter_mut())
        .chain(m.compact_before.iter_mut())
        .chain(m.compact_after.iter_mut())
        .chain(m.compact_changelog_files.iter_mut())
}

// ---------------------------------------------------------------------------- coverage

/// The fields of the canonical dump (`paimon_wire::dump`) that `version` cannot carry, as
/// `kind.field` (kinds: `message`, `data_file`, `index_file`, `dv`, `global_index`).
pub fn uncarried_fields(version: SerializerVersion) -> BTreeSet<&'static str> {
    let caps = Capabilities::of(version);
    let gates = [
        (caps.total_buckets, "message.total_buckets"),
        (caps.check_from_snapshot, "message.check_from_snapshot"),
        (caps.deleted_index_files, "message.deleted_index_files"),
        (
            caps.deleted_index_files,
            "message.compact_deleted_index_files",
        ),
        (caps.file_source, "data_file.file_source"),
        (caps.value_stats_cols, "data_file.value_stats_cols"),
        (caps.external_path, "data_file.external_path"),
        (caps.first_row_id, "data_file.first_row_id"),
        (caps.write_cols, "data_file.write_cols"),
        (
            caps.column_max_sequence_numbers,
            "data_file.column_max_sequence_numbers",
        ),
        (caps.deletion_vector_cardinality, "dv.cardinality"),
        (caps.index_external_path, "index_file.external_path"),
        (caps.global_index, "index_file.global_index_meta"),
        (caps.global_index_source_meta, "global_index.source_meta"),
    ];
    gates
        .into_iter()
        .filter(|(carried, _)| !carried)
        .map(|(_, field)| field)
        .collect()
}

/// The fields of a version that no message of `dump` (a canonical dump of messages of that
/// version) fills: every field `version` carries should be non-null, and every list
/// non-empty, in at least one message.
pub fn unfilled_fields(version: SerializerVersion, dump: &Value) -> Vec<String> {
    let mut all = BTreeSet::new();
    let mut filled = BTreeSet::new();
    if let Value::Array(messages) = dump {
        for m in messages {
            walk("message", m, &mut all, &mut filled);
        }
    }
    let uncarried = uncarried_fields(version);
    all.difference(&filled)
        .filter(|f| !uncarried.contains(f.as_str()))
        .cloned()
        .collect()
}

/// The kind of object a field of kind `parent` holds, if it holds objects.
fn child_kind(parent: &str, field: &str) -> Option<&'static str> {
    match (parent, field) {
        ("message", f) if f.ends_with("index_files") => Some("index_file"),
        ("message", f) if f.ends_with("files") || f.starts_with("compact_") => Some("data_file"),
        ("index_file", "deletion_vectors_ranges") => Some("dv"),
        ("index_file", "global_index_meta") => Some("global_index"),
        _ => None,
    }
}

fn walk(kind: &str, object: &Value, all: &mut BTreeSet<String>, filled: &mut BTreeSet<String>) {
    let Value::Object(fields) = object else {
        return;
    };
    for (name, value) in fields {
        let key = format!("{kind}.{name}");
        all.insert(key.clone());
        let is_filled = match value {
            Value::Null => false,
            Value::Array(items) => !items.is_empty(),
            _ => true,
        };
        if is_filled {
            filled.insert(key);
        }
        if let Some(child) = child_kind(kind, name) {
            match value {
                Value::Array(items) => items.iter().for_each(|v| walk(child, v, all, filled)),
                Value::Object(_) => walk(child, value, all, filled),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use paimon_wire::dump::messages_to_json;

    /// The versions Paimon releases on Maven Central write.
    const RELEASE_VERSIONS: [i32; 7] = [2, 3, 6, 7, 10, 11, 12];

    #[test]
    fn a_seed_names_the_same_messages() {
        let v = SerializerVersion::V12;
        let a = messages_to_json(&messages(v, 42, 5));
        assert_eq!(a, messages_to_json(&messages(v, 42, 5)));
        assert_ne!(a, messages_to_json(&messages(v, 43, 5)));
    }

    #[test]
    fn the_matrix_messages_fill_every_field_each_release_version_carries() {
        for v in RELEASE_VERSIONS {
            let version = SerializerVersion::try_from(v).unwrap();
            let msgs = messages_filling_every_field(
                version,
                crate::MATRIX_SEED,
                crate::MATRIX_COUNT,
                crate::MATRIX_MAX_COUNT,
            )
            .unwrap_or_else(|unfilled| panic!("version {v}: {unfilled:?}"));
            assert!(msgs.len() >= crate::MATRIX_COUNT);
            assert_eq!(
                unfilled_fields(version, &messages_to_json(&msgs)),
                Vec::<String>::new()
            );
        }
    }

    #[test]
    fn a_missing_field_is_reported() {
        let version = SerializerVersion::V12;
        let mut msgs = messages(version, crate::MATRIX_SEED, crate::MATRIX_MAX_COUNT);
        for m in &mut msgs {
            m.total_buckets = None;
        }
        assert_eq!(
            unfilled_fields(version, &messages_to_json(&msgs)),
            vec!["message.total_buckets".to_string()]
        );
        // a version that cannot carry it does not expect it
        assert!(uncarried_fields(SerializerVersion::V6).contains("message.total_buckets"));
    }

    #[test]
    fn every_data_file_has_a_creation_time() {
        for m in messages(SerializerVersion::V2, 1, 50) {
            let mut m = m;
            assert!(data_files_mut(&mut m).all(|f| f.creation_time.is_some()));
        }
    }
}
