//! Shared pieces of the fuzz targets: how an input picks a serializer version, and real local
//! tables for the targets that go through the coordinator (Rust or C entry points).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use paimon_wire::paimon::catalog::{Catalog, Identifier};
use paimon_wire::paimon::spec::{DataType, IntType, Schema, VarCharType};
use paimon_wire::paimon::table::Table;
use paimon_wire::paimon::{CatalogOptions, FileSystemCatalog, Options};
use paimon_wire::{serialize_list, SerializerVersion};

/// The commit user of every fuzz coordinator.
pub const COMMIT_USER: &str = "fuzz";

/// Splits a fuzz input into a serializer version (from its first byte, so every version 1–14
/// is reachable) and the payload after it. `None` for an empty input.
///
/// Seed files are therefore `[version byte] ++ payload`.
pub fn split_version(data: &[u8]) -> Option<(SerializerVersion, &[u8])> {
    let (&selector, payload) = data.split_first()?;
    Some((version_of(selector), payload))
}

/// The version a selector byte picks: `ALL[selector % 14]`, so byte `v - 1` picks version `v`.
pub fn version_of(selector: u8) -> SerializerVersion {
    let all = SerializerVersion::ALL;
    all[usize::from(selector) % all.len()]
}

/// The selector byte that picks `version` (inverse of [`version_of`]).
pub fn selector_of(version: SerializerVersion) -> u8 {
    (version.as_i32() - 1) as u8
}

/// The tables the coordinator targets bind to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuzzTable {
    /// `db.events`: append table `(id int, pt string, v string)` partitioned by `pt`,
    /// bucket-unaware.
    PartitionedAppend,
    /// `db.keyed`: primary key `(pt, id)`, partitioned by `pt`, 2 fixed buckets.
    FixedBucketPk,
}

impl FuzzTable {
    /// Both tables.
    pub const ALL: [FuzzTable; 2] = [FuzzTable::PartitionedAppend, FuzzTable::FixedBucketPk];

    /// `database.table`.
    pub fn name(self) -> &'static str {
        match self {
            FuzzTable::PartitionedAppend => "db.events",
            FuzzTable::FixedBucketPk => "db.keyed",
        }
    }

    fn schema(self) -> Schema {
        let builder = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("v", DataType::VarChar(VarCharType::string_type()))
            .partition_keys(["pt"]);
        match self {
            FuzzTable::PartitionedAppend => builder,
            FuzzTable::FixedBucketPk => builder.primary_key(["pt", "id"]).option("bucket", "2"),
        }
        .build()
        .expect("fuzz table schema")
    }
}

/// A filesystem warehouse in a temp dir holding every [`FuzzTable`], removed when dropped.
pub struct FuzzWarehouse {
    dir: tempfile::TempDir,
}

impl FuzzWarehouse {
    /// Creates the warehouse and its tables.
    pub async fn create() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("paimon-wire-fuzz-")
            .tempdir()
            .expect("temp dir");
        let warehouse = Self { dir };
        let catalog = warehouse.catalog();
        catalog
            .create_database("db", true, HashMap::new())
            .await
            .expect("create database");
        for table in FuzzTable::ALL {
            let (db, name) = table.name().split_once('.').expect("db.table");
            catalog
                .create_table(&Identifier::new(db, name), table.schema(), false)
                .await
                .expect("create table");
        }
        warehouse
    }

    /// The warehouse path.
    pub fn path(&self) -> &str {
        self.dir.path().to_str().expect("UTF-8 temp dir")
    }

    fn catalog(&self) -> FileSystemCatalog {
        let mut options = Options::new();
        options.set(CatalogOptions::WAREHOUSE, self.path());
        FileSystemCatalog::new(options).expect("catalog")
    }

    /// Opens `table` through the coordinator's own opener.
    pub async fn open(&self, table: FuzzTable) -> Table {
        paimon_wire::coordinator::open_table(self.path(), table.name())
            .await
            .expect("open fuzz table")
    }
}

/// Payloads a real worker writes for `table` (rows in two partitions), encoded at every
/// writable version: `(version, payload)`. Used to make the coordinator seeds.
pub async fn worker_payloads(table: &Table) -> Vec<(SerializerVersion, Vec<u8>)> {
    let ids = [1, 2, 3, 4];
    let pts = ["a", "b", "a", "b"];
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(Int32Array::from(ids.to_vec())) as ArrayRef),
        ("pt", Arc::new(StringArray::from(pts.to_vec())) as ArrayRef),
        (
            "v",
            Arc::new(StringArray::from(vec!["v1", "v2", "v3", "v4"])) as ArrayRef,
        ),
    ])
    .expect("batch");
    let mut write = table
        .new_write_builder()
        .with_commit_user(COMMIT_USER)
        .expect("commit user")
        .new_write()
        .expect("table write");
    write.write_arrow_batch(&batch).await.expect("write");
    let messages = write.prepare_commit().await.expect("prepare commit");
    SerializerVersion::WRITABLE
        .iter()
        .filter_map(|&version| Some((version, serialize_list(&messages, version).ok()?)))
        .collect()
}

