//! The tokio runtime the async paimon crate runs on, and running work without the GIL.
//!
//! One multi-threaded runtime per process, started at the first call that needs it. Every
//! blocking call releases the GIL ([`Python::detach`]) and drives its future with
//! `block_on` on the calling thread, so other Python threads run meanwhile and several
//! writers may write at once.
//!
//! A process forked after the runtime started (e.g. `multiprocessing` with the `fork` start
//! method) inherits a runtime whose threads do not exist in the child; the child starts a
//! runtime of its own and never touches the inherited one.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// Threads of the runtime: the paimon crate's file I/O and parallel flushes, not the writes
/// themselves, which run on the calling thread.
const WORKER_THREADS: usize = 2;

/// The runtime and the process it was started in.
static RUNTIME: Mutex<Option<(u32, Arc<tokio::runtime::Runtime>)>> = Mutex::new(None);

/// The runtime of this process, started on first use (again after a fork).
fn runtime() -> PyResult<Arc<tokio::runtime::Runtime>> {
    let pid = std::process::id();
    let mut slot = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((owner, runtime)) = slot.as_ref() {
        if *owner == pid {
            return Ok(Arc::clone(runtime));
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .thread_name("paimon-wire")
        .enable_all()
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the tokio runtime: {e}")))?;
    let runtime = Arc::new(runtime);
    if let Some((_, inherited)) = slot.replace((pid, Arc::clone(&runtime))) {
        // Inherited through fork: its threads live only in the parent, so shutting it down
        // here would wait for them forever. Leak it.
        std::mem::forget(inherited);
    }
    Ok(runtime)
}

/// Runs the future `make` returns to completion with the GIL released. The future is made
/// inside, so only what `make` captures has to be free of GIL-bound references.
pub(crate) fn block_on<M, F>(py: Python<'_>, make: M) -> PyResult<F::Output>
where
    M: FnOnce() -> F + Send,
    F: Future,
    F::Output: Send,
{
    let runtime = runtime()?;
    Ok(py.detach(move || runtime.block_on(make())))
}
