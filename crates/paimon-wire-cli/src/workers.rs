//! What the commands that start worker processes of this program share (`demo`, `compact`):
//! waiting for the threads that watch them, and the line a failed worker ended with.

use std::thread::ScopedJoinHandle;

use crate::error::{CliError, CliResult};

/// Waits for every worker-watching thread; a thread that panicked is an error of its own.
pub fn join_all<T>(handles: Vec<ScopedJoinHandle<'_, CliResult<T>>>) -> Vec<CliResult<T>> {
    handles
        .into_iter()
        .map(|h| {
            h.join().unwrap_or_else(|_| {
                Err(CliError::input(
                    "a worker-watching thread failed unexpectedly",
                ))
            })
        })
        .collect()
}

/// The reason a worker gave: the last non-empty line of its stderr, without this program's
/// `error:` prefix.
pub fn last_error_line(stderr_lines: &[String]) -> Option<String> {
    stderr_lines
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim_start_matches("paimon-wire: error: ").to_string())
}
