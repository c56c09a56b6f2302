//! The staged commit: payloads added one at a time, committed once (see `docs/SCALE.md`,
//! "The streamed commit").
//!
//! ```text
//! Coordinator::begin(identifier) ─► StagedCommit::add_payload(version, bytes) … ─► commit()
//!                                     decode, Stage::Message rules,             table-state
//!                                     merge rules on name keys, existence,      rules on what
//!                                     manifests written ahead, messages dropped was kept, publish
//! ```
//!
//! A commit whose payloads carry only new data and changelog files, in append mode, on a
//! table without row tracking and without dynamic buckets, is **streamed**: each payload's
//! messages are checked, written into delta manifests and dropped, and the commit keeps about
//! 100 bytes per file. Every other commit is **materialized**: its payloads are kept as
//! [`BoundMessages`] and committed as [`Coordinator::merge`] and [`Coordinator::commit`]
//! commit them. A streamed commit that meets a payload it cannot stream turns materialized:
//! it reads the files it wrote back from its manifests, deletes them, and goes on with the
//! messages. Both paths choose their rules from one catalogue ([`super::registry`]), and
//! answer alike for the same payloads.

use std::collections::{BTreeMap, VecDeque};

use paimon::table::{CommitMessage, DeltaManifestWriter, TableCommit, WrittenDeltaManifests};

use super::digest::{digest_of_leaves, CommitIdentity, COMMIT_DIGEST_PROPERTY};
use super::rules::shared::streamed::StreamedFacts;
use super::rules::table_state::{ExistenceBatch, PendingExistenceCheck};
use super::rules::{self, shared::limits::BucketMode};
use super::{
    AbortReport, BoundMessages, CommitMode, CommitOutcome, Coordinator, CoordinatorError,
    CoordinatorResult, MessageOrigin, WriteKind,
};

/// Files whose existence (rule `missing-file`) is checked together: a batch of payloads
/// lists each of its bucket directories once (on a local file system), so a directory is
/// read once per batch, not once per payload. A batch holds its files' names (about 80
/// bytes each: 5 MB).
const EXISTENCE_BATCH_FILES: usize = 65_536;

/// Existence checks of batches that may still run while the next payloads are added.
const EXISTENCE_CHECKS_IN_FLIGHT: usize = 2;

/// One commit of payloads added one at a time ([`Coordinator::begin`]); see the module docs.
///
/// A refusal of [`Self::add_payload`] refuses the whole commit: only [`Self::abort`] is left
/// (the error says which payload and why). Dropping a staged commit without committing or
/// aborting leaves the manifests it wrote for Paimon's orphan-file cleanup, as a Java
/// committer that dies before publishing leaves its own; nothing is published.
pub struct StagedCommit<'c> {
    coordinator: &'c Coordinator,
    identifier: i64,
    /// Payloads added so far.
    payloads: u32,
    path: Path,
    /// A payload was refused: only `abort` is left.
    refused: bool,
}

/// How a staged commit keeps its payloads.
enum Path {
    Streamed(Box<Streamed>),
    Materialized(Vec<BoundMessages>),
}

/// A streamed commit's state: what it kept of the files, its manifests written ahead, and
/// the existence checks still running.
struct Streamed {
    facts: StreamedFacts,
    writer: DeltaManifestWriter<'static>,
    /// The batch of files whose existence check has not started, and the payload and
    /// message of each of its messages.
    batch: ExistenceBatch,
    batch_origins: Vec<(u32, u32)>,
    /// Running existence checks, with the payload and message of each of their messages.
    existence: VecDeque<(Vec<(u32, u32)>, PendingExistenceCheck)>,
    /// The first refusal (or failure) of a finished existence check. It is the commit's
    /// answer if the table-state rules pass, as on the materialized path, where the
    /// existence check gates the publication after them.
    existence_refusal: Option<CoordinatorError>,
}

/// Which path a staged commit took (for tests, benchmarks and logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StagedPath {
    /// Messages checked, written into manifests ahead and dropped as payloads arrive.
    Streamed,
    /// Messages kept until the commit, as [`Coordinator::merge`] keeps them.
    Materialized,
}

