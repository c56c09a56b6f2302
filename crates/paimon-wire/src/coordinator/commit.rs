//! Committing exactly once, and aborting.
//!
//! A snapshot records the commit user and the commit identifier that made it. Before
//! committing, the coordinator looks for a snapshot of its user carrying the identifier;
//! the commit itself goes through the paimon crate's filtering entry points
//! (`TableCommit::filter_and_commit_with_identifier`, `overwrite_with_identifier`), which
//! check again under the commit's own retry loop, so a rerun never commits twice.
//!
//! Success is reported only for a snapshot that holds exactly this commit (rule
//! `identifier-owner`, [`confirm_same_commit`]): every snapshot records the commit's digest
//! (`digest.rs`), and a rerun or a racing coordinator with the same commit user and
//! identifier but other payloads gets [`CoordinatorError::IdentifierReused`].
//!
//! A commit whose messages carry compaction results makes two snapshots under one
//! identifier, as Java's `FileStoreCommitImpl` does: APPEND (the new files) and then
//! COMPACT (the compaction). It is committed once the COMPACT snapshot is there. A
//! coordinator that crashed between the two finds the APPEND snapshot on its rerun and
//! commits the COMPACT part only. (Java's own committer drops the COMPACT part in that case:
//! its `filterCommitted` sees the identifier committed; the compaction is then redone by
//! later writes. Here the compaction the workers already wrote is kept.)

use std::collections::{HashMap, HashSet};

use paimon::table::{CommitMessage, TableCommit};

use super::digest::{
    added_file_fingerprint, commit_digest, CommitIdentity, Lists, PendingIdentity,
    COMMIT_DIGEST_PROPERTY,
};
use super::error::{CoordinatorError, CoordinatorResult};
use super::rules::shared::buckets::partition_key;
use super::rules::shared::check::has_compaction;
use super::{CommitMode, Coordinator};

/// What [`Coordinator::commit`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitOutcome {
    /// The messages were committed in snapshot `snapshot_id`.
    Committed {
        /// The new snapshot.
        snapshot_id: i64,
    },
    /// The identifier was committed before (a rerun after a crash): nothing was committed
    /// now. `snapshot_id` is the snapshot that committed it, or `None` if that snapshot has
    /// expired or a later identifier of the same commit user supersedes it (identifiers
    /// increase per commit user, so a lower one counts as committed).
    AlreadyCommitted {
        /// The snapshot that committed the identifier, if still in the table.
        snapshot_id: Option<i64>,
    },
    /// There was nothing to commit (no messages with files), and no snapshot was made.
    NothingToCommit,
}

/// Where `identifier` stands for the coordinator's commit user, from the table's snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdentifierStatus {
    /// Snapshot `0` of this commit user carries the identifier.
    Committed(i64),
    /// No retained snapshot carries it, but the commit user committed a higher identifier
    /// (`committed_identifier`, in snapshot `snapshot_id`). `never_committed` is true when
    /// the snapshots prove the identifier was never committed (the history reaches back to
    /// an older identifier of this user, or to the table's first snapshot); false when the
    /// snapshot that would carry it may have expired.
    Superseded {
        committed_identifier: i64,
        snapshot_id: i64,
        never_committed: bool,
    },
    /// Only the APPEND snapshot (`0`) of a commit with compaction results carries the
    /// identifier: the COMPACT snapshot is still to be made.
    AppendOnly(i64),
    /// Not committed, and nothing of this commit user supersedes it.
    NotCommitted,
}

