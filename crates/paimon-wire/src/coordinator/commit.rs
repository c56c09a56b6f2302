//! Committing exactly once, and aborting.
//!
//! A snapshot records the commit user and the commit identifier that made it. Before
//! committing, the coordinator looks for a snapshot of its user carrying the identifier;
//! the commit itself goes through the paimon crate's filtering entry points
//! (`TableCommit::filter_and_commit_with_identifier`, `overwrite_with_identifier`), which
//! check again under the commit's own retry loop, so a rerun never commits twice.

use paimon::table::{CommitMessage, TableCommit};

use super::error::{CoordinatorError, CoordinatorResult};
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

/// The snapshot of the coordinator's commit user that committed `identifier`:
/// `Some(Some(id))` found, `Some(None)` committed by the identifier rule but no snapshot
/// carries it any more, `None` not committed.
pub(crate) async fn find_committed(
    coordinator: &Coordinator,
    identifier: i64,
) -> CoordinatorResult<Option<Option<i64>>> {
    let table_name = coordinator.rules.table_name();
    let reading = || format!("reading the snapshots of table {table_name}");
    let snapshots = coordinator.table.snapshot_manager();
    let Some(latest) = snapshots
        .get_latest_snapshot()
        .await
        .map_err(|e| CoordinatorError::paimon(reading(), e))?
    else {
        return Ok(None);
    };
    let earliest = snapshots
        .earliest_snapshot_id()
        .await
        .map_err(|e| CoordinatorError::paimon(reading(), e))?
        .unwrap_or(latest.id());
    let user = coordinator.binding.commit_user.as_str();
    let mut superseded = false;
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
            return Ok(Some(Some(snapshot_id)));
        }
        if committed < identifier {
            // Identifiers increase per user: nothing older can carry `identifier`.
            return Ok(superseded.then_some(None));
        }
        superseded = true;
    }
    Ok(superseded.then_some(None))
}

pub(crate) async fn commit_once(
    coordinator: &Coordinator,
    messages: Vec<CommitMessage>,
    identifier: i64,
) -> CoordinatorResult<CommitOutcome> {
    if let Some(snapshot_id) = find_committed(coordinator, identifier).await? {
        return Ok(CommitOutcome::AlreadyCommitted { snapshot_id });
    }
    let table_commit = TableCommit::new(
        coordinator.table.clone(),
        coordinator.binding.commit_user.clone(),
    );
    let count = messages.len();
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
    result.map_err(|e| {
        CoordinatorError::paimon(
            format!(
                "committing {count} message(s) to table {} ({} mode, commit user {:?}, \
                 identifier {identifier}); if the outcome is unknown, rerun the same commit \
                 with the same identifier — never abort",
                coordinator.rules.table_name(),
                coordinator.binding.mode,
                coordinator.binding.commit_user
            ),
            e,
        )
    })?;
    Ok(match find_committed(coordinator, identifier).await? {
        Some(Some(snapshot_id)) => CommitOutcome::Committed { snapshot_id },
        Some(None) => CommitOutcome::AlreadyCommitted { snapshot_id: None },
        None => CommitOutcome::NothingToCommit,
    })
}

pub(crate) async fn abort(
    coordinator: &Coordinator,
    messages: &[CommitMessage],
) -> CoordinatorResult<()> {
    TableCommit::new(
        coordinator.table.clone(),
        coordinator.binding.commit_user.clone(),
    )
    .abort(messages)
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
    })
}
