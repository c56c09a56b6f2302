// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! Writing one commit's delta and changelog manifest files as its messages arrive.
//!
//! [`TableCommit::commit`] turns the whole list of messages into manifest entries and then
//! encodes them, so a commit of `n` files holds `n` entries at once. A
//! [`DeltaManifestWriter`] takes the messages in batches instead: each batch becomes entries,
//! the entries are encoded into the open manifest file, and a file that reaches the target
//! size is written and its entries dropped. It holds at most one open file's entries per
//! list, and at most two batches waiting. The encoding runs on a thread of the writer's own
//! (`encoder`), so the caller's task produces the next batch meanwhile. The files roll where a single run of [`TableCommit::write_manifest_files`] rolls
//! them (`manifest_file_is_full`), and their metadata is computed by the same code.
//!
//! It takes the files of an ADD-only commit: new files and new changelog files. Deleted files,
//! index files, compaction increments, files written over existing rows and a
//! `check_from_snapshot` are refused, because what they commit or check depends on the
//! snapshot the commit builds on. So are tables with row tracking, whose new files get row
//! ids from the base snapshot.
//!
//! As the entries go by, the writer also keeps what the commit's checks read from them
//! ([`DeltaFacts`]): a 128-bit key of each file's identity, the partitions and their bucket
//! counts, and the partition statistics. It runs the checks that read the delta alone (no
//! file twice, one bucket count per partition, one writer per postponed fixed bucket) as the
//! entries arrive. [`TableCommit::commit_delta_manifests_with_identifier`] publishes the
//! result.

use super::{
    columns_written_over_existing_rows, commit_file_identifier_ref, validate_bucket_ownership_into,
    validate_fixed_bucket_commit_mode, CommitMessage, FileKind, ManifestEntry, ManifestFileMeta,
    PartitionStatisticsBuilder, TableCommit, MANIFEST_ENTRY_SCHEMA, POSTPONE_BUCKET,
};
use crate::spec::avro::ocf_writer::OcfWriter;
use crate::spec::{IdentifierRef, Manifest};
use crate::Result;
use apache_avro::Schema;
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::hash::BuildHasher;
use std::sync::Arc;

/// Hashes a file's commit identity ([`commit_file_identifier_ref`]) to 128 bits, with two
/// SipHash-1-3 functions keyed at random per writer, so that no payload's author can aim for
/// a collision. An accidental one among 10^7 files has a probability of about 10^-25; a
/// check that finds two equal keys reads both entries back before it refuses.
#[derive(Debug, Clone)]
pub(super) struct FileKeyHasher {
    high: RandomState,
    low: RandomState,
    /// Tests only: every file gets commit-identity key 0, so every check of [`Self::key`]
    /// takes its read-back path.
    #[cfg(test)]
    pub(super) constant: bool,
}

impl FileKeyHasher {
    fn new() -> Self {
        Self {
            high: RandomState::new(),
            low: RandomState::new(),
            #[cfg(test)]
            constant: false,
        }
    }

    /// The 128-bit key of `entry`'s identity as written (`merge_active_entries` nets a
    /// snapshot's ADD and DELETE entries by it).
    /// Unlike [`Self::key`], a collision here is not read back: two base files with one key
    /// would net as one (about 10^-25 among 10^7 files).
    pub(super) fn written_key(&self, entry: &ManifestEntry) -> u128 {
        self.hash(entry.identifier_ref())
    }

    /// The 128-bit key of `entry`'s commit identity.
    pub(super) fn key(&self, entry: &ManifestEntry) -> u128 {
        #[cfg(test)]
        if self.constant {
            return 0;
        }
        self.hash(commit_file_identifier_ref(entry))
    }

    /// The two keyed hashes of `identifier`, as one 128-bit key.
    fn hash(&self, identifier: IdentifierRef<'_>) -> u128 {
        (u128::from(self.high.hash_one(identifier)) << 64)
            | u128::from(self.low.hash_one(identifier))
    }
}

