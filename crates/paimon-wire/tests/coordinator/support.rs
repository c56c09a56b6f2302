//! Real local tables for the coordinator tests: a filesystem warehouse in a temp dir,
//! workers writing through the paimon crate, and a reader that returns every row.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array, RecordBatch, StringArray};
use futures::TryStreamExt;
use paimon::catalog::{Catalog, Identifier};
use paimon::spec::IndexFileMeta;
use paimon::spec::{DataType, IntType, Schema, VarCharType};
use paimon::table::{AssignerShare, CommitMessage, Table};
use paimon::{CatalogOptions, FileSystemCatalog, Options};
use paimon_wire::coordinator::{
    open_table, Binding, CommitOutcome, Coordinator, CoordinatorError, Rule, StagedPath,
};
use paimon_wire::{serialize_list, SerializerVersion};

/// The commit user every worker and coordinator of one test job shares.
pub const USER: &str = "job-under-test";

/// A warehouse in a temp dir, removed when dropped.
pub struct Warehouse {
    pub dir: tempfile::TempDir,
    catalog: FileSystemCatalog,
}

/// The kinds of table the tests use.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// Append table partitioned by `pt`, bucket-unaware (bucket = -1).
    PartitionedAppend,
    /// Primary key (pt, id), partitioned by `pt`, 2 fixed buckets.
    FixedBucketPk,
    /// Primary key (id), unpartitioned, postpone (bucket = -2), 2 buckets for fixed-bucket writes.
    Postpone,
    /// Unpartitioned append table writing data under an external root.
    ExternalAppend,
    /// Primary key (pt, id), partitioned by `pt`, dynamic buckets (bucket = -1): workers
    /// write HASH index files.
    DynamicBucketPk,
    /// Append table partitioned by `pt`, bucket-unaware, with deletion vectors enabled.
    DeletionVectorAppend,
}

impl Warehouse {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut options = Options::new();
        options.set(CatalogOptions::WAREHOUSE, dir.path().to_str().unwrap());
        let catalog = FileSystemCatalog::new(options).expect("catalog");
        Self { dir, catalog }
    }

    pub fn path(&self) -> &str {
        self.dir.path().to_str().unwrap()
    }

    /// The directory holding the external data roots of [`Kind::ExternalAppend`] tables.
    pub fn external_root(&self) -> PathBuf {
        self.dir.path().join("external-root")
    }

    /// The external data root of [`Kind::ExternalAppend`] table `db.<name>`: under
    /// [`Self::external_root`], ending in `db.db/<name>` as the coordinator requires (a root
    /// must name its table, so no two tables share one).
    pub fn table_external_root(&self, name: &str) -> PathBuf {
        self.external_root().join("db.db").join(name)
    }

    /// Creates `db.<name>` of `kind` and opens it through the coordinator's own opener.
    pub async fn create(&self, name: &str, kind: Kind) -> Table {
        self.create_with_options(name, kind, &[]).await
    }

    /// [`Self::create`] with extra table options.
    pub async fn create_with_options(
        &self,
        name: &str,
        kind: Kind,
        options: &[(&str, &str)],
    ) -> Table {
        self.catalog
            .create_database("db", true, HashMap::new())
            .await
            .expect("create database");
        let mut schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("pt", DataType::VarChar(VarCharType::string_type()))
            .column("v", DataType::VarChar(VarCharType::string_type()));
        schema = match kind {
            Kind::PartitionedAppend => schema.partition_keys(["pt"]),
            Kind::FixedBucketPk => schema
                .partition_keys(["pt"])
                .primary_key(["pt", "id"])
                .option("bucket", "2"),
            Kind::DynamicBucketPk => schema
                .partition_keys(["pt"])
                .primary_key(["pt", "id"])
                .option("bucket", "-1"),
            Kind::DeletionVectorAppend => schema
                .partition_keys(["pt"])
                .option("deletion-vectors.enabled", "true"),
            Kind::Postpone => schema
                .primary_key(["id"])
                .option("bucket", "-2")
                .option("postpone.default-bucket-num", "2"),
            Kind::ExternalAppend => {
                let root = self.table_external_root(name);
                std::fs::create_dir_all(&root).unwrap();
                schema
                    .option(
                        "data-file.external-paths",
                        format!("file://{}", root.to_str().unwrap()),
                    )
                    .option("data-file.external-paths.strategy", "round-robin")
            }
        };
        for (key, value) in options {
            schema = schema.option(*key, *value);
        }
        self.catalog
            .create_table(
                &Identifier::new("db", name),
                schema.build().expect("schema"),
                false,
            )
            .await
            .expect("create table");
        open_table(self.path(), &format!("db.{name}"))
            .await
            .expect("open table")
    }
}

