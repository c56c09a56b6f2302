//! `Table`: a Paimon table in a filesystem warehouse, opened (or created) through the
//! paimon crate's catalog, with its writers, coordinators and a reader.

use std::collections::HashMap;
use std::path::PathBuf;

use arrow_array::RecordBatch;
use arrow_pyarrow::{FromPyArrow, IntoPyArrow, ToPyArrow};
use futures::TryStreamExt;
use paimon_wire::coordinator::{
    create_table_with_options, open_table_with_options, TableDefinition,
};
use paimon_wire::paimon;
use paimon_wire::warehouse::WarehouseOptions;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::coordinator::Coordinator;
use crate::errors::Error;
use crate::runtime;
use crate::writer::Writer;

/// A Paimon table in a warehouse (a local directory or an object store).
///
/// Opened with `open_table` or `create_table`. Pickles as its warehouse, name and catalog
/// options (unpickling opens the table again), so it can be sent to other processes.
#[pyclass(module = "paimon_wire._native", frozen)]
pub struct Table {
    pub(crate) table: paimon::table::Table,
    warehouse: String,
    name: String,
    /// The catalog options it was opened with (pickled with it, never shown).
    catalog_options: WarehouseOptions,
}

/// A warehouse as the paimon crate takes it: a REST catalog's warehouse name
/// (`metastore=rest`) and a URI as given, a local path made absolute (the paimon crate refuses
/// relative paths).
fn warehouse_location(warehouse: PathBuf, options: &WarehouseOptions) -> PyResult<String> {
    let text = warehouse.to_string_lossy().into_owned();
    paimon_wire::warehouse::resolve_warehouse(&text, options)
        .map_err(pyo3::exceptions::PyValueError::new_err)
}

impl Table {
    fn opened(
        table: paimon::table::Table,
        warehouse: String,
        name: String,
        catalog_options: WarehouseOptions,
    ) -> Self {
        Self {
            table,
            warehouse,
            name,
            catalog_options,
        }
    }
}

/// Opens table `table` (`"database.table"`) in the warehouse `warehouse` (a local path, or a
/// URI whose storage backend is compiled in, e.g. `s3://bucket/warehouse`), with
/// `catalog_options` (storage endpoint, region, credentials; `metastore=rest`, ...).
///
/// Raises `InvalidTableNameError` for a name that is not `database.table`,
/// `TableNotFoundError` when the table does not exist and `StorageBackendNotCompiledError`
/// for a URI whose backend this build lacks. No error carries a secret option's value.
#[pyfunction]
#[pyo3(signature = (warehouse, table, *, catalog_options=None))]
pub fn open_table(
    py: Python<'_>,
    warehouse: PathBuf,
    table: String,
    catalog_options: Option<HashMap<String, String>>,
) -> PyResult<Table> {
    let catalog_options: WarehouseOptions =
        catalog_options.unwrap_or_default().into_iter().collect();
    let warehouse = warehouse_location(warehouse, &catalog_options)?;
    let opened = runtime::block_on(py, || {
        open_table_with_options(&warehouse, &table, &catalog_options)
    })?
    .map_err(Error::from)?;
    Ok(Table::opened(opened, warehouse, table, catalog_options))
}

