//! Property: a payload the coordinator refuses commits nothing and touches nothing outside
//! the table.
//!
//! Many corrupted payloads — bytes flipped, overwritten, cut, grown, `int` fields made huge
//! or negative, envelopes corrupted in transit, and messages made hostile field by field
//! (path traversal, foreign partitions and buckets, unknown schemas, negative sizes) — go
//! through the coordinator's whole path, deserialize → validate → merge → commit, beside a
//! good payload from another worker. Whenever any step fails, the table's snapshot count is
//! unchanged; and whatever happens, no file outside the table's directory is created,
//! changed or removed.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use paimon_wire::coordinator::{open_table, Binding, CommitOutcome, Coordinator, CoordinatorError};
use paimon_wire::envelope::{unwrap, wrap, HEADER_LEN};
use paimon_wire::paimon::catalog::{Catalog, Identifier};
use paimon_wire::paimon::spec::{DataType, IntType, Schema, VarCharType};
use paimon_wire::paimon::table::Table;
use paimon_wire::paimon::{CatalogOptions, FileSystemCatalog, Options};
use paimon_wire::{
    deserialize_list, serialize_list, CodecErrorKind, CommitMessage, DecodeLimits, Limit,
    SerializerVersion,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const USER: &str = "hostile-input-test";
const V: SerializerVersion = SerializerVersion::CURRENT;

/// A temp dir holding the warehouse and, beside it, files a hostile payload might aim at.
struct Scene {
    root: tempfile::TempDir,
    table_dir: PathBuf,
    table: Table,
}

impl Scene {
    async fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let outside = root.path().join("outside");
        std::fs::create_dir_all(outside.join("nested")).unwrap();
        std::fs::write(outside.join("victim.txt"), b"must stay as it is").unwrap();
        std::fs::write(outside.join("nested/victim.parquet"), b"PAR1").unwrap();
        let warehouse = root.path().join("warehouse");
        let warehouse_str = warehouse.to_str().unwrap();
        let mut options = Options::new();
        options.set(CatalogOptions::WAREHOUSE, warehouse_str);
        let catalog = FileSystemCatalog::new(options).unwrap();
        catalog
            .create_database("db", true, HashMap::new())
            .await
            .unwrap();
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("v", DataType::VarChar(VarCharType::string_type()))
            .partition_keys(["pt"])
            .build()
            .unwrap();
        catalog
            .create_table(&Identifier::new("db", "t"), schema, false)
            .await
            .unwrap();
        let table = open_table(warehouse_str, "db.t").await.unwrap();
        let table_dir = warehouse.join("db.db").join("t");
        assert!(table_dir.is_dir(), "table dir {}", table_dir.display());
        Self {
            root,
            table_dir,
            table,
        }
    }

    /// Every file and directory under the temp dir but outside the table's directory, with
    /// its size and modification time.
    fn outside_listing(&self) -> BTreeMap<PathBuf, (u64, Option<SystemTime>)> {
        let mut listing = BTreeMap::new();
        let mut stack = vec![self.root.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path == self.table_dir {
                    continue;
                }
                let meta = std::fs::symlink_metadata(&path).unwrap();
                listing.insert(path.clone(), (meta.len(), meta.modified().ok()));
                if meta.is_dir() {
                    stack.push(path);
                }
            }
        }
        listing
    }

    async fn snapshot_count(&self) -> usize {
        self.table
            .snapshot_manager()
            .list_all_ids()
            .await
            .unwrap()
            .len()
    }

    /// A worker's payload: rows written through the paimon crate, `prepare_commit`, encoded.
    async fn worker_payload(&self, first_id: i32) -> Vec<u8> {
        let ids: Vec<i32> = (first_id..first_id + 4).collect();
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(Int32Array::from(ids.clone())) as ArrayRef),
            (
                "pt",
                Arc::new(StringArray::from(vec!["a", "b", "a", "b"])) as ArrayRef,
            ),
            (
                "v",
                Arc::new(StringArray::from(
                    ids.iter().map(|i| format!("v{i}")).collect::<Vec<_>>(),
                )) as ArrayRef,
            ),
        ])
        .unwrap();
        let mut write = self
            .table
            .new_write_builder()
            .with_commit_user(USER)
            .unwrap()
            .new_write()
            .unwrap();
        write.write_arrow_batch(&batch).await.unwrap();
        serialize_list(&write.prepare_commit().await.unwrap(), V).unwrap()
    }
}