/// One batch of rows `(id, pt, v)`; `v` is `"v<id>"` unless given.
pub fn batch(rows: &[(i32, &str)]) -> RecordBatch {
    batch_with_values(
        &rows
            .iter()
            .map(|(id, pt)| (*id, *pt, format!("v{id}")))
            .collect::<Vec<_>>(),
    )
}

/// One batch of rows `(id, pt, v)`.
pub fn batch_with_values(rows: &[(i32, &str, String)]) -> RecordBatch {
    RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int32Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
        (
            "pt",
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
        (
            "v",
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.2.as_str()).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
    ])
    .unwrap()
}

/// A worker: its own `TableWrite` sharing the job's commit user. Returns its messages.
pub async fn worker_messages(table: &Table, rows: &[(i32, &str)]) -> Vec<CommitMessage> {
    let builder = table
        .new_write_builder()
        .with_commit_user(USER)
        .expect("commit user");
    let mut write = builder.new_write().expect("table write");
    write.write_arrow_batch(&batch(rows)).await.expect("write");
    write.prepare_commit().await.expect("prepare commit")
}

/// A worker that writes `rows` and ships its messages as a Java-compatible payload.
pub async fn worker_payload(table: &Table, rows: &[(i32, &str)]) -> Vec<u8> {
    let messages = worker_messages(table, rows).await;
    serialize_list(&messages, SerializerVersion::CURRENT).expect("serialize")
}

/// Every row of the table's latest snapshot as `(id, pt, v)`, sorted.
pub async fn read_rows(table: &Table) -> Vec<(i32, String, String)> {
    let builder = table.new_read_builder();
    let plan = builder.new_scan().plan().await.expect("plan");
    let batches: Vec<RecordBatch> = builder
        .new_read()
        .expect("read")
        .to_arrow(plan.splits())
        .expect("to_arrow")
        .try_collect()
        .await
        .expect("read batches");
    let mut rows = Vec::new();
    for batch in &batches {
        let ids = column::<Int32Array>(batch, "id");
        let pts = column::<StringArray>(batch, "pt");
        let vs = column::<StringArray>(batch, "v");
        for i in 0..batch.num_rows() {
            rows.push((
                ids.value(i),
                pts.value(i).to_string(),
                vs.value(i).to_string(),
            ));
        }
    }
    rows.sort();
    rows
}

fn column<'a, T: Array + 'static>(batch: &'a RecordBatch, name: &str) -> &'a T {
    batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("column {name} type"))
}

/// `(id, pt, "v<id>")` for every row, sorted: what [`read_rows`] returns after writing them.
pub fn expected(rows: &[(i32, &str)]) -> Vec<(i32, String, String)> {
    let mut out: Vec<_> = rows
        .iter()
        .map(|(id, pt)| (*id, pt.to_string(), format!("v{id}")))
        .collect();
    out.sort();
    out
}

/// How many snapshots the table has.
pub async fn snapshot_count(table: &Table) -> usize {
    table
        .snapshot_manager()
        .list_all_ids()
        .await
        .expect("list snapshots")
        .len()
}

/// Every regular file under `root` whose name is `name`.
pub fn find_files(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().and_then(|n| n.to_str()) == Some(name) {
                found.push(path);
            }
        }
    }
    found
}

