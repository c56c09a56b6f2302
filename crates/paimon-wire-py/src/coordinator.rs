//! `Coordinator`: the core's coordinator (decode, validate against the bound table, merge,
//! commit once per identifier, abort), with its messages and outcomes as Python objects.
//! Every rule is the core's; nothing here decides whether a message is acceptable.

use paimon_wire::coordinator::{
    Binding, BoundMessages as CoreBoundMessages, CommitOutcome as CoreCommitOutcome,
    Coordinator as CoreCoordinator, PayloadPart, DEFAULT_HASH_INDEX_BUDGET,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::Error;
use crate::payload::{messages_to_python, unframe, BytesLike};
use crate::runtime;
use crate::table::Table;

/// The coordinator of one commit job: bound to a table, a `commit_user` (the one the job's
/// writers were made with), append or overwrite, and the writer kind.
///
/// Payloads from many writers are decoded and validated against the table
/// (`deserialize`), merged (`merge`; identical duplicates from a retried worker are kept
/// once, conflicting ones refused) and committed once under a commit identifier
/// (`commit`): committing an identifier that a snapshot of this commit user already
/// carries commits nothing, so a coordinator that crashed mid-commit reruns the same commit
/// safely. Identifiers must increase for one commit user. `commit_payloads` does all three.
#[pyclass(module = "paimon_wire._native", frozen)]
pub struct Coordinator {
    coordinator: CoreCoordinator,
    table_name: String,
}

impl Coordinator {
    /// Binds the core coordinator. `verify_compaction` implies `allow_compaction`
    /// (`Binding::with_verified_compaction`). `refuse_compaction` is the deprecated Python
    /// keyword, ignored (refusing compaction results is the default) unless it contradicts
    /// `allow_compaction` or `verify_compaction`. `hash_index_budget` is
    /// `Coordinator::with_hash_index_budget`'s; 0 raises `ValueError`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn bind(
        py: Python<'_>,
        table: &Table,
        commit_user: &str,
        overwrite: bool,
        postpone_fixed_bucket: bool,
        allow_deletes: bool,
        allow_compaction: bool,
        verify_compaction: bool,
        refuse_compaction: bool,
        hash_index_budget: u64,
    ) -> PyResult<Self> {
        if hash_index_budget == 0 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "hash_index_budget=0 would refuse every commit that checks a HASH index; give \
                 a number of bytes, or leave it at DEFAULT_HASH_INDEX_BUDGET",
            ));
        }
        if refuse_compaction && (allow_compaction || verify_compaction) {
            let taking = if verify_compaction {
                "verify_compaction"
            } else {
                "allow_compaction"
            };
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "refuse_compaction=True contradicts {taking}=True: refuse_compaction is \
                 deprecated and does nothing (compaction results are refused by default); pass \
                 only {taking}=True to take them"
            )));
        }
        let binding = if overwrite {
            Binding::overwrite(commit_user)
        } else {
            Binding::append(commit_user)
        };
        let binding = if postpone_fixed_bucket {
            binding.postpone_fixed_bucket()
        } else {
            binding
        };
        let binding = if allow_deletes {
            binding.with_deletes()
        } else {
            binding
        };
        // `refuse_compaction` is the default now: nothing to do for it.
        let binding = if verify_compaction {
            binding.with_verified_compaction()
        } else if allow_compaction {
            binding.with_compaction()
        } else {
            binding
        };
        let inner = table.inner().clone();
        let coordinator = runtime::block_on(py, move || CoreCoordinator::bind(inner, binding))?
            .map_err(Error::from)?
            .with_hash_index_budget(hash_index_budget);
        Ok(Self {
            coordinator,
            table_name: table.table_name().to_string(),
        })
    }

    fn deserialize_one(
        &self,
        py: Python<'_>,
        payload: &[u8],
        version: Option<i32>,
    ) -> PyResult<CoreBoundMessages> {
        let (version, raw) = unframe(payload, version)?;
        let coordinator = &self.coordinator;
        Ok(py
            .detach(|| coordinator.deserialize(version, raw))
            .map_err(Error::from)?)
    }

    fn commit_bound(
        &self,
        py: Python<'_>,
        messages: CoreBoundMessages,
        identifier: i64,
    ) -> PyResult<CommitOutcome> {
        let coordinator = &self.coordinator;
        let (rows, files) = (messages.reported_row_count(), messages.data_file_count());
        let outcome = runtime::block_on(py, move || coordinator.commit(messages, identifier))?
            .map_err(Error::from)?;
        Ok(CommitOutcome::new(outcome, rows, files))
    }
}