/// How a payload is corrupted.
#[derive(Debug, Clone)]
enum Corruption {
    /// One bit flipped at a position (taken modulo the length).
    FlipBit { at: usize, bit: u8 },
    /// A run of bytes overwritten.
    Overwrite { at: usize, bytes: Vec<u8> },
    /// Cut after `len` bytes (modulo the length).
    Truncate { len: usize },
    /// Bytes inserted.
    Insert { at: usize, bytes: Vec<u8> },
    /// An `int` at a position set to a huge, negative or zero value.
    PatchInt { at: usize, value: i32 },
    /// Wrapped in an envelope, then one payload bit flipped in transit.
    EnvelopeInTransit { at: usize, bit: u8 },
    /// Decodes, but one field of one message is made hostile; the coordinator must refuse it.
    Hostile { message: usize, field: HostileField },
}

/// Fields made hostile after decoding; every one breaks a coordinator rule.
#[derive(Debug, Clone, Copy)]
enum HostileField {
    TraversingFileName,
    AbsoluteFileName,
    TraversingExtraFile,
    ExternalPathOutside,
    ForeignBucket,
    ForeignPartition,
    UnknownSchema,
    NegativeRowCount,
    CompactionResult,
}

fn corruption() -> impl Strategy<Value = Corruption> {
    let position = any::<usize>();
    let hostile = prop_oneof![
        Just(HostileField::TraversingFileName),
        Just(HostileField::AbsoluteFileName),
        Just(HostileField::TraversingExtraFile),
        Just(HostileField::ExternalPathOutside),
        Just(HostileField::ForeignBucket),
        Just(HostileField::ForeignPartition),
        Just(HostileField::UnknownSchema),
        Just(HostileField::NegativeRowCount),
        Just(HostileField::CompactionResult),
    ];
    prop_oneof![
        (position, 0u8..8).prop_map(|(at, bit)| Corruption::FlipBit { at, bit }),
        (position, proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Corruption::Overwrite { at, bytes }),
        position.prop_map(|len| Corruption::Truncate { len }),
        (position, proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Corruption::Insert { at, bytes }),
        (
            position,
            prop_oneof![
                Just(i32::MAX),
                Just(i32::MIN),
                Just(-1),
                Just(0),
                any::<i32>()
            ]
        )
            .prop_map(|(at, value)| Corruption::PatchInt { at, value }),
        (position, 0u8..8).prop_map(|(at, bit)| Corruption::EnvelopeInTransit { at, bit }),
        (position, hostile).prop_map(|(message, field)| Corruption::Hostile { message, field }),
    ]
}

/// What arrives at the coordinator: raw bytes at a version, or an envelope.
enum Received {
    Raw(Vec<u8>),
    Envelope(Vec<u8>),
}

fn corrupt(good: &[u8], corruption: &Corruption, outside: &Path) -> Received {
    let mut bytes = good.to_vec();
    let n = bytes.len();
    match corruption {
        Corruption::FlipBit { at, bit } => bytes[at % n] ^= 1 << bit,
        Corruption::Overwrite { at, bytes: run } => {
            for (i, b) in run.iter().enumerate() {
                let at = (at + i) % n;
                bytes[at] = *b;
            }
        }
        Corruption::Truncate { len } => bytes.truncate(len % n),
        Corruption::Insert { at, bytes: run } => {
            let at = at % (n + 1);
            bytes.splice(at..at, run.iter().copied());
        }
        Corruption::PatchInt { at, value } => {
            let at = at % (n - 3);
            bytes[at..at + 4].copy_from_slice(&value.to_be_bytes());
        }
        Corruption::EnvelopeInTransit { at, bit } => {
            let mut framed = wrap(V, &bytes);
            framed[HEADER_LEN + at % n] ^= 1 << bit;
            return Received::Envelope(framed);
        }
        Corruption::Hostile { message, field } => {
            let mut messages = deserialize_list(V, good).unwrap();
            let count = messages.len();
            make_hostile(&mut messages[message % count], *field, outside);
            bytes = serialize_list(&messages, V).unwrap();
        }
    }
    Received::Raw(bytes)
}

fn make_hostile(message: &mut CommitMessage, field: HostileField, outside: &Path) {
    let victim = outside.join("victim.txt");
    let file = &mut message.new_files[0];
    match field {
        HostileField::TraversingFileName => file.file_name = "../../../outside/victim.txt".into(),
        HostileField::AbsoluteFileName => file.file_name = victim.to_str().unwrap().into(),
        HostileField::TraversingExtraFile => file.extra_files = vec!["../../victim.txt".into()],
        HostileField::ExternalPathOutside => {
            file.external_path = Some(format!("file://{}", victim.to_str().unwrap()))
        }
        HostileField::ForeignBucket => message.bucket = 3,
        // One partition field, but an int where the table's key is a string.
        HostileField::ForeignPartition => {
            message.partition = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0]
        }
        HostileField::UnknownSchema => file.schema_id = 42,
        HostileField::NegativeRowCount => file.row_count = -5,
        HostileField::CompactionResult => message.compact_after = vec![file.clone()],
    }
}

