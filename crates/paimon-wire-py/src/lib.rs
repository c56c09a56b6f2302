//! The native module of the Python package `paimon_wire` (`paimon_wire._native`).
//!
//! A thin door into the core crate, like the C library and the CLI: workers write rows
//! through the paimon crate's `TableWrite` and hand out payloads in Paimon Java's
//! `CommitMessageSerializer` format (`paimon_wire::serialize_list`); one coordinator
//! (`paimon_wire::coordinator::Coordinator`) decodes, validates, merges and commits them
//! once. Nothing here decides a rule.
//!
//! The library's log records reach Python's `logging` under the `paimon_wire` logger
//! (`logging_bridge`).
//!
//! Arrow data comes in through the Arrow PyCapsule interface without copies; every call
//! that blocks (I/O, decoding, committing) releases the GIL. The Python API, its docs and
//! typed stubs live in `python/paimon_wire/`.

mod arrow_input;
mod compaction;
mod coordinator;
mod errors;
mod logging_bridge;
mod payload;
mod runtime;
mod table;
mod writer;

use paimon_wire::SerializerVersion;
use pyo3::prelude::*;

/// Distributed writes to Apache Paimon tables: writers on many processes, one coordinator
/// that validates and commits once.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    logging_bridge::install();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "CURRENT_SERIALIZER_VERSION",
        SerializerVersion::CURRENT.as_i32(),
    )?;
    m.add(
        "DEFAULT_HASH_INDEX_BUDGET",
        paimon_wire::coordinator::DEFAULT_HASH_INDEX_BUDGET,
    )?;
    m.add_function(wrap_pyfunction!(table::open_table, m)?)?;
    m.add_function(wrap_pyfunction!(table::create_table, m)?)?;
    m.add_function(wrap_pyfunction!(payload::inspect, m)?)?;
    m.add_function(wrap_pyfunction!(payload::summarize, m)?)?;
    m.add_function(wrap_pyfunction!(payload::split_payload, m)?)?;
    m.add_function(wrap_pyfunction!(payload::wrap_envelope, m)?)?;
    m.add_function(wrap_pyfunction!(payload::unwrap_envelope, m)?)?;
    m.add_function(wrap_pyfunction!(payload::is_envelope, m)?)?;
    m.add_function(wrap_pyfunction!(payload::frame_dpcm, m)?)?;
    m.add_function(wrap_pyfunction!(payload::unframe_dpcm, m)?)?;
    m.add_function(wrap_pyfunction!(payload::is_dpcm_frame, m)?)?;
    m.add_class::<table::Table>()?;
    m.add_class::<writer::Writer>()?;
    m.add_class::<coordinator::Coordinator>()?;
    m.add_class::<coordinator::BoundMessages>()?;
    m.add_class::<coordinator::CommitOutcome>()?;
    m.add_class::<compaction::CompactionTask>()?;
    errors::register(m)?;
    Ok(())
}
