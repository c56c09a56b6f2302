//! `Writer`: one worker's side of a distributed write. Rows go through the paimon crate's
//! `TableWrite`; `prepare_commit` turns its commit messages into a Java-compatible payload.

use std::sync::PoisonError;

use arrow_schema::SchemaRef;
use paimon_wire::paimon::table::TableWrite;
use paimon_wire::{conform_batch, paimon, serialize_list, SerializerVersion};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use tokio::sync::Mutex;

use crate::arrow_input::ArrowInput;
use crate::errors::Error;
use crate::payload::serializer_version;
use crate::runtime;

/// A writer of data files for one worker, made by `Table.new_writer(commit_user)`.
///
/// `write()` as many batches as needed, then `prepare_commit()` to get the payload to send
/// to the coordinator. `close()` (or leaving a `with` block) discards whatever was written
/// since the last `prepare_commit()`. Safe to share between threads; calls on one writer
/// run one at a time.
#[pyclass(module = "paimon_wire._native", frozen)]
pub struct Writer {
    /// None once closed.
    write: Mutex<Option<TableWrite>>,
    /// Messages prepared by a `prepare_commit` whose payload could not be encoded (a version
    /// that cannot carry them): the next `prepare_commit` sends them first, so no written
    /// file is left out of every payload.
    unsent: std::sync::Mutex<Vec<paimon::table::CommitMessage>>,
    /// The table's columns, which every batch is conformed to before it is written.
    schema: SchemaRef,
    table_name: String,
    commit_user: String,
}

impl Writer {
    pub(crate) fn new(
        table: &paimon::table::Table,
        table_name: &str,
        commit_user: &str,
        overwrite: bool,
        assigner: Option<paimon::table::AssignerShare>,
    ) -> PyResult<Self> {
        let builder = table
            .new_write_builder()
            .with_commit_user(commit_user)
            .map_err(|e| Error::paimon("setting the commit user", e))?;
        let builder = if overwrite {
            builder.with_overwrite()
        } else {
            builder
        };
        let builder = match assigner {
            Some(share) => builder.with_dynamic_bucket_share(share),
            None => builder,
        };
        let write = builder
            .new_write()
            .map_err(|e| Error::paimon(format!("starting a write on table {table_name}"), e))?;
        let schema = paimon_wire::conform::table_arrow_schema(table)
            .map_err(|e| Error::paimon(format!("reading the columns of table {table_name}"), e))?;
        Ok(Self {
            write: Mutex::new(Some(write)),
            unsent: std::sync::Mutex::new(Vec::new()),
            schema,
            table_name: table_name.to_string(),
            commit_user: commit_user.to_string(),
        })
    }

    /// Runs `work` on the open paimon writer with the GIL released. The writer's lock is
    /// taken without the GIL too: a thread waiting for it while holding the GIL would keep
    /// the thread that holds it from ever returning.
    fn with_open_write<M, T>(&self, py: Python<'_>, work: M) -> PyResult<T>
    where
        M: AsyncFnOnce(&mut TableWrite) -> Result<T, Error> + Send,
        T: Send,
    {
        let state = &self.write;
        let result = runtime::block_on(py, move || async move {
            let mut guard = state.lock().await;
            let write = guard.as_mut().ok_or_else(|| {
                Error::Usage("the writer is closed; make a new one with Table.new_writer".into())
            })?;
            work(write).await
        })?;
        Ok(result?)
    }

    /// The paimon writer, taken out of this one (None if closed), with the GIL released.
    fn take(&self, py: Python<'_>) -> Option<TableWrite> {
        let state = &self.write;
        py.detach(move || state.blocking_lock().take())
    }
}

#[pymethods]
impl Writer {
    /// Writes rows: a `pyarrow.RecordBatch`, `pyarrow.Table`, `pyarrow.RecordBatchReader`,
    /// or any object exporting Arrow data (`__arrow_c_stream__` / `__arrow_c_array__`).
    /// Columns are matched to the table's by name, in any order; a column the table does
    /// not have, or a missing one, raises `SchemaMismatchError` naming it. A column of
    /// another Arrow type is converted when no value changes (string and binary views and
    /// large variants, dictionaries, timestamp units, decimal precision and scale), and
    /// refused naming the column otherwise. Rows are routed to their partition and bucket.
    /// Returns the number of rows written.
    fn write(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u64> {
        let input = ArrowInput::import(data)?;
        let table_name = &self.table_name;
        let schema = &self.schema;
        self.with_open_write(py, async move |write| {
            let mut rows = 0u64;
            for batch in input.batches() {
                let batch = conform_batch(&batch?, schema).map_err(Error::Conform)?;
                write.write_arrow_batch(&batch).await.map_err(|e| {
                    Error::paimon(format!("writing a record batch to table {table_name}"), e)
                })?;
                rows += batch.num_rows() as u64;
            }
            Ok(rows)
        })
    }

    /// Flushes the files written so far and returns `(payload, version)`: the commit
    /// messages describing them as the bytes Paimon Java's `CommitMessageSerializer` writes
    /// at serializer `version` (default: the newest), to send to the coordinator. The writer
    /// can write again afterwards, for the next commit.
    ///
    /// An older `version` lets an older Java coordinator read the payload; a field that
    /// version cannot carry, or a version no release writes, raises `CodecError` naming it.
    /// The messages of a payload that could not be encoded stay with the writer: the next
    /// `prepare_commit()` sends them too (closing the writer instead leaves their files to
    /// Paimon's orphan-file cleanup).
    #[pyo3(signature = (version=None))]
    fn prepare_commit<'py>(
        &self,
        py: Python<'py>,
        version: Option<i32>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let version = match version {
            Some(version) => serializer_version(version)?,
            None => SerializerVersion::CURRENT,
        };
        let table_name = &self.table_name;
        let unsent = &self.unsent;
        let payload = self.with_open_write(py, async move |write| {
            let prepared = write.prepare_commit().await.map_err(|e| {
                Error::paimon(format!("preparing the commit of table {table_name}"), e)
            })?;
            let mut unsent = unsent.lock().unwrap_or_else(PoisonError::into_inner);
            let mut messages = std::mem::take(&mut *unsent);
            messages.extend(prepared);
            serialize_list(&messages, version).map_err(|e| {
                *unsent = messages;
                Error::from(e)
            })
        })?;
        let bytes = PyBytes::new(py, &payload);
        (bytes, version.as_i32()).into_pyobject(py)
    }

    /// Discards whatever was written since the last `prepare_commit()` (files already
    /// handed out in payloads belong to the coordinator) and closes the writer. Closing a
    /// closed writer does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(mut write) = self.take(py) {
            runtime::block_on(py, move || async move { write.close().await })?;
        }
        Ok(())
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        let state = &self.write;
        py.detach(move || state.blocking_lock().is_none())
    }

    /// The commit user the writer was made with.
    #[getter]
    fn commit_user(&self) -> &str {
        &self.commit_user
    }

    /// The table's name, `database.table`.
    #[getter]
    fn table_name(&self) -> &str {
        &self.table_name
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the writer (discarding anything not prepared).
    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "Writer(table={:?}, commit_user={:?})",
            self.table_name, self.commit_user
        )
    }
}