/// The coordinator's whole path for one good payload and one received one.
async fn decode_merge_commit(
    coordinator: &Coordinator,
    good: &[u8],
    received: &Received,
    identifier: i64,
) -> Result<CommitOutcome, CoordinatorError> {
    let good = coordinator.deserialize(V, good)?;
    let bad = match received {
        Received::Raw(bytes) => coordinator.deserialize(V, bytes)?,
        Received::Envelope(framed) => {
            let (version, payload) = unwrap(framed).map_err(|e| CoordinatorError::Unsupported {
                reason: e.to_string(),
            })?;
            coordinator.deserialize(version, payload)?
        }
    };
    let merged = coordinator.merge([good, bad])?;
    coordinator.commit(merged, identifier).await
}

#[test]
fn refused_payloads_commit_nothing_and_touch_nothing_outside_the_table() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let scene = runtime.block_on(Scene::new());
    let outside = scene.root.path().join("outside");
    let coordinator = runtime
        .block_on(Coordinator::bind(
            scene.table.clone(),
            Binding::append(USER),
        ))
        .unwrap();

    // A committed first snapshot, so corruption meets a table with history.
    let first = runtime.block_on(scene.worker_payload(0));
    let bound = coordinator.deserialize(V, &first).unwrap();
    let outcome = runtime.block_on(coordinator.commit(bound, 1)).unwrap();
    assert!(matches!(outcome, CommitOutcome::Committed { .. }));

    // `TestRunner::run` takes an `Fn`: the state carried between cases lives in cells.
    let good = RefCell::new(runtime.block_on(scene.worker_payload(100)));
    let identifier = Cell::new(2i64);
    let refused = Cell::new(0u32);
    let committed = Cell::new(0u32);
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&corruption(), |corruption| {
            let good_payload = good.borrow().clone();
            let id = identifier.get();
            identifier.set(id + 1);
            let received = corrupt(&good_payload, &corruption, &outside);
            let listing_before = scene.outside_listing();
            let snapshots_before = runtime.block_on(scene.snapshot_count());
            let result = runtime.block_on(decode_merge_commit(
                &coordinator,
                &good_payload,
                &received,
                id,
            ));
            let snapshots_after = runtime.block_on(scene.snapshot_count());
            prop_assert_eq!(
                scene.outside_listing(),
                listing_before,
                "{:?} touched a file outside the table",
                corruption
            );
            match result {
                Err(e) => {
                    refused.set(refused.get() + 1);
                    prop_assert_eq!(
                        snapshots_after,
                        snapshots_before,
                        "{:?} was refused ({}) but a snapshot was made",
                        corruption,
                        e
                    );
                }
                Ok(outcome) => {
                    // A corruption that still decodes and keeps every rule (a flipped bit
                    // in a row count, say) is indistinguishable from a worker's report; it
                    // may commit, but a hostile field never does.
                    prop_assert!(
                        !matches!(corruption, Corruption::Hostile { .. }),
                        "hostile {:?} was committed: {:?}",
                        corruption,
                        outcome
                    );
                    committed.set(committed.get() + 1);
                    // The good payload's files are in the table now: write new ones.
                    *good.borrow_mut() =
                        runtime.block_on(scene.worker_payload(1000 + id as i32 * 10));
                }
            }
            Ok(())
        })
        .unwrap();
    let (refused, committed) = (refused.get(), committed.get());
    println!("{refused} corrupted payloads refused, {committed} decoded and committed");
    assert!(
        refused >= 200,
        "only {refused} of 300 corruptions were refused: the generator lost its teeth"
    );
}

#[test]
fn the_coordinator_decodes_under_its_limits_default_or_set() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let scene = runtime.block_on(Scene::new());
    let coordinator = runtime
        .block_on(Coordinator::bind(
            scene.table.clone(),
            Binding::append(USER),
        ))
        .unwrap();
    assert_eq!(coordinator.decode_limits(), &DecodeLimits::default());
    // Four rows in two partitions: two messages, two data files.
    let payload = runtime.block_on(scene.worker_payload(0));
    assert_eq!(coordinator.deserialize(V, &payload).unwrap().len(), 2);

    let tight = coordinator.with_decode_limits(DecodeLimits {
        max_files: 1,
        ..DecodeLimits::default()
    });
    assert_eq!(tight.decode_limits().max_files, 1);
    let error = tight.deserialize(V, &payload).unwrap_err();
    let CoordinatorError::Codec(codec) = &error else {
        panic!("expected a codec error, got {error}");
    };
    assert_eq!(
        codec.kind(),
        &CodecErrorKind::LimitExceeded {
            limit: Limit::Files,
            found: 2,
            max: 1
        }
    );
    assert!(error.to_string().contains("max_files = 1"), "{error}");
    assert_eq!(runtime.block_on(scene.snapshot_count()), 0);
}
