"""Shared helpers: the test table, rows, an independent reader (pypaimon), the CLI."""

from __future__ import annotations

import os
import pathlib
import subprocess
from collections.abc import Iterable

import pyarrow as pa
import pytest
from ray.data.datasource.datasink import WriteResult

import paimon_wire as pw
from paimon_wire.ray import PaimonDatasink

TABLE = "db.orders"
PARTITION_COLUMN = "region"

# The CLI demo's table: `paimon-wire worker` writes rows of this schema too.
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("region", pa.string()),
        pa.field("amount", pa.float64()),
        pa.field("note", pa.string()),
    ]
)

# Directories of a table that hold metadata, not data files.
METADATA_DIRS = {"schema", "snapshot", "manifest", "index", "statistics", "changelog"}


def rows(ids: Iterable[int], partitions: int = 4, worker: int = 0) -> pa.Table:
    """Rows with ids `ids`: row `id` goes to partition `region-<id mod partitions>`."""
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "region": [f"region-{i % partitions}" for i in ids],
            "amount": [(i % 10_000) * 0.25 for i in ids],
            "note": [f"row {i} from worker {worker}" for i in ids],
        },
        schema=SCHEMA,
    )


def create_orders(warehouse: os.PathLike | str, name: str = TABLE, **options: str) -> pw.Table:
    """The partitioned append table (no buckets: any worker may write any partition)."""
    return pw.create_table(
        warehouse,
        name,
        SCHEMA,
        partition_keys=[PARTITION_COLUMN],
        options={"bucket": "-1", **options},
    )


def prepare(table: pw.Table, ids: Iterable[int], version: int | None = None) -> tuple[bytes, int]:
    """The payload of one writer of job `job-1` that wrote rows `ids`."""
    with table.new_writer("job-1") as writer:
        writer.write(rows(ids))
        return writer.prepare_commit(version)


def data_files(table: pw.Table) -> list[str]:
    """Every file under the table's directory that is not metadata: data files, committed
    or orphaned."""
    root = pathlib.Path(table.location.removeprefix("file:"))
    found = []
    for path in root.rglob("*"):
        if path.is_file() and path.relative_to(root).parts[0] not in METADATA_DIRS:
            found.append(str(path.relative_to(root)))
    return sorted(found)


def read_with_pypaimon(warehouse: str, name: str = TABLE) -> pa.Table:
    """The table's rows as pypaimon (Paimon's own Python implementation) reads them."""
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table(name)
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def pypaimon_files(warehouse: str, name: str = TABLE) -> list[tuple]:
    """(partition, bucket, file name, row count) of every file pypaimon's scan plans."""
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table(name)
    splits = table.new_read_builder().new_scan().plan().splits()
    return sorted(
        (tuple(split.partition.values), split.bucket, f.file_name, f.row_count)
        for split in splits
        for f in split.files
    )


def sorted_ids(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


@pytest.fixture
def warehouse(tmp_path: pathlib.Path) -> str:
    return str(tmp_path / "warehouse")


@pytest.fixture(scope="session")
def cli() -> str:
    """The `paimon-wire` binary (scripts/test-python builds it and sets PAIMON_WIRE_CLI)."""
    default = pathlib.Path(__file__).resolve().parents[3] / "target" / "debug" / "paimon-wire"
    path = os.environ.get("PAIMON_WIRE_CLI", str(default))
    assert os.access(path, os.X_OK), f"no paimon-wire binary at {path}: cargo build -p paimon-wire-cli"
    return path


def run_cli(cli: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([cli, *args], capture_output=True, text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


class RecordingSink(PaimonDatasink):
    """Keeps what Ray handed to the driver, to commit it again, and which processes wrote."""

    write_result: WriteResult | None = None

    def on_write_complete(self, write_result):
        self.write_result = write_result
        super().on_write_complete(write_result)

    def write(self, blocks, ctx):
        result = super().write(blocks, ctx)
        if result is None:
            return None
        payload, version = result
        return payload, version, os.getpid()

    def _commit(self, payloads):
        return super()._commit([(p, v) for p, v, _pid in payloads])

    def _discard_untracked(self, committed):
        super()._discard_untracked([(p, v) for p, v, _pid in committed])


class ArrayOnly:
    """Exports one record batch through `__arrow_c_array__` only."""

    def __init__(self, batch: pa.RecordBatch):
        self._batch = batch

    def __arrow_c_array__(self, requested_schema=None):
        return self._batch.__arrow_c_array__(requested_schema)


class StreamOnly:
    """Exports a table through `__arrow_c_stream__` only."""

    def __init__(self, table: pa.Table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)
