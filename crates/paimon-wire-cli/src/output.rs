//! Writing to stdout and stderr without panicking.
//!
//! `println!` and `eprintln!` panic when the stream is closed; here a reader that went
//! away (`paimon-wire inspect ... | head`) ends the output quietly, as a Unix tool killed by
//! SIGPIPE would, and any other write failure is an error.

use std::io::Write;

use crate::error::{CliError, CliResult};

/// Writes `bytes` to stdout and flushes.
pub fn write_stdout(bytes: &[u8]) -> CliResult<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::input(format!("cannot write stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// Writes `line` and a newline to stdout.
pub fn stdout_line(line: impl std::fmt::Display) -> CliResult<()> {
    write_stdout(format!("{line}\n").as_bytes())
}

/// Writes `line` and a newline to stderr; if stderr is gone there is nowhere to report it.
pub fn stderr_line(line: impl std::fmt::Display) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}
