//! A model-based stateful test of the coordinator (issue 25): random sequences of honest
//! commits interleaved with hostile payloads from every attack class of
//! `tests/coordinator/hostile_round_3.rs`, against one real table per run. A reference model
//! holds the rows the table must show; after every step the table is read back — by the
//! paimon crate's reader, and by pypaimon (Paimon's own Python implementation, an independent
//! reader) when `PAIMON_WIRE_PYPAIMON` names a Python that has it — and must equal the model.
//! A hostile step must be refused (with the rule its class names) or be a rerun that commits
//! nothing, and leave the snapshots unchanged. Among them (issue 40): a second coordinator of
//! the job committing the last identifier with other payloads (refused, rule
//! `identifier-owner`) and with the same ones (already committed), and a deletion vector carried
//! by a compaction with its length and cardinality but other positions (rule
//! `deletion-vectors`, by content). The primary-key table's compactions are verified by every
//! key's winner, sequence number and row kind included (rule `compact-content`).
//!
//! Honest writers are the paimon crate's (always), pypaimon's (its own write and commit, when
//! `PAIMON_WIRE_PYPAIMON` is set) and real Paimon Java 2.0 writers that compact
//! (`compat/java/harness.sh 2.0.0 write --compact true`, their payloads committed by the
//! coordinator, on the primary-key table, when `PAIMON_WIRE_JAVA_HARNESS` names the harness).
//!
//! Three tables, three bindings:
//! - an append table with deletion vectors, compaction allowed (metadata rules): honest
//!   writes, honest row deletes (deletion vectors, a binding with deletes), honest
//!   compactions (a bucket's visible rows rewritten, its deletion vectors dropped with it);
//! - a primary-key table (2 fixed buckets), compaction verified by reading (rule
//!   `compact-content`): honest upserts from one writer per bucket and honest compactions
//!   (in-place upgrades, as Java's universal compaction makes them);
//! - a dynamic-bucket primary-key table (`bucket = -1`, HASH index mode, 4 keys a bucket),
//!   compaction verified: each commit is written by the job's three workers, assigners `i` of
//!   3 (`AssignerRouter`, the paimon crate's writer as Java's `HashBucketAssigner`), merged by
//!   the coordinator. Writes add keys to existing and new buckets (the bucket's HASH index
//!   replaced) and update keys, which must stay where the index put them; stale workers
//!   (prepared on an earlier snapshot) commit when nothing they write changed since, and are
//!   refused (`sequence-numbers`, `hash-index-keys`) when it did; seven hostile classes of its
//!   own alter honest payloads' HASH indexes (a key forgotten, a key in two buckets, an index
//!   deleted, a new bucket without one, a wrong row count, a bucket beyond 32767, a live index
//!   claimed by another bucket). After every step the model's invariants are checked besides
//!   the rows: every key in one bucket, the one it was first written to, owned by the key's
//!   assigner; every bucket with data has one live HASH index listing exactly its keys'
//!   hashes. At the end fresh writers must still write every partition: a new job (fresh
//!   coordinator and assigners, its identifier then committed again by a second coordinator)
//!   and a single writer of every key, each updating every key and adding new ones.
//!
//! Second coordinators (`identifier-owner`) are a fresh one and a standby bound before the
//! first commit; on the dynamic-bucket table they commit any earlier identifier again, whose
//! HASH indexes may have been replaced since.
//!
//! Bounded in CI (`cargo test`: 30 steps per table, a fixed seed; the dynamic-bucket table's
//! final check besides). The long soak run (`PAIMON_WIRE_LONG_TESTS=1`) takes 400 steps per
//! table. Other runs:
//!
//! ```sh
//! PAIMON_WIRE_STATEFUL_STEPS=400 PAIMON_WIRE_STATEFUL_SEED=$RANDOM \
//!   cargo test -p paimon-wire --test stateful_model -- --nocapture
//! ```
//!
//! `scripts/test-python` runs it again with pypaimon as the second reader.

#[path = "coordinator/support.rs"]
#[allow(dead_code)]
mod support;

use std::collections::{BTreeMap, BTreeSet};

use paimon::spec::{DataFileMeta, IndexFileMeta, IndexManifestEntry};
use paimon::table::{AssignerShare, CommitMessage, DataSplit, Table};
use paimon_wire::coordinator::validate::{MAX_DYNAMIC_BUCKETS, MAX_SEQUENCE_OR_ROW_ID};
use paimon_wire::coordinator::{Binding, CommitOutcome, Coordinator, CoordinatorError, Rule};
use paimon_wire::AssignerRouter;
use support::{
    assigner_messages, batch_with_values, bind, commit_payloads, read_hash_index, read_rows,
    read_with_pypaimon, send, snapshot_count, write_deletion_vectors, write_hash_index, Kind,
    Warehouse, SMALL_BUCKETS, USER,
};

type Row = (i32, String, String);
/// A primary key `(id, pt)`.
type Key = (i32, String);
/// A bucket of a partition: `(partition bytes, bucket)`.
type Place = (Vec<u8>, i32);

/// A small deterministic generator (xorshift64*), so a failing seed replays exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PARTITIONS: [&str; 3] = ["a", "b", "c"];