/// Scans the snapshots from the latest down for the coordinator's commit user and
/// `identifier`. Identifiers increase per commit user, so the scan stops at the first
/// snapshot of the user with a lower identifier. With `with_compaction` (the commit carries
/// compaction results) the identifier is committed only by its COMPACT snapshot, which
/// comes after its APPEND snapshot; the APPEND snapshot alone is
/// [`IdentifierStatus::AppendOnly`], unless a higher identifier of the user came after it
/// (then the compaction is dropped as Java drops it, and the identifier counts as committed).
pub(crate) async fn identifier_status(
    coordinator: &Coordinator,
    identifier: i64,
    with_compaction: bool,
) -> CoordinatorResult<IdentifierStatus> {
    let table_name = coordinator.rules.table_name();
    let reading = || format!("reading the snapshots of table {table_name}");
    let snapshots = coordinator.table.snapshot_manager();
    let Some(latest) = snapshots
        .get_latest_snapshot()
        .await
        .map_err(|e| CoordinatorError::paimon(reading(), e))?
    else {
        return Ok(IdentifierStatus::NotCommitted);
    };
    let earliest = snapshots
        .earliest_snapshot_id()
        .await
        .map_err(|e| CoordinatorError::paimon(reading(), e))?
        .unwrap_or(latest.id());
    let user = coordinator.binding.commit_user.as_str();
    // The lowest higher identifier of this user seen so far, and its snapshot.
    let mut superseded_by: Option<(i64, i64)> = None;
    let superseded = |superseded_by: Option<(i64, i64)>, never_committed: bool| {
        superseded_by.map_or(
            IdentifierStatus::NotCommitted,
            |(committed_identifier, snapshot_id)| IdentifierStatus::Superseded {
                committed_identifier,
                snapshot_id,
                never_committed,
            },
        )
    };
    for snapshot_id in (earliest..=latest.id()).rev() {
        let snapshot = if snapshot_id == latest.id() {
            latest.clone()
        } else {
            snapshots
                .get_snapshot(snapshot_id)
                .await
                .map_err(|e| CoordinatorError::paimon(reading(), e))?
        };
        if snapshot.commit_user() != user {
            continue;
        }
        let committed = snapshot.commit_identifier();
        if committed == identifier {
            if with_compaction
                && superseded_by.is_none()
                && snapshot.commit_kind() != &paimon::spec::CommitKind::COMPACT
            {
                return Ok(IdentifierStatus::AppendOnly(snapshot_id));
            }
            return Ok(IdentifierStatus::Committed(snapshot_id));
        }
        if committed < identifier {
            // Identifiers increase per user: nothing older can carry `identifier`.
            return Ok(superseded(superseded_by, true));
        }
        superseded_by = Some((committed, snapshot_id));
    }
    // The whole retained history was scanned: it proves the identifier was never
    // committed only if no snapshot has expired.
    Ok(superseded(superseded_by, earliest <= 1))
}

/// From the [`IdentifierStatus`] of `identifier`, the snapshot of the coordinator's commit
/// user that committed it:
/// `Some(Some(id))` found, `Some(None)` committed by the identifier rule but no snapshot
/// carries it any more, `None` not committed. An identifier that a higher one of the same
/// user provably superseded without ever being committed is
/// [`CoordinatorError::IdentifierSuperseded`].
/// `AppendOnly` counts as not committed.
pub(super) fn committed_from(
    coordinator: &Coordinator,
    identifier: i64,
    status: IdentifierStatus,
) -> CoordinatorResult<Option<Option<i64>>> {
    match status {
        IdentifierStatus::Committed(snapshot_id) => Ok(Some(Some(snapshot_id))),
        IdentifierStatus::Superseded {
            never_committed: false,
            ..
        } => Ok(Some(None)),
        IdentifierStatus::Superseded {
            committed_identifier,
            snapshot_id,
            never_committed: true,
        } => Err(CoordinatorError::IdentifierSuperseded {
            commit_user: coordinator.binding.commit_user.clone(),
            identifier,
            committed_identifier,
            snapshot_id,
        }),
        IdentifierStatus::NotCommitted | IdentifierStatus::AppendOnly(_) => Ok(None),
    }
}