/// Whether two entries name the same file, by their commit identities.
pub(super) fn same_commit_file(left: &ManifestEntry, right: &ManifestEntry) -> bool {
    commit_file_identifier_ref(left) == commit_file_identifier_ref(right)
}

impl DeltaFacts {
    /// No entries yet, for manifests written to `manifest_dir`, keyed by `hasher`.
    fn new(manifest_dir: String, hasher: FileKeyHasher) -> Self {
        Self {
            manifest_dir,
            hasher,
            file_keys: HashSet::new(),
            partitions: HashMap::new(),
            statistics: PartitionStatisticsBuilder::default(),
            has_partition_bucket_counts: false,
            has_postpone_entries: false,
        }
    }
}

/// What the commit's checks read from the delta entries, kept by [`DeltaManifestWriter`] as
/// it writes them: bounded by partitions, except the keys, 16 bytes per file.
#[derive(Debug, Clone)]
pub(super) struct DeltaFacts {
    /// The directory the manifests were written to: the commit that publishes them must be
    /// of the same table.
    pub(super) manifest_dir: String,
    pub(super) hasher: FileKeyHasher,
    /// The key of every delta file ([`FileKeyHasher::key`]).
    pub(super) file_keys: HashSet<u128>,
    /// The delta's partitions (the empty partition by no bytes, however an entry spells it),
    /// each with the bucket count of its fixed-bucket files (`None` if it has none).
    pub(super) partitions: HashMap<Vec<u8>, Option<i32>>,
    /// The delta's partition statistics, for a REST catalog.
    pub(super) statistics: PartitionStatisticsBuilder,
    /// A delta file's bucket count differs from the table's (the commit's conflict check
    /// then always runs).
    pub(super) has_partition_bucket_counts: bool,
    /// A delta file is in the postpone bucket of a postpone-bucket table (likewise).
    pub(super) has_postpone_entries: bool,
}

/// The manifest files one commit's [`DeltaManifestWriter`] wrote, and what the commit's
/// checks read from their entries. Only [`DeltaManifestWriter::finish`] makes one, so the
/// manifests and the facts the commit checks agree.
#[derive(Debug, Clone)]
pub struct WrittenDeltaManifests {
    pub(super) delta: Vec<ManifestFileMeta>,
    pub(super) changelog: Vec<ManifestFileMeta>,
    pub(super) delta_record_count: i64,
    pub(super) changelog_record_count: i64,
    pub(super) paths: Vec<String>,
    pub(super) facts: Arc<DeltaFacts>,
}

impl WrittenDeltaManifests {
    /// The delta manifest files (the data files added), in the order written.
    pub fn delta(&self) -> &[ManifestFileMeta] {
        &self.delta
    }

    /// The changelog manifest files, in the order written.
    pub fn changelog(&self) -> &[ManifestFileMeta] {
        &self.changelog
    }

    /// The rows the delta adds: the snapshot's `deltaRecordCount`.
    pub fn delta_record_count(&self) -> i64 {
        self.delta_record_count
    }

    /// The rows of the changelog files: the snapshot's `changelogRecordCount`.
    pub fn changelog_record_count(&self) -> i64 {
        self.changelog_record_count
    }

    /// Every path written (manifests and their sidecars), for the caller to delete if the
    /// commit is given up. A commit that publishes them does not delete them on failure: only
    /// the caller knows whether an outcome is unknown.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Reads the entries of the delta manifest files back, one file at a time, and returns
    /// the first entry for which `wanted` holds.
    pub(super) async fn find_delta_entry(
        &self,
        commit: &TableCommit,
        mut wanted: impl FnMut(&ManifestEntry) -> bool,
    ) -> Result<Option<ManifestEntry>> {
        find_in_manifests(commit, &self.facts.manifest_dir, &self.delta, &mut wanted).await
    }
}

