//! Arrow data from Python, moved in through the Arrow PyCapsule interface (the C Data
//! Interface in capsules): the buffers stay where pyarrow (or any other producer) put them,
//! no value is copied through Python objects.

use std::sync::Arc;

use arrow_array::ffi_stream::ArrowArrayStreamReader;
use arrow_array::{RecordBatch, RecordBatchOptions, StructArray};
use arrow_pyarrow::FromPyArrow;
use arrow_schema::{DataType, Schema};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::errors::{ArrowError, Error, Result};

/// Arrow data imported from Python, read without the GIL.
pub(crate) enum ArrowInput {
    /// An `ArrowArrayStream` (`__arrow_c_stream__`): a table, a reader, a batch.
    Stream(ArrowArrayStreamReader),
    /// One struct array (`__arrow_c_array__`), already a record batch.
    Batch(RecordBatch),
}

impl ArrowInput {
    /// Imports `data`: anything with `__arrow_c_stream__` (preferred: `pyarrow.Table`,
    /// `pyarrow.RecordBatchReader`, `pyarrow.RecordBatch`, polars and others) or
    /// `__arrow_c_array__` exporting a struct array (a record batch).
    pub(crate) fn import(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let import_error = |e: PyErr| {
            let err = ArrowError::new_err(format!("cannot import the Arrow data: {e}"));
            err.set_cause(data.py(), Some(e));
            err
        };
        if data.hasattr("__arrow_c_stream__")? {
            return ArrowArrayStreamReader::from_pyarrow_bound(data)
                .map(ArrowInput::Stream)
                .map_err(import_error);
        }
        if data.hasattr("__arrow_c_array__")? {
            let array = arrow_data::ArrayData::from_pyarrow_bound(data).map_err(import_error)?;
            return record_batch(array)
                .map(ArrowInput::Batch)
                .map_err(PyErr::from);
        }
        let type_name = data
            .get_type()
            .fully_qualified_name()
            .map(|name| name.to_string())
            .unwrap_or_else(|_| "an unknown type".to_string());
        Err(PyTypeError::new_err(format!(
            "expected Arrow data (pyarrow.RecordBatch, pyarrow.Table, pyarrow.RecordBatchReader \
             or any object with __arrow_c_stream__ or __arrow_c_array__), got {type_name}"
        )))
    }

    /// The batches, in order.
    pub(crate) fn batches(self) -> Box<dyn Iterator<Item = Result<RecordBatch>> + Send> {
        match self {
            ArrowInput::Batch(batch) => Box::new(std::iter::once(Ok(batch))),
            ArrowInput::Stream(reader) => Box::new(reader.map(|batch| {
                batch.map_err(|e| {
                    Error::Arrow(format!(
                        "cannot read the next batch of the Arrow stream: {e}"
                    ))
                })
            })),
        }
    }
}

/// A record batch from a struct array without null rows (the C Data Interface's form of a
/// record batch).
fn record_batch(mut array: arrow_data::ArrayData) -> Result<RecordBatch> {
    let DataType::Struct(fields) = array.data_type().clone() else {
        return Err(Error::Arrow(format!(
            "a record batch is exported as a struct array, got an array of {}",
            array.data_type()
        )));
    };
    if array.nulls().is_some_and(|nulls| nulls.null_count() > 0) {
        return Err(Error::Arrow(
            "the struct array of a record batch must have no null rows".to_string(),
        ));
    }
    // Producers may hand out buffers that are not aligned for their type; align (copying
    // only those) rather than misread them.
    array.align_buffers();
    let rows = array.len();
    let (_, columns, _) = StructArray::from(array).into_parts();
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| Error::Arrow(format!("the struct array is not a valid record batch: {e}")))
}