/// The fingerprints ([`added_file_fingerprint`]) of the data and changelog files that the
/// snapshots of the coordinator's commit user carrying `identifier` add, `snapshot_id` being
/// the latest of them. A COMPACT snapshot follows the APPEND snapshot of its commit, possibly
/// with other users' snapshots between them, so from a COMPACT snapshot the walk goes back to
/// that APPEND snapshot (or stops at the commit user's previous identifier, or at the table's
/// earliest snapshot).
async fn identifier_added_files(
    coordinator: &Coordinator,
    identifier: i64,
    snapshot_id: i64,
) -> paimon::Result<HashSet<u128>> {
    use paimon::spec::CommitKind;
    let table = coordinator.table();
    let snapshots = table.snapshot_manager();
    let user = coordinator.binding.commit_user.as_str();
    let (mut added, kind) = snapshot_added_files(table, snapshot_id).await?;
    if kind != CommitKind::COMPACT {
        return Ok(added);
    }
    let earliest = snapshots
        .earliest_snapshot_id()
        .await?
        .unwrap_or(snapshot_id);
    for earlier in (earliest..snapshot_id).rev() {
        let snapshot = snapshots.get_snapshot(earlier).await?;
        if snapshot.commit_user() != user {
            continue;
        }
        if snapshot.commit_identifier() != identifier {
            break;
        }
        let (files, kind) = snapshot_added_files(table, earlier).await?;
        added.extend(files);
        if kind != CommitKind::COMPACT {
            break;
        }
    }
    Ok(added)
}

/// The fingerprints of the files the delta and changelog manifests of snapshot `snapshot_id`
/// add, and the snapshot's commit kind.
async fn snapshot_added_files(
    table: &paimon::table::Table,
    snapshot_id: i64,
) -> paimon::Result<(HashSet<u128>, paimon::spec::CommitKind)> {
    use paimon::spec::{FileKind, Manifest, ManifestList};
    let partitioned = !table.schema().partition_keys().is_empty();
    let snapshots = table.snapshot_manager();
    let file_io = table.file_io();
    let snapshot = snapshots.get_snapshot(snapshot_id).await?;
    let lists = [
        Some(snapshot.delta_manifest_list()),
        snapshot.changelog_manifest_list(),
    ];
    let mut added = HashSet::new();
    for list in lists.into_iter().flatten() {
        for meta in ManifestList::read(file_io, &snapshots.manifest_path(list)).await? {
            let path = snapshots.manifest_path(meta.file_name());
            for entry in Manifest::read(file_io, &path).await? {
                if *entry.kind() == FileKind::Add {
                    added.insert(added_file_fingerprint(
                        partition_key(partitioned, entry.partition()),
                        entry.bucket(),
                        entry.file(),
                    ));
                }
            }
        }
    }
    Ok((added, snapshot.commit_kind().clone()))
}

/// The commit digest snapshot `snapshot_id` recorded, if any.
async fn recorded_digest(
    coordinator: &Coordinator,
    snapshot_id: i64,
) -> CoordinatorResult<Option<String>> {
    let snapshot = coordinator
        .table
        .snapshot_manager()
        .get_snapshot(snapshot_id)
        .await
        .map_err(|e| {
            CoordinatorError::paimon(
                format!(
                    "reading snapshot {snapshot_id} of table {} to compare its commit with this \
                     one",
                    coordinator.rules.table_name()
                ),
                e,
            )
        })?;
    Ok(snapshot
        .properties()
        .and_then(|p| p.get(COMMIT_DIGEST_PROPERTY))
        .cloned())
}