/// Reads `metas`' manifest files one at a time and returns the first entry for which
/// `wanted` holds.
async fn find_in_manifests(
    commit: &TableCommit,
    manifest_dir: &str,
    metas: &[ManifestFileMeta],
    wanted: &mut impl FnMut(&ManifestEntry) -> bool,
) -> Result<Option<ManifestEntry>> {
    for meta in metas {
        let path = format!("{manifest_dir}/{}", meta.file_name());
        let entries = Manifest::read(commit.snapshot_manager.file_io(), &path).await?;
        if let Some(entry) = entries.into_iter().find(|entry| wanted(entry)) {
            return Ok(Some(entry));
        }
    }
    Ok(None)
}

mod encoder;

use encoder::{Encoded, ManifestEncoder, OpenFiles};

/// Manifest file writes started and not yet waited for, at most this many at once.
const WRITES_IN_FLIGHT: usize = 2;

/// The manifest files being written, oldest first. Each write runs as a task of its own, so
/// the caller goes on producing batches while the bytes go to storage; at most
/// [`WRITES_IN_FLIGHT`] run at once, which bounds the bytes held to that many files.
#[derive(Default)]
struct WritesInFlight {
    tasks: VecDeque<tokio::task::JoinHandle<Result<()>>>,
}

impl WritesInFlight {
    /// Starts `write` as a task, then waits for the oldest writes while more than
    /// [`WRITES_IN_FLIGHT`] run. Outside a Tokio runtime it writes in place.
    async fn start(
        &mut self,
        write: impl Future<Output = Result<()>> + Send + 'static,
    ) -> Result<()> {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => self.tasks.push_back(runtime.spawn(write)),
            Err(_) => return write.await,
        }
        while self.tasks.len() > WRITES_IN_FLIGHT {
            self.wait_oldest().await?;
        }
        Ok(())
    }

    /// Gives the writes a turn (on a single-threaded runtime they run only when the caller
    /// yields), then collects those that have ended, reporting the first that failed.
    async fn collect_ended(&mut self) -> Result<()> {
        if self.tasks.is_empty() {
            return Ok(());
        }
        tokio::task::yield_now().await;
        while self
            .tasks
            .front()
            .is_some_and(tokio::task::JoinHandle::is_finished)
        {
            self.wait_oldest().await?;
        }
        Ok(())
    }

    /// Waits for every write, reporting the first that failed once all have ended: after it,
    /// no write is left running that a deletion could race.
    async fn wait_all(&mut self) -> Result<()> {
        let mut first_error = None;
        while !self.tasks.is_empty() {
            if let Err(error) = self.wait_oldest().await {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    async fn wait_oldest(&mut self) -> Result<()> {
        let Some(task) = self.tasks.pop_front() else {
            return Ok(());
        };
        match task.await {
            Ok(written) => written,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(error) => Err(crate::Error::UnexpectedError {
                message: "a manifest file write was cancelled".into(),
                source: Some(Box::new(error)),
            }),
        }
    }
}

/// The manifest file of one list being filled.
struct OpenManifest {
    writer: OcfWriter,
    entries: Vec<ManifestEntry>,
}

/// One list of manifest entries (delta or changelog): its name prefix, the index the next
/// file's name takes, and what it wrote since the last `finish`. Its open file is on the
/// encoder thread.
struct ListWriter {
    prefix: String,
    next_index: usize,
    written: Vec<ManifestFileMeta>,
    record_count: i64,
}

impl ListWriter {
    fn new(prefix: String) -> Self {
        Self {
            prefix,
            next_index: 0,
            written: Vec::new(),
            record_count: 0,
        }
    }
}

/// Writes one commit's delta and changelog manifest files from batches of messages (see the
/// module docs). Created by [`TableCommit::delta_manifest_writer`]. Call [`Self::finish`] to
/// write the last files, or [`Self::abort`] to delete what was written. After an error from
/// [`Self::add`] or [`Self::finish`], the files written so far are still the writer's:
/// [`Self::abort`] deletes them. A writer dropped without either leaves its files, which no
/// snapshot names, for orphan-file cleanup.
pub struct DeltaManifestWriter<'c> {
    commit: CommitHandle<'c>,
    encoder: ManifestEncoder,
    lists: [ListWriter; 2],
    pub(super) paths: Vec<String>,
    /// Files of `paths` still being written.
    writes: WritesInFlight,
    pub(super) facts: DeltaFacts,
    /// The postponed fixed buckets that have a writer ([`validate_bucket_ownership_into`]).
    bucket_owners: HashSet<(Vec<u8>, i32)>,
    /// An `add` failed after it began to change the writer: only `abort` is left.
    failed: bool,
}

const DELTA: usize = 0;
const CHANGELOG: usize = 1;

/// The commit a [`DeltaManifestWriter`] writes for: borrowed from its caller, or owned by
/// the writer so that it can live beside other state of its owner.
enum CommitHandle<'c> {
    Borrowed(&'c TableCommit),
    Owned(Box<TableCommit>),
}

impl std::ops::Deref for CommitHandle<'_> {
    type Target = TableCommit;

    fn deref(&self) -> &TableCommit {
        match self {
            CommitHandle::Borrowed(commit) => commit,
            CommitHandle::Owned(commit) => commit,
        }
    }
}