/// One payload as Python passes it: `(bytes, version)` or the bytes of an envelope (any
/// bytes-like object).
#[derive(FromPyObject)]
enum PayloadArg<'py> {
    Versioned(BytesLike<'py>, i32),
    Envelope(BytesLike<'py>),
}

#[pymethods]
impl Coordinator {
    /// Binds a coordinator to `table` (reads its schema history once).
    ///
    /// `overwrite=True` replaces the partitions the messages write (the whole table if it
    /// is unpartitioned) instead of appending. `postpone_fixed_bucket=True` is for payloads
    /// of the paimon crate's postpone fixed-bucket writer (postpone tables only).
    /// `allow_deletes=True` lets messages delete (deleted data files, deletion-vector index
    /// files, deleted index files); without it such messages raise `ValidationError` (rule
    /// `change-kind`). Compaction is opt-in: messages carrying compaction results raise
    /// `ValidationError` (rule `compact-increment`) unless `allow_compaction=True`, for jobs
    /// whose writers compact (Java writers with `write-only = false`, Java's default); they
    /// are then committed as Java's committer does, an APPEND then a COMPACT snapshot under
    /// one identifier. `verify_compaction=True` (implies `allow_compaction=True`) also reads
    /// each compaction's inputs and results and raises `ValidationError` (rule
    /// `compact-content`) for one whose rows differ, which the metadata rules alone cannot
    /// tell; it reads every compacted byte twice (inputs and results), and binding raises
    /// `UnsupportedError` for tables whose compactions cannot be verified (postpone tables,
    /// `bucket = -2`). `refuse_compaction` is deprecated and ignored (refusing is the default);
    /// `refuse_compaction=True` together with `allow_compaction=True` or
    /// `verify_compaction=True` raises `ValueError`. `hash_index_budget` is the most bytes of
    /// memory one commit's HASH index checks (dynamic-bucket tables) may hold, 12 a key of the
    /// indexes the commit adds, replaces or checks against plus a 1 MiB read buffer (default
    /// `DEFAULT_HASH_INDEX_BUDGET`, 1 GiB): a commit that would need more raises
    /// `ValidationError` (rule `bounds`, naming the budget) before any index is read; 0 raises
    /// `ValueError`. `outcome_horizon_s` is how many seconds after a commit raised
    /// `CommitOutcomeUnknownError` one of its requests may still be applied (`abort` deletes
    /// nothing within it); `None` is the default, 300 on object stores and REST catalogs and 0
    /// on local file systems; a negative or non-finite value raises `ValueError`. Raises
    /// `UnsupportedError` for tables or bindings the coordinator cannot commit.
    #[new]
    #[pyo3(signature = (
        table, commit_user, *, overwrite=false, postpone_fixed_bucket=false, allow_deletes=false,
        allow_compaction=false, verify_compaction=false, refuse_compaction=false,
        hash_index_budget=DEFAULT_HASH_INDEX_BUDGET, outcome_horizon_s=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        table: &Bound<'_, Table>,
        commit_user: &str,
        overwrite: bool,
        postpone_fixed_bucket: bool,
        allow_deletes: bool,
        allow_compaction: bool,
        verify_compaction: bool,
        refuse_compaction: bool,
        hash_index_budget: u64,
        outcome_horizon_s: Option<f64>,
    ) -> PyResult<Self> {
        let horizon = outcome_horizon_s
            .map(|seconds| {
                std::time::Duration::try_from_secs_f64(seconds).map_err(|_| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "outcome_horizon_s={seconds} is not a number of seconds (0 or more)"
                    ))
                })
            })
            .transpose()?;
        let mut bound = Self::bind(
            py,
            table.get(),
            commit_user,
            overwrite,
            postpone_fixed_bucket,
            allow_deletes,
            allow_compaction,
            verify_compaction,
            refuse_compaction,
            hash_index_budget,
        )?;
        if let Some(horizon) = horizon {
            bound.coordinator = bound.coordinator.with_outcome_horizon(horizon);
        }
        Ok(bound)
    }

    /// The outcome horizon in seconds (see the constructor's `outcome_horizon_s`).
    #[getter]
    fn outcome_horizon_s(&self) -> f64 {
        self.coordinator.outcome_horizon().as_secs_f64()
    }

    /// Decodes one worker's split set (`split_payload`'s payloads, each given as
    /// `(index, count, payload)` as the engine delivered it, in any order) as the one payload
    /// it was split from, validated against the bound table: a bucket whose files span two
    /// payloads is one writer's. An index given twice with the same bytes is kept once.
    /// Raises `SplitSetError` (nothing decoded) when a payload of the set is missing, an
    /// index comes with other bytes, or the counts differ; otherwise as `deserialize`.
    fn deserialize_parts(
        &self,
        py: Python<'_>,
        parts: Vec<(u32, u32, BytesLike<'_>)>,
        version: i32,
    ) -> PyResult<BoundMessages> {
        let version = crate::payload::serializer_version(version)?;
        let set: Vec<PayloadPart<'_>> = parts
            .iter()
            .map(|(index, count, bytes)| PayloadPart {
                index: *index,
                count: *count,
                bytes: bytes.as_bytes(),
            })
            .collect();
        let coordinator = &self.coordinator;
        Ok(BoundMessages(
            py.detach(|| coordinator.deserialize_parts(version, &set))
                .map_err(Error::from)?,
        ))
    }

    /// Decodes one payload (written at serializer `version`; with no version, a PWIR
    /// envelope), validates every message against the bound table and returns the messages
    /// bound to this coordinator. Raises `CodecError`, `EnvelopeError`, `ValidationError`
    /// (naming the message, field and rule) or `MergeConflictError`.
    #[pyo3(signature = (payload, version=None))]
    fn deserialize(
        &self,
        py: Python<'_>,
        payload: BytesLike<'_>,
        version: Option<i32>,
    ) -> PyResult<BoundMessages> {
        Ok(BoundMessages(self.deserialize_one(
            py,
            payload.as_bytes(),
            version,
        )?))
    }

    /// Merges message sets of this coordinator into one: a file that appears more than
    /// once with identical metadata (a retried worker) is kept once; the same file name
    /// with different metadata raises `MergeConflictError`.
    fn merge(&self, parts: Vec<PyRef<'_, BoundMessages>>) -> PyResult<BoundMessages> {
        let parts: Vec<CoreBoundMessages> = parts.iter().map(|p| p.0.clone()).collect();
        Ok(BoundMessages(
            self.coordinator.merge(parts).map_err(Error::from)?,
        ))
    }

    /// Commits `messages` once under `identifier`. If a snapshot of this commit user
    /// already carries `identifier` (or a later one), commits nothing and says so
    /// (`status == "already_committed"`). If the commit raises `PaimonError`, its outcome
    /// may be unknown: commit again with the same identifier, never `abort`.
    fn commit(
        &self,
        py: Python<'_>,
        messages: PyRef<'_, BoundMessages>,
        identifier: i64,
    ) -> PyResult<CommitOutcome> {
        let messages = messages.0.clone();
        self.commit_bound(py, messages, identifier)
    }

    /// Decodes, validates and merges `payloads` (each `(bytes, version)` or envelope
    /// bytes, as `Writer.prepare_commit()` returns them) and commits them once under
    /// `identifier`. Nothing is committed if any payload is refused. The payloads are
    /// decoded on two threads (checking one while building the messages of the one before,
    /// as `Coordinator::deserialize_all` of the Rust crate does); a payload refused raises
    /// the exception `deserialize` raises for it, naming its position in the message and in
    /// the exception's `payload_index` (counting from 0).
    fn commit_payloads(
        &self,
        py: Python<'_>,
        payloads: Vec<PayloadArg<'_>>,
        identifier: i64,
    ) -> PyResult<CommitOutcome> {
        let mut unframed = Vec::with_capacity(payloads.len());
        for payload in &payloads {
            unframed.push(match payload {
                PayloadArg::Versioned(bytes, version) => unframe(bytes.as_bytes(), Some(*version))?,
                PayloadArg::Envelope(bytes) => unframe(bytes.as_bytes(), None)?,
            });
        }
        let coordinator = &self.coordinator;
        let parts = py
            .detach(|| coordinator.deserialize_all_versioned(unframed))
            .map_err(Error::Refused)?;
        let merged = self.coordinator.merge(parts).map_err(Error::from)?;
        self.commit_bound(py, merged, identifier)
    }

    /// Deletes the files `messages` prepared, for a write that is abandoned and will never
    /// be committed (best effort). Deletes only files no snapshot references; returns
    /// `{"deleted": [file names], "skipped": [(file name, reason)]}`. After a commit of this
    /// coordinator raised `CommitOutcomeUnknownError`, raises `CommitOutcomeUnknownError`
    /// itself, deleting nothing, until the outcome horizon has passed (`outcome_horizon_s`):
    /// a request of that commit may still publish a snapshot of these files. Committing again
    /// with the same identifier settles it at once. `despite_unknown_outcome=True` skips that
    /// wait, for an engine that knows from elsewhere that no request can still land.
    #[pyo3(signature = (messages, *, despite_unknown_outcome=false))]
    fn abort<'py>(
        &self,
        py: Python<'py>,
        messages: PyRef<'_, BoundMessages>,
        despite_unknown_outcome: bool,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let messages = messages.0.clone();
        let coordinator = &self.coordinator;
        let report = runtime::block_on(py, move || async move {
            if despite_unknown_outcome {
                coordinator.abort_despite_unknown_outcome(&messages).await
            } else {
                coordinator.abort(&messages).await
            }
        })?
        .map_err(Error::from)?;
        let out = pyo3::types::PyDict::new(py);
        out.set_item("deleted", report.deleted)?;
        out.set_item(
            "skipped",
            report
                .skipped
                .into_iter()
                .map(|s| (s.file_name, s.reason))
                .collect::<Vec<_>>(),
        )?;
        Ok(out)
    }

    /// `CommitOutcome(status="already_committed", ...)` if `identifier` is already
    /// committed for this commit user, None if not. Commits nothing.
    fn commit_status(&self, py: Python<'_>, identifier: i64) -> PyResult<Option<CommitOutcome>> {
        let coordinator = &self.coordinator;
        let status = runtime::block_on(py, move || coordinator.commit_status(identifier))?
            .map_err(Error::from)?;
        Ok(status.map(|outcome| CommitOutcome::new(outcome, 0, 0)))
    }

    /// The commit user recorded in the snapshots this coordinator commits.
    #[getter]
    fn commit_user(&self) -> &str {
        &self.coordinator.binding().commit_user
    }

    /// `"append"` or `"overwrite"`.
    #[getter]
    fn mode(&self) -> String {
        self.coordinator.binding().mode.to_string()
    }

    /// The table's name, `database.table`.
    #[getter]
    fn table_name(&self) -> &str {
        &self.table_name
    }

    /// Whether messages carrying compaction results are taken (`allow_compaction=True`, or
    /// `verify_compaction=True`, which implies it).
    #[getter]
    fn allow_compaction(&self) -> bool {
        self.coordinator.binding().allow_compaction
    }

    /// Whether each compaction is verified by reading its inputs and results
    /// (`verify_compaction=True`; rule `compact-content`).
    #[getter]
    fn verify_compaction(&self) -> bool {
        self.coordinator.binding().verify_compaction
    }

    /// The most bytes of memory one commit's HASH index checks may hold
    /// (`hash_index_budget=`, default `DEFAULT_HASH_INDEX_BUDGET`).
    #[getter]
    fn hash_index_budget(&self) -> u64 {
        self.coordinator.hash_index_budget()
    }

    fn __repr__(&self) -> String {
        format!("<{}>", self.coordinator)
    }
}