/// What a step did, for the log printed on failure.
#[derive(Debug)]
#[allow(dead_code)] // read through Debug, in the log
enum Step {
    Honest(&'static str),
    Hostile(&'static str, Option<Rule>),
    Skipped(&'static str),
}

/// A commit as the workers shipped it: one payload (a list of messages) per worker.
type Parts = Vec<Vec<CommitMessage>>;

/// What the model of a dynamic-bucket table keeps beside its rows.
struct Dynamic {
    /// The job's workers: assigner `i` of `router.assigners()`, each writing the rows routed
    /// to it and creating only its own buckets (`bucket % n == i`).
    router: AssignerRouter,
    /// Each key's bucket, from the first snapshot that showed it: a key never moves.
    bucket_of: BTreeMap<Key, i32>,
    /// The last snapshot that added data files or a HASH index to a (partition, bucket).
    changed_at: BTreeMap<Place, i64>,
    /// The snapshot that first wrote each key.
    written_at: BTreeMap<Key, i64>,
    /// Whether every writer so far was one of the router's assigners: then every key's bucket
    /// belongs to the key's assigner. A single writer of every key (the final check) ends it.
    shares_only: bool,
    /// What the honest writes did, counted: keys into new buckets, into existing buckets,
    /// updates of existing keys, stale workers committed and refused.
    coverage: BTreeMap<&'static str, usize>,
    /// The keys of each bucket as last read, with the data files they were read from.
    bucket_keys: BTreeMap<Place, (BTreeSet<String>, Vec<Key>)>,
    /// The hashes of each HASH index file read (index files never change).
    index_hashes: BTreeMap<String, Vec<i32>>,
}

struct Run {
    table: Table,
    kind: Kind,
    warehouse: String,
    name: String,
    coordinator: Coordinator,
    deleting: Coordinator,
    /// A second coordinator of the job bound before the first commit (an engine's standby,
    /// taking over later): it must see the commits made since.
    standby: Coordinator,
    model: Vec<Row>,
    next_identifier: i64,
    last: Option<(Parts, i64)>,
    /// Every identifier committed, with its parts.
    committed: Vec<(Parts, i64)>,
    rng: Rng,
    step: usize,
    /// Files that compactions removed, to send back.
    compacted_away: Vec<CommitMessage>,
    log: Vec<String>,
    /// The dynamic-bucket table's model (`Kind::DynamicBucketPk` only).
    dynamic: Option<Dynamic>,
}

/// The live files of the latest snapshot, per (partition bytes, bucket), as the scan plans
/// them, with their deletion files.
async fn live_buckets(table: &Table) -> BTreeMap<Place, Vec<DataSplit>> {
    let plan = table
        .new_read_builder()
        .new_scan()
        .plan()
        .await
        .expect("plan");
    let mut buckets: BTreeMap<Place, Vec<DataSplit>> = BTreeMap::new();
    for split in plan.splits() {
        buckets
            .entry((split.partition().to_serialized_bytes(), split.bucket()))
            .or_default()
            .push(split.clone());
    }
    buckets
}

/// The rows `splits` show a reader, as `(id, pt, v)`.
async fn rows_of(table: &Table, splits: &[DataSplit]) -> Vec<Row> {
    use futures::TryStreamExt;
    let batches: Vec<arrow_array::RecordBatch> = table
        .new_read_builder()
        .new_read()
        .unwrap()
        .to_arrow(splits)
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut rows = Vec::new();
    for batch in &batches {
        let ids = batch
            .column_by_name("id")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::Int32Array>()
            .unwrap();
        let strings = |name: &str| {
            batch
                .column_by_name(name)
                .unwrap()
                .as_any()
                .downcast_ref::<arrow_array::StringArray>()
                .unwrap()
                .clone()
        };
        let (pts, vs) = (strings("pt"), strings("v"));
        for i in 0..batch.num_rows() {
            rows.push((
                ids.value(i),
                pts.value(i).to_string(),
                vs.value(i).to_string(),
            ));
        }
    }
    rows
}

/// A worker writing `rows` in one `TableWrite` (one writer for every bucket it touches).
async fn write(table: &Table, rows: &[Row]) -> Vec<CommitMessage> {
    let builder = table.new_write_builder().with_commit_user(USER).unwrap();
    let mut writer = builder.new_write().unwrap();
    writer
        .write_arrow_batch(&batch_with_values(
            &rows
                .iter()
                .map(|(id, pt, v)| (*id, pt.as_str(), v.clone()))
                .collect::<Vec<_>>(),
        ))
        .await
        .unwrap();
    writer.prepare_commit().await.unwrap()
}

/// Sends one commit's `parts` through `coordinator`: one payload as it is, several merged.
async fn send_parts(
    coordinator: &Coordinator,
    parts: &[Vec<CommitMessage>],
    identifier: i64,
) -> Result<CommitOutcome, CoordinatorError> {
    match parts {
        [one] => send(coordinator, one, identifier).await,
        _ => commit_payloads(coordinator, parts, identifier).await,
    }
}

/// The first message with a new index whose bucket has a live one (`existing`) or none.
fn with_new_index<'a>(
    messages: &'a mut [CommitMessage],
    live: &BTreeMap<Place, Vec<IndexFileMeta>>,
    existing: bool,
) -> Option<&'a mut CommitMessage> {
    messages.iter_mut().find(|m| {
        !m.new_index_files.is_empty()
            && live.contains_key(&(m.partition.clone(), m.bucket)) == existing
    })
}

fn compaction(
    partition: &[u8],
    bucket: i32,
    before: Vec<DataFileMeta>,
    after: Vec<DataFileMeta>,
) -> CommitMessage {
    let mut message = CommitMessage::new(partition.to_vec(), bucket, vec![]);
    message.compact_before = before;
    message.compact_after = after;
    message
}

impl Run {
    fn primary_key(&self) -> bool {
        matches!(self.kind, Kind::FixedBucketPk | Kind::DynamicBucketPk)
    }

    fn is_dynamic(&self) -> bool {
        self.dynamic.is_some()
    }

    fn dynamic(&mut self) -> &mut Dynamic {
        self.dynamic.as_mut().expect("a dynamic-bucket table")
    }

    /// `parts` in another order (payloads reach a coordinator in any order).
    fn shuffled(&mut self, mut parts: Parts) -> Parts {
        if parts.len() > 1 {
            let by = self.rng.below(parts.len());
            parts.rotate_left(by);
        }
        parts
    }

    fn identifier(&mut self) -> i64 {
        self.next_identifier += 1;
        self.next_identifier
    }

    fn random_rows(&mut self, count: usize) -> Vec<Row> {
        let mut keys = BTreeSet::new();
        while keys.len() < count {
            let id = self.rng.below(40) as i32;
            let pt = PARTITIONS[self.rng.below(PARTITIONS.len())].to_string();
            keys.insert((id, pt));
        }
        let step = self.step;
        keys.into_iter()
            .map(|(id, pt)| (id, pt, format!("s{step}_{id}")))
            .collect()
    }

    fn apply_upserts(&mut self, rows: &[Row]) {
        if self.primary_key() {
            let mut by_key: BTreeMap<(i32, String), String> = self
                .model
                .drain(..)
                .map(|(id, pt, v)| ((id, pt), v))
                .collect();
            for (id, pt, v) in rows {
                by_key.insert((*id, pt.clone()), v.clone());
            }
            self.model = by_key
                .into_iter()
                .map(|((id, pt), v)| (id, pt, v))
                .collect();
        } else {
            self.model.extend(rows.iter().cloned());
            self.model.sort();
        }
    }

    async fn commit(&mut self, messages: Vec<CommitMessage>) -> Result<CommitOutcome, String> {
        self.commit_parts(vec![messages])
            .await
            .map_err(|e| e.to_string())
    }

    /// Commits the workers' `parts` under the next identifier (one payload as it is, several
    /// merged) and remembers them for reruns.
    async fn commit_parts(&mut self, parts: Parts) -> Result<CommitOutcome, CoordinatorError> {
        let identifier = self.identifier();
        let outcome = send_parts(&self.coordinator, &parts, identifier).await?;
        self.last = Some((parts.clone(), identifier));
        self.committed.push((parts, identifier));
        Ok(outcome)
    }

    // ---- honest steps -------------------------------------------------------------------

    async fn honest_write(&mut self) -> Step {
        if self.is_dynamic() {
            return self.dynamic_write(false).await;
        }
        let count = 1 + self.rng.below(8);
        let rows = self.random_rows(count);
        let messages = write(&self.table, &rows).await;
        let outcome = self
            .commit(messages)
            .await
            .expect("an honest write commits");
        assert!(matches!(outcome, CommitOutcome::Committed { .. }));
        self.apply_upserts(&rows);
        Step::Honest("write")
    }