impl TableCommit {
    /// A writer of this commit's delta and changelog manifest files that takes the messages
    /// in batches ([`DeltaManifestWriter`]). Its files are named as
    /// [`TableCommit::commit`] names the files of one attempt.
    ///
    /// A table with row tracking is refused: its new files take row ids from the snapshot
    /// the commit builds on.
    pub fn delta_manifest_writer(&self) -> Result<DeltaManifestWriter<'_>> {
        Self::writer_of(CommitHandle::Borrowed(self))
    }

    /// [`Self::delta_manifest_writer`] owning this commit: for a caller that keeps the writer
    /// beside other state of its own.
    pub fn into_delta_manifest_writer(self) -> Result<DeltaManifestWriter<'static>> {
        Self::writer_of(CommitHandle::Owned(Box::new(self)))
    }

    fn writer_of(commit: CommitHandle<'_>) -> Result<DeltaManifestWriter<'_>> {
        commit.ensure_delta_manifests_admitted()?;
        let encoder = ManifestEncoder::start(
            Schema::parse_str(MANIFEST_ENTRY_SCHEMA)?,
            commit.manifest_compression.clone(),
            commit.manifest_target_size.max(1) as usize,
        )?;
        let facts = DeltaFacts::new(commit.snapshot_manager.manifest_dir(), FileKeyHasher::new());
        Ok(DeltaManifestWriter {
            commit,
            encoder,
            lists: [
                ListWriter::new(format!("manifest-{}", uuid::Uuid::new_v4())),
                ListWriter::new(format!("manifest-{}-changelog", uuid::Uuid::new_v4())),
            ],
            paths: Vec::new(),
            writes: WritesInFlight::default(),
            facts,
            bucket_owners: HashSet::new(),
            failed: false,
        })
    }

    /// Refuses a table whose commits cannot be written ahead as delta manifests: row
    /// tracking and data evolution give new files row ids from the base snapshot.
    pub(super) fn ensure_delta_manifests_admitted(&self) -> Result<()> {
        if self.row_tracking_enabled || self.data_evolution_enabled {
            return Err(crate::Error::Unsupported {
                message: "delta manifests written ahead cannot commit to a table with row \
                          tracking or data evolution: its new files take row ids from the \
                          snapshot the commit builds on"
                    .into(),
            });
        }
        Ok(())
    }
}