/// Messages decoded, validated and bound to one coordinator: only that coordinator can
/// merge, commit or abort them.
#[pyclass(module = "paimon_wire._native", frozen)]
pub struct BoundMessages(CoreBoundMessages);

#[pymethods]
impl BoundMessages {
    /// Number of messages (one per partition and bucket written).
    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// Number of new data files.
    #[getter]
    fn data_file_count(&self) -> usize {
        self.0.data_file_count()
    }

    /// Sum of the row counts the writers reported for their new data files.
    #[getter]
    fn reported_row_count(&self) -> i64 {
        self.0.reported_row_count()
    }

    /// The messages as dicts, in the schema of `inspect`.
    fn to_dicts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        messages_to_python(py, self.0.messages())
    }

    fn __repr__(&self) -> String {
        format!(
            "BoundMessages({} message(s), {} new data file(s), {} row(s), coordinator #{})",
            self.0.len(),
            self.0.data_file_count(),
            self.0.reported_row_count(),
            self.0.coordinator_id().get()
        )
    }
}

/// What a commit did: `status` is `"committed"` (a new snapshot, `snapshot_id`),
/// `"already_committed"` (the identifier was committed before; `snapshot_id` is that
/// snapshot, or None if it expired or a later identifier supersedes it) or
/// `"nothing_to_commit"` (no files; no snapshot made, `snapshot_id` None). `rows` and `files`
/// count the new data files of the messages handed to the commit and the rows the workers
/// reported for them. Pickles (a Ray driver can send it on).
#[pyclass(module = "paimon_wire._native", frozen, eq)]
#[derive(Debug, PartialEq, Eq)]
pub struct CommitOutcome {
    /// `"committed"`, `"already_committed"` or `"nothing_to_commit"`.
    #[pyo3(get)]
    status: &'static str,
    /// The snapshot committed or found, if any.
    #[pyo3(get)]
    snapshot_id: Option<i64>,
    /// Rows the workers reported for the new data files handed to the commit.
    #[pyo3(get)]
    rows: i64,
    /// New data files handed to the commit.
    #[pyo3(get)]
    files: usize,
}