/// Writes the seeds of the coordinator targets if asked: one per table and writable version
/// (`[table byte, version byte] ++ payload`), and with `with_envelopes` the same payloads in
/// an envelope (`[table byte, any byte] ++ envelope`, for the C target, which unwraps inputs
/// starting with `PWIR`).
pub async fn write_coordinator_seeds_if_asked(warehouse: &FuzzWarehouse, with_envelopes: bool) {
    let Some(dir) = seed_dir() else { return };
    for (table_byte, table) in FuzzTable::ALL.into_iter().enumerate() {
        let opened = warehouse.open(table).await;
        for (version, payload) in worker_payloads(&opened).await {
            let name = format!("{}-v{}", table.name().replace('.', "-"), version.as_i32());
            let mut seed = vec![table_byte as u8, selector_of(version)];
            seed.extend_from_slice(&payload);
            std::fs::write(dir.join(format!("{name}.bin")), seed).expect("write seed");
            if with_envelopes {
                let mut seed = vec![table_byte as u8, 0];
                seed.extend_from_slice(&paimon_wire::envelope::wrap(version, &payload));
                std::fs::write(dir.join(format!("{name}.pwir")), seed).expect("write seed");
            }
        }
    }
}

/// Splits a coordinator-target input: first byte picks the table (even: append, odd: keyed),
/// second the version, the rest is the payload.
pub fn split_coordinator_input(data: &[u8]) -> Option<(FuzzTable, SerializerVersion, &[u8])> {
    let (&table_byte, rest) = data.split_first()?;
    let (version, payload) = split_version(rest)?;
    Some((
        FuzzTable::ALL[usize::from(table_byte) % 2],
        version,
        payload,
    ))
}

/// Where the seeds of a target are written when `PAIMON_WIRE_FUZZ_WRITE_SEEDS` is set (the
/// directory it names); `None` otherwise.
fn seed_dir() -> Option<std::path::PathBuf> {
    let dir = std::path::PathBuf::from(std::env::var_os("PAIMON_WIRE_FUZZ_WRITE_SEEDS")?);
    std::fs::create_dir_all(&dir).expect("seed dir");
    Some(dir)
}

/// The Java fixtures (`fixtures/java/<release>/*-v<V>.bin`), cut down to small payloads: the
/// one-message fixtures as they are, and the first two messages of each `messages-` fixture,
/// at most one file per list, re-encoded at its version (whole fixtures are 50–100 kB, which
/// slows libFuzzer down).
/// `(name, version, payload)`.
pub fn fixture_seeds() -> Vec<(String, SerializerVersion, Vec<u8>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/java");
    let mut seeds = Vec::new();
    for release in std::fs::read_dir(&root).expect("fixtures/java") {
        let release = release.expect("entry").path();
        if !release.is_dir() {
            continue;
        }
        let release_name = release.file_name().unwrap().to_string_lossy().into_owned();
        for file in std::fs::read_dir(&release).expect("release dir") {
            let path = file.expect("entry").path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.extension().is_none_or(|e| e != "bin") || stem.starts_with("large-") {
                continue;
            }
            let version: i32 = stem.rsplit("-v").next().unwrap().parse().expect("version");
            let version = SerializerVersion::try_from(version).expect("known version");
            let bytes = std::fs::read(&path).expect("fixture");
            let payload = if stem.starts_with("messages-") {
                let mut messages = paimon_wire::deserialize_list(version, &bytes).expect("decodes");
                messages.truncate(2);
                for m in &mut messages {
                    m.new_files.truncate(1);
                    m.deleted_files.truncate(1);
                    m.new_changelog_files.truncate(1);
                    m.new_index_files.truncate(1);
                    m.deleted_index_files.truncate(1);
                    m.compact_before.truncate(1);
                    m.compact_after.truncate(1);
                    m.compact_changelog_files.truncate(1);
                    m.compact_new_index_files.truncate(1);
                    m.compact_deleted_index_files.truncate(1);
                }
                match serialize_list(&messages, version) {
                    Ok(small) => small,
                    // Paimon 0.5–0.7's legacy layout is read, never written.
                    Err(_) => continue,
                }
            } else {
                bytes
            };
            seeds.push((format!("{release_name}-{stem}"), version, payload));
        }
    }
    seeds.sort();
    seeds
}

/// Writes `decode_payload` seeds (`[version byte] ++ payload`) if asked.
pub fn write_decode_seeds_if_asked() {
    let Some(dir) = seed_dir() else { return };
    for (name, version, payload) in fixture_seeds() {
        let mut seed = vec![selector_of(version)];
        seed.extend_from_slice(&payload);
        std::fs::write(dir.join(format!("{name}.bin")), seed).expect("write seed");
    }
}

/// Writes `envelope` seeds (each fixture seed wrapped at its version) if asked.
pub fn write_envelope_seeds_if_asked() {
    let Some(dir) = seed_dir() else { return };
    for (name, version, payload) in fixture_seeds() {
        let framed = paimon_wire::envelope::wrap(version, &payload);
        std::fs::write(dir.join(format!("{name}.pwir")), framed).expect("write seed");
    }
}