impl DeltaManifestWriter<'_> {
    /// Adds the files of `messages`: each message's new files to the delta, its changelog
    /// files to the changelog, in message order. Writes every manifest file that reaches the
    /// target size. A message with deleted files, index files, a compaction increment, a file
    /// written over existing rows or a `check_from_snapshot` is refused before any of the
    /// batch is added. So is a batch that breaks a check of the delta alone: a file added
    /// twice, two bucket counts in one partition, two writers of one postponed fixed bucket;
    /// after such a refusal only [`Self::abort`] is left.
    pub async fn add(&mut self, messages: Vec<CommitMessage>) -> Result<()> {
        if self.failed {
            return Err(crate::Error::Unsupported {
                message: "an earlier batch of this delta manifest writer was refused; abort it"
                    .into(),
            });
        }
        for message in &messages {
            let carried = [
                // A row-id check from a snapshot depends on the base snapshot too.
                ("check_from_snapshot", message.check_from_snapshot.is_none()),
                ("deleted_files", message.deleted_files.is_empty()),
                ("new_index_files", message.new_index_files.is_empty()),
                (
                    "deleted_index_files",
                    message.deleted_index_files.is_empty(),
                ),
                ("compact_before", message.compact_before.is_empty()),
                ("compact_after", message.compact_after.is_empty()),
                (
                    "compact_changelog_files",
                    message.compact_changelog_files.is_empty(),
                ),
                (
                    "compact_new_index_files",
                    message.compact_new_index_files.is_empty(),
                ),
                (
                    "compact_deleted_index_files",
                    message.compact_deleted_index_files.is_empty(),
                ),
                (
                    "new_files written over existing rows",
                    message
                        .new_files
                        .iter()
                        .all(|file| columns_written_over_existing_rows(file).is_none()),
                ),
            ];
            if let Some((list, _)) = carried.iter().find(|(_, empty)| !empty) {
                return Err(crate::Error::Unsupported {
                    message: format!(
                        "the delta manifest writer takes new files and new changelog files \
                         only; a message of partition {:?} bucket {} carries {list}",
                        message.partition, message.bucket
                    ),
                });
            }
        }
        validate_fixed_bucket_commit_mode(&messages, false)?;
        self.failed = true;
        validate_bucket_ownership_into(&messages, &mut self.bucket_owners)?;
        self.writes.collect_ended().await?;
        let entries = self.commit.messages_into_entries(messages);
        self.check_delta_entries(&entries.data).await?;
        self.append(DELTA, entries.data).await?;
        self.append(CHANGELOG, entries.changelog).await?;
        self.failed = false;
        Ok(())
    }

    /// The checks of `TableCommit::resolve_commit` that read the delta alone, run on one
    /// batch's data entries against the delta so far, recording what the commit's checks
    /// read later ([`DeltaFacts`]).
    async fn check_delta_entries(&mut self, entries: &[ManifestEntry]) -> Result<()> {
        let facts = &mut self.facts;
        // Entries whose key an earlier entry has: a duplicate, or (about 10^-25) a collision.
        let mut repeated_keys = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            if !facts.file_keys.insert(facts.hasher.key(entry)) {
                repeated_keys.push(index);
            }
            let fixed_bucket = entry.bucket() >= 0 && entry.total_buckets() > 0;
            // Every spelling of the empty partition is one partition.
            let partition = commit_file_identifier_ref(entry).partition;
            let partition_buckets = match facts.partitions.get_mut(partition) {
                Some(buckets) => buckets,
                None => facts.partitions.entry(partition.to_vec()).or_insert(None),
            };
            if fixed_bucket {
                match *partition_buckets {
                    Some(previous) if previous != entry.total_buckets() => {
                        return Err(crate::Error::DataInvalid {
                            message: format!(
                                "Fixed-bucket conflict: one partition uses different total bucket counts {previous} and {}",
                                entry.total_buckets()
                            ),
                            source: None,
                        });
                    }
                    _ => *partition_buckets = Some(entry.total_buckets()),
                }
            }
            facts.statistics.add(entry);
            facts.has_partition_bucket_counts |= entry.total_buckets() != self.commit.total_buckets;
            facts.has_postpone_entries |=
                self.commit.total_buckets == POSTPONE_BUCKET && entry.bucket() == POSTPONE_BUCKET;
        }
        for index in repeated_keys {
            let entry = &entries[index];
            if self.find_earlier_delta_entry(entries, index).await? {
                return Err(crate::Error::DataInvalid {
                    message: format!(
                        "Duplicate ADD entry for file '{}' in bucket {}.",
                        entry.file().file_name,
                        entry.bucket(),
                    ),
                    source: None,
                });
            }
        }
        Ok(())
    }

    /// Whether a delta entry before `entries[index]` (earlier in the batch, in the open
    /// delta file, or in a written one, read back) names the same file.
    async fn find_earlier_delta_entry(
        &mut self,
        entries: &[ManifestEntry],
        index: usize,
    ) -> Result<bool> {
        let entry = &entries[index];
        // Every earlier batch is encoded (or written) once the open files are back.
        let open = self.take_open().await?;
        let in_open = open[DELTA]
            .iter()
            .flat_map(|open| &open.entries)
            .any(|earlier| same_commit_file(earlier, entry));
        self.encoder.restore(open).await?;
        if in_open
            || entries[..index]
                .iter()
                .any(|earlier| same_commit_file(earlier, entry))
        {
            return Ok(true);
        }
        let found = find_in_manifests(
            &self.commit,
            &self.facts.manifest_dir,
            &self.lists[DELTA].written,
            &mut |earlier| same_commit_file(earlier, entry),
        )
        .await?;
        Ok(found.is_some())
    }

    /// Writes the last, partly filled, manifest file of each list and hands over every file
    /// written, with what the commit's checks read ([`WrittenDeltaManifests`]): the writer
    /// then holds none, so a later [`Self::abort`] deletes nothing of them. If a write fails,
    /// the writer keeps them all, for [`Self::abort`]. A writer whose batch was refused
    /// refuses to finish.
    pub async fn finish(&mut self) -> Result<WrittenDeltaManifests> {
        if self.failed {
            return Err(crate::Error::Unsupported {
                message: "a batch of this delta manifest writer was refused; abort it".into(),
            });
        }
        let open = self.take_open().await?;
        for (list, open) in open.into_iter().enumerate() {
            if let Some(open) = open {
                self.write(list, open).await?;
            }
        }
        self.writes.wait_all().await?;
        let [delta, changelog] = &mut self.lists;
        // The next commit of this writer starts with no entries, keyed as before.
        let next = DeltaFacts::new(self.facts.manifest_dir.clone(), self.facts.hasher.clone());
        let facts = std::mem::replace(&mut self.facts, next);
        self.bucket_owners.clear();
        Ok(WrittenDeltaManifests {
            delta_record_count: std::mem::take(&mut delta.record_count),
            changelog_record_count: std::mem::take(&mut changelog.record_count),
            delta: std::mem::take(&mut delta.written),
            changelog: std::mem::take(&mut changelog.written),
            paths: std::mem::take(&mut self.paths),
            facts: Arc::new(facts),
        })
    }

    /// Deletes every file written so far, once the writes still running have ended. A failed
    /// deletion is reported after the others are tried.
    pub async fn abort(mut self) -> Result<()> {
        // A write that failed leaves at most a partial file, deleted with the others.
        let _ = self.writes.wait_all().await;
        let file_io = self.commit.snapshot_manager.file_io();
        let mut first_error = None;
        for path in &self.paths {
            if let Err(error) = file_io.delete_file(path).await {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Counts `entries`' rows into the list's record count and queues them on the encoder
    /// thread, then writes the full files it has handed back so far.
    async fn append(&mut self, list: usize, entries: Vec<ManifestEntry>) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        for entry in &entries {
            // `add` admits new files only: every entry is an ADD.
            debug_assert_eq!(*entry.kind(), FileKind::Add);
            self.lists[list].record_count = self.lists[list]
                .record_count
                .checked_add(entry.file().row_count)
                .ok_or_else(|| crate::Error::DataInvalid {
                    message: "the commit's record count overflows i64".into(),
                    source: None,
                })?;
        }
        self.encoder.encode(list, entries).await?;
        self.write_encoded().await
    }

    /// Writes every full file the encoder thread has handed back so far.
    async fn write_encoded(&mut self) -> Result<()> {
        while let Some(encoded) = self.encoder.ready()? {
            self.write_full(encoded).await?;
        }
        Ok(())
    }

    /// Waits until the encoder thread has encoded every batch queued and every full file is
    /// written, and takes the open files back from the thread.
    async fn take_open(&mut self) -> Result<OpenFiles> {
        self.encoder.request_open().await?;
        loop {
            match self.encoder.next().await? {
                Encoded::Open(open) => {
                    self.writes.wait_all().await?;
                    return Ok(*open);
                }
                full => self.write_full(full).await?,
            }
        }
    }

    /// Tests only: waits until every batch queued is encoded and its full files written.
    #[cfg(test)]
    pub(super) async fn settle(&mut self) -> Result<()> {
        let open = self.take_open().await?;
        self.encoder.restore(open).await
    }

    /// Writes a full file handed back by the encoder thread.
    async fn write_full(&mut self, encoded: Encoded) -> Result<()> {
        match encoded {
            Encoded::Full { list, file } => self.write(list, file).await,
            // Open files are handed back only to `take_open`, which waits for them.
            Encoded::Open(_) => Err(crate::Error::UnexpectedError {
                message: "the manifest encoder handed back open files unasked".into(),
                source: None,
            }),
        }
    }

    /// Starts the write of one filled manifest file of `list` and records it.
    async fn write(&mut self, list: usize, open: OpenManifest) -> Result<()> {
        let bytes = open.writer.into_bytes()?;
        let file = self.commit.encoded_manifest_file(&open.entries, bytes)?;
        drop(open.entries);
        let writer = &mut self.lists[list];
        let file_name = format!("{}-{}", writer.prefix, writer.next_index);
        writer.next_index += 1;
        let (meta, write) = TableCommit::place_manifest_file(
            self.commit.snapshot_manager.file_io(),
            &self.facts.manifest_dir,
            file_name,
            file,
            &mut self.paths,
        );
        writer.written.push(meta);
        self.writes.start(write).await
    }
}

#[cfg(test)]
mod writes_in_flight_tests {
    use super::WritesInFlight;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A write that ends after a few turns of the runtime, counted in `ended`; write 1 fails.
    fn slow_write(
        index: usize,
        ended: &Arc<AtomicUsize>,
    ) -> impl std::future::Future<Output = crate::Result<()>> + Send + 'static {
        let ended = ended.clone();
        async move {
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            ended.fetch_add(1, Ordering::SeqCst);
            if index == 1 {
                return Err(crate::Error::UnexpectedError {
                    message: "write 1 failed".into(),
                    source: None,
                });
            }
            Ok(())
        }
    }

    /// At most two writes run at once: starting a third waits for the oldest, and a failure of
    /// the one waited for is reported there.
    #[tokio::test]
    async fn starting_a_write_past_the_bound_waits_for_the_oldest() {
        let ended = Arc::new(AtomicUsize::new(0));
        let mut writes = WritesInFlight::default();
        writes.start(slow_write(0, &ended)).await.unwrap();
        writes.start(slow_write(1, &ended)).await.unwrap();
        assert_eq!(writes.tasks.len(), 2);
        writes.start(slow_write(2, &ended)).await.unwrap();
        assert_eq!(writes.tasks.len(), 2);
        assert!(ended.load(Ordering::SeqCst) >= 1);
        let error = writes.start(slow_write(3, &ended)).await.unwrap_err();
        assert!(error.to_string().contains("write 1 failed"), "{error}");
        writes.wait_all().await.unwrap();
        assert_eq!(ended.load(Ordering::SeqCst), 4);
    }

    /// `wait_all` returns once every write has ended, failed or not, with the first failure:
    /// nothing is left running that a deletion after it could race.
    #[tokio::test]
    async fn waiting_for_all_writes_outlasts_a_failure() {
        let ended = Arc::new(AtomicUsize::new(0));
        let mut writes = WritesInFlight::default();
        writes.start(slow_write(1, &ended)).await.unwrap();
        writes.start(slow_write(2, &ended)).await.unwrap();
        assert_eq!(
            ended.load(Ordering::SeqCst),
            0,
            "the writes ran before they were waited for"
        );
        let error = writes.wait_all().await.unwrap_err();
        assert!(error.to_string().contains("write 1 failed"), "{error}");
        assert_eq!(ended.load(Ordering::SeqCst), 2);
        assert!(writes.tasks.is_empty());
    }
}
