//! The CLI's one error type and its exit codes.
//!
//! Every failure ends the process with one line on stderr, `paimon-wire: error: ...`, and an
//! exit code that tells a script what kind of failure it was.

use std::fmt;

/// Exit code for bad input: unreadable files, payloads that don't decode, tables that don't
/// accept the messages.
pub const EXIT_BAD_INPUT: u8 = 1;
/// Exit code for a command line that doesn't make sense (clap's own code for usage errors).
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a commit that lost the race for the next snapshot on every attempt the
/// table allows (`commit.max-retries`): nothing was committed, and running the same command
/// again (same identifier) is safe.
pub const EXIT_COMMIT_CONFLICT: u8 = 3;
/// Exit code for a commit whose outcome is unknown: a request that publishes its snapshot went
/// unanswered, so the snapshot may be in the table or may still land. Keep the payload's files
/// and run the same command again (same identifier): it commits, or reports already committed.
/// Every other failure of `commit` is known to have committed nothing.
pub const EXIT_OUTCOME_UNKNOWN: u8 = 4;
/// Exit code of the panic hook, the last resort if a bug makes a code path panic.
pub const EXIT_PANIC: i32 = 101;

/// A failure of a subcommand.
#[derive(Debug)]
pub enum CliError {
    /// The input (a file, a payload, a table) is wrong or unreachable; exit code 1.
    Input(String),
    /// The arguments contradict each other or miss something the input needs; exit code 2.
    Usage(String),
    /// Concurrent commits took every snapshot this commit tried to publish; exit code 3.
    CommitConflict(String),
    /// The commit's snapshot may be in the table, or may still land; exit code 4.
    OutcomeUnknown(String),
}

impl CliError {
    /// A bad-input error with `message`.
    pub fn input(message: impl Into<String>) -> Self {
        Self::Input(message.into())
    }

    /// A usage error with `message`.
    pub fn usage(message: impl Into<String>) -> Self {
        Self::Usage(message.into())
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Input(_) => EXIT_BAD_INPUT,
            Self::Usage(_) => EXIT_USAGE,
            Self::CommitConflict(_) => EXIT_COMMIT_CONFLICT,
            Self::OutcomeUnknown(_) => EXIT_OUTCOME_UNKNOWN,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (Self::Input(message)
        | Self::Usage(message)
        | Self::CommitConflict(message)
        | Self::OutcomeUnknown(message)) = self;
        // Keep the report to one line whatever the underlying error printed.
        let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
        if let Some(first) = lines.next() {
            f.write_str(first)?;
        }
        for line in lines {
            write!(f, "; {line}")?;
        }
        Ok(())
    }
}

impl From<paimon_wire::CodecError> for CliError {
    fn from(e: paimon_wire::CodecError) -> Self {
        Self::Input(e.to_string())
    }
}

/// Result of a subcommand.
pub type CliResult<T> = Result<T, CliError>;