const STATUSES: [&str; 3] = ["committed", "already_committed", "nothing_to_commit"];

impl CommitOutcome {
    fn new(outcome: CoreCommitOutcome, rows: i64, files: usize) -> Self {
        let (status, snapshot_id) = match outcome {
            CoreCommitOutcome::Committed { snapshot_id } => (STATUSES[0], Some(snapshot_id)),
            CoreCommitOutcome::AlreadyCommitted { snapshot_id } => (STATUSES[1], snapshot_id),
            CoreCommitOutcome::NothingToCommit => (STATUSES[2], None),
        };
        Self {
            status,
            snapshot_id,
            rows,
            files,
        }
    }
}

#[pymethods]
impl CommitOutcome {
    /// An outcome from its fields (what unpickling calls). Raises `ValueError` for an unknown
    /// status.
    #[new]
    #[pyo3(signature = (status, snapshot_id=None, rows=0, files=0))]
    fn py_new(status: &str, snapshot_id: Option<i64>, rows: i64, files: usize) -> PyResult<Self> {
        let status = STATUSES
            .iter()
            .find(|known| **known == status)
            .copied()
            .ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "status must be one of {STATUSES:?}, not {status:?}"
                ))
            })?;
        Ok(Self {
            status,
            snapshot_id,
            rows,
            files,
        })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let this = slf.get();
        let args = (this.status, this.snapshot_id, this.rows, this.files);
        (slf.get_type(), args).into_pyobject(slf.py())
    }

    fn __repr__(&self) -> String {
        let snapshot = self
            .snapshot_id
            .map_or_else(|| "None".to_string(), |id| id.to_string());
        format!(
            "CommitOutcome(status={:?}, snapshot_id={snapshot}, rows={}, files={})",
            self.status, self.rows, self.files
        )
    }
}