/// Creates table `table` (`"database.table"`, with its database if needed) in the
/// filesystem warehouse `warehouse` and opens it.
///
/// `schema` is a `pyarrow.Schema` (or any object with `__arrow_c_schema__`); its fields'
/// types and nullability become the table's columns. `partition_keys` and `primary_keys`
/// name columns; `options` are Paimon table options (e.g. `{"bucket": "4"}`). Raises
/// `PaimonError` if the table exists, unless `ignore_if_exists` (then the existing table is
/// opened as it is).
#[pyfunction]
#[pyo3(signature = (warehouse, table, schema, *, partition_keys=Vec::new(), primary_keys=Vec::new(), options=HashMap::new(), ignore_if_exists=false, catalog_options=None))]
#[allow(clippy::too_many_arguments)]
pub fn create_table(
    py: Python<'_>,
    warehouse: PathBuf,
    table: String,
    schema: &Bound<'_, PyAny>,
    partition_keys: Vec<String>,
    primary_keys: Vec<String>,
    options: HashMap<String, String>,
    ignore_if_exists: bool,
    catalog_options: Option<HashMap<String, String>>,
) -> PyResult<Table> {
    let catalog_options: WarehouseOptions =
        catalog_options.unwrap_or_default().into_iter().collect();
    let warehouse = warehouse_location(warehouse, &catalog_options)?;
    let definition = TableDefinition {
        columns: arrow_schema::Schema::from_pyarrow_bound(schema)?,
        partition_keys,
        primary_keys,
        options,
    };
    let created = runtime::block_on(py, || {
        create_table_with_options(
            &warehouse,
            &table,
            &definition,
            ignore_if_exists,
            &catalog_options,
        )
    })?
    .map_err(Error::from)?;
    Ok(Table::opened(created, warehouse, table, catalog_options))
}

#[pymethods]
impl Table {
    /// The table's name, `database.table`.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The warehouse the table was opened in (a local path made absolute, or a URI).
    #[getter]
    fn warehouse(&self) -> &str {
        &self.warehouse
    }

    /// Where the table's files are.
    #[getter]
    fn location(&self) -> &str {
        self.table.location()
    }

