//! The tokio runtime the async paimon crate runs on.
//!
//! One runtime is created when a table is opened and shared (by `Arc`) with every handle
//! derived from that table; it is shut down when the last of them is freed. By default it is a
//! current-thread runtime: exported functions `block_on` it on the caller's thread, so it has
//! no worker threads, only the blocking pool where Paimon's file I/O runs (tokio starts those
//! threads on demand and lets idle ones exit after 10 seconds). `paimon_wire_table_options`
//! can give it worker threads, cap its blocking pool and name its threads.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::{paimon_wire_error_code, FfiError, FfiResult};
use crate::options::RuntimeSettings;

/// A runtime shared by a table handle and the handles made from it.
#[derive(Clone)]
pub(crate) struct SharedRuntime(Arc<tokio::runtime::Runtime>);

impl SharedRuntime {
    pub(crate) fn new(settings: &RuntimeSettings) -> FfiResult<Self> {
        let mut builder = if settings.worker_threads == 0 {
            tokio::runtime::Builder::new_current_thread()
        } else {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(settings.worker_threads);
            builder
        };
        builder.enable_all();
        if let Some(max) = settings.max_blocking_threads {
            builder.max_blocking_threads(max);
        }
        if let Some(prefix) = settings.thread_name_prefix.clone() {
            let next = AtomicUsize::new(0);
            builder.thread_name_fn(move || {
                format!("{prefix}{}", next.fetch_add(1, Ordering::Relaxed))
            });
        }
        builder.build().map(|rt| Self(Arc::new(rt))).map_err(|e| {
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