/// Rule `identifier-owner`: success ([`CommitOutcome::Committed`] or
/// [`CommitOutcome::AlreadyCommitted`]) is reported for snapshot `snapshot_id`, the one that
/// carries this commit user and `identifier`, only if it holds this commit.
///
/// Every path that reports success meets here: a rerun that finds the identifier committed,
/// and a commit that returned (whether it published, or the paimon crate's identifier filter
/// found a racing coordinator's snapshot and published nothing). It holds this commit when
///
/// - the snapshot recorded this commit's digest ([`COMMIT_DIGEST_PROPERTY`], written on every
///   snapshot this coordinator publishes): the very same commit; or
/// - the commit only adds data and changelog files, or the snapshot recorded no digest
///   (Java, or paimon-wire before every snapshot had one), and the identifier's snapshots add
///   every one of this commit's files (same partition, bucket, name, row count and size):
///   every row of this commit is in, as for a rerun that gathered fewer payloads than the
///   commit that published.
///
/// Otherwise the identifier carries other data: [`CoordinatorError::IdentifierReused`] (a
/// racing coordinator with other payloads, a job rerun with a fixed identifier after writing
/// new files), and nothing is deleted. `messages` (when still at hand) name the first file
/// the snapshot lacks.
pub(super) async fn confirm_same_commit(
    coordinator: &Coordinator,
    identity: &CommitIdentity,
    messages: Option<&[CommitMessage]>,
    identifier: i64,
    snapshot_id: i64,
) -> CoordinatorResult<()> {
    let recorded = recorded_digest(coordinator, snapshot_id).await?;
    if recorded.as_deref() == Some(identity.digest.as_str()) {
        return Ok(());
    }
    let reused = |file: String| CoordinatorError::IdentifierReused {
        commit_user: coordinator.binding.commit_user.clone(),
        identifier,
        snapshot_id,
        file,
    };
    if identity.adds_only || recorded.is_none() {
        let added = identifier_added_files(coordinator, identifier, snapshot_id)
            .await
            .map_err(|e| {
                CoordinatorError::paimon(
                    format!(
                        "reading snapshot {snapshot_id} of table {} to compare its files with \
                         this commit",
                        coordinator.rules.table_name()
                    ),
                    e,
                )
            })?;
        let missing = identity.added.iter().filter(|f| !added.contains(f)).count();
        if missing == 0 {
            return Ok(());
        }
        let partitioned = !coordinator.table.schema().partition_keys().is_empty();
        let first = messages
            .into_iter()
            .flatten()
            .flat_map(|m| {
                let partition = partition_key(partitioned, &m.partition);
                (m.new_files.iter().chain(&m.new_changelog_files)).map(move |f| (partition, m, f))
            })
            .find(|(partition, m, f)| {
                !added.contains(&added_file_fingerprint(partition, m.bucket, f))
            })
            .map_or_else(
                || format!("(one of {missing} of this commit's files)"),
                |(_, _, f)| f.file_name.clone(),
            );
        return Err(reused(first));
    }
    let recorded = recorded.unwrap_or_default();
    Err(reused(format!(
        "(the snapshot recorded commit digest {recorded}, this commit's is {}: other files, \
         other metadata or another compaction)",
        identity.digest
    )))
}