impl Coordinator {
    /// Begins a commit under `identifier` whose payloads are added one at a time
    /// ([`StagedCommit`]). It streams when the binding and the table allow it (append mode,
    /// no row tracking, no dynamic buckets), until a payload it cannot stream arrives.
    pub fn begin(&self, identifier: i64) -> StagedCommit<'_> {
        let streams = self.binding.mode == CommitMode::Append
            && self.rules.bucket_mode() != BucketMode::Dynamic;
        let writer = streams
            .then(|| {
                TableCommit::new(self.table.clone(), self.binding.commit_user.clone())
                    .into_delta_manifest_writer()
                    .ok()
            })
            .flatten();
        let path = match writer {
            Some(writer) => Path::Streamed(Box::new(Streamed {
                facts: StreamedFacts::new(),
                writer,
                batch: ExistenceBatch::new(self.context()),
                batch_origins: Vec::new(),
                existence: VecDeque::new(),
                existence_refusal: None,
            })),
            None => Path::Materialized(Vec::new()),
        };
        StagedCommit {
            coordinator: self,
            identifier,
            payloads: 0,
            path,
            refused: false,
        }
    }
}

impl StagedCommit<'_> {
    /// The commit identifier.
    pub fn identifier(&self) -> i64 {
        self.identifier
    }

    /// The path the commit is on now.
    pub fn path(&self) -> StagedPath {
        match self.path {
            Path::Streamed(_) => StagedPath::Streamed,
            Path::Materialized(_) => StagedPath::Materialized,
        }
    }

    /// How many payloads were added.
    pub fn payload_count(&self) -> usize {
        self.payloads as usize
    }

    /// How many new data and changelog files the payloads added so far carry, each file
    /// once within a payload (on the streamed path also across payloads).
    pub fn file_count(&self) -> usize {
        match &self.path {
            Path::Streamed(streamed) => streamed.facts.file_count(),
            Path::Materialized(parts) => parts
                .iter()
                .flat_map(|part| &part.messages)
                .map(|m| m.new_files.len() + m.new_changelog_files.len())
                .sum(),
        }
    }

    /// Decodes, checks and stages one payload (Java `CommitMessageSerializer.serializeList`
    /// bytes at `version`, or a Doris `DPCM` frame of it), as [`Coordinator::deserialize`]
    /// and [`Coordinator::merge`] check it: errors name the payload by its position among
    /// those added (counting from 0) as [`MessageOrigin::part`]. A refusal refuses the
    /// commit: abort it.
    pub async fn add_payload(
        &mut self,
        version: crate::SerializerVersion,
        payload: &[u8],
    ) -> CoordinatorResult<()> {
        if self.refused {
            return Err(self.refused_error());
        }
        let result = self.stage(version, payload).await;
        if result.is_err() {
            self.refused = true;
        }
        result
    }

    async fn stage(
        &mut self,
        version: crate::SerializerVersion,
        payload: &[u8],
    ) -> CoordinatorResult<()> {
        let coordinator = self.coordinator;
        let index = self.payloads;
        let view = coordinator.parse_payload(version, payload)?;
        let duplicates = coordinator.check_payload(&view)?;
        let (bound, _) = coordinator.bind_checked(&view, &duplicates);
        drop(view);
        if matches!(self.path, Path::Streamed(_)) && !bound.messages.iter().all(rules::streamable) {
            // Boxed, as are the other large futures here: a staged commit's future stays
            // small on the caller's stack.
            Box::pin(self.materialize()).await?;
        }
        self.payloads = self.payloads.saturating_add(1);
        match &mut self.path {
            Path::Materialized(parts) => {
                parts.push(bound);
                Ok(())
            }
            Path::Streamed(streamed) => Box::pin(streamed.stage(coordinator, index, bound)).await,
        }
    }

    /// Turns a streamed commit materialized: reads the files it wrote back from its
    /// manifests, as one [`BoundMessages`] per payload added, and deletes the manifests.
    async fn materialize(&mut self) -> CoordinatorResult<()> {
        let Path::Streamed(streamed) =
            std::mem::replace(&mut self.path, Path::Materialized(vec![]))
        else {
            return Ok(());
        };
        let Streamed {
            facts, mut writer, ..
        } = *streamed;
        // The materialized commit checks every file's existence again.
        let coordinator = self.coordinator;
        let writing = |e| {
            CoordinatorError::paimon(
                format!(
                    "reading back the manifests of a staged commit to table {}",
                    coordinator.rules.table_name()
                ),
                e,
            )
        };
        let written = match writer.finish().await {
            Ok(written) => written,
            Err(error) => {
                // A writer that cannot finish (its batch was refused) can only delete what it
                // wrote.
                let _ = writer.abort().await;
                return Err(writing(error));
            }
        };
        let parts = read_back(coordinator, &facts, &written, self.payloads).await;
        delete_manifests(coordinator, &written).await;
        self.path = Path::Materialized(parts.map_err(writing)?);
        Ok(())
    }

    /// Commits every payload added once under the identifier: the outcomes and errors of
    /// [`Coordinator::commit`] for the [`Coordinator::merge`] of the same payloads.
    pub async fn commit(self) -> CoordinatorResult<CommitOutcome> {
        if self.refused {
            let refused = self.refused_error();
            // Nothing is published: the manifests written so far go.
            if let Path::Streamed(streamed) = self.path {
                let _ = streamed.writer.abort().await;
            }
            return Err(refused);
        }
        let coordinator = self.coordinator;
        let identifier = self.identifier;
        match self.path {
            Path::Materialized(parts) => {
                let merged = coordinator.merge(parts)?;
                Box::pin(coordinator.commit(merged, identifier)).await
            }
            Path::Streamed(streamed) => {
                let outcome = Box::pin(commit_streamed(coordinator, *streamed, identifier)).await;
                coordinator.record_outcome(identifier, &outcome);
                outcome
            }
        }
    }

    /// Abandons the commit: deletes the manifests it wrote, and the files of its payloads as
    /// [`Coordinator::abort`] deletes them (never a file a snapshot references; nothing while
    /// an unknown outcome of this coordinator may still land). A streamed commit reads its
    /// files back from its manifests first.
    pub async fn abort(mut self) -> CoordinatorResult<AbortReport> {
        Box::pin(self.materialize()).await?;
        let Path::Materialized(parts) = self.path else {
            return Ok(AbortReport::default());
        };
        let mut all = BoundMessages {
            coordinator: self.coordinator.id,
            messages: Vec::new(),
            origins: Vec::new(),
        };
        for part in parts {
            all.messages.extend(part.messages);
            all.origins.extend(part.origins);
        }
        Box::pin(self.coordinator.abort(&all)).await
    }

    fn refused_error(&self) -> CoordinatorError {
        CoordinatorError::Unsupported {
            reason: format!(
                "a payload of the staged commit of identifier {} was refused; abort it",
                self.identifier
            ),
        }
    }
}

