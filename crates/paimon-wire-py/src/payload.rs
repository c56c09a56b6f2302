//! Payloads as values: serializer versions, `inspect`, the PWIR envelope and Doris's `DPCM`
//! frame.

use paimon_wire::dump::messages_to_json;
use paimon_wire::view::PayloadView;
use paimon_wire::{deserialize_list, dpcm, envelope, DecodeLimits, SerializerVersion};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyMemoryView, PyTuple};
use serde_json::Value;

use crate::errors::Error;

/// Payload bytes from any bytes-like object: `bytes` as it is (no copy); `bytearray`,
/// `memoryview`, `array.array`, NumPy arrays and anything else with the buffer protocol
/// copied once (`memoryview(obj).tobytes()`).
pub(crate) struct BytesLike<'py>(Bound<'py, PyBytes>);

impl<'a, 'py> FromPyObject<'a, 'py> for BytesLike<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(bytes) = obj.cast::<PyBytes>() {
            return Ok(BytesLike(bytes.to_owned()));
        }
        let any = obj.to_owned();
        let view = PyMemoryView::from(&any).map_err(|_| {
            let type_name = any
                .get_type()
                .fully_qualified_name()
                .map(|name| name.to_string())
                .unwrap_or_else(|_| "an unknown type".to_string());
            PyTypeError::new_err(format!(
                "expected a bytes-like object (bytes, bytearray, memoryview, ...), got {type_name}"
            ))
        })?;
        Ok(BytesLike(
            view.call_method0("tobytes")?.cast_into::<PyBytes>()?,
        ))
    }
}

impl BytesLike<'_> {
    /// The bytes.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// The serializer version `version`, or `CodecError` if Paimon Java has no such version.
pub(crate) fn serializer_version(version: i32) -> PyResult<SerializerVersion> {
    SerializerVersion::try_from(version).map_err(|e| Error::Codec(e).into())
}

/// The raw payload and its version: `payload` at `version`, or, with no version, the
/// envelope `payload` unwrapped. A `DPCM` frame, told by its magic, is unframed either way;
/// with a version, the frame must carry that one.
pub(crate) fn unframe(
    payload: &[u8],
    version: Option<i32>,
) -> PyResult<(SerializerVersion, &[u8])> {
    match version {
        Some(version) => {
            let version = serializer_version(version)?;
            let raw = dpcm::strip_frame(version, payload).map_err(Error::from)?;
            Ok((version, raw))
        }
        None if dpcm::is_frame(payload) => Ok(dpcm::unframe(payload).map_err(Error::from)?),
        None => Ok(envelope::unwrap(payload).map_err(Error::from)?),
    }
}

/// `value` as Python objects: objects become dicts, arrays lists.
fn json_to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (key, item) in fields {
                dict.set_item(key, json_to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// The canonical dump of messages (the schema `paimon-wire inspect` prints) as a list of
/// dicts.
pub(crate) fn messages_to_python<'py>(
    py: Python<'py>,
    messages: &[paimon_wire::CommitMessage],
) -> PyResult<Bound<'py, PyAny>> {
    json_to_python(py, &messages_to_json(messages))
}

/// Decodes a payload and returns its messages as a list of dicts, one per message, in the
/// canonical dump schema `paimon-wire inspect` prints (binary rows as lowercase hex,
/// `creation_time` in epoch milliseconds).
///
/// `version` is the serializer version that travelled beside the bytes; with no version,
/// `payload` must be a PWIR envelope or a DPCM frame. Raises `CodecError` / `EnvelopeError` /
/// `FrameError`.
#[pyfunction]
#[pyo3(signature = (payload, version=None))]
pub fn inspect<'py>(
    py: Python<'py>,
    payload: BytesLike<'py>,
    version: Option<i32>,
) -> PyResult<Bound<'py, PyAny>> {
    let (version, raw) = unframe(payload.as_bytes(), version)?;
    let messages = py
        .detach(|| deserialize_list(version, raw))
        .map_err(Error::from)?;
    messages_to_python(py, &messages)
}

