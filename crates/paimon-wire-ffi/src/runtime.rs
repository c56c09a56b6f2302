//! The tokio runtime the async paimon crate runs on.
//!
//! One current-thread runtime is created when a table is opened and shared (by `Arc`) with
//! every handle derived from that table. Exported functions `block_on` it on the caller's
//! thread, so the library starts no worker threads of its own, and the runtime (with any
//! blocking-pool threads paimon's file I/O started) is shut down when the last handle of the
//! table is freed. Creating a current-thread runtime costs microseconds, once per table.

use std::future::Future;
use std::sync::Arc;

use crate::error::{paimon_wire_error_code, FfiError, FfiResult};

/// A runtime shared by a table handle and the handles made from it.
#[derive(Clone)]
pub(crate) struct SharedRuntime(Arc<tokio::runtime::Runtime>);

impl SharedRuntime {
    pub(crate) fn new() -> FfiResult<Self> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map(|rt| Self(Arc::new(rt)))
            .map_err(|e| {
                FfiError::new(
                    paimon_wire_error_code::Internal,
                    format!("cannot start the tokio runtime: {e}"),
                )
            })
    }

    /// Runs `future` to completion on the calling thread.
    ///
    /// Several C threads may call this at once; tokio lets one of them drive the runtime while
    /// the others wait.
    pub(crate) fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }
}