impl Streamed {
    /// Stages payload `index`'s bound messages: the merge rules on what was kept, the
    /// existence check started, the files written into the manifests.
    async fn stage(
        &mut self,
        coordinator: &Coordinator,
        index: u32,
        bound: BoundMessages,
    ) -> CoordinatorResult<()> {
        let BoundMessages {
            mut messages,
            origins,
            ..
        } = bound;
        rules::stage_streamed(
            &coordinator.rules,
            &mut self.facts,
            index,
            &mut messages,
            &origins,
        )
        .map_err(|error| in_payload(index, error))?;
        // Files directly in their bucket directories are found by listing the directories
        // at commit; the others (external paths, extra files) are checked by path, in
        // batches of payloads.
        for (message, origin) in messages.iter().zip(&origins) {
            let elsewhere = |f: &&paimon::spec::DataFileMeta| {
                f.external_path.is_some() || !f.extra_files.is_empty()
            };
            if !message
                .new_files
                .iter()
                .chain(&message.new_changelog_files)
                .any(|f| elsewhere(&f))
            {
                continue;
            }
            let mut outside = CommitMessage::new(message.partition.clone(), message.bucket, vec![]);
            outside.new_files = message
                .new_files
                .iter()
                .filter(elsewhere)
                .cloned()
                .collect();
            outside.new_changelog_files = message
                .new_changelog_files
                .iter()
                .filter(elsewhere)
                .cloned()
                .collect();
            self.batch.add(&outside)?;
            let message_index = u32::try_from(origin.message_index).unwrap_or(u32::MAX);
            self.batch_origins.push((index, message_index));
        }
        if self.batch.file_count() >= EXISTENCE_BATCH_FILES {
            self.start_existence_check(coordinator);
        }
        while self.existence.len() > EXISTENCE_CHECKS_IN_FLIGHT {
            self.finish_one_existence_check().await;
        }
        messages.retain(|m| !m.new_files.is_empty() || !m.new_changelog_files.is_empty());
        self.writer.add(messages).await.map_err(|e| {
            CoordinatorError::paimon(
                format!(
                    "writing payload {index} into the manifests of a staged commit to table {}",
                    coordinator.rules.table_name()
                ),
                e,
            )
        })
    }