/// A coordinator bound to `table` appending as the job's commit user.
pub async fn append_coordinator(table: &Table) -> Coordinator {
    bind(table, Binding::append(USER)).await
}

/// A coordinator bound to `table` with `binding`.
pub async fn bind(table: &Table, binding: Binding) -> Coordinator {
    Coordinator::bind(table.clone(), binding)
        .await
        .expect("bind coordinator")
}

/// The table as a test last saw it: its snapshot count and every row.
pub struct Unchanged {
    pub snapshots: usize,
    pub rows: Vec<(i32, String, String)>,
}

impl Unchanged {
    pub async fn of(table: &Table) -> Self {
        Self {
            snapshots: snapshot_count(table).await,
            rows: read_rows(table).await,
        }
    }

    /// Asserts the table has the same snapshots and rows, read by the paimon crate and —
    /// when `PAIMON_WIRE_PYPAIMON` names a Python with pypaimon (scripts/test-python) — by
    /// pypaimon, an independent reader.
    pub async fn assert_still(&self, table: &Table, what: &str) {
        assert_eq!(
            snapshot_count(table).await,
            self.snapshots,
            "{what}: snapshots"
        );
        assert_eq!(read_rows(table).await, self.rows, "{what}: rows");
        let location = table.location().trim_start_matches("file:");
        let (warehouse, name) = location
            .trim_end_matches('/')
            .rsplit_once('/')
            .map(|(db, table)| {
                let (warehouse, db) = db.rsplit_once('/').unwrap();
                (
                    warehouse.to_string(),
                    format!("{}.{table}", db.trim_end_matches(".db")),
                )
            })
            .unwrap();
        if let Some(rows) = read_with_pypaimon(&warehouse, &name) {
            assert_eq!(rows, self.rows, "{what}: rows as pypaimon reads them");
        }
    }
}

/// The rule of a refusal, from `deserialize` or `commit`.
pub fn rule_of(error: &CoordinatorError) -> Rule {
    error
        .as_validation()
        .unwrap_or_else(|| panic!("expected a validation error, got {error}"))
        .rule
}

/// Deserializes `messages` through `coordinator` and commits them as `identifier`.
pub async fn send(
    coordinator: &Coordinator,
    messages: &[CommitMessage],
    identifier: i64,
) -> Result<CommitOutcome, CoordinatorError> {
    commit_payloads(coordinator, &[messages.to_vec()], identifier).await
}

/// Deserializes each worker's messages as one payload, merges and commits them.
///
/// Both paths run: the payloads are also committed through a [`StagedCommit`]
/// (`Coordinator::begin`), on a copy of the table made just before (its twin), and the two
/// answers must agree: the same outcome and snapshot, or a refusal by the same rule (the same
/// kind of error). A staged commit of payloads that only add files, in append mode, on a
/// table without dynamic buckets, must take the streamed path. The answer returned is the
/// materialized one, on the table itself.
pub async fn commit_payloads(
    coordinator: &Coordinator,
    payloads: &[Vec<CommitMessage>],
    identifier: i64,
) -> Result<CommitOutcome, CoordinatorError> {
    let bytes = payloads
        .iter()
        .map(|messages| serialize_list(messages, SerializerVersion::CURRENT))
        .collect::<Result<Vec<_>, _>>()?;
    let twin = Twin::of(coordinator).await;
    let materialized = Box::pin(commit_materialized(coordinator, &bytes, identifier)).await;
    let (staged, path) = Box::pin(commit_staged(&twin.coordinator, &bytes, identifier)).await;
    let streamable = coordinator.binding().mode == paimon_wire::coordinator::CommitMode::Append
        && coordinator.bucket_mode() != paimon_wire::coordinator::BucketMode::Dynamic
        && payloads.iter().flatten().all(|m| {
            m.deleted_files.is_empty()
                && m.compact_before.is_empty()
                && m.compact_after.is_empty()
                && m.compact_changelog_files.is_empty()
                && m.new_index_files.is_empty()
                && m.deleted_index_files.is_empty()
                && m.compact_new_index_files.is_empty()
                && m.compact_deleted_index_files.is_empty()
                && m.check_from_snapshot.is_none()
        })
        && !coordinator.table().schema().options().iter().any(|(k, v)| {
            (k == "row-tracking.enabled" || k == "data-evolution.enabled") && v == "true"
        });
    if let Some(path) = path {
        assert_eq!(
            path == StagedPath::Streamed,
            streamable,
            "the staged commit took the {path:?} path"
        );
    }
    assert_same_answer(coordinator, &materialized, &twin, &staged).await;
    materialized
}

