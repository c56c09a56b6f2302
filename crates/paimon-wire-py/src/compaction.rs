//! `CompactionTask`: one bucket's compaction ([`paimon_wire::compaction`]), planned by
//! `Table.plan_compaction` and run anywhere (`CompactionTask.run`: a worker process, a Ray
//! task), pickled as its bytes.

use paimon_wire::compaction::CompactionTask as CoreTask;
use paimon_wire::{serialize_list, SerializerVersion};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::errors::Error;
use crate::payload::{serializer_version, BytesLike};
use crate::runtime;
use crate::table::Table;

/// One partition and bucket to compact, as `Table.plan_compaction` planned it.
#[pyclass(module = "paimon_wire._native", frozen)]
pub struct CompactionTask(pub(crate) CoreTask);

#[pymethods]
impl CompactionTask {
    /// A task from the bytes of `to_bytes` (how a task travels and unpickles).
    #[new]
    fn new(data: BytesLike<'_>) -> PyResult<Self> {
        Ok(Self(
            CoreTask::from_bytes(data.as_bytes()).map_err(Error::Compaction)?,
        ))
    }

    /// The bucket.
    #[getter]
    fn bucket(&self) -> i32 {
        self.0.bucket()
    }

    /// The snapshot the task was planned from: commit its result under this identifier.
    #[getter]
    fn snapshot_id(&self) -> i64 {
        self.0.snapshot_id()
    }

    /// How many files the task rewrites.
    #[getter]
    fn input_files(&self) -> usize {
        self.0.input_files().len()
    }

    /// The bytes of the files the task rewrites.
    #[getter]
    fn input_bytes(&self) -> i64 {
        self.0.input_bytes()
    }

    /// The level the results are written to (0 for an append table).
    #[getter]
    fn output_level(&self) -> i32 {
        self.0.output_level()
    }

    /// The task as bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.to_bytes())
    }

    /// Rewrites the task's files in `table` and returns the payload of the compaction's
    /// commit message, `(bytes, version)`, for a coordinator bound with
    /// `verify_compaction=True` (or `allow_compaction=True`).
    #[pyo3(signature = (table, version = None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        table: &Table,
        version: Option<i32>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let version = match version {
            Some(version) => serializer_version(version)?,
            None => SerializerVersion::CURRENT,
        };
        let task = &self.0;
        let table = &table.table;
        let message = runtime::block_on(py, || task.run(table))?.map_err(Error::Compaction)?;
        let payload = serialize_list(&[message], version).map_err(Error::from)?;
        (PyBytes::new(py, &payload), version.as_i32()).into_pyobject(py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let bytes = PyBytes::new(slf.py(), &slf.get().0.to_bytes());
        (slf.get_type(), (bytes,)).into_pyobject(slf.py())
    }

    fn __repr__(&self) -> String {
        format!(
            "CompactionTask(bucket={}, snapshot_id={}, input_files={}, output_level={})",
            self.0.bucket(),
            self.0.snapshot_id(),
            self.0.input_files().len(),
            self.0.output_level()
        )
    }
}

/// The tasks of `table`'s compaction plan (`Table.plan_compaction`).
pub(crate) fn plan(table: &Table, py: Python<'_>, full: bool) -> PyResult<Vec<CompactionTask>> {
    let core = &table.table;
    let plan = runtime::block_on(py, || paimon_wire::compaction::plan_compaction(core, full))?
        .map_err(Error::Compaction)?;
    Ok(plan.tasks().iter().cloned().map(CompactionTask).collect())
}