/// Counts a payload's messages, new data files and their rows without decoding it into
/// messages: the payload is checked completely (the same checks and errors as `inspect`, within
/// the default decode limits) and read in place. Returns
/// `{"version": int, "messages": int, "data_files": int, "rows": int}`.
///
/// `version` is the serializer version that travelled beside the bytes; with no version,
/// `payload` must be a PWIR envelope or a DPCM frame. Raises `CodecError` / `EnvelopeError` /
/// `FrameError`.
#[pyfunction]
#[pyo3(signature = (payload, version=None))]
pub fn summarize<'py>(
    py: Python<'py>,
    payload: BytesLike<'py>,
    version: Option<i32>,
) -> PyResult<Bound<'py, PyDict>> {
    let (version, raw) = unframe(payload.as_bytes(), version)?;
    let (messages, data_files, rows) = py
        .detach(|| {
            PayloadView::parse_with_limits(version, raw, &DecodeLimits::default()).map(|view| {
                (
                    view.len(),
                    view.data_file_count(),
                    view.reported_row_count(),
                )
            })
        })
        .map_err(Error::from)?;
    let summary = PyDict::new(py);
    summary.set_item("version", version.as_i32())?;
    summary.set_item("messages", messages)?;
    summary.set_item("data_files", data_files)?;
    summary.set_item("rows", rows)?;
    Ok(summary)
}

/// Splits a payload into payloads of at most `max_bytes` bytes each, at the same serializer
/// version, for a transport with a frame limit: each a standard payload any Java release
/// reading that version decodes. A message larger than a payload is split by its new, deleted
/// and changelog files into messages of its partition and bucket. Send each with its index,
/// the count (the list's length) and the version: `Coordinator.deserialize_parts` takes them.
/// A payload within the limit comes back as the one raw payload, byte for byte.
///
/// `version` as in `inspect`. Raises `CodecError` / `EnvelopeError`, `ValueError` for a
/// `max_bytes` below 256, `SplitError` when one file, or a message's compaction and index
/// files, do not fit on their own.
#[pyfunction]
#[pyo3(signature = (payload, max_bytes, version=None))]
pub fn split_payload<'py>(
    py: Python<'py>,
    payload: BytesLike<'py>,
    max_bytes: usize,
    version: Option<i32>,
) -> PyResult<Bound<'py, PyList>> {
    let (version, raw) = unframe(payload.as_bytes(), version)?;
    let payloads = py.detach(|| {
        let messages = deserialize_list(version, raw).map_err(Error::from)?;
        paimon_wire::split_list(&messages, version, max_bytes).map_err(Error::Split)
    })?;
    PyList::new(py, payloads.iter().map(|p| PyBytes::new(py, p)))
}

/// Frames a raw payload written at serializer `version` in a PWIR envelope (magic,
/// versions, length, CRC32C), for transports that do not carry the version.
#[pyfunction]
pub fn wrap_envelope<'py>(
    py: Python<'py>,
    payload: BytesLike<'py>,
    version: i32,
) -> PyResult<Bound<'py, PyBytes>> {
    let version = serializer_version(version)?;
    Ok(PyBytes::new(
        py,
        &envelope::wrap(version, payload.as_bytes()),
    ))
}

/// Unwraps a PWIR envelope into `(payload, version)`. Raises `EnvelopeError` naming the
/// offset of what is wrong (bad magic, truncated, CRC mismatch, ...).
#[pyfunction]
pub fn unwrap_envelope<'py>(
    py: Python<'py>,
    data: BytesLike<'py>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (version, payload) = envelope::unwrap(data.as_bytes()).map_err(Error::from)?;
    (PyBytes::new(py, payload), version.as_i32()).into_pyobject(py)
}

/// Whether `data` starts with the envelope magic `PWIR`.
#[pyfunction]
pub fn is_envelope(data: BytesLike<'_>) -> bool {
    envelope::is_envelope(data.as_bytes())
}

/// Frames a raw payload written at serializer `version` as Apache Doris's frontend reads a
/// backend's commit messages: `DPCM`, the version and the length as big-endian 32-bit
/// integers, then the payload.
#[pyfunction]
pub fn frame_dpcm<'py>(
    py: Python<'py>,
    payload: BytesLike<'py>,
    version: i32,
) -> PyResult<Bound<'py, PyBytes>> {
    let version = serializer_version(version)?;
    let framed = dpcm::frame(version, payload.as_bytes()).map_err(Error::from)?;
    Ok(PyBytes::new(py, &framed))
}

/// Unframes a `DPCM` frame into `(payload, version)`. Raises `FrameError` naming the offset
/// of what is wrong.
#[pyfunction]
pub fn unframe_dpcm<'py>(py: Python<'py>, data: BytesLike<'py>) -> PyResult<Bound<'py, PyTuple>> {
    let (version, payload) = dpcm::unframe(data.as_bytes()).map_err(Error::from)?;
    (PyBytes::new(py, payload), version.as_i32()).into_pyobject(py)
}

/// Whether `data` starts with the `DPCM` frame magic.
#[pyfunction]
pub fn is_dpcm_frame(data: BytesLike<'_>) -> bool {
    dpcm::is_frame(data.as_bytes())
}