/// The materialized path: each payload deserialized, merged, committed.
async fn commit_materialized(
    coordinator: &Coordinator,
    payloads: &[Vec<u8>],
    identifier: i64,
) -> Result<CommitOutcome, CoordinatorError> {
    let mut parts = Vec::new();
    for bytes in payloads {
        parts.push(coordinator.deserialize(SerializerVersion::CURRENT, bytes)?);
    }
    let merged = coordinator.merge(parts)?;
    coordinator.commit(merged, identifier).await
}

/// The staged path, and the path it was on when it committed (`None` if a payload was
/// refused first).
async fn commit_staged(
    coordinator: &Coordinator,
    payloads: &[Vec<u8>],
    identifier: i64,
) -> (Result<CommitOutcome, CoordinatorError>, Option<StagedPath>) {
    let mut staged = coordinator.begin(identifier);
    for bytes in payloads {
        if let Err(error) = staged.add_payload(SerializerVersion::CURRENT, bytes).await {
            staged.abort().await.expect("abort a refused staged commit");
            return (Err(error), None);
        }
    }
    let path = staged.path();
    (staged.commit().await, Some(path))
}

/// A copy of a coordinator's table, made now, with a coordinator of the same binding.
pub struct Twin {
    _dir: tempfile::TempDir,
    pub coordinator: Coordinator,
}

impl Twin {
    /// Copies the table's directory into a warehouse of its own and binds it as `coordinator`
    /// is bound.
    pub async fn of(coordinator: &Coordinator) -> Self {
        let table = coordinator.table();
        let identifier = table.identifier();
        let location = table.location().trim_start_matches("file:");
        let dir = tempfile::tempdir().expect("temp dir");
        let copy = dir
            .path()
            .join(format!("{}.db", identifier.database()))
            .join(identifier.object());
        copy_dir(Path::new(location), &copy);
        let twin = open_table(
            dir.path().to_str().unwrap(),
            &format!("{}.{}", identifier.database(), identifier.object()),
        )
        .await
        .expect("open the twin table");
        let coordinator = Coordinator::bind(twin, coordinator.binding().clone())
            .await
            .expect("bind the twin")
            .with_hash_index_budget(coordinator.hash_index_budget())
            .with_decode_limits(*coordinator.decode_limits())
            .with_outcome_horizon(coordinator.outcome_horizon());
        Self {
            _dir: dir,
            coordinator,
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the twin's directory");
    for entry in std::fs::read_dir(from).expect("read the table's directory") {
        let entry = entry.expect("directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a table file");
        }
    }
}

/// Asserts that the materialized and the staged commit answered alike: the same outcome,
/// and for a published snapshot the same commit digest and record counts; or errors of the
/// same kind, and for a refusal by a rule, the same rule.
async fn assert_same_answer(
    coordinator: &Coordinator,
    materialized: &Result<CommitOutcome, CoordinatorError>,
    twin: &Twin,
    staged: &Result<CommitOutcome, CoordinatorError>,
) {
    match (materialized, staged) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "materialized and staged outcomes differ");
            if let CommitOutcome::Committed { snapshot_id } = a {
                let read = |table: &Table| {
                    let table = table.clone();
                    async move {
                        let snapshot = table
                            .snapshot_manager()
                            .get_snapshot(*snapshot_id)
                            .await
                            .expect("read the snapshot");
                        (
                            snapshot
                                .properties()
                                .and_then(|p| p.get("paimon-wire.commit-digest"))
                                .cloned(),
                            snapshot.delta_record_count(),
                            snapshot.changelog_record_count(),
                            snapshot.total_record_count(),
                        )
                    }
                };
                assert_eq!(
                    read(coordinator.table()).await,
                    read(twin.coordinator.table()).await,
                    "the materialized and the staged snapshot differ"
                );
            }
        }
        (Err(a), Err(b)) => {
            assert_eq!(
                std::mem::discriminant(a),
                std::mem::discriminant(b),
                "materialized refusal: {a}\nstaged refusal: {b}"
            );
            if let (Some(a), Some(b)) = (a.as_validation(), b.as_validation()) {
                assert_eq!(a.rule, b.rule, "materialized: {a}\nstaged: {b}");
            }
        }
        (a, b) => panic!("materialized answer {a:?}, staged answer {b:?}"),
    }
}

