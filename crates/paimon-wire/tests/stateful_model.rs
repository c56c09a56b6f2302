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
//! Two tables, two bindings:
//! - an append table with deletion vectors, compaction allowed (metadata rules): honest
//!   writes, honest row deletes (deletion vectors, a binding with deletes), honest
//!   compactions (a bucket's visible rows rewritten, its deletion vectors dropped with it);
//! - a primary-key table (2 fixed buckets), compaction verified by reading (rule
//!   `compact-content`): honest upserts from one writer per bucket and honest compactions
//!   (in-place upgrades, as Java's universal compaction makes them).
//!
//! Bounded in CI (`cargo test`: 30 steps per table, a fixed seed). Longer runs:
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

use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::{CommitMessage, DataSplit, Table};
use paimon_wire::coordinator::validate::MAX_SEQUENCE_OR_ROW_ID;
use paimon_wire::coordinator::{Binding, CommitOutcome, Coordinator, CoordinatorError, Rule};
use support::{
    batch_with_values, bind, read_rows, read_with_pypaimon, send, snapshot_count,
    write_deletion_vectors, Kind, Warehouse, USER,
};

type Row = (i32, String, String);

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

struct Run {
    table: Table,
    kind: Kind,
    warehouse: String,
    name: String,
    coordinator: Coordinator,
    deleting: Coordinator,
    model: Vec<Row>,
    next_identifier: i64,
    last: Option<(Vec<CommitMessage>, i64)>,
    rng: Rng,
    step: usize,
    /// Files that compactions removed, to send back.
    compacted_away: Vec<CommitMessage>,
    log: Vec<String>,
}

/// The live files of the latest snapshot, per (partition bytes, bucket), as the scan plans
/// them, with their deletion files.
async fn live_buckets(table: &Table) -> BTreeMap<(Vec<u8>, i32), Vec<DataSplit>> {
    let plan = table
        .new_read_builder()
        .new_scan()
        .plan()
        .await
        .expect("plan");
    let mut buckets: BTreeMap<(Vec<u8>, i32), Vec<DataSplit>> = BTreeMap::new();
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
        matches!(self.kind, Kind::FixedBucketPk)
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
        let identifier = self.identifier();
        let outcome = send(&self.coordinator, &messages, identifier)
            .await
            .map_err(|e| e.to_string())?;
        self.last = Some((messages, identifier));
        Ok(outcome)
    }

    // ---- honest steps -------------------------------------------------------------------

    async fn honest_write(&mut self) -> Step {
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
        if !self.primary_key() {
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
        let python = std::env::var("PAIMON_WIRE_PYPAIMON").ok()?;
        let count = 1 + self.rng.below(6);
        let rows: Vec<Row> = self
            .random_rows(count)
            .into_iter()
            .map(|(id, pt, v)| (id, pt, format!("py{v}")))
            .collect();
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
            .args(["-c", script, &self.warehouse, &format!("db.{}", self.name)])
            .arg(serde_json::to_string(&rows).unwrap())
            .output()
            .expect("run pypaimon");
        assert!(
            out.status.success(),
            "pypaimon write failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
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

    /// The live deletion-vector index files of a bucket.
    async fn live_vectors(&self, partition: &[u8], bucket: i32) -> Vec<IndexFileMeta> {
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
        .filter(|e| {
            e.partition == partition
                && e.bucket == bucket
                && e.index_file.index_type == "DELETION_VECTORS"
        })
        .map(|e| e.index_file)
        .collect()
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
        let Some((messages, identifier)) = self.last.clone() else {
            return Step::Skipped("rerun: nothing committed yet");
        };
        let outcome = send(&self.coordinator, &messages, identifier).await;
        assert!(
            matches!(outcome, Ok(CommitOutcome::AlreadyCommitted { .. })),
            "a rerun commits nothing: {outcome:?}"
        );
        Step::Honest("rerun")
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
        match self.rng.below(11) {
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
                let Some((mut messages, identifier)) = self.last.clone() else {
                    return Step::Skipped("rerun: nothing committed yet");
                };
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
                // identifier again: with other payloads it is refused, with the very same
                // ones it reports the identifier committed. Either way nothing is published.
                let Some((messages, identifier)) = self.last.clone() else {
                    return Step::Skipped("second coordinator: nothing committed yet");
                };
                let second = bind(&self.table, self.coordinator.binding().clone()).await;
                let rows = self.random_rows(2);
                let other = write(&self.table, &rows).await;
                let refused = send(&second, &other, identifier).await;
                assert!(
                    matches!(refused, Err(CoordinatorError::IdentifierReused { .. })),
                    "another payload under a committed identifier: {refused:?}"
                );
                let again = send(&second, &messages, identifier).await;
                assert!(
                    matches!(again, Ok(CommitOutcome::AlreadyCommitted { .. })),
                    "the same payload under its committed identifier: {again:?}"
                );
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
                let Some(other) = files.iter().find(|f| f.file_name != name) else {
                    return Step::Skipped("carried vector: one file in the bucket");
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
    let steps: usize = std::env::var("PAIMON_WIRE_STATEFUL_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let seed: u64 = std::env::var("PAIMON_WIRE_STATEFUL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_2025);
    eprintln!("stateful model {name}: {steps} steps, seed {seed}");
    let warehouse = Warehouse::new();
    let table = warehouse.create(name, kind).await;
    let binding = match kind {
        Kind::FixedBucketPk => Binding::append(USER).with_verified_compaction(),
        _ => Binding::append(USER).with_compaction(),
    };
    let mut run = Run {
        warehouse: warehouse.path().to_string(),
        name: name.to_string(),
        coordinator: bind(&table, binding.clone()).await,
        deleting: bind(&table, binding.with_deletes()).await,
        table,
        kind,
        model: Vec::new(),
        next_identifier: 0,
        last: None,
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
    }
    eprintln!("stateful model {name}: {counts:?}");
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