/// Commits `messages` under `identifier` unless the identifier is already committed.
///
/// Success is reported only for a snapshot this commit owns: after the paimon crate returns,
/// the snapshots are read again and the outcome is the snapshot that carries this commit
/// user and identifier. The crate publishes `snapshot-N` with an atomic create-if-absent
/// (see `vendor/PATCHES.md`); a commit that loses the race for `N` retries on the new latest
/// snapshot, re-checking conflicts, up to the table's `commit.max-retries`, and then fails
/// with [`CoordinatorError::CommitConflict`].
///
/// With compaction results the outcome is the COMPACT snapshot (the APPEND snapshot of the
/// new files is the one before it, when there are new files). A rerun after a crash between
/// the two commits the COMPACT part only.
pub(crate) async fn commit_once(
    coordinator: &Coordinator,
    messages: Vec<CommitMessage>,
    identifier: i64,
) -> CoordinatorResult<CommitOutcome> {
    let with_compaction = messages.iter().any(has_compaction);
    let partitioned = !coordinator.table.schema().partition_keys().is_empty();
    // Recorded in every snapshot this commit makes, so that whoever finds the identifier
    // committed (a rerun, or a coordinator that lost a race for it) can tell this commit
    // from other data under the same identifier. Hashed on a thread of its own while the
    // identifier's status and the table's state are read and checked.
    let shared = std::sync::Arc::new(messages);
    let pending_identity = PendingIdentity::start(&shared, partitioned);
    let status = identifier_status(coordinator, identifier, with_compaction).await?;
    // The existence check (rule missing-file) when it is left running for the paimon crate
    // to await before it publishes.
    let mut existence = None;
    let identity;
    let mut messages;
    if let IdentifierStatus::AppendOnly(append_snapshot_id) = status {
        identity = pending_identity.finish(&shared, partitioned).await;
        messages = std::sync::Arc::unwrap_or_clone(shared);
        // The APPEND snapshot of this identifier is in, and no COMPACT snapshot. This is the
        // crash-recovery case only if that snapshot recorded this very commit.
        let recorded = recorded_digest(coordinator, append_snapshot_id).await?;
        // Committed without its compaction: by a committer that records no digest (Java,
        // an older paimon-wire), holding every new file of this commit; or with exactly this
        // commit's data increment. A rerun commits nothing new: the compaction is dropped, as
        // Java's committer drops it, and its result files are left alone.
        if recorded.is_none() {
            confirm_same_commit(
                coordinator,
                &identity,
                Some(&messages),
                identifier,
                append_snapshot_id,
            )
            .await?;
            return Ok(CommitOutcome::AlreadyCommitted {
                snapshot_id: Some(append_snapshot_id),
            });
        }
        if recorded == Some(commit_digest(&messages, partitioned, Lists::DataIncrement)) {
            return Ok(CommitOutcome::AlreadyCommitted {
                snapshot_id: Some(append_snapshot_id),
            });
        }
        if recorded.as_deref() != Some(identity.digest.as_str()) {
            // Another commit's APPEND snapshot: with its compaction committed alone, this
            // commit's data increment would be reported committed without being there.
            return Err(CoordinatorError::IdentifierReused {
                commit_user: coordinator.binding.commit_user.clone(),
                identifier,
                snapshot_id: append_snapshot_id,
                file: format!(
                    "(the APPEND snapshot recorded commit digest {}, this commit's is {}: other \
                     new files or another compaction)",
                    recorded.unwrap_or_default(),
                    identity.digest
                ),
            });
        }
        // Commit the compaction alone.
        messages.retain(has_compaction);
        for message in &mut messages {
            message.new_files.clear();
            message.deleted_files.clear();
            message.new_changelog_files.clear();
            message.new_index_files.clear();
            message.deleted_index_files.clear();
        }
        match super::rules::check_against_table(coordinator.context(), &messages).await {
            Ok(()) => {}
            // A commit since the APPEND snapshot removed some of the compaction's input
            // files (another job compacted or overwrote them; or this identifier's own
            // COMPACT attempt lost that conflict). Committing the compaction now would
            // bring back rows those files held, so it is dropped, as Java's committer drops
            // it; the identifier's new files are committed in the APPEND snapshot. Its
            // results are deleted as an abort deletes (never a file a snapshot references);
            // if that fails they stay behind as orphans, as Java leaves them, and the
            // identifier is committed all the same.
            Err(CoordinatorError::Validation(error))
                if error.rule == super::Rule::NotLive
                    && error.field.starts_with("compact_before") =>
            {
                let _ = abort(coordinator, &messages).await;
                return Ok(CommitOutcome::AlreadyCommitted {
                    snapshot_id: Some(append_snapshot_id),
                });
            }
            Err(error) => return Err(error),
        }
    } else if let Some(snapshot_id) = committed_from(coordinator, identifier, status)? {
        if let Some(snapshot_id) = snapshot_id {
            let identity = pending_identity.finish(&shared, partitioned).await;
            confirm_same_commit(
                coordinator,
                &identity,
                Some(&shared),
                identifier,
                snapshot_id,
            )
            .await?;
        }
        return Ok(CommitOutcome::AlreadyCommitted { snapshot_id });
    } else {
        let checked =
            super::rules::check_against_table_but_existence(coordinator.context(), &shared).await;
        identity = pending_identity.finish(&shared, partitioned).await;
        messages = std::sync::Arc::unwrap_or_clone(shared);
        if let Err(refusal) = checked {
            return refused_unless_raced(
                coordinator,
                &identity,
                Some(&messages),
                identifier,
                with_compaction,
                refusal,
            )
            .await;
        }
        existence = checked.ok().flatten();
    }
    let mut table_commit = TableCommit::new(
        coordinator.table.clone(),
        coordinator.binding.commit_user.clone(),
    );
    // Every file the commit adds is checked to exist (rule missing-file, in
    // `table_state`, which every path that commits runs, and which is awaited before the
    // publication): the crate does not list them again.
    table_commit = table_commit.with_added_files_checked();
    // The existence check, still running, answers before anything is published: the crate
    // encodes and writes the manifests meanwhile. Its refusal is this commit's answer.
    let existence_refusal = std::sync::Arc::new(std::sync::Mutex::new(None));
    if let Some(existence) = existence {
        table_commit = table_commit
            .with_publication_gate(existence.into_publication_gate(existence_refusal.clone()));
    }
    table_commit = table_commit.with_snapshot_properties(HashMap::from([(
        COMMIT_DIGEST_PROPERTY.into(),
        identity.digest.clone(),
    )]));
    let count = messages.len();
    // Merging and binding drop messages without files, so any message left commits a file.
    let commits_files = !messages.is_empty();
    let result = match coordinator.binding.mode {
        CommitMode::Append => {
            table_commit
                .filter_and_commit_with_identifier(messages, identifier)
                .await
        }
        CommitMode::Overwrite => {
            table_commit
                .overwrite_with_identifier(messages, None, identifier)
                .await
        }
    };
    let committing = || {
        format!(
            "committing {count} message(s) to table {} ({} mode, commit user {:?}, identifier \
             {identifier})",
            coordinator.rules.table_name(),
            coordinator.binding.mode,
            coordinator.binding.commit_user
        )
    };
    if result.is_err() {
        // The existence check refused (or could not answer) before the first publication:
        // nothing of this commit is in the table.
        if let Some(refusal) = existence_refusal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            return Err(refusal);
        }
    }
    conclude(
        coordinator,
        &identity,
        identifier,
        with_compaction,
        commits_files,
        result,
        &committing,
    )
    .await
}