    /// A real Paimon Java 2.0 writer that compacts (`write-only = false`): its payload is
    /// committed by the coordinator, compaction results included.
    async fn java_write(&mut self) -> Option<Step> {
        let harness = std::env::var("PAIMON_WIRE_JAVA_HARNESS").ok()?;
        // The fixed-bucket table only: the dynamic-bucket model's workers are the paimon
        // crate's assigners (Java's would need the harness's `--assigner I/N` rounds).
        if !matches!(self.kind, Kind::FixedBucketPk) {
            return None;
        }
        let from = self.rng.below(40);
        let to = from + 1 + self.rng.below(8);
        let prefix = format!("j{}_", self.step);
        let identifier = self.identifier();
        let payload = std::env::temp_dir().join(format!(
            "stateful-java-{}-{}.bin",
            std::process::id(),
            self.step
        ));
        let out = std::process::Command::new(harness)
            .args(["2.0.0", "write", "--warehouse", &self.warehouse])
            .args([
                "--table",
                &format!("db.{}", self.name),
                "--commit-user",
                USER,
            ])
            .args(["--identifier", &identifier.to_string()])
            .args(["--rows", &format!("{from}:{to}"), "--value-prefix", &prefix])
            .args(["--compact", "true", "--out"])
            .arg(&payload)
            .output()
            .expect("run the Java harness");
        assert!(
            out.status.success(),
            "Java writer failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let bytes = std::fs::read(&payload).unwrap();
        let _ = std::fs::remove_file(&payload);
        let version = paimon_wire::SerializerVersion::try_from(12).unwrap();
        let bound = self.coordinator.deserialize(version, &bytes).unwrap();
        let outcome = self.coordinator.commit(bound, identifier).await;
        assert!(
            matches!(outcome, Ok(CommitOutcome::Committed { .. })),
            "a Java writer's payload commits: {outcome:?}"
        );
        let rows: Vec<Row> = (from as i32..to as i32)
            .map(|i| (i, format!("p{}", i % 3), format!("{prefix}{i}")))
            .collect();
        self.apply_upserts(&rows);
        Some(Step::Honest("java write"))
    }

    /// pypaimon writes and commits rows itself (its own commit user).
    async fn pypaimon_write(&mut self) -> Option<Step> {
        std::env::var_os("PAIMON_WIRE_PYPAIMON")?;
        if self.is_dynamic() {
            // pypaimon reads the dynamic-bucket table (every check); its writer is not one of
            // the job's assigners, so it does not write here.
            return None;
        }
        let count = 1 + self.rng.below(6);
        let rows: Vec<Row> = self
            .random_rows(count)
            .into_iter()
            .map(|(id, pt, v)| (id, pt, format!("py{v}")))
            .collect();
        support::write_with_pypaimon(&self.warehouse, &format!("db.{}", self.name), &rows);
        self.apply_upserts(&rows);
        Some(Step::Honest("pypaimon write"))
    }

    async fn honest_compaction(&mut self) -> Step {
        let buckets = live_buckets(&self.table).await;
        if buckets.is_empty() {
            return Step::Skipped("compaction: empty table");
        }
        let pick = self.rng.below(buckets.len());
        let mut buckets: Vec<_> = buckets.into_iter().collect();
        buckets.rotate_left(pick);
        let files_of = |splits: &[DataSplit]| -> Vec<DataFileMeta> {
            splits
                .iter()
                .flat_map(|s| s.data_files().iter().cloned())
                .collect()
        };
        // A primary-key table's compaction takes whole sorted runs from the newest down (rule
        // compact-runs): the model upgrades a bucket's only level-0 file in place, to a level
        // below every level the bucket uses, as Java's universal compaction does when the
        // file overlaps nothing.
        let upgrade = |files: &[DataFileMeta]| -> Option<(DataFileMeta, i32)> {
            let level_0: Vec<&DataFileMeta> = files.iter().filter(|f| f.level == 0).collect();
            let lowest_upper = files.iter().map(|f| f.level).filter(|l| *l > 0).min();
            let level = lowest_upper.map_or(Some(1), |l| (l > 1).then_some(l - 1))?;
            (level_0.len() == 1).then(|| (level_0[0].clone(), level))
        };
        let chosen = if self.primary_key() {
            buckets
                .into_iter()
                .find(|(_, splits)| upgrade(&files_of(splits)).is_some())
        } else {
            buckets.into_iter().next()
        };
        let Some(((partition, bucket), splits)) = chosen else {
            return Step::Skipped("compaction: no bucket has a single level-0 file");
        };
        let files = files_of(&splits);
        let message = if self.primary_key() {
            let (file, level) = upgrade(&files).expect("chosen for it");
            let mut upgraded = file.clone();
            upgraded.level = level;
            compaction(&partition, bucket, vec![file], vec![upgraded])
        } else {
            // The bucket's visible rows rewritten into new files, its deletion vectors
            // dropped with the files they belong to.
            let visible = rows_of(&self.table, &splits).await;
            let rewrite = write(&self.table, &visible).await;
            let after: Vec<DataFileMeta> = rewrite.into_iter().flat_map(|m| m.new_files).collect();
            let mut message = compaction(&partition, bucket, files.clone(), after);
            message.compact_deleted_index_files = self.live_vectors(&partition, bucket).await;
            message
        };
        let outcome = self.commit(vec![message.clone()]).await;
        assert!(
            matches!(outcome, Ok(CommitOutcome::Committed { .. })),
            "an honest compaction commits: {outcome:?}"
        );
        let mut away = message;
        away.new_files = std::mem::take(&mut away.compact_before);
        away.compact_after.clear();
        away.compact_deleted_index_files.clear();
        away.new_files.retain(|f| {
            // An upgraded file is still live (at another level).
            !self.primary_key() || f.level != 0
        });
        if !away.new_files.is_empty() {
            self.compacted_away.push(away);
        }
        Step::Honest("compaction")
    }

    /// The live index files of the latest snapshot whose type is `index_type`.
    async fn live_index_entries(&self, index_type: &str) -> Vec<IndexManifestEntry> {
        let manager = self.table.snapshot_manager();
        let Some(snapshot) = manager.get_latest_snapshot().await.unwrap() else {
            return vec![];
        };
        let Some(index_manifest) = snapshot.index_manifest() else {
            return vec![];
        };
        paimon::spec::IndexManifest::read(
            self.table.file_io(),
            &manager.manifest_path(index_manifest),
        )
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.index_file.index_type == index_type)
        .collect()
    }

    /// The live deletion-vector index files of a bucket.
    async fn live_vectors(&self, partition: &[u8], bucket: i32) -> Vec<IndexFileMeta> {
        self.live_index_entries("DELETION_VECTORS")
            .await
            .into_iter()
            .filter(|e| e.partition == partition && e.bucket == bucket)
            .map(|e| e.index_file)
            .collect()
    }

    /// The live HASH index files, per (partition, bucket).
    async fn live_hash_indexes(&self) -> BTreeMap<Place, Vec<IndexFileMeta>> {
        let mut indexes: BTreeMap<Place, Vec<IndexFileMeta>> = BTreeMap::new();
        for entry in self.live_index_entries("HASH").await {
            indexes
                .entry((entry.partition, entry.bucket))
                .or_default()
                .push(entry.index_file);
        }
        indexes
    }

