//! Deterministic workloads shared by every benchmark, Rust and Java alike.
//!
//! - W1, append table: 1 partition column, 100 data files per message, value statistics on
//!   20 columns, 1,000 messages.
//! - W2, primary-key table: key statistics, changelog files, compaction before/after,
//!   deletion-vector index files, 1,000 messages.
//! - W3, coordinator: 1,000 worker payloads of one W1-style message of 100 files each, to be
//!   decoded, validated against a real table ([`create_w3_table`]) and merged.
//!
//! The same seed always gives the same messages, so the payload bytes measured by Rust and
//! by Java's harness are identical.

use indexmap::IndexMap;
use paimon_wire::paimon::spec::{DataFileMeta, DeletionVectorMeta, IndexFileMeta};
use paimon_wire::{table_stats, CommitMessage};

/// Messages per workload.
pub const MESSAGES: usize = 1_000;
/// Data files per W1 message.
pub const W1_FILES_PER_MESSAGE: usize = 100;
/// Columns with value statistics in W1.
pub const W1_STATS_COLUMNS: usize = 20;

/// A small, fast, deterministic generator (SplitMix64).
pub struct Seeded(u64);

impl Seeded {
    /// A generator starting at `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }
}

/// A serialized `BinaryRow` (big-endian arity, header and null bits, then one 8-byte
/// little-endian slot per value) of fixed-width values.
fn serialized_row(values: &[i64]) -> Vec<u8> {
    let null_bits = (values.len() + 71) / 64 * 8;
    let mut row = (values.len() as i32).to_be_bytes().to_vec();
    row.resize(4 + null_bits, 0);
    for v in values {
        row.extend_from_slice(&v.to_le_bytes());
    }
    row
}

/// A serialized one-column partition row (`dt INT` style).
pub fn partition_row(value: i32) -> Vec<u8> {
    serialized_row(&[value as u32 as i64])
}

/// A serialized statistics row of `columns` BIGINT values.
fn stats_row(rng: &mut Seeded, columns: usize) -> Vec<u8> {
    let values: Vec<i64> = (0..columns).map(|_| rng.next_u64() as i64 >> 20).collect();
    serialized_row(&values)
}

fn empty_row() -> Vec<u8> {
    serialized_row(&[])
}

fn data_file(
    rng: &mut Seeded,
    name: String,
    stats_columns: usize,
    key_columns: usize,
) -> DataFileMeta {
    let rows = 1 + rng.below(1_000_000) as i64;
    let key = |rng: &mut Seeded| {
        if key_columns == 0 {
            empty_row()
        } else {
            stats_row(rng, key_columns)
        }
    };
    // Two keys, the smaller one the minimum (as a writer's sorted file has them; the
    // coordinator refuses a range whose minimum lies above its maximum, rule key-range). The
    // same draws as before: only their order can change.
    let (min_key, max_key) = if key_columns == 0 {
        (empty_row(), empty_row())
    } else {
        let mut keys = [0, 1].map(|_| {
            (0..key_columns)
                .map(|_| rng.next_u64() as i64 >> 20)
                .collect::<Vec<i64>>()
        });
        keys.sort();
        (serialized_row(&keys[0]), serialized_row(&keys[1]))
    };
    let key_stats = if key_columns == 0 {
        table_stats(empty_row(), empty_row(), Vec::new())
    } else {
        table_stats(key(rng), key(rng), vec![Some(0); key_columns])
    };
    let nulls = (0..stats_columns)
        .map(|c| (c % 7 != 3).then(|| rng.below(100) as i64))
        .collect();
    DataFileMeta {
        file_name: name,
        file_size: 1 + rng.below(256 << 20) as i64,
        row_count: rows,
        min_key,
        max_key,
        key_stats,
        value_stats: table_stats(
            stats_row(rng, stats_columns),
            stats_row(rng, stats_columns),
            nulls,
        ),
        min_sequence_number: 0,
        max_sequence_number: rows - 1,
        schema_id: 0,
        level: 0,
        extra_files: Vec::new(),
        creation_time: chrono::DateTime::from_timestamp_millis(
            1_764_000_000_000 + rng.below(1 << 30) as i64,
        ),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(0),
        value_stats_cols: None,
        external_path: None,
        first_row_id: None,
        write_cols: None,
        column_max_sequence_numbers: None,
    }
}

fn file_name(rng: &mut Seeded, kind: &str) -> String {
    format!(
        "{kind}-{:08x}-{:04x}-{:04x}-{:012x}-0.parquet",
        rng.next_u64() as u32,
        rng.below(1 << 16),
        rng.below(1 << 16),
        rng.next_u64() & 0xffff_ffff_ffff
    )
}