/// Rule `identifier-owner` after a table-state rule refused the commit of `identity`: a
/// racing coordinator with this commit user and identifier may have published since the
/// status was read (its files are then live, or this commit's inputs gone, and the check
/// refuses). If it published this very commit, this commit is committed; if other data, the
/// answer is the one a status read after it gets (`IdentifierReused`), whichever of the two
/// reads saw it first. Otherwise the refusal stands.
pub(super) async fn refused_unless_raced(
    coordinator: &Coordinator,
    identity: &CommitIdentity,
    messages: Option<&[CommitMessage]>,
    identifier: i64,
    with_compaction: bool,
    refusal: CoordinatorError,
) -> CoordinatorResult<CommitOutcome> {
    if let IdentifierStatus::Committed(snapshot_id) =
        identifier_status(coordinator, identifier, with_compaction).await?
    {
        match confirm_same_commit(coordinator, identity, messages, identifier, snapshot_id).await {
            Ok(()) => {
                return Ok(CommitOutcome::AlreadyCommitted {
                    snapshot_id: Some(snapshot_id),
                })
            }
            Err(reused @ CoordinatorError::IdentifierReused { .. }) => return Err(reused),
            Err(_) => {}
        }
    }
    Err(refusal)
}

/// The outcome of the paimon crate's publication `result` of the commit of `identity`, from
/// the table's snapshots (rule `identifier-owner`): every publication, materialized or
/// streamed, ends here. `commits_files` says whether the commit had any file.
pub(super) async fn conclude(
    coordinator: &Coordinator,
    identity: &CommitIdentity,
    identifier: i64,
    with_compaction: bool,
    commits_files: bool,
    result: paimon::Result<()>,
    committing: &(dyn Fn() -> String + Sync),
) -> CoordinatorResult<CommitOutcome> {
    if let Err(error) = result {
        let error = CoordinatorError::paimon(committing(), error);
        let CoordinatorError::Paimon {
            source: source @ paimon::Error::CommitOutcomeUnknown { .. },
            ..
        } = error
        else {
            // Refused before any attempt started to publish, or every attempt was answered
            // (another committer took the snapshot): nothing of this commit is in the table.
            return Err(error);
        };
        // An attempt's publication went unanswered. If its snapshot landed already, this
        // commit is committed; otherwise it may still land.
        return match published(coordinator, identity, identifier, with_compaction).await {
            Ok(Published::Snapshot(snapshot_id)) => Ok(CommitOutcome::Committed { snapshot_id }),
            Ok(_) | Err(_) => Err(outcome_unknown(
                coordinator,
                identifier,
                committing(),
                Some(source),
            )),
        };
    }
    // The paimon crate published this commit's snapshot, or found the identifier committed:
    // from here on a failure to confirm it leaves the outcome unknown, never "nothing
    // committed".
    let confirming = || format!("confirming the outcome of {}", committing());
    match published(coordinator, identity, identifier, with_compaction).await {
        Ok(Published::Snapshot(snapshot_id)) => Ok(CommitOutcome::Committed { snapshot_id }),
        Ok(Published::Expired) => Ok(CommitOutcome::AlreadyCommitted { snapshot_id: None }),
        Ok(Published::Nothing) if !commits_files => Ok(CommitOutcome::NothingToCommit),
        Ok(Published::Nothing) => Err(outcome_unknown(
            coordinator,
            identifier,
            confirming(),
            Some(paimon::Error::UnexpectedError {
                message: "the commit returned without error, but no snapshot carries its \
                          commit user and identifier yet"
                    .into(),
                source: None,
            }),
        )),
        // A snapshot under this commit user and identifier holds other data, or a higher
        // identifier provably superseded this one: the paimon crate's filter published
        // nothing of this commit.
        Err(
            refusal @ (CoordinatorError::IdentifierReused { .. }
            | CoordinatorError::IdentifierSuperseded { .. }),
        ) => Err(refusal),
        Err(CoordinatorError::Paimon { source, .. }) => Err(outcome_unknown(
            coordinator,
            identifier,
            confirming(),
            Some(source),
        )),
        Err(other) => Err(other),
    }
}