    async fn honest_delete(&mut self) -> Step {
        // Deletes the first rows of a file that has no deletion vector yet.
        for ((partition, bucket), splits) in live_buckets(&self.table).await {
            let vectors = self.live_vectors(&partition, bucket).await;
            for split in &splits {
                for file in split.data_files() {
                    if vectors.iter().any(|v| {
                        v.deletion_vectors_ranges
                            .as_ref()
                            .is_some_and(|r| r.contains_key(&file.file_name))
                    }) || file.row_count < 2
                    {
                        continue;
                    }
                    let single = paimon::table::DataSplit::builder()
                        .with_snapshot(split.snapshot_id())
                        .with_partition(split.partition().clone())
                        .with_bucket(bucket)
                        .with_bucket_path(split.bucket_path().to_string())
                        .with_data_files(vec![file.clone()])
                        .with_raw_convertible(true)
                        .build()
                        .unwrap();
                    let in_file = rows_of(&self.table, &[single]).await;
                    let deleted = &in_file[..1 + self.rng.below(in_file.len() - 1)];
                    let positions: Vec<u32> = (0..deleted.len() as u32).collect();
                    let vector = write_deletion_vectors(
                        &self.table,
                        &[(file.file_name.as_str(), positions.as_slice())],
                    );
                    let mut message = CommitMessage::new(partition.clone(), bucket, vec![]);
                    message.new_index_files = vec![vector];
                    let identifier = self.identifier();
                    let outcome = send(&self.deleting, &[message], identifier).await;
                    assert!(
                        matches!(outcome, Ok(CommitOutcome::Committed { .. })),
                        "an honest delete commits: {outcome:?}"
                    );
                    for row in deleted {
                        let at = self.model.iter().position(|r| r == row).unwrap();
                        self.model.remove(at);
                    }
                    return Step::Honest("delete");
                }
            }
        }
        Step::Skipped("delete: no file without a deletion vector")
    }

    async fn honest_rerun(&mut self) -> Step {
        let Some((parts, identifier)) = self.last.clone() else {
            return Step::Skipped("rerun: nothing committed yet");
        };
        let parts = self.shuffled(parts);
        let outcome = send_parts(&self.coordinator, &parts, identifier).await;
        assert!(
            matches!(outcome, Ok(CommitOutcome::AlreadyCommitted { .. })),
            "a rerun commits nothing: {outcome:?}"
        );
        Step::Honest("rerun")
    }

    // ---- the dynamic-bucket table -------------------------------------------------------

    /// Rows for the dynamic-bucket table: about half of them updates of keys the model holds,
    /// the others keys from a range that grows with the steps, so new keys keep coming (into
    /// non-full buckets and new ones).
    fn dynamic_rows(&mut self, count: usize) -> Vec<Row> {
        let mut keys = BTreeSet::new();
        while keys.len() < count {
            if !self.model.is_empty() && self.rng.below(2) == 0 {
                let (id, pt, _) = &self.model[self.rng.below(self.model.len())];
                keys.insert((*id, pt.clone()));
            } else {
                let id = self.rng.below(40 + self.step) as i32;
                let pt = PARTITIONS[self.rng.below(PARTITIONS.len())].to_string();
                keys.insert((id, pt));
            }
        }
        let step = self.step;
        keys.into_iter()
            .map(|(id, pt)| (id, pt, format!("s{step}_{id}")))
            .collect()
    }

    /// The job's workers writing `rows`: each assigner of the router writes the rows routed
    /// to it, restoring the table at `restore` (`None`: the latest snapshot). While every
    /// writer has been an assigner, each writes only buckets it owns.
    async fn dynamic_payload(&mut self, rows: &[Row], restore: Option<i64>) -> Parts {
        let dynamic = self.dynamic.as_ref().expect("a dynamic-bucket table");
        let as_batch = |rows: &[&Row]| {
            batch_with_values(
                &rows
                    .iter()
                    .map(|(id, pt, v)| (*id, pt.as_str(), v.clone()))
                    .collect::<Vec<_>>(),
            )
        };
        let all: Vec<&Row> = rows.iter().collect();
        let assigners = dynamic.router.assigner_ids(&as_batch(&all)).unwrap();
        let owners = dynamic.router.bucket_owning_assigners();
        let mut parts = Vec::new();
        for i in 0..dynamic.router.assigners() {
            let mine: Vec<&Row> = all
                .iter()
                .zip(&assigners)
                .filter(|(_, a)| **a == i)
                .map(|(row, _)| *row)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let share = dynamic.router.share(i).unwrap();
            let batch = as_batch(&mine);
            let messages = match restore {
                None => assigner_messages(&self.table, share, &batch).await.unwrap(),
                Some(snapshot) => {
                    // A worker of a commit prepared on snapshot `snapshot`.
                    let builder = self
                        .table
                        .new_write_builder()
                        .with_commit_user(USER)
                        .unwrap()
                        .with_restore_snapshot(snapshot)
                        .unwrap()
                        .with_dynamic_bucket_share(share);
                    let mut write = builder.new_write().unwrap();
                    write.write_arrow_batch(&batch).await.unwrap();
                    write.prepare_commit().await.unwrap()
                }
            };
            if dynamic.shares_only {
                for message in &messages {
                    assert_eq!(
                        message.bucket % owners,
                        i % owners,
                        "assigner {i} of {} wrote bucket {}",
                        dynamic.router.assigners(),
                        message.bucket
                    );
                }
            }
            parts.push(messages);
        }
        parts
    }

    /// The job's workers write and the coordinator commits their payloads, merged. `stale`:
    /// the workers prepared on an earlier snapshot (a commit that took long, with others
    /// committed meanwhile). The model says whether such a commit must be refused: when a
    /// bucket it writes got data or a HASH index since that snapshot (its sequence numbers or
    /// its index would be behind the table's: rules `sequence-numbers`, `hash-index-keys`),
    /// or when it writes a key first written since (that key would get a second bucket: rule
    /// `hash-index-keys`). Otherwise it commits, as a fresh one does.
    async fn dynamic_write(&mut self, stale: bool) -> Step {
        let latest = self
            .table
            .snapshot_manager()
            .get_latest_snapshot()
            .await
            .unwrap()
            .map_or(0, |s| s.id());
        if stale && latest == 0 {
            return Step::Skipped("stale workers: no snapshot yet");
        }
        // Mostly the snapshot before the latest, sometimes further back or the empty table.
        let restore = stale.then(|| latest - 1 - self.rng.below(latest.min(3) as usize) as i64);
        let count = 1 + self.rng.below(12);
        let rows = self.dynamic_rows(count);
        let parts = self.dynamic_payload(&rows, restore).await;
        let live_before = self.live_hash_indexes().await;
        let must_refuse = restore.is_some_and(|since| {
            let dynamic = self.dynamic.as_ref().unwrap();
            let changed = parts.iter().flatten().any(|m| {
                dynamic
                    .changed_at
                    .get(&(m.partition.clone(), m.bucket))
                    .is_some_and(|&at| at > since)
            });
            let new_since = rows.iter().any(|(id, pt, _)| {
                dynamic
                    .written_at
                    .get(&(*id, pt.clone()))
                    .is_some_and(|&at| at > since)
            });
            changed || new_since
        });
        let outcome = self.commit_parts(parts.clone()).await;
        let what = if stale { "stale workers" } else { "write" };
        if must_refuse {
            let error = outcome.expect_err("stale workers behind the table must be refused");
            let rule = error.as_validation().map(|v| v.rule);
            assert!(
                matches!(rule, Some(Rule::SequenceNumbers | Rule::HashIndexKeys)),
                "stale workers (restored at {restore:?}): {error}"
            );
            *self.dynamic().coverage.entry("stale refused").or_default() += 1;
            return Step::Hostile("stale workers", rule);
        }
        let snapshot_id = match outcome {
            Ok(CommitOutcome::Committed { snapshot_id }) => snapshot_id,
            other => panic!("{what} (restored at {restore:?}) must commit: {other:?}"),
        };
        // Each bucket that got a new HASH index has it live now, in place of its old one;
        // the other buckets keep theirs.
        let live_after = self.live_hash_indexes().await;
        let mut coverage: Vec<&'static str> = Vec::new();
        for message in parts.iter().flatten() {
            let key = (message.partition.clone(), message.bucket);
            match message.new_index_files.as_slice() {
                [] => assert_eq!(live_after.get(&key), live_before.get(&key), "{key:?}"),
                [index] => {
                    assert_eq!(index.index_type, "HASH", "{message:?}");
                    assert_eq!(
                        live_after.get(&key),
                        Some(&vec![index.clone()]),
                        "the new HASH index of {key:?} replaces the old one"
                    );
                    coverage.push(if live_before.contains_key(&key) {
                        "keys into an existing bucket"
                    } else {
                        "keys into a new bucket"
                    });
                }
                more => panic!("{} HASH indexes for {key:?}", more.len()),
            }
        }
        let dynamic = self.dynamic.as_mut().unwrap();
        for message in parts.iter().flatten() {
            if !message.new_files.is_empty() || !message.new_index_files.is_empty() {
                dynamic
                    .changed_at
                    .insert((message.partition.clone(), message.bucket), snapshot_id);
            }
        }
        let known: BTreeSet<Key> = self
            .model
            .iter()
            .map(|(id, pt, _)| (*id, pt.clone()))
            .collect();
        for (id, pt, _) in &rows {
            let key = (*id, pt.clone());
            if known.contains(&key) {
                coverage.push("updates of existing keys");
            } else {
                dynamic.written_at.insert(key, snapshot_id);
            }
        }
        if stale {
            coverage.push("stale committed");
        }
        for what in coverage {
            *dynamic.coverage.entry(what).or_default() += 1;
        }
        self.apply_upserts(&rows);
        Step::Honest(what)
    }