    /// Starts the existence check of the batch gathered so far, and begins the next.
    fn start_existence_check(&mut self, coordinator: &Coordinator) {
        let batch = std::mem::replace(&mut self.batch, ExistenceBatch::new(coordinator.context()));
        let origins = std::mem::take(&mut self.batch_origins);
        if let Some(check) = batch.start(coordinator.context()) {
            self.existence.push_back((origins, check));
        }
    }

    /// Waits for the oldest running existence check, and keeps its refusal if it is the
    /// first.
    async fn finish_one_existence_check(&mut self) {
        if let Some((origins, check)) = self.existence.pop_front() {
            if let Err(error) = check.finish().await {
                self.existence_refusal
                    .get_or_insert_with(|| in_batch(&origins, error));
            }
        }
    }
}

/// A refusal of the existence check of a batch whose messages came from `origins` (payload
/// and message), naming the payload and the message in it.
fn in_batch(origins: &[(u32, u32)], error: CoordinatorError) -> CoordinatorError {
    match error {
        CoordinatorError::Validation(mut refusal) => match origins.get(refusal.message_index) {
            Some(&(payload, message)) => {
                refusal.message_index = message as usize;
                in_payload(payload, CoordinatorError::Validation(refusal))
            }
            None => CoordinatorError::Validation(refusal),
        },
        other => other,
    }
}

/// A refusal of a rule that reads one payload, naming the payload.
fn in_payload(payload: u32, error: CoordinatorError) -> CoordinatorError {
    match error {
        CoordinatorError::Validation(mut refusal) => {
            refusal.reason = format!("payload {payload}: {}", refusal.reason);
            CoordinatorError::Validation(refusal)
        }
        other => other,
    }
}

/// The files a streamed commit wrote, read back from its manifests into one
/// [`BoundMessages`] per payload (`payloads` of them), each message where its payload had it.
async fn read_back(
    coordinator: &Coordinator,
    facts: &StreamedFacts,
    written: &WrittenDeltaManifests,
    payloads: u32,
) -> paimon::Result<Vec<BoundMessages>> {
    use paimon::spec::Manifest;
    let table = coordinator.table();
    let snapshots = table.snapshot_manager();
    let file_io = table.file_io();
    let standard = coordinator.rules.write_kind() == WriteKind::Standard;
    let mut messages: BTreeMap<(u32, u32), CommitMessage> = BTreeMap::new();
    for (changelog, metas) in [(false, written.delta()), (true, written.changelog())] {
        for meta in metas {
            let path = snapshots.manifest_path(meta.file_name());
            for entry in Manifest::read(file_io, &path).await? {
                let Some(seen) = facts.seen(facts.names().key(&entry.file().file_name)) else {
                    return Err(paimon::Error::DataInvalid {
                        message: format!(
                            "manifest {path} names {:?}, which the staged commit did not stage",
                            entry.file().file_name
                        ),
                        source: None,
                    });
                };
                let message = messages
                    .entry((seen.payload, seen.message))
                    .or_insert_with(|| {
                        let mut message =
                            CommitMessage::new(entry.partition().to_vec(), entry.bucket(), vec![]);
                        if !standard {
                            message.total_buckets = Some(entry.total_buckets());
                        }
                        message
                    });
                let file = entry.file().clone();
                if changelog {
                    message.new_changelog_files.push(file);
                } else {
                    message.new_files.push(file);
                }
            }
        }
    }
    let mut parts: Vec<BoundMessages> = (0..payloads)
        .map(|_| BoundMessages {
            coordinator: coordinator.id,
            messages: Vec::new(),
            origins: Vec::new(),
        })
        .collect();
    for ((payload, message_index), message) in messages {
        if let Some(part) = parts.get_mut(payload as usize) {
            part.messages.push(message);
            part.origins.push(MessageOrigin {
                part: 0,
                message_index: message_index as usize,
            });
        }
    }
    Ok(parts)
}

/// Deletes the manifests a streamed commit wrote, which no snapshot names: best effort (a
/// manifest left behind is an orphan, removed by Paimon's orphan-file cleanup).
async fn delete_manifests(coordinator: &Coordinator, written: &WrittenDeltaManifests) {
    let file_io = coordinator.table().file_io();
    for path in written.paths() {
        if let Err(error) = file_io.delete_file(path).await {
            log::warn!(
                target: crate::log_policy::COORDINATOR_TARGET,
                "could not delete manifest {path} of a staged commit that published nothing: \
                 {error}"
            );
        }
    }
}