/// Small buckets for [`Kind::DynamicBucketPk`] tables, so a few keys fill several buckets per
/// assigner.
pub const SMALL_BUCKETS: &[(&str, &str)] = &[("dynamic-bucket.target-row-num", "4")];

/// The messages of a dynamic-bucket worker that is assigner `share` and writes `batch`.
pub async fn assigner_messages(
    table: &Table,
    share: AssignerShare,
    batch: &RecordBatch,
) -> Result<Vec<CommitMessage>, paimon::Error> {
    let builder = table
        .new_write_builder()
        .with_commit_user(USER)?
        .with_dynamic_bucket_share(share);
    let mut write = builder.new_write()?;
    write.write_arrow_batch(batch).await?;
    write.prepare_commit().await
}

/// The table's index directory, where HASH index files live by default.
fn index_dir(table: &Table) -> String {
    let root = table.location();
    format!(
        "{}/index",
        root.trim_start_matches("file:").trim_end_matches('/')
    )
}

/// Writes `hashes` as a HASH index file named `name` in the table's index directory.
pub fn write_hash_index(table: &Table, name: &str, hashes: &[i32]) -> IndexFileMeta {
    let dir = index_dir(table);
    std::fs::create_dir_all(&dir).unwrap();
    let bytes: Vec<u8> = hashes.iter().flat_map(|h| h.to_be_bytes()).collect();
    std::fs::write(format!("{dir}/{name}"), &bytes).unwrap();
    IndexFileMeta {
        index_type: "HASH".into(),
        file_name: name.into(),
        file_size: bytes.len() as i64,
        row_count: hashes.len() as i64,
        deletion_vectors_ranges: None,
        external_path: None,
        global_index_meta: None,
    }
}