    /// The key hashes of `keys`, as the table's HASH indexes hold them (the trimmed primary
    /// key `id`, hashed as a `BinaryRow`).
    fn key_hashes(&self, keys: &[Key]) -> Vec<i32> {
        let rows: Vec<(i32, &str, String)> = keys
            .iter()
            .map(|(id, pt)| (*id, pt.as_str(), String::new()))
            .collect();
        paimon::spec::batch_hash_codes(
            &batch_with_values(&rows),
            &[0],
            self.table.schema().fields(),
        )
        .unwrap()
    }

    /// The dynamic-bucket table's invariants, after every step: each key is in one bucket,
    /// the one it was first written to (a key never moves); while only the job's assigners
    /// wrote, that bucket is owned by the key's assigner; every bucket with data has exactly
    /// one live HASH index, and it lists exactly the hashes of the bucket's keys, so no hash
    /// is in two buckets of a partition.
    async fn check_dynamic(&mut self, what: &Step) {
        let context = format!("step {} ({what:?})", self.step);
        let mut keys_of: BTreeMap<Place, Vec<Key>> = BTreeMap::new();
        let mut bucket_of: BTreeMap<Key, i32> = BTreeMap::new();
        for ((partition, bucket), splits) in live_buckets(&self.table).await {
            assert!(
                (0..MAX_DYNAMIC_BUCKETS).contains(&bucket),
                "{context}: bucket {bucket}"
            );
            // A bucket is read again only when its files changed (data files never change).
            let place = (partition, bucket);
            let files: BTreeSet<String> = splits
                .iter()
                .flat_map(|s| s.data_files().iter().map(|f| f.file_name.clone()))
                .collect();
            let cached = self.dynamic.as_ref().unwrap().bucket_keys.get(&place);
            let keys = match cached {
                Some((read, keys)) if *read == files => keys.clone(),
                _ => {
                    let keys: Vec<Key> = rows_of(&self.table, &splits)
                        .await
                        .into_iter()
                        .map(|(id, pt, _)| (id, pt))
                        .collect();
                    let cache = &mut self.dynamic().bucket_keys;
                    cache.insert(place.clone(), (files, keys.clone()));
                    keys
                }
            };
            for key in &keys {
                if let Some(other) = bucket_of.insert(key.clone(), bucket) {
                    panic!("{context}: key {key:?} in buckets {other} and {bucket}");
                }
            }
            keys_of.insert(place, keys);
        }
        let indexes = self.live_hash_indexes().await;
        assert_eq!(
            indexes.keys().collect::<Vec<_>>(),
            keys_of.keys().collect::<Vec<_>>(),
            "{context}: the buckets with a HASH index are the buckets with data"
        );
        for (place, keys) in &keys_of {
            let [index] = indexes[place].as_slice() else {
                panic!(
                    "{context}: {} HASH indexes in {place:?}",
                    indexes[place].len()
                );
            };
            let table = &self.table;
            let listed = self
                .dynamic
                .as_mut()
                .unwrap()
                .index_hashes
                .entry(index.file_name.clone())
                .or_insert_with(|| read_hash_index(table, &index.file_name))
                .clone();
            assert_eq!(listed.len() as i64, index.row_count, "{context}: {index:?}");
            let listed: BTreeSet<i32> = listed.into_iter().collect();
            assert_eq!(
                listed.len() as i64,
                index.row_count,
                "{context}: a hash twice in {index:?}"
            );
            let hashes: BTreeSet<i32> = self.key_hashes(keys).into_iter().collect();
            assert_eq!(
                listed, hashes,
                "{context}: the HASH index of {place:?} lists its keys"
            );
        }
        let dynamic = self.dynamic.as_mut().unwrap();
        for (key, bucket) in &bucket_of {
            let first = *dynamic.bucket_of.entry(key.clone()).or_insert(*bucket);
            assert_eq!(first, *bucket, "{context}: key {key:?} moved");
        }
        if dynamic.shares_only && !bucket_of.is_empty() {
            let keys: Vec<&Key> = bucket_of.keys().collect();
            let batch = batch_with_values(
                &keys
                    .iter()
                    .map(|(id, pt)| (*id, pt.as_str(), String::new()))
                    .collect::<Vec<_>>(),
            );
            let owners = dynamic.router.bucket_owning_assigners();
            let assigners = dynamic.router.assigner_ids(&batch).unwrap();
            for (key, assigner) in keys.iter().zip(assigners) {
                assert_eq!(
                    bucket_of[*key] % owners,
                    assigner % owners,
                    "{context}: key {key:?} is in a bucket of another assigner"
                );
            }
        }
    }