/// Message `i` of an append-table workload: 100 new files with value statistics on 20
/// columns, in partition `dt = 20260000 + i % 30`, bucket 0.
fn append_message(rng: &mut Seeded, i: usize) -> CommitMessage {
    let files = (0..W1_FILES_PER_MESSAGE)
        .map(|_| {
            let name = file_name(rng, "data");
            data_file(rng, name, W1_STATS_COLUMNS, 0)
        })
        .collect();
    CommitMessage::new(partition_row(W1_FIRST_DAY + (i % 30) as i32), 0, files)
}

/// The first `dt` partition value of W1 and W3 (they cycle through 30 days).
pub const W1_FIRST_DAY: i32 = 20_260_000;

/// W1: an append table's 1,000 messages of 100 new files each.
pub fn w1() -> Vec<CommitMessage> {
    let mut rng = Seeded::new(1);
    (0..MESSAGES).map(|i| append_message(&mut rng, i)).collect()
}

/// Worker payloads in W3.
pub const W3_WORKERS: usize = 1_000;

/// W3: what 1,000 workers of one append job send the coordinator, each one message of 100
/// new files (100,000 files in all, every name distinct). The messages fit the table
/// [`create_w3_table`] makes, so validation passes.
pub fn w3_workers() -> Vec<Vec<CommitMessage>> {
    append_workers(W3_WORKERS).collect()
}

/// W3's 100,000 files as one worker's messages: one message per partition (30, each ~3,300
/// files: a writer that rolled many files), in first-seen order. Split into payloads of 1 MiB,
/// every message is split by its files.
pub fn w3_one_worker() -> Vec<CommitMessage> {
    let mut by_partition: Vec<CommitMessage> = Vec::new();
    for message in append_workers(W3_WORKERS).flatten() {
        match by_partition
            .iter_mut()
            .find(|m| m.partition == message.partition && m.bucket == message.bucket)
        {
            Some(m) => m.new_files.extend(message.new_files),
            None => by_partition.push(message),
        }
    }
    by_partition
}

/// What `workers` workers of one append job send the coordinator, one payload (one message
/// of 100 new files, for the [`create_w3_table`] table) at a time, so a caller can write
/// millions of files without holding them. The first 1,000 payloads are W3's.
pub fn append_workers(workers: usize) -> impl Iterator<Item = Vec<CommitMessage>> {
    let mut rng = Seeded::new(3);
    (0..workers).map(move |i| vec![append_message(&mut rng, i)])
}

/// Payloads of the primary-key coordinator workload (`pk`).
pub const PK_WORKERS: usize = 1_000;
/// Buckets of the [`create_pk_table`] table.
pub const PK_BUCKETS: usize = 16;
/// Columns of the [`create_pk_table`] table (all have value statistics).
pub const PK_VALUE_COLUMNS: usize = 10;

/// The primary-key coordinator workload: what 1,000 workers of a job writing a fixed-bucket
/// primary-key table ([`create_pk_table`]) send, W2-style files (key statistics on 2 columns,
/// value statistics on 10) but only what a fresh table can take: each payload is one message
/// of 8 new level-0 data files and 4 changelog files for its own partition and bucket
/// (payload `i` writes `dt = 20260000 + i / 16`, bucket `i % 16`), so no two payloads write
/// one bucket. W2's compaction and deletion-vector files are left out: they name files that
/// must already be live in the table.
pub fn pk_workers() -> impl Iterator<Item = Vec<CommitMessage>> {
    let mut rng = Seeded::new(4);
    (0..PK_WORKERS).map(move |i| {
        let files = |n: usize, kind: &str, rng: &mut Seeded| -> Vec<DataFileMeta> {
            (0..n)
                .map(|_| {
                    let name = file_name(rng, kind);
                    data_file(rng, name, PK_VALUE_COLUMNS, 2)
                })
                .collect()
        };
        let mut m = CommitMessage::new(
            partition_row(W1_FIRST_DAY + (i / PK_BUCKETS) as i32),
            (i % PK_BUCKETS) as i32,
            files(8, "data", &mut rng),
        );
        m.new_changelog_files = files(4, "changelog", &mut rng);
        vec![m]
    })
}