/// What the table shows of a commit after the paimon crate's call.
enum Published {
    /// This snapshot carries the commit user and identifier, and holds this very commit.
    Snapshot(i64),
    /// Committed by the identifier rule (a higher identifier of the user came after it), but
    /// its snapshot has expired.
    Expired,
    /// No snapshot carries the identifier.
    Nothing,
}

/// Reads the table's snapshots for the commit of `identity` under `identifier`.
async fn published(
    coordinator: &Coordinator,
    identity: &CommitIdentity,
    identifier: i64,
    with_compaction: bool,
) -> CoordinatorResult<Published> {
    let status = identifier_status(coordinator, identifier, with_compaction).await?;
    Ok(match committed_from(coordinator, identifier, status)? {
        Some(Some(snapshot_id)) => {
            // This coordinator's publication, or a racing coordinator's under the same
            // commit user and identifier: this commit only if that snapshot holds it.
            confirm_same_commit(coordinator, identity, None, identifier, snapshot_id).await?;
            Published::Snapshot(snapshot_id)
        }
        Some(None) => Published::Expired,
        None => Published::Nothing,
    })
}

/// The error of a commit whose snapshot may be in the table or may still land.
fn outcome_unknown(
    coordinator: &Coordinator,
    identifier: i64,
    during: String,
    source: Option<paimon::Error>,
) -> CoordinatorError {
    CoordinatorError::OutcomeUnknown {
        commit_user: coordinator.binding.commit_user.clone(),
        identifier,
        during,
        source: source.map(Box::new),
    }
}