    /// Hostile payloads against the HASH indexes, from honest workers' payloads altered.
    async fn dynamic_hostile(&mut self, class: usize) -> Step {
        let live = self.live_hash_indexes().await;
        let Some(((partition, bucket), indexes)) = live.iter().next() else {
            return Step::Skipped("HASH hostile: no index yet");
        };
        let (partition, bucket, index) = (partition.clone(), *bucket, indexes[0].clone());
        let count = 1 + self.rng.below(6);
        let rows = self.dynamic_rows(count);
        let mut messages = self.dynamic_payload(&rows, None).await.concat();
        match class {
            0 => {
                // A bucket's new index that forgets a key of the index it replaces.
                let Some(message) = with_new_index(&mut messages, &live, true) else {
                    return Step::Skipped("forgetting index: no key into an existing bucket");
                };
                let old = &live[&(message.partition.clone(), message.bucket)][0];
                let dropped = read_hash_index(&self.table, &old.file_name)[0];
                let mut hashes =
                    read_hash_index(&self.table, &message.new_index_files[0].file_name);
                hashes.retain(|h| *h != dropped);
                let name = format!("index-forgetting-{}-0", self.step);
                message.new_index_files = vec![write_hash_index(&self.table, &name, &hashes)];
                self.expect_refused(
                    "index forgets a key",
                    messages,
                    Some(Rule::HashIndexKeys),
                    None,
                )
                .await
            }
            1 => {
                // A bucket's new index that also lists a key another bucket holds.
                let found = messages.iter_mut().find_map(|m| {
                    let other = live
                        .iter()
                        .find(|((p, b), _)| *p == m.partition && *b != m.bucket)?;
                    (!m.new_index_files.is_empty()).then_some((m, other.1[0].clone()))
                });
                let Some((message, other)) = found else {
                    return Step::Skipped("key in two buckets: no other bucket in the partition");
                };
                let stolen = read_hash_index(&self.table, &other.file_name)[0];
                let mut hashes =
                    read_hash_index(&self.table, &message.new_index_files[0].file_name);
                hashes.push(stolen);
                let name = format!("index-stealing-{}-0", self.step);
                message.new_index_files = vec![write_hash_index(&self.table, &name, &hashes)];
                self.expect_refused(
                    "one key hash, two buckets",
                    messages,
                    Some(Rule::HashIndexKeys),
                    None,
                )
                .await
            }
            2 => {
                // A bucket's HASH index deleted, with nothing in its place (data list or
                // compaction list).
                let mut message = CommitMessage::new(partition, bucket, vec![]);
                if self.rng.below(2) == 0 {
                    message.deleted_index_files = vec![index];
                } else {
                    message.compact_deleted_index_files = vec![index];
                }
                self.expect_refused(
                    "HASH index deleted",
                    vec![message],
                    Some(Rule::HashIndexReplaced),
                    None,
                )
                .await
            }
            3 => {
                // Keys into a new bucket, without its index.
                let Some(message) = with_new_index(&mut messages, &live, false) else {
                    return Step::Skipped("new bucket without index: no new bucket");
                };
                message.new_index_files.clear();
                self.expect_refused(
                    "new bucket without index",
                    messages,
                    Some(Rule::HashIndexCoverage),
                    None,
                )
                .await
            }
            4 => {
                // An index whose row count is not its size.
                let Some(message) = messages.iter_mut().find(|m| !m.new_index_files.is_empty())
                else {
                    return Step::Skipped("row count: no new index");
                };
                message.new_index_files[0].row_count += 1;
                self.expect_refused(
                    "HASH index row count",
                    messages,
                    Some(Rule::HashIndexKeys),
                    None,
                )
                .await
            }
            5 => {
                // A bucket beyond Java's range (a Java reader would fail on it).
                let far = [MAX_DYNAMIC_BUCKETS, 40_000, i32::MAX][self.rng.below(3)];
                messages[0].bucket = far;
                self.expect_refused("bucket beyond 32767", messages, Some(Rule::Bucket), None)
                    .await
            }
            _ => {
                // A live HASH index claimed by another bucket of its partition.
                let mut claim = CommitMessage::new(partition, bucket + 1, vec![]);
                claim.new_index_files = vec![index];
                self.expect_refused(
                    "live index claimed by another bucket",
                    vec![claim],
                    Some(Rule::AlreadyLive),
                    None,
                )
                .await
            }
        }
    }

    /// The end of a dynamic-bucket run: fresh writers of every partition restore the HASH
    /// indexes the run left. A new job (its own coordinator, fresh assigners) updates every
    /// key and adds new ones; its identifier is then committed again by a second
    /// coordinator; last, a single writer of every key (one process) does the same.
    async fn fresh_writers(&mut self, warehouse: &Warehouse, name: &str) {
        self.coordinator = bind(&self.table, self.coordinator.binding().clone()).await;
        for round in ["fresh job", "single writer"] {
            self.step += 1;
            let top = self.model.iter().map(|r| r.0).max().unwrap_or(0) + 1;
            let mut rows: Vec<Row> = self
                .model
                .iter()
                .map(|(id, pt, _)| (*id, pt.clone(), format!("{round} {id}")))
                .collect();
            for (i, pt) in PARTITIONS.iter().enumerate() {
                for id in [top + i as i32, top + 10 + i as i32] {
                    rows.push((id, pt.to_string(), format!("{round} {id}")));
                }
            }
            let parts = if round == "fresh job" {
                self.dynamic_payload(&rows, None).await
            } else {
                self.dynamic().shares_only = false;
                let batch = batch_with_values(
                    &rows
                        .iter()
                        .map(|(id, pt, v)| (*id, pt.as_str(), v.clone()))
                        .collect::<Vec<_>>(),
                );
                vec![assigner_messages(&self.table, AssignerShare::WHOLE, &batch)
                    .await
                    .unwrap()]
            };
            let outcome = self.commit_parts(parts.clone()).await;
            assert!(
                matches!(outcome, Ok(CommitOutcome::Committed { .. })),
                "{round} after the run: {outcome:?}"
            );
            self.apply_upserts(&rows);
            let what = Step::Honest(round);
            self.check(warehouse, name, &what).await;
            self.check_dynamic(&what).await;
            if round == "fresh job" {
                let identifier = self.next_identifier;
                self.second_coordinator(parts, identifier).await;
            }
            self.log.push(format!("{}: {what:?}", self.step));
        }
    }

    // ---- hostile steps ------------------------------------------------------------------

    /// Sends `messages` as a fresh identifier (or `identifier`) and expects a refusal by
    /// `rule` (`None`: a rerun that must report the identifier committed).
    async fn expect_refused(
        &mut self,
        class: &'static str,
        messages: Vec<CommitMessage>,
        rule: Option<Rule>,
        identifier: Option<i64>,
    ) -> Step {
        let identifier = identifier.unwrap_or(self.next_identifier + 1);
        let result = send(&self.coordinator, &messages, identifier).await;
        match (rule, result) {
            (Some(rule), Err(error)) => {
                let got = error.as_validation().map(|v| v.rule);
                assert_eq!(got, Some(rule), "{class}: {error}");
            }
            (None, Ok(CommitOutcome::AlreadyCommitted { .. })) => {}
            (None, Err(CoordinatorError::IdentifierReused { .. })) => {}
            (_, other) => panic!("{class}: expected a refusal by {rule:?}, got {other:?}"),
        }
        Step::Hostile(class, rule)
    }