/// The key hashes a HASH index file of `table` lists, in file order.
pub fn read_hash_index(table: &Table, name: &str) -> Vec<i32> {
    std::fs::read(format!("{}/{name}", index_dir(table)))
        .unwrap()
        .chunks_exact(4)
        .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Writes a deletion-vector index file (Java's `DeletionVectorsIndexFile` layout, version 1:
/// one version byte, then per data file a `BitmapDeletionVector` — big-endian length, magic,
/// a portable 32-bit roaring bitmap, CRC) into the table's index directory, deleting rows
/// `positions` of each named data file, and returns its metadata.
pub fn write_deletion_vectors(table: &Table, vectors: &[(&str, &[u32])]) -> IndexFileMeta {
    const MAGIC: i32 = 1_581_511_376;
    let mut bytes = vec![1u8];
    let mut ranges = indexmap::IndexMap::new();
    for (data_file, positions) in vectors {
        let mut sorted: Vec<u16> = positions.iter().map(|p| *p as u16).collect();
        sorted.sort_unstable();
        sorted.dedup();
        // Portable roaring, one array container (key 0): cookie, container count, key and
        // cardinality - 1, the container's offset, then the values.
        let mut bitmap = Vec::new();
        bitmap.extend_from_slice(&12_346u32.to_le_bytes());
        bitmap.extend_from_slice(&1u32.to_le_bytes());
        bitmap.extend_from_slice(&0u16.to_le_bytes());
        bitmap.extend_from_slice(&((sorted.len() - 1) as u16).to_le_bytes());
        bitmap.extend_from_slice(&16u32.to_le_bytes());
        for value in &sorted {
            bitmap.extend_from_slice(&value.to_le_bytes());
        }
        let offset = bytes.len() as i32;
        let length = 4 + bitmap.len() as i32;
        bytes.extend_from_slice(&length.to_be_bytes());
        bytes.extend_from_slice(&MAGIC.to_be_bytes());
        bytes.extend_from_slice(&bitmap);
        bytes.extend_from_slice(&0i32.to_be_bytes()); // CRC, not verified by readers
        ranges.insert(
            data_file.to_string(),
            paimon::spec::DeletionVectorMeta {
                offset,
                length,
                cardinality: Some(sorted.len() as i64),
            },
        );
    }
    let file_name = format!("index-{}-0", uuid_like());
    let dir = Path::new(table.location().trim_start_matches("file:")).join("index");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&file_name), &bytes).unwrap();
    IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name,
        file_size: bytes.len() as i64,
        row_count: ranges.len() as i64,
        deletion_vectors_ranges: Some(ranges),
        external_path: None,
        global_index_meta: None,
    }
}

/// A unique name part (no uuid dependency in the tests).
fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{:x}-{:x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// pypaimon writes and commits `rows` `(id, pt, v)` with its own commit user, if
/// `PAIMON_WIRE_PYPAIMON` names a Python with pypaimon; returns whether it did.
pub fn write_with_pypaimon(warehouse: &str, table: &str, rows: &[(i32, String, String)]) -> bool {
    let Ok(python) = std::env::var("PAIMON_WIRE_PYPAIMON") else {
        return false;
    };
    let script = r#"
import json, sys
import pyarrow as pa
from pypaimon import CatalogFactory
t = CatalogFactory.create({"warehouse": sys.argv[1]}).get_table(sys.argv[2])
rows = json.loads(sys.argv[3])
data = pa.table({"id": pa.array([r[0] for r in rows], pa.int32()),
                 "pt": pa.array([r[1] for r in rows], pa.string()),
                 "v": pa.array([r[2] for r in rows], pa.string())})
b = t.new_batch_write_builder()
w = b.new_write()
w.write_arrow(data)
c = b.new_commit()
c.commit(w.prepare_commit())
w.close()
c.close()
"#;
    let out = std::process::Command::new(python)
        .args(["-c", script, warehouse, table])
        .arg(serde_json::to_string(rows).unwrap())
        .output()
        .expect("run pypaimon");
    assert!(
        out.status.success(),
        "pypaimon write failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// The table as pypaimon reads it, if `PAIMON_WIRE_PYPAIMON` names a Python with pypaimon.
pub fn read_with_pypaimon(warehouse: &str, table: &str) -> Option<Vec<(i32, String, String)>> {
    let python = std::env::var("PAIMON_WIRE_PYPAIMON").ok()?;
    let script = r#"
import json, sys
from pypaimon import CatalogFactory
t = CatalogFactory.create({"warehouse": sys.argv[1]}).get_table(sys.argv[2])
b = t.new_read_builder()
a = b.new_read().to_arrow(b.new_scan().plan().splits())
rows = [] if a is None else list(zip(a.column("id").to_pylist(), a.column("pt").to_pylist(), a.column("v").to_pylist()))
print(json.dumps(rows))
"#;
    let out = std::process::Command::new(python)
        .args(["-c", script, warehouse, table])
        .output()
        .expect("run pypaimon");
    assert!(
        out.status.success(),
        "pypaimon failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<(i32, String, String)> = serde_json::from_slice(&out.stdout).expect("json");
    let mut rows = rows;
    rows.sort();
    Some(rows)
}