/// What [`Coordinator::abort`](super::Coordinator::abort) did with each file the messages
/// name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AbortReport {
    /// Files handed to deletion (data, changelog and index file names; a data file's extra
    /// files go with it). Deleting is best effort: a file already gone is not an error.
    pub deleted: Vec<String>,
    /// Files left alone, each with the reason.
    pub skipped: Vec<SkippedFile>,
}

/// A file [`Coordinator::abort`](super::Coordinator::abort) did not delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFile {
    /// The file name.
    pub file_name: String,
    /// Why it was kept.
    pub reason: String,
}

/// Deletes only files abort can prove this job wrote and nobody uses: files that no retained
/// snapshot, tag or branch of the table references (data files in the messages' partitions
/// and buckets; index files anywhere in the table, since every bucket's index files share
/// one directory). External paths were checked at deserialization to be exactly this
/// table's layout for the file. Everything else is skipped and reported.
pub(crate) async fn abort(
    coordinator: &Coordinator,
    messages: &[CommitMessage],
) -> CoordinatorResult<AbortReport> {
    let referenced =
        super::rules::shared::state::referenced_files(coordinator.context(), messages).await?;
    let mut report = AbortReport::default();
    let mut deletable = Vec::with_capacity(messages.len());
    for message in messages {
        let key = super::rules::shared::state::message_bucket_key(coordinator.context(), message);
        let mut keep = |name: &str, index_file: bool| {
            let is_referenced = if index_file {
                referenced.index.contains(name)
            } else {
                referenced.has_data(&key, name)
            };
            if is_referenced {
                report.skipped.push(SkippedFile {
                    file_name: name.to_string(),
                    reason: "a snapshot, tag or branch of the table references it (was this \
                             payload committed? rerun the commit with the same identifier \
                             instead)"
                        .into(),
                });
                false
            } else {
                report.deleted.push(name.to_string());
                true
            }
        };
        let mut message = message.clone();
        message.new_files.retain(|f| keep(&f.file_name, false));
        message
            .new_changelog_files
            .retain(|f| keep(&f.file_name, false));
        message.new_index_files.retain(|f| keep(&f.file_name, true));
        // A compaction result upgraded in place is the live compact_before file itself:
        // a snapshot references it, so it is kept.
        message.compact_after.retain(|f| keep(&f.file_name, false));
        message
            .compact_changelog_files
            .retain(|f| keep(&f.file_name, false));
        message
            .compact_new_index_files
            .retain(|f| keep(&f.file_name, true));
        for (list, files) in [
            ("deleted_files", message.deleted_files.len()),
            ("deleted_index_files", message.deleted_index_files.len()),
            ("compact_before", message.compact_before.len()),
            (
                "compact_deleted_index_files",
                message.compact_deleted_index_files.len(),
            ),
        ] {
            if files > 0 {
                report.skipped.push(SkippedFile {
                    file_name: format!("{files} file(s) in {list}"),
                    reason: "abort deletes only files the job wrote, never the files a \
                             message deletes"
                        .into(),
                });
            }
        }
        message.deleted_files.clear();
        message.deleted_index_files.clear();
        message.compact_before.clear();
        message.compact_deleted_index_files.clear();
        deletable.push(message);
    }
    TableCommit::new(
        coordinator.table.clone(),
        coordinator.binding.commit_user.clone(),
    )
    .abort(&deletable)
    .await
    .map_err(|e| {
        CoordinatorError::paimon(
            format!(
                "deleting the files of {} aborted message(s) in table {}",
                messages.len(),
                coordinator.rules.table_name()
            ),
            e,
        )
    })?;
    Ok(report)
}