    async fn hostile(&mut self) -> Step {
        let buckets = live_buckets(&self.table).await;
        let Some(((partition, bucket), splits)) = buckets.into_iter().next() else {
            return Step::Skipped("hostile: empty table");
        };
        let files: Vec<DataFileMeta> = splits
            .iter()
            .flat_map(|s| s.data_files().iter().cloned())
            .collect();
        let pk = self.primary_key();
        // The dynamic-bucket table has no classes 9 and 10 (append tables only), and seven
        // classes of its own against the HASH indexes.
        let class = self.rng.below(if self.is_dynamic() { 16 } else { 11 });
        if self.is_dynamic() && class >= 9 {
            return self.dynamic_hostile(class - 9).await;
        }
        match class {
            0 => {
                // Erase: the bucket compacted into nothing.
                let rule = if pk {
                    Rule::CompactContent
                } else {
                    Rule::CompactRows
                };
                let erase = compaction(&partition, bucket, files, vec![]);
                self.expect_refused("erase", vec![erase], Some(rule), None)
                    .await
            }
            1 => {
                // A stale writer's files as results without inputs.
                let rows = self.random_rows(2);
                let mut stale: Vec<DataFileMeta> = write(&self.table, &rows)
                    .await
                    .into_iter()
                    .flat_map(|m| m.new_files)
                    .collect();
                for file in &mut stale {
                    file.level = 1;
                }
                let smuggled = compaction(&partition, bucket, vec![], stale);
                self.expect_refused(
                    "results without inputs",
                    vec![smuggled],
                    Some(Rule::CompactInputs),
                    None,
                )
                .await
            }
            2 => {
                // New files above level 0.
                let rows = self.random_rows(3);
                let mut messages = write(&self.table, &rows).await;
                for file in messages.iter_mut().flat_map(|m| &mut m.new_files) {
                    file.level = 2;
                }
                self.expect_refused(
                    "level-2 new files",
                    messages,
                    Some(Rule::NewFileLevel),
                    None,
                )
                .await
            }
            3 => {
                // A compaction input that differs from the live entry.
                let mut forged = files[0].clone();
                forged.extra_files.push("data-forged.index".into());
                let message = if pk {
                    // An in-place upgrade of the forged entry.
                    let mut upgraded = forged.clone();
                    upgraded.level = forged.level + 1;
                    compaction(&partition, bucket, vec![forged], vec![upgraded])
                } else {
                    let rows = rows_of(&self.table, &splits).await;
                    let after = write(&self.table, &rows)
                        .await
                        .into_iter()
                        .flat_map(|m| m.new_files)
                        .collect();
                    let mut inputs = files.clone();
                    inputs[0] = forged;
                    compaction(&partition, bucket, inputs, after)
                };
                self.expect_refused("forged input", vec![message], Some(Rule::NotLive), None)
                    .await
            }
            4 => {
                // A sequence number that would brick the bucket.
                let rows = self.random_rows(1);
                let mut messages = write(&self.table, &rows).await;
                messages[0].new_files[0].max_sequence_number = MAX_SEQUENCE_OR_ROW_ID;
                self.expect_refused("bricking sequence", messages, Some(Rule::Bounds), None)
                    .await
            }
            5 => {
                // Files a compaction removed, sent again.
                let Some(away) = self.compacted_away.first().cloned() else {
                    return Step::Skipped("resurrect: nothing compacted away yet");
                };
                self.expect_refused(
                    "compacted-away files again",
                    vec![away],
                    Some(Rule::AlreadyLive),
                    None,
                )
                .await
            }
            6 => {
                // A rerun of the last identifier that now carries an erasing compaction.
                let Some((parts, identifier)) = self.last.clone() else {
                    return Step::Skipped("rerun: nothing committed yet");
                };
                let mut messages = parts.concat();
                messages.push(compaction(&partition, bucket, files, vec![]));
                self.expect_refused("rerun with a compaction", messages, None, Some(identifier))
                    .await
            }
            7 if pk => {
                // A key range turned upside down.
                let rows = self.random_rows(6);
                let mut messages = write(&self.table, &rows).await;
                let Some(file) = messages
                    .iter_mut()
                    .flat_map(|m| &mut m.new_files)
                    .find(|f| f.min_key != f.max_key)
                else {
                    return Step::Skipped("key range: one key per file");
                };
                std::mem::swap(&mut file.min_key, &mut file.max_key);
                self.expect_refused("swapped key range", messages, Some(Rule::KeyRange), None)
                    .await
            }
            8 => {
                // A second coordinator of the job (an engine's failover) commits the last
                // identifier again (on the dynamic-bucket table, any committed one: its HASH
                // indexes may have been replaced since).
                let Some((parts, identifier)) = self.last.clone() else {
                    return Step::Skipped("second coordinator: nothing committed yet");
                };
                let (parts, identifier) = if self.is_dynamic() {
                    let pick = self.rng.below(self.committed.len());
                    self.committed[pick].clone()
                } else {
                    (parts, identifier)
                };
                self.second_coordinator(parts, identifier).await;
                Step::Hostile("second coordinator, one identifier", None)
            }
            9 if !pk => {
                // A live deletion vector carried by a compaction of another file, with the
                // same length and cardinality but other positions (rows it hid come back,
                // live rows are hidden).
                let vectors = self.live_vectors(&partition, bucket).await;
                let carried = vectors.iter().find_map(|v| {
                    let (name, range) = v.deletion_vectors_ranges.as_ref()?.iter().next()?;
                    Some((v.clone(), name.clone(), range.cardinality?))
                });
                let Some((live, name, hidden)) = carried else {
                    return Step::Skipped("carried vector: no deletion vector in the bucket");
                };
                // The compacted file has no deletion vector of its own: its rewritten rows are
                // then exactly the rows it shows (else the rows would not add up, and rule
                // compact-rows, which runs first, refuses it).
                let has_vector = |file: &DataFileMeta| {
                    vectors.iter().any(|v| {
                        v.deletion_vectors_ranges
                            .as_ref()
                            .is_some_and(|r| r.contains_key(&file.file_name))
                    })
                };
                let Some(other) = files.iter().find(|f| f.file_name != name && !has_vector(f))
                else {
                    return Step::Skipped("carried vector: no other file without a vector");
                };
                let Some(target) = files.iter().find(|f| f.file_name == name) else {
                    return Step::Skipped("carried vector: its file is not in the bucket");
                };
                if other.delete_row_count.unwrap_or(0) > 0 || target.row_count <= hidden {
                    return Step::Skipped("carried vector: no room to shift its positions");
                }
                // Honest deletes hide the first rows: positions 0..n. Shifted by one.
                let shifted: Vec<u32> = (1..=hidden as u32).collect();
                let single = paimon::table::DataSplit::builder()
                    .with_snapshot(splits[0].snapshot_id())
                    .with_partition(splits[0].partition().clone())
                    .with_bucket(bucket)
                    .with_bucket_path(splits[0].bucket_path().to_string())
                    .with_data_files(vec![other.clone()])
                    .with_raw_convertible(true)
                    .build()
                    .unwrap();
                let rows = rows_of(&self.table, &[single]).await;
                let after: Vec<DataFileMeta> = write(&self.table, &rows)
                    .await
                    .into_iter()
                    .flat_map(|m| m.new_files)
                    .collect();
                let mut message = compaction(&partition, bucket, vec![other.clone()], after);
                message.compact_deleted_index_files = vec![live];
                message.compact_new_index_files =
                    vec![write_deletion_vectors(&self.table, &[(&name, &shifted)])];
                self.expect_refused(
                    "carried vector, other positions",
                    vec![message],
                    Some(Rule::DeletionVectors),
                    None,
                )
                .await
            }
            _ if !pk => {
                // A deletion vector slipped into a compaction, on a file it does not compact.
                if files.len() < 2 {
                    return Step::Skipped("hide: one file in the bucket");
                }
                let rows = rows_of(&self.table, &splits).await;
                let after: Vec<DataFileMeta> = write(&self.table, &rows)
                    .await
                    .into_iter()
                    .flat_map(|m| m.new_files)
                    .collect();
                let mut message =
                    compaction(&partition, bucket, files[1..].to_vec(), after.clone());
                message.compact_new_index_files = vec![write_deletion_vectors(
                    &self.table,
                    &[(files[0].file_name.as_str(), &[0])],
                )];
                // The rows out would not add up either; the deletion-vector rule runs after
                // the row count, so make the rows match by compacting every file but
                // claiming only the others' rows: a refusal by either rule is right.
                let result = send(&self.coordinator, &[message], self.next_identifier + 1).await;
                let rule = result
                    .expect_err("hide must be refused")
                    .as_validation()
                    .map(|v| v.rule);
                assert!(
                    matches!(rule, Some(Rule::DeletionVectors | Rule::CompactRows)),
                    "hide: {rule:?}"
                );
                Step::Hostile("hidden rows", rule)
            }
            _ => Step::Skipped("no class left for this table"),
        }
    }