/// Commits a streamed commit under `identifier` (see [`super::commit::commit_once`], whose
/// answers it gives): the existence checks finished, the identifier's status read, the
/// table-state rules run on what was kept, the manifests published by the paimon crate
/// (`filter_and_commit_delta_manifests_with_identifier`), the outcome confirmed by rule
/// `identifier-owner`. The manifests are deleted whenever nothing of the commit can be
/// published, and kept when the outcome is unknown.
async fn commit_streamed(
    coordinator: &Coordinator,
    mut streamed: Streamed,
    identifier: i64,
) -> CoordinatorResult<CommitOutcome> {
    use super::commit::{committed_from, conclude, identifier_status, refused_unless_raced};
    let table_name = coordinator.rules.table_name();
    let finished = async {
        streamed.start_existence_check(coordinator);
        while !streamed.existence.is_empty() {
            streamed.finish_one_existence_check().await;
        }
        streamed.writer.finish().await.map_err(|e| {
            CoordinatorError::paimon(
                format!("writing the last manifests of a staged commit to table {table_name}"),
                e,
            )
        })
    }
    .await;
    let written = match finished {
        Ok(written) => written,
        Err(error) => {
            let _ = streamed.writer.abort().await;
            return Err(error);
        }
    };
    let Streamed {
        mut facts,
        existence_refusal,
        ..
    } = streamed;
    let files = facts.file_count();
    if files == 0 {
        delete_manifests(coordinator, &written).await;
        return super::commit::commit_once(coordinator, Vec::new(), identifier).await;
    }
    let (leaves, added) = facts.take_identity();
    let identity = CommitIdentity {
        digest: digest_of_leaves(leaves),
        added,
        adds_only: true,
    };
    let published = async {
        let status = identifier_status(coordinator, identifier, false).await?;
        if let Some(snapshot_id) = committed_from(coordinator, identifier, status)? {
            if let Some(snapshot_id) = snapshot_id {
                super::commit::confirm_same_commit(
                    coordinator,
                    &identity,
                    None,
                    identifier,
                    snapshot_id,
                )
                .await?;
            }
            return Ok(Some(CommitOutcome::AlreadyCommitted { snapshot_id }));
        }
        if let Err(refusal) =
            rules::check_streamed_against_table(coordinator.context(), &facts).await
        {
            return refused_unless_raced(coordinator, &identity, None, identifier, false, refusal)
                .await
                .map(Some);
        }
        // Rule `missing-file`, after the others as the materialized path's publication gate.
        rules::check_streamed_existence(coordinator.context(), &facts, written.paths()).await?;
        match existence_refusal {
            Some(refusal) => Err(refusal),
            None => Ok(None),
        }
    }
    .await;
    match published {
        // Nothing of this commit is published by this call.
        Ok(Some(outcome)) => {
            delete_manifests(coordinator, &written).await;
            return Ok(outcome);
        }
        Err(error) => {
            delete_manifests(coordinator, &written).await;
            return Err(error);
        }
        Ok(None) => {}
    }
    drop(facts);
    let table_commit = TableCommit::new(
        coordinator.table.clone(),
        coordinator.binding.commit_user.clone(),
    )
    // Every file was checked to exist as its payload was staged.
    .with_added_files_checked()
    .with_snapshot_properties(std::collections::HashMap::from([(
        COMMIT_DIGEST_PROPERTY.into(),
        identity.digest.clone(),
    )]));
    let result = table_commit
        .filter_and_commit_delta_manifests_with_identifier(&written, identifier)
        .await;
    let committing = || {
        format!(
            "committing {files} staged file(s) to table {table_name} (append mode, commit user \
             {:?}, identifier {identifier})",
            coordinator.binding.commit_user
        )
    };
    let outcome = conclude(
        coordinator,
        &identity,
        identifier,
        false,
        true,
        result,
        &committing,
    )
    .await;
    let keep = match &outcome {
        Ok(CommitOutcome::Committed { .. }) => true,
        Err(error) => error.outcome_unknown(),
        // The identifier was committed by another snapshot: the crate published nothing.
        Ok(_) => false,
    };
    if !keep {
        delete_manifests(coordinator, &written).await;
    }
    outcome
}
