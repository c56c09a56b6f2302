//! The commits of one coordinator whose outcome is unknown, and the horizon after which a
//! request of theirs can no longer land.
//!
//! A commit fails with [`CoordinatorError::OutcomeUnknown`] when a request that publishes its
//! snapshot went unanswered: the store (or the REST catalog) may apply it later, after the
//! coordinator read the table and found nothing. Deleting the commit's files then would break
//! a snapshot that appears afterwards, so [`super::Coordinator::abort`] asks this record first:
//! while an unknown outcome is younger than the horizon, nothing is deleted; after it, one
//! status read settles the identifier (committed or not) and the abort goes on, keeping every
//! file a snapshot references.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::error::{CoordinatorError, CoordinatorResult};

/// The horizon of a table on an object store or behind a REST catalog: how long after a commit
/// failed with its outcome unknown the coordinator assumes one of its requests may still be
/// applied. Five minutes: far beyond the S3 clients' request timeouts and retry budgets, and
/// beyond the connection and idle timeouts of the servers and proxies they cross.
pub const DEFAULT_OBJECT_STORE_OUTCOME_HORIZON: Duration = Duration::from_secs(300);

/// The horizon of a table on a local file system (`file:`, `memory:` or a path): none. Its
/// writes are system calls that have returned before the commit reports an error.
pub const DEFAULT_LOCAL_OUTCOME_HORIZON: Duration = Duration::ZERO;

/// One commit identifier whose outcome is unknown.
#[derive(Debug, Clone, Copy)]
struct UnknownOutcome {
    identifier: i64,
    /// When the commit failed.
    since: Instant,
}

/// The identifiers this coordinator failed to commit with their outcome unknown.
#[derive(Debug, Default)]
pub(crate) struct UnknownOutcomes {
    failed: Mutex<Vec<UnknownOutcome>>,
}

impl UnknownOutcomes {
    /// Records that the commit of `identifier` failed just now with its outcome unknown.
    pub(crate) fn record(&self, identifier: i64) {
        let mut failed = self.lock();
        failed.retain(|outcome| outcome.identifier != identifier);
        failed.push(UnknownOutcome {
            identifier,
            since: Instant::now(),
        });
    }

    /// Forgets `identifier`: a commit of it succeeded, or a status read after the horizon
    /// settled it.
    pub(crate) fn settle(&self, identifier: i64) {
        self.lock()
            .retain(|outcome| outcome.identifier != identifier);
    }

    /// The identifiers whose outcome is unknown, with how long ago their commit failed.
    pub(crate) fn pending(&self) -> Vec<(i64, Duration)> {
        self.lock()
            .iter()
            .map(|outcome| (outcome.identifier, outcome.since.elapsed()))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<UnknownOutcome>> {
        // A panic while the lock was held left a valid list (every change is one call).
        self.failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The default horizon of a table at `location` (its warehouse path or URI), committed
/// through a REST catalog or not.
pub(crate) fn default_horizon(location: &str, rest_catalog: bool) -> Duration {
    let local = matches!(
        crate::warehouse::warehouse_scheme(location).as_deref(),
        None | Some("file" | "fs" | "memory")
    );
    if local && !rest_catalog {
        DEFAULT_LOCAL_OUTCOME_HORIZON
    } else {
        DEFAULT_OBJECT_STORE_OUTCOME_HORIZON
    }
}

/// The refusal of an abort while the outcome of `identifier` is unknown and its requests may
/// still land.
pub(crate) fn abort_refused(
    commit_user: &str,
    identifier: i64,
    failed_ago: Duration,
    horizon: Duration,
) -> CoordinatorError {
    CoordinatorError::OutcomeUnknown {
        commit_user: commit_user.to_string(),
        identifier,
        during: format!(
            "aborting: the commit of identifier {identifier} failed {:.1} s ago with its \
             outcome unknown, and a request of it may land for {:.1} s more (outcome horizon \
             {:.1} s); the abort deleted nothing",
            failed_ago.as_secs_f64(),
            horizon.saturating_sub(failed_ago).as_secs_f64(),
            horizon.as_secs_f64()
        ),
        source: None,
    }
}

/// Checks the coordinator's unknown outcomes before an abort: refuses while one is within
/// `horizon`; settles each older one with `status` (a read of the table that sees every
/// request that could land).
pub(crate) async fn check_before_abort<F, Fut>(
    outcomes: &UnknownOutcomes,
    commit_user: &str,
    horizon: Duration,
    status: F,
) -> CoordinatorResult<()>
where
    F: Fn(i64) -> Fut,
    Fut: std::future::Future<Output = CoordinatorResult<bool>>,
{
    let pending = outcomes.pending();
    if let Some((identifier, failed_ago)) = pending
        .iter()
        .copied()
        .filter(|(_, failed_ago)| *failed_ago < horizon)
        .min_by_key(|(_, failed_ago)| *failed_ago)
    {
        return Err(abort_refused(commit_user, identifier, failed_ago, horizon));
    }
    for (identifier, _) in pending {
        // Committed or not, the identifier's outcome is known now: its snapshot, if any, is
        // in the table, and the abort keeps every file a snapshot references.
        let committed = status(identifier).await?;
        log::info!(
            target: crate::log_policy::COORDINATOR_TARGET,
            "commit user {commit_user:?}, identifier {identifier}: outcome settled past the \
             horizon: {}",
            if committed { "committed" } else { "not committed" }
        );
        outcomes.settle(identifier);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_tables_have_no_horizon_and_remote_ones_five_minutes() {
        for local in ["/data/wh", "file:/data/wh", "file:///data/wh", "memory:/wh"] {
            assert_eq!(default_horizon(local, false), Duration::ZERO, "{local}");
            assert_eq!(
                default_horizon(local, true),
                DEFAULT_OBJECT_STORE_OUTCOME_HORIZON,
                "{local} behind a REST catalog"
            );
        }
        for remote in ["s3://bucket/wh", "oss://b/wh", "gs://b/wh", "hdfs://nn/wh"] {
            assert_eq!(
                default_horizon(remote, false),
                DEFAULT_OBJECT_STORE_OUTCOME_HORIZON,
                "{remote}"
            );
        }
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn an_abort_is_refused_within_the_horizon_and_settles_after_it() {
        let outcomes = UnknownOutcomes::default();
        outcomes.record(7);
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let status = |identifier: i64| {
            reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move { Ok(identifier == 7) }
        };
        let refused = block_on(check_before_abort(
            &outcomes,
            "job",
            Duration::from_secs(3600),
            status,
        ))
        .unwrap_err();
        assert!(refused.outcome_unknown(), "{refused}");
        let message = refused.to_string();
        assert!(
            message.contains("identifier 7") && message.contains("deleted nothing"),
            "{message}"
        );
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(outcomes.pending().len(), 1, "still unknown");

        block_on(check_before_abort(&outcomes, "job", Duration::ZERO, status)).unwrap();
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(outcomes.pending().is_empty(), "settled by the read");
    }

    #[test]
    fn a_failed_status_read_keeps_the_outcome_unknown() {
        let outcomes = UnknownOutcomes::default();
        outcomes.record(3);
        let status = |_| async {
            Err(CoordinatorError::Unsupported {
                reason: "store unreachable".into(),
            })
        };
        assert!(block_on(check_before_abort(&outcomes, "job", Duration::ZERO, status)).is_err());
        assert_eq!(outcomes.pending().len(), 1);
        outcomes.settle(3);
        assert!(outcomes.pending().is_empty());
    }
}