    /// A second coordinator of the job (an engine's failover: a fresh one, and the standby
    /// bound before the first commit) commits `identifier` again: with other payloads it is
    /// refused, with the very same ones (in any order) it reports the identifier committed.
    /// Either way nothing is published.
    async fn second_coordinator(&mut self, parts: Parts, identifier: i64) {
        let fresh = bind(&self.table, self.coordinator.binding().clone()).await;
        let rows = self.random_rows(2);
        let other = write(&self.table, &rows).await;
        let parts = self.shuffled(parts);
        for (which, second) in [("fresh", &fresh), ("standby", &self.standby)] {
            let refused = send(second, &other, identifier).await;
            assert!(
                matches!(refused, Err(CoordinatorError::IdentifierReused { .. })),
                "{which}: another payload under committed identifier {identifier}: {refused:?}"
            );
            let again = send_parts(second, &parts, identifier).await;
            assert!(
                matches!(again, Ok(CommitOutcome::AlreadyCommitted { .. })),
                "{which}: the same payloads under committed identifier {identifier}: {again:?}"
            );
        }
    }

    async fn check(&self, warehouse: &Warehouse, name: &str, what: &Step) {
        let rows = read_rows(&self.table).await;
        let context = || format!("step {} ({what:?}); log: {:#?}", self.step, self.log);
        assert_eq!(rows, self.model, "paimon crate reader: {}", context());
        if let Some(rows) = read_with_pypaimon(warehouse.path(), &format!("db.{name}")) {
            assert_eq!(rows, self.model, "pypaimon: {}", context());
        }
    }
}

async fn run(kind: Kind, name: &str) {
    // CI's bound: 30 steps per table; the long soak run (PAIMON_WIRE_LONG_TESTS=1) takes 400.
    let long = std::env::var("PAIMON_WIRE_LONG_TESTS").as_deref() == Ok("1");
    let steps: usize = std::env::var("PAIMON_WIRE_STATEFUL_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if long { 400 } else { 30 });
    let seed: u64 = std::env::var("PAIMON_WIRE_STATEFUL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_2025);
    eprintln!("stateful model {name}: {steps} steps, seed {seed}");
    let started = std::time::Instant::now();
    let warehouse = Warehouse::new();
    let dynamic = matches!(kind, Kind::DynamicBucketPk);
    // Small dynamic buckets (4 keys), so that keys keep filling buckets and opening new ones.
    let options = if dynamic { SMALL_BUCKETS } else { &[] };
    let table = warehouse.create_with_options(name, kind, options).await;
    let binding = match kind {
        Kind::FixedBucketPk | Kind::DynamicBucketPk => {
            Binding::append(USER).with_verified_compaction()
        }
        _ => Binding::append(USER).with_compaction(),
    };
    let mut run = Run {
        warehouse: warehouse.path().to_string(),
        name: name.to_string(),
        coordinator: bind(&table, binding.clone()).await,
        standby: bind(&table, binding.clone()).await,
        deleting: bind(&table, binding.with_deletes()).await,
        dynamic: dynamic.then(|| Dynamic {
            // Three workers, as Flink runs a dynamic-bucket sink with parallelism 3.
            router: AssignerRouter::for_table(&table, 3).unwrap(),
            bucket_of: BTreeMap::new(),
            changed_at: BTreeMap::new(),
            written_at: BTreeMap::new(),
            shares_only: true,
            coverage: BTreeMap::new(),
            bucket_keys: BTreeMap::new(),
            index_hashes: BTreeMap::new(),
        }),
        table,
        kind,
        model: Vec::new(),
        next_identifier: 0,
        last: None,
        committed: Vec::new(),
        rng: Rng(seed.max(1)),
        step: 0,
        compacted_away: Vec::new(),
        log: Vec::new(),
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for step in 0..steps {
        run.step = step;
        let snapshots = snapshot_count(&run.table).await;
        let what = match run.rng.below(12) {
            0 => match run.java_write().await {
                Some(step) => step,
                None => run.honest_write().await,
            },
            1 => match run.pypaimon_write().await {
                Some(step) => step,
                None => run.honest_write().await,
            },
            2 | 3 => run.honest_write().await,
            4 | 5 => run.honest_compaction().await,
            6 if !run.primary_key() => run.honest_delete().await,
            6 if run.is_dynamic() => run.dynamic_write(true).await,
            6 => run.honest_compaction().await,
            7 => run.honest_rerun().await,
            _ => run.hostile().await,
        };
        if matches!(what, Step::Hostile(..) | Step::Skipped(_))
            || matches!(what, Step::Honest("rerun"))
        {
            assert_eq!(
                snapshot_count(&run.table).await,
                snapshots,
                "step {step} ({what:?}) changed the snapshots"
            );
        }
        run.log.push(format!("{step}: {what:?}"));
        let key = match &what {
            Step::Honest(s) => format!("honest {s}"),
            Step::Hostile(s, _) => format!("hostile {s}"),
            Step::Skipped(_) => "skipped".into(),
        };
        *counts.entry(key).or_default() += 1;
        run.check(&warehouse, name, &what).await;
        if run.is_dynamic() {
            run.check_dynamic(&what).await;
        }
    }
    if run.is_dynamic() {
        run.fresh_writers(&warehouse, name).await;
        let coverage = &run.dynamic().coverage;
        eprintln!("stateful model {name}: HASH coverage {coverage:?}");
        if steps >= 30 {
            for what in [
                "keys into a new bucket",
                "keys into an existing bucket",
                "updates of existing keys",
            ] {
                assert!(
                    coverage.get(what).is_some_and(|n| *n > 0),
                    "no {what}: {coverage:?}"
                );
            }
        }
    }
    eprintln!(
        "stateful model {name}: {counts:?} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let hostile: usize = counts
        .iter()
        .filter(|(k, _)| k.starts_with("hostile"))
        .map(|(_, n)| n)
        .sum();
    assert!(hostile > 0, "no hostile step ran: {counts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_table_with_deletion_vectors_matches_its_model() {
    run(Kind::DeletionVectorAppend, "dv_append").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_key_table_with_verified_compaction_matches_its_model() {
    run(Kind::FixedBucketPk, "pk").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamic_bucket_table_written_by_three_assigners_matches_its_model() {
    run(Kind::DynamicBucketPk, "dynamic").await;
}