    /// The column names, in the order a written batch must have them.
    #[getter]
    fn field_names(&self) -> Vec<String> {
        self.table
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().to_string())
            .collect()
    }

    /// The partition key columns.
    #[getter]
    fn partition_keys(&self) -> Vec<String> {
        self.table.schema().partition_keys().to_vec()
    }

    /// The primary key columns (empty for an append table).
    #[getter]
    fn primary_keys(&self) -> Vec<String> {
        self.table.schema().primary_keys().to_vec()
    }

    /// The table options.
    #[getter]
    fn options(&self) -> HashMap<String, String> {
        self.table.schema().options().clone()
    }

    /// The table's columns as a `pyarrow.Schema`.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let schema = paimon::arrow::build_target_arrow_schema(self.table.schema().fields())
            .map_err(|e| Error::paimon("converting the table's schema to Arrow", e))?;
        schema.as_ref().to_pyarrow(py)
    }

    /// The compaction of the latest snapshot, one task per partition and bucket to compact
    /// (none when nothing needs it). `full` compacts every bucket not already compacted.
    #[pyo3(signature = (full = false))]
    fn plan_compaction(
        &self,
        py: Python<'_>,
        full: bool,
    ) -> PyResult<Vec<crate::compaction::CompactionTask>> {
        crate::compaction::plan(self, py, full)
    }

    /// The latest snapshot as a dict (`id`, `commit_user`, `commit_identifier`,
    /// `commit_kind`, `schema_id`, `time_millis`, `total_record_count`), or None for a table
    /// never committed to.
    fn latest_snapshot<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let manager = self.table.snapshot_manager();
        let snapshot = runtime::block_on(py, || manager.get_latest_snapshot())?.map_err(|e| {
            Error::paimon(
                format!("reading the latest snapshot of table {}", self.name),
                e,
            )
        })?;
        let Some(snapshot) = snapshot else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("id", snapshot.id())?;
        dict.set_item("commit_user", snapshot.commit_user())?;
        dict.set_item("commit_identifier", snapshot.commit_identifier())?;
        dict.set_item("commit_kind", format!("{:?}", snapshot.commit_kind()))?;
        dict.set_item("schema_id", snapshot.schema_id())?;
        dict.set_item("time_millis", snapshot.time_millis())?;
        dict.set_item("total_record_count", snapshot.total_record_count())?;
        Ok(Some(dict))
    }

    /// Reads the table's latest snapshot with the paimon crate's reader, as a
    /// `pyarrow.Table` (all rows in memory; meant for checks and small tables).
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let table = &self.table;
        let name = &self.name;
        let batches = runtime::block_on(py, || async move {
            let reading = |e| Error::paimon(format!("reading table {name}"), e);
            let builder = table.new_read_builder();
            let plan = builder.new_scan().plan().await.map_err(reading)?;
            let batches: Vec<RecordBatch> = builder
                .new_read()
                .map_err(reading)?
                .to_arrow(plan.splits())
                .map_err(reading)?
                .try_collect()
                .await
                .map_err(reading)?;
            Ok::<_, Error>(batches)
        })??;
        let schema = match batches.first() {
            Some(batch) => batch.schema(),
            None => paimon::arrow::build_target_arrow_schema(table.schema().fields())
                .map_err(|e| Error::paimon("converting the table's schema to Arrow", e))?,
        };
        let result = arrow_pyarrow::Table::try_new(batches, schema)
            .map_err(|e| Error::Arrow(format!("cannot assemble the rows read: {e}")))?;
        result.into_pyarrow(py)
    }

    /// A writer for one worker, bound to the job's `commit_user` (the coordinator must use
    /// the same one). With `overwrite=True` the files are meant for an overwrite commit (the
    /// coordinator must be created with `overwrite=True` too). The payload does not carry
    /// the mode; on a primary-key table the coordinator tells it from the files' sequence
    /// numbers and raises `ValidationError` (rule `sequence-numbers`) for a payload of the
    /// other mode, whenever the mode changes what the table holds.
    ///
    /// On a dynamic-bucket primary-key table written by many workers, `assigner=(i, n)` makes
    /// this writer assigner `i` of `n` (Paimon Java's distributed `HashBucketAssigner`): it
    /// accepts only the rows `assigner_ids(data, n)` routes to `i`, keeps the bucket of every
    /// key already in the table's HASH index and creates only its own buckets
    /// (`UnsupportedError` for another kind of table, `ValueError` for `i` outside `0..n`).
    #[pyo3(signature = (commit_user, *, overwrite=false, assigner=None))]
    fn new_writer(
        &self,
        commit_user: &str,
        overwrite: bool,
        assigner: Option<(i32, i32)>,
    ) -> PyResult<Writer> {
        let share = match assigner {
            None => None,
            Some((id, n)) => {
                if n < 1 || !(0..n).contains(&id) {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "assigner ({id}, {n}): the id must be one of 0..{n}"
                    )));
                }
                let router = paimon_wire::AssignerRouter::for_table(&self.table, n)
                    .map_err(|e| PyErr::from(Error::Routing(e)))?;
                Some(
                    router
                        .share(id)
                        .map_err(|e| PyErr::from(Error::Routing(e)))?,
                )
            }
        };
        Writer::new(&self.table, &self.name, commit_user, overwrite, share)
    }

    /// The coordinator of one commit job on this table; see `Coordinator` (compaction
    /// results are refused unless `allow_compaction=True`; `verify_compaction=True` takes
    /// them too and verifies each by reading its inputs and results; `refuse_compaction` is
    /// deprecated and ignored; `hash_index_budget` bounds one commit's HASH index checks).
    #[pyo3(signature = (
        commit_user, *, overwrite=false, postpone_fixed_bucket=false, allow_deletes=false,
        allow_compaction=false, verify_compaction=false, refuse_compaction=false,
        hash_index_budget=paimon_wire::coordinator::DEFAULT_HASH_INDEX_BUDGET
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new_coordinator(
        slf: &Bound<'_, Self>,
        commit_user: &str,
        overwrite: bool,
        postpone_fixed_bucket: bool,
        allow_deletes: bool,
        allow_compaction: bool,
        verify_compaction: bool,
        refuse_compaction: bool,
        hash_index_budget: u64,
    ) -> PyResult<Coordinator> {
        Coordinator::bind(
            slf.py(),
            slf.get(),
            commit_user,
            overwrite,
            postpone_fixed_bucket,
            allow_deletes,
            allow_compaction,
            verify_compaction,
            refuse_compaction,
            hash_index_budget,
        )
    }

    /// How rows must be spread over writers when many workers write this table:
    /// `("fixed-bucket", n)` — send each (partition, bucket) to one writer, buckets from
    /// `bucket_ids`; `("any-writer", None)` — append with `bucket = -1`, or postpone
    /// (`bucket = -2`); `("single-writer", None)` — a dynamic-bucket primary-key table, whose
    /// writer assigns buckets from the table's hash index, so only one writer may write it.
    fn routing(&self) -> (&'static str, Option<i32>) {
        match paimon_wire::RoutingKind::of(&self.table) {
            paimon_wire::RoutingKind::FixedBucket { buckets } => ("fixed-bucket", Some(buckets)),
            paimon_wire::RoutingKind::AnyWriter => ("any-writer", None),
            paimon_wire::RoutingKind::SingleWriter => ("single-writer", None),
        }
    }

    /// The bucket of every row of `data` (Arrow data, as `Writer.write` takes) as a
    /// `pyarrow.Int32Array`, computed exactly as Paimon Java's writer assigns it. Only for a
    /// fixed-bucket table (`UnsupportedError` otherwise). Bucket-key columns are found by name
    /// and must have the table's Arrow types; other columns are ignored.
    fn bucket_ids<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let input = crate::arrow_input::ArrowInput::import(data)?;
        let table = self.table.clone();
        let buckets = py
            .detach(move || -> crate::errors::Result<Vec<i32>> {
                let router =
                    paimon_wire::BucketRouter::for_table(&table).map_err(Error::Routing)?;
                let mut buckets = Vec::new();
                for batch in input.batches() {
                    buckets.extend(router.bucket_ids(&batch?).map_err(Error::Routing)?);
                }
                Ok(buckets)
            })
            .map_err(PyErr::from)?;
        arrow_data::ArrayData::from(arrow_array::Int32Array::from(buckets)).to_pyarrow(py)
    }

    /// The dynamic-bucket assigner (`0..assigners`) of every row of `data` (Arrow data, as
    /// `Writer.write` takes) as a `pyarrow.Int32Array`, computed exactly as Paimon Java routes
    /// rows to its `HashBucketAssigner`s. Only for a dynamic-bucket primary-key table whose
    /// primary key includes every partition key (`UnsupportedError` otherwise). Send each row to
    /// the writer made with `new_writer(..., assigner=(id, assigners))`.
    fn assigner_ids<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        assigners: i32,
    ) -> PyResult<Bound<'py, PyAny>> {
        let input = crate::arrow_input::ArrowInput::import(data)?;
        let table = self.table.clone();
        let ids = py
            .detach(move || -> crate::errors::Result<Vec<i32>> {
                let router = paimon_wire::AssignerRouter::for_table(&table, assigners)
                    .map_err(Error::Routing)?;
                let mut ids = Vec::new();
                for batch in input.batches() {
                    ids.extend(router.assigner_ids(&batch?).map_err(Error::Routing)?);
                }
                Ok(ids)
            })
            .map_err(PyErr::from)?;
        arrow_data::ArrayData::from(arrow_array::Int32Array::from(ids)).to_pyarrow(py)
    }

    fn __repr__(&self) -> String {
        format!("Table({:?}, warehouse={:?})", self.name, self.warehouse)
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let module = py.import("paimon_wire._native")?;
        let open = module.getattr("open_table")?;
        // open_table(warehouse, name, catalog_options=...): through functools.partial, as
        // __reduce__ passes positional arguments only.
        let options = PyDict::new(py);
        for (key, value) in &self.catalog_options {
            options.set_item(key, value)?;
        }
        let kwargs = PyDict::new(py);
        kwargs.set_item("catalog_options", options)?;
        let partial = py.import("functools")?.getattr("partial")?;
        let open = partial.call((open,), Some(&kwargs))?;
        let args = PyTuple::new(py, [self.warehouse.as_str(), self.name.as_str()])?;
        PyTuple::new(py, [open, args.into_any()])
    }
}

impl Table {
    /// The opened table.
    pub(crate) fn inner(&self) -> &paimon::table::Table {
        &self.table
    }

    /// The table's name, `database.table`.
    pub(crate) fn table_name(&self) -> &str {
        &self.name
    }
}