/// Creates the `pk` workload's table `db.pk` in a filesystem warehouse at `warehouse` and
/// returns its name: `dt INT, k0 BIGINT, k1 BIGINT, v0 .. v6 BIGINT` (10 columns), primary key
/// `(dt, k0, k1)`, partitioned by `dt`, 16 fixed buckets. Java's `commit-bench` makes the same
/// table.
pub async fn create_pk_table(warehouse: &str) -> paimon_wire::paimon::Result<&'static str> {
    use paimon_wire::paimon::catalog::{Catalog, Identifier};
    use paimon_wire::paimon::spec::{BigIntType, DataType, IntType, Schema};
    use paimon_wire::paimon::{CatalogOptions, FileSystemCatalog, Options};

    let mut options = Options::new();
    options.set(CatalogOptions::WAREHOUSE, warehouse);
    let catalog = FileSystemCatalog::new(options)?;
    catalog
        .create_database("db", true, std::collections::HashMap::new())
        .await?;
    let bigint = || DataType::BigInt(BigIntType::with_nullable(false));
    let mut schema = Schema::builder()
        .column("dt", DataType::Int(IntType::with_nullable(false)))
        .column("k0", bigint())
        .column("k1", bigint());
    for c in 0..PK_VALUE_COLUMNS - 3 {
        schema = schema.column(format!("v{c}"), DataType::BigInt(BigIntType::new()));
    }
    let schema = schema
        .partition_keys(["dt"])
        .primary_key(["dt", "k0", "k1"])
        .option("bucket", PK_BUCKETS.to_string())
        .build()?;
    catalog
        .create_table(&Identifier::new("db", "pk"), schema, false)
        .await?;
    Ok("db.pk")
}

/// Creates the W3 table `db.w3` in a filesystem warehouse at `warehouse` and returns the
/// table name to open: an append table partitioned by `dt INT`, bucket-unaware
/// (`bucket = -1`, so every message is bucket 0), with the 20 `BIGINT` columns the W1/W3
/// value statistics describe.
pub async fn create_w3_table(warehouse: &str) -> paimon_wire::paimon::Result<&'static str> {
    use paimon_wire::paimon::catalog::{Catalog, Identifier};
    use paimon_wire::paimon::spec::{BigIntType, DataType, IntType, Schema};
    use paimon_wire::paimon::{CatalogOptions, FileSystemCatalog, Options};

    let mut options = Options::new();
    options.set(CatalogOptions::WAREHOUSE, warehouse);
    let catalog = FileSystemCatalog::new(options)?;
    catalog
        .create_database("db", true, std::collections::HashMap::new())
        .await?;
    let mut schema = Schema::builder().column("dt", DataType::Int(IntType::new()));
    for c in 0..W1_STATS_COLUMNS {
        schema = schema.column(format!("c{c}"), DataType::BigInt(BigIntType::new()));
    }
    let schema = schema
        .partition_keys(["dt"])
        .option("bucket", "-1")
        .build()?;
    catalog
        .create_table(&Identifier::new("db", "w3"), schema, false)
        .await?;
    Ok("db.w3")
}

/// W2: a primary-key table's 1,000 messages with key statistics, changelog files,
/// compaction and deletion-vector index files.
pub fn w2() -> Vec<CommitMessage> {
    let mut rng = Seeded::new(2);
    (0..MESSAGES)
        .map(|i| {
            let files = |n: usize, kind: &str, rng: &mut Seeded| -> Vec<DataFileMeta> {
                (0..n)
                    .map(|_| {
                        let name = file_name(rng, kind);
                        let mut f = data_file(rng, name, 10, 2);
                        f.level = rng.below(5) as i32;
                        f
                    })
                    .collect()
            };
            let mut m =
                CommitMessage::new(partition_row((i % 30) as i32), (i % 16) as i32, Vec::new());
            m.new_files = files(8, "data", &mut rng);
            m.new_changelog_files = files(4, "changelog", &mut rng);
            m.compact_before = files(6, "data", &mut rng);
            m.compact_after = files(2, "data", &mut rng);
            let ranges: IndexMap<String, DeletionVectorMeta> = m
                .compact_after
                .iter()
                .map(|f| {
                    (
                        f.file_name.clone(),
                        DeletionVectorMeta {
                            offset: rng.below(1 << 20) as i32,
                            length: rng.below(1 << 12) as i32,
                            cardinality: Some(rng.below(10_000) as i64),
                        },
                    )
                })
                .collect();
            m.compact_new_index_files = vec![IndexFileMeta {
                index_type: "DELETION_VECTORS".into(),
                file_name: file_name(&mut rng, "index"),
                file_size: rng.below(1 << 20) as i64,
                row_count: ranges.len() as i64,
                deletion_vectors_ranges: Some(ranges),
                external_path: None,
                global_index_meta: None,
            }];
            m
        })
        .collect()
}

/// The `key=value` fields of one line of a benchmark's output (words without `=` are skipped),
/// as the report binaries read the Java harness's and `coordinator-e2e`'s lines.
pub fn key_value_fields(line: &str) -> std::collections::BTreeMap<&str, &str> {
    line.split_whitespace()
        .filter_map(|field| field.split_once('='))
        .collect()
}

/// A memory field of this process's `/proc/self/status`, in KiB: `VmRSS` (resident now) or
/// `VmHWM` (the peak so far), as the benchmark binaries report memory.
pub fn proc_status_kib(field: &str) -> Result<u64, Box<dyn std::error::Error>> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let value = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .ok_or_else(|| format!("no {field} in /proc/self/status"))?;
    Ok(value.trim().trim_end_matches("kB").trim().parse()?)
}
