"""A Ray Data sink that writes a Paimon table from Ray workers and commits it once.

::

    import ray
    from paimon_wire.ray import PaimonDatasink

    ds = ray.data.read_parquet("s3://bucket/orders/")
    sink = PaimonDatasink("/data/warehouse", "db.orders")
    ds.write_datasink(sink)
    print(sink.outcome)            # CommitOutcome(status="committed", snapshot_id=..., rows=..., files=...)

How it maps onto Ray Data's ``Datasink`` contract:

* ``write(blocks, ctx)`` runs in each write task on a Ray worker: it opens the table, writes
  the task's blocks through a ``Writer`` bound to the sink's ``commit_user``, and returns
  ``([payload], version)`` from ``Writer.prepare_commit()`` -- or, with
  ``max_payload_bytes``, the payload split into a set of payloads of at most that many bytes
  each (``split_payload``), which the driver decodes as one (``Coordinator.deserialize_parts``).
  A task that fails mid-write closes its writer, which deletes the files it wrote.
* ``on_write_complete(write_result)`` runs once on the driver: one ``Coordinator`` decodes,
  validates and merges every task's payload and commits them in **one snapshot** under the
  job's commit identifier.
* ``on_write_failed(error)`` runs on the driver when the job fails: the files of every task
  that had already prepared are deleted (``Coordinator.abort``), so a failed job leaves
  neither committed rows nor orphan files. Tasks record their payloads as they prepare in
  Ray's key-value store (the GCS, on the head node), because Ray hands ``on_write_failed``
  only the error; the record outlives any worker node. Each record is sealed with a secret
  of the job (HMAC-SHA256) that only the driver and its write tasks hold: the driver deletes
  the files of no record it cannot authenticate (another job's record, or one that any
  other client of the cluster put under the job's key), it logs its key and skips it.

**A worker node that dies mid-job.** Ray runs the node's write tasks again on the nodes left
(its task retries), and the driver commits once, with each task's payload from the attempt
whose result reached it. What the dead node's attempts wrote:

* an attempt that had prepared (its payload was recorded) but whose result was
  lost with the node: its files are deleted by the driver after the commit, as the files of
  any attempt whose result Ray did not pass on;
* an attempt that died while writing: its files are on storage, referenced by no snapshot and
  known to nobody (the process that knew their names is gone). No reader sees them; Paimon's
  orphan-file cleanup (``remove_orphan_files``, which removes unreferenced files older than a
  given age, one day by default) deletes them.

**Primary-key tables.** A primary-key table keeps one row per key and bucket; two tasks
writing one bucket would make the row that wins for a key arbitrary (and the coordinator
refuses such a commit). What the sink does, by the table's bucket mode:

* fixed buckets (``bucket >= 1``): route the dataset first, ``ds = sink.route(ds)``, which
  adds each row's bucket (``Table.bucket_ids``, byte-exact with Paimon Java) and groups the
  rows by (partition, bucket), so every bucket is written by exactly one task. The sink
  refuses, before writing anything, blocks that were not routed. Which row wins for a key is
  decided by the table's ``sequence.field`` when it has one (the latest wins); without it,
  by the order rows reach the bucket's one writer.
* postpone bucket (``bucket = -2``): no routing; any task writes any row. This is the way to
  spread one bucket's writes over many tasks: rows become visible when a compaction
  (Paimon Java / Flink) assigns them to buckets.
* dynamic bucket (``bucket = -1``, primary key including every partition key): route the
  dataset first, ``ds = sink.route(ds)``, as Paimon Java's distributed writers do: the key
  space is split among ``n`` assigners (``num_partitions``, default the cluster's CPU count),
  each row goes to the assigner of its partition and key (``Table.assigner_ids``, byte-exact
  with Java's ``BucketAssigner.computeAssigner``), and the rows are grouped by assigner. A
  write task writes each assigner's rows through a writer that is that assigner
  (``Table.new_writer(..., assigner=(i, n))``): keys already in the table's HASH index keep
  their bucket, new keys go to buckets of that assigner's own, and its payload carries the
  HASH index updates. A task that got several assigners' groups returns their payloads as one
  set. The coordinator refuses a commit that would put one key in two buckets (rule
  ``hash-index-keys``).
* dynamic bucket with cross-partition updates (a partition key outside the primary key):
  **refused** when the sink is made, before anything is written (Java serves it with a global
  index this sink does not have). Use fixed or postpone buckets, or one writer.

**Commit user and identifier.** ``commit_user`` defaults to ``"<prefix>_<uuid>"`` when the
table sets ``commit.user-prefix`` (as Paimon Java does), else ``"ray-data-<uuid>"``, made
once per sink. The commit identifier is fixed when a write job starts
(``on_write_start``): ``commit_identifier`` if given, otherwise the job's start time in
epoch milliseconds (at least one above the sink's previous job, as Paimon wants
identifiers to increase per commit user). It is stored on the sink
(``sink.commit_identifier``), so committing the job again -- ``on_write_complete`` called
again with the same result, or ``retry_commit()`` after a commit whose outcome is unknown
-- commits nothing twice (``status == "already_committed"``). To make a *rerun of the
whole job* (a new driver) exactly-once, pass both ``commit_user`` and
``commit_identifier`` yourself, e.g. from your scheduler's run id. A job whose fixed
identifier is already committed (a rerun of a driver that died after its commit) writes
nothing and commits nothing: ``on_write_start`` asks the table (``commit_status``), the write
tasks return at once, and ``outcome`` is the earlier commit's, ``already_committed``. (A
rerun that found the identifier free and lost a race to another run of the same job fails
with ``IdentifierReusedError``: nothing of it is committed, and its files are left for
orphan cleanup.)
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import logging
import secrets
import struct
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Optional

import pyarrow
import pyarrow.compute
import ray
from ray.data.block import Block, BlockAccessor
from ray.data.datasource.datasink import Datasink, WriteResult
from ray.experimental import internal_kv

from paimon_wire._native import (
    DEFAULT_HASH_INDEX_BUDGET,
    BoundMessages,
    CommitOutcome,
    CompactionTask,
    Coordinator,
    Table,
    UnsupportedError,
    open_table,
    split_payload,
)

if TYPE_CHECKING:
    from ray.data._internal.execution.interfaces import TaskContext

__all__ = ["PaimonDatasink", "compact"]

logger = logging.getLogger(__name__)

Payload = tuple[list[bytes], int]
"""What a write task returns: ``(payloads, version)``, the payload of
``Writer.prepare_commit()`` as a list of one, or its split set in order (``max_payload_bytes``)."""


class _PreparedRecord:
    """Where a job's write tasks record the payloads they prepared, so the driver can delete
    their files if the job fails (Ray passes ``on_write_failed`` only the error) and the files
    of attempts whose results Ray did not pass on.

    The record is Ray's own key-value store in the GCS (the head node's control store, namespace
    ``paimon_wire``), one key per prepared payload, ``job-<uuid>/<uuid>``: a write task adds
    its payload with one call to the GCS, and no process is started for the job (a tracking
    actor, the earlier design, started a Python worker per job, whose start-up competed with the
    write tasks for the CPUs: a third of a 2-core append job). The GCS outlives every worker
    node and the driver; the driver deletes the job's keys when the job ends (a driver that
    dies leaves its few keys until the cluster stops).

    **The record belongs to its job.** Every client of the cluster can list, read and write
    that namespace, so a key under the job's prefix proves nothing about who put it there. Each
    value is sealed (``_seal``) with a secret of the job, 32 random bytes made here on the
    driver, which reach the write tasks inside the sink (Ray pickles the datasink into the
    object store with the write tasks' function; the secret is never put into the GCS).
    ``payloads`` returns only the records it authenticates; any other value under the prefix
    -- another job's record copied here, a forged or garbled one, one of an older layout -- is
    skipped with a warning naming its key, so the driver never deletes a file named only in a
    record it cannot authenticate. What a foreign client can still do is delete or overwrite
    the job's own records: the files of the attempts they named are then not deleted (left for
    orphan-file cleanup), never someone else's."""

    NAMESPACE = "paimon_wire"

    def __init__(self) -> None:
        self._prefix = f"job-{uuid.uuid4().hex}/"
        self._secret = _JobSecret(secrets.token_bytes(32))

    @property
    def prefix(self) -> str:
        """The job's key prefix, ``job-<uuid>/``."""
        return self._prefix

    def add(self, payload: Payload) -> None:
        """Records ``payload`` (a write task, after it prepared)."""
        key = f"{self._prefix}{uuid.uuid4().hex}"
        value = _seal(self._secret, key.encode(), payload)
        internal_kv._internal_kv_put(key, value, namespace=self.NAMESPACE)

    def payloads(self) -> list[Payload]:
        """Every payload recorded so far by this job's tasks, in no particular order (the
        driver). A value under the job's prefix that does not authenticate as this job's is
        skipped and logged (its key, never the secret)."""
        found: list[Payload] = []
        skipped = 0
        for key in internal_kv._internal_kv_list(self._prefix, namespace=self.NAMESPACE):
            value = internal_kv._internal_kv_get(key, namespace=self.NAMESPACE)
            if value is None:
                continue  # deleted since the listing
            try:
                found.append(_open_sealed(self._secret, key, value))
            except _RecordRejected as e:
                skipped += 1
                if skipped <= _SKIPPED_RECORDS_LOGGED:
                    logger.warning(
                        "ignoring the record %s in Ray's key-value store (namespace %s): %s; "
                        "no file it names is deleted",
                        _printable_key(key),
                        self.NAMESPACE,
                        e,
                    )
        if skipped > _SKIPPED_RECORDS_LOGGED:
            logger.warning(
                "ignoring %d more records under %s that do not authenticate as this job's",
                skipped - _SKIPPED_RECORDS_LOGGED,
                self._prefix,
            )
        return found

    def clear(self) -> None:
        """Deletes the job's keys (the driver, when the job ended)."""
        internal_kv._internal_kv_del(self._prefix, del_by_prefix=True, namespace=self.NAMESPACE)

    def __repr__(self) -> str:
        # Never the secret.
        return f"_PreparedRecord({self._prefix!r})"


class _JobSecret:
    """The key a job's records are sealed with. Its ``repr`` (in a traceback's locals, a
    debugger, a log line that prints an object) never shows the bytes."""

    __slots__ = ("key",)

    def __init__(self, key: bytes) -> None:
        self.key = key

    def __repr__(self) -> str:
        return "_JobSecret(<redacted>)"


_SKIPPED_RECORDS_LOGGED = 10
"""How many unauthenticated records of one listing get a warning line each; the rest, one
line with their count (a client flooding the prefix cannot flood the driver's log)."""


class RecordFormat(enum.IntEnum):
    """The layouts of a record value, by the byte after ``RECORD_MAGIC``. Each has its sealer
    and opener side by side below and one entry in ``_RECORD_FORMATS``.

    Values without the magic are never opened. Among them is the layout before the record was
    sealed (``_frame`` alone, no tag): nothing could tell its writer, so it is refused."""

    HMAC_SHA256 = 1
    """``RECORD_MAGIC``, the format byte, a 32-byte HMAC-SHA256 tag, then the payload as
    ``_frame`` lays it out. The tag is keyed with the job's secret over the magic, the format
    byte, the key's length (unsigned 32-bit, little-endian), the key (the job's prefix and the
    record's uuid) and the framed payload: a record is valid only under its own key, in its own
    job."""


RECORD_MAGIC = b"PWRR"
"""The first bytes of every sealed record value ("paimon-wire Ray record")."""

_TAG_BYTES = 32


class _RecordRejected(ValueError):
    """A record value that is not this job's (the message says why; it never holds the secret
    or the tag)."""


def _seal_hmac_sha256(secret: _JobSecret, key: bytes, payload: Payload) -> bytes:
    header = RECORD_MAGIC + bytes([RecordFormat.HMAC_SHA256])
    body = _frame(payload)
    return header + _hmac_sha256_tag(secret, header, key, body) + body


def _open_hmac_sha256(secret: _JobSecret, key: bytes, value: bytes) -> Payload:
    header_end = len(RECORD_MAGIC) + 1
    if len(value) < header_end + _TAG_BYTES:
        raise _RecordRejected(f"its value is cut short at offset {len(value)}, before the tag ends")
    tag = value[header_end : header_end + _TAG_BYTES]
    body = value[header_end + _TAG_BYTES :]
    if not hmac.compare_digest(tag, _hmac_sha256_tag(secret, value[:header_end], key, body)):
        raise _RecordRejected(
            "its tag does not authenticate it as this job's record under this key (another "
            "job's record, or written by another client of the cluster)"
        )
    try:
        return _unframe(body)
    except ValueError as e:  # sealed by this job's secret yet malformed: a bug, never a guess
        raise _RecordRejected(str(e)) from None


def _hmac_sha256_tag(secret: _JobSecret, header: bytes, key: bytes, body: bytes) -> bytes:
    mac = hmac.new(secret.key, header, hashlib.sha256)
    mac.update(struct.pack("<I", len(key)))
    mac.update(key)
    mac.update(body)
    return mac.digest()


_RECORD_FORMATS = {
    RecordFormat.HMAC_SHA256: (_seal_hmac_sha256, _open_hmac_sha256),
}
"""The one dispatch table: each record format's sealer and opener."""


def _seal(
    secret: _JobSecret,
    key: bytes,
    payload: Payload,
    layout: RecordFormat = RecordFormat.HMAC_SHA256,
) -> bytes:
    """The value recorded under ``key`` for ``payload``, sealed with the job's ``secret``."""
    seal, _ = _RECORD_FORMATS[layout]
    return seal(secret, key, payload)


def _open_sealed(secret: _JobSecret, key: bytes, value: bytes) -> Payload:
    """The payload that ``value``, read under ``key``, records, if ``secret`` authenticates it;
    else ``_RecordRejected``."""
    if not value.startswith(RECORD_MAGIC) or len(value) <= len(RECORD_MAGIC):
        raise _RecordRejected(
            f"its value does not start with {RECORD_MAGIC!r} and a format byte (not a sealed "
            "record)"
        )
    code = value[len(RECORD_MAGIC)]
    try:
        layout = RecordFormat(code)
    except ValueError:
        raise _RecordRejected(f"its record format {code} is unknown to this release") from None
    _, open_record = _RECORD_FORMATS[layout]
    return open_record(secret, key, value)


def _printable_key(key: bytes) -> str:
    """A key as a log line may show it: quoted, control characters escaped, at most 120
    characters (a key is chosen by whoever wrote it)."""
    text = key.decode("utf-8", "backslashreplace")
    if len(text) > 120:
        text = text[:120] + "..."
    return repr(text)


def _frame(payload: Payload) -> bytes:
    """``payload`` as bytes, little-endian: the version (signed 32-bit), the part count
    (unsigned 32-bit), then each part after its length (unsigned 64-bit). No pickle: the
    driver reads it back with ``_unframe``. A record's body (``_seal``)."""
    parts, version = payload
    out = [struct.pack("<iI", version, len(parts))]
    for part in parts:
        out.append(struct.pack("<Q", len(part)))
        out.append(part)
    return b"".join(out)


def _unframe(value: bytes) -> Payload:
    """The payload ``_frame`` made."""
    def cut_short(offset: int) -> ValueError:
        return ValueError(f"a recorded payload is cut short at offset {offset}")

    if len(value) < 8:
        raise cut_short(0)
    version, count = struct.unpack_from("<iI", value, 0)
    offset = 8
    parts: list[bytes] = []
    for _ in range(count):
        if offset + 8 > len(value):
            raise cut_short(offset)
        (length,) = struct.unpack_from("<Q", value, offset)
        offset += 8
        if offset + length > len(value):
            raise cut_short(offset)
        parts.append(value[offset : offset + length])
        offset += length
    if offset != len(value):
        extra = len(value) - offset
        raise ValueError(f"a recorded payload has {extra} bytes past its end, at offset {offset}")
    return parts, version


def _default_commit_user(table: Table) -> str:
    """``<commit.user-prefix>_<uuid>`` when the table sets ``commit.user-prefix`` (as Paimon
    Java and pypaimon make their commit users), else ``ray-data-<uuid>``."""
    prefix = table.options.get("commit.user-prefix")
    if prefix:
        return f"{prefix}_{uuid.uuid4()}"
    return f"ray-data-{uuid.uuid4().hex}"


_ROUTING_TABLES: OrderedDict[tuple[Any, ...], Table] = OrderedDict()
_ROUTING_TABLES_LOCK = threading.Lock()
_ROUTING_TABLES_KEPT = 8


def _routing_table(key: tuple[Any, ...], warehouse: str, table: str, options: dict[str, str]) -> Table:
    """The table ``PaimonDatasink.route`` computes buckets with in this worker process: opened
    on the first batch of one ``route`` call (``key`` starts with that call's token) and kept
    for its later batches, so a worker opens the table once per routed dataset, not once per
    batch. A new ``route`` call opens it again (a later job sees the table's current
    buckets); the last few tables are kept."""
    with _ROUTING_TABLES_LOCK:
        opened = _ROUTING_TABLES.get(key)
        if opened is not None:
            _ROUTING_TABLES.move_to_end(key)
            return opened
    opened = open_table(warehouse, table, catalog_options=options)
    with _ROUTING_TABLES_LOCK:
        _ROUTING_TABLES[key] = opened
        while len(_ROUTING_TABLES) > _ROUTING_TABLES_KEPT:
            _ROUTING_TABLES.popitem(last=False)
    return opened


def _decode(coordinator: Coordinator, payload: Payload) -> BoundMessages:
    """One task's payload, or its split set, decoded and bound to ``coordinator``."""
    parts, version = payload
    if len(parts) == 1:
        return coordinator.deserialize(parts[0], version)
    count = len(parts)
    return coordinator.deserialize_parts([(i, count, p) for i, p in enumerate(parts)], version)


BUCKET_COLUMN = "__paimon_wire_bucket"
"""The column ``PaimonDatasink.route`` adds on a fixed-bucket table: each row's bucket. The sink
drops it again."""

ASSIGNER_COLUMN = "__paimon_wire_assigner"
"""The column ``PaimonDatasink.route`` adds on a dynamic-bucket table: each row's assigner. The
sink drops it again."""


class PaimonDatasink(Datasink[Optional[Payload]]):
    """Writes a Ray Dataset into table ``table`` (``"database.table"``) of the filesystem
    warehouse ``warehouse``, committed once on the driver.

    Args:
        warehouse: The warehouse: a path every Ray worker can reach (made absolute here, on
            the driver), a URI, or a REST catalog's warehouse name (with
            ``catalog_options={"metastore": "rest", ...}``).
        table: ``"database.table"``; it must exist (see ``paimon_wire.create_table``).
        commit_user: The commit user recorded in the snapshot; default
            ``<commit.user-prefix>_<uuid>``, or ``ray-data-<uuid>`` without that option.
        overwrite: Replace the partitions the rows land in (the whole table if it is not
            partitioned) instead of appending.
        commit_identifier: A fixed commit identifier for every job of this sink (for
            exactly-once across driver reruns); default: the job's start time in epoch
            milliseconds.
        min_rows_per_write: Passed to Ray: rows each write task should get at least (fewer,
            larger files).
        catalog_options: Paimon catalog options (storage endpoint, region, credentials, e.g.
            ``{"s3.endpoint": ..., "s3.access-key": ..., "s3.secret-key": ...}``). They travel
            with the sink to every write task (Ray pickles it), so every task reaches the same
            warehouse; they never appear in ``repr`` or log lines.
        allow_compaction: Let the sink's coordinator take payloads that carry compaction
            results (``Coordinator(..., allow_compaction=True)``). The sink's own write tasks
            never compact, so this only matters for payloads of writers that compact; by
            default such payloads are refused (``ValidationError``, rule
            ``compact-increment``).
        verify_compaction: Like ``allow_compaction``, and the coordinator also verifies each
            compaction by reading its inputs and results
            (``Coordinator(..., verify_compaction=True)``; rule ``compact-content``), at the
            cost of reading every compacted byte twice. Implies ``allow_compaction``. Tables
            whose compactions cannot be verified (postpone tables, ``bucket = -2``) raise
            ``UnsupportedError`` here, before anything is written.
        hash_index_budget: The most bytes of memory the sink's coordinator gives one
            commit's HASH index checks (dynamic-bucket tables;
            ``Coordinator(..., hash_index_budget=...)``, default
            ``DEFAULT_HASH_INDEX_BUDGET``, 1 GiB). A commit that would need more is refused
            (``ValidationError``, rule ``bounds``) and nothing is committed; raise it for
            tables whose partitions hold more keys. 0 raises ``ValueError`` here.
        max_payload_bytes: Split each task's payload into payloads of at most this many bytes
            (``split_payload``; at least 256), carried to the driver as one set and decoded
            there as the one payload it was split from. For engines whose transport has a
            frame limit; Ray's object store has none, so the default (``None``) sends one
            payload per task. A task whose payload cannot be split to the limit (one file's
            entry larger than it) fails with ``SplitError``.

    After a job, ``outcome`` holds the ``CommitOutcome`` and ``commit_identifier`` the
    identifier used.
    """

    def __init__(
        self,
        warehouse: str,
        table: str,
        commit_user: Optional[str] = None,
        *,
        overwrite: bool = False,
        commit_identifier: Optional[int] = None,
        min_rows_per_write: Optional[int] = None,
        catalog_options: Optional[Mapping[str, str]] = None,
        allow_compaction: bool = False,
        verify_compaction: bool = False,
        hash_index_budget: int = DEFAULT_HASH_INDEX_BUDGET,
        max_payload_bytes: Optional[int] = None,
    ) -> None:
        if max_payload_bytes is not None and max_payload_bytes < 256:
            raise ValueError(f"max_payload_bytes must be at least 256, got {max_payload_bytes}")
        if hash_index_budget < 1:
            raise ValueError(f"hash_index_budget must be at least 1 byte, got {hash_index_budget}")
        self._catalog_options = dict(catalog_options or {})
        opened = open_table(warehouse, table, catalog_options=self._catalog_options)
        kind, buckets = opened.routing()
        self._dynamic = kind == "single-writer"
        if self._dynamic and not set(opened.partition_keys) <= set(opened.primary_keys):
            raise UnsupportedError(
                f"table {opened.name} is a primary-key table with dynamic buckets (bucket = -1) "
                "whose primary key leaves out a partition key (cross-partition updates): a key "
                "may move between partitions, which needs Paimon Java's global index. Nothing "
                "was written. Give the table fixed buckets (bucket = N, and route the dataset "
                "with PaimonDatasink.route) or postpone buckets (bucket = -2), or write it from "
                "one process"
            )
        self._routed = self._dynamic or (kind == "fixed-bucket" and bool(opened.primary_keys))
        self._assigners: Optional[int] = None
        self._buckets = buckets
        self._partition_keys = list(opened.partition_keys)
        self.warehouse = opened.warehouse
        self.table = opened.name
        self.commit_user = commit_user or _default_commit_user(opened)
        self.overwrite = overwrite
        self.allow_compaction = allow_compaction or verify_compaction
        self.verify_compaction = verify_compaction
        self.hash_index_budget = hash_index_budget
        self.max_payload_bytes = max_payload_bytes
        self.commit_identifier: Optional[int] = None
        self.outcome: Optional[CommitOutcome] = None
        self._fixed_identifier = commit_identifier
        self._min_rows_per_write = min_rows_per_write
        self._last_identifier: Optional[int] = None
        self._prepared: Optional[_PreparedRecord] = None
        self._pending: Optional[list[Payload]] = None
        self._commit_started = False
        self._committed_before: Optional[CommitOutcome] = None
        self._write_nothing = False
        if verify_compaction:
            # Bind once here so a table whose compactions cannot be verified is refused
            # before any task writes (UnsupportedError), not at the commit.
            self._coordinator(opened)

    # --- routing -----------------------------------------------------------------------

    @property
    def needs_routing(self) -> bool:
        """Whether datasets must go through ``route`` first: a primary-key table with fixed
        buckets, where every bucket must have exactly one writer task, or with dynamic
        buckets, where every row must reach the writer that is its assigner."""
        return self._routed

    def route(self, dataset: Any, num_partitions: Optional[int] = None) -> Any:
        """``dataset`` with its rows grouped by (partition, bucket), so every bucket of a
        fixed-bucket primary-key table reaches exactly one write task; the bucket comes
        from ``Table.bucket_ids`` (Paimon Java's bucket function). Other tables: returned
        unchanged.

        ``num_partitions`` is the shuffle's partition count (``Dataset.groupby``), and so
        the number of write tasks. Default: the table's bucket count when it is not
        partitioned (one task per bucket at most), else Ray's default
        (``DataContext.default_hash_shuffle_parallelism``, 200)."""
        if not self._routed:
            return dataset
        warehouse, table, options = self.warehouse, self.table, self._catalog_options
        key = (uuid.uuid4().hex, warehouse, table, tuple(sorted(options.items())))
        if self._dynamic:
            return self._route_to_assigners(dataset, key, num_partitions)

        def add_bucket(batch: pyarrow.Table) -> pyarrow.Table:
            buckets = _routing_table(key, warehouse, table, options).bucket_ids(batch)
            return batch.append_column(BUCKET_COLUMN, buckets)

        def whole_group(group: pyarrow.Table) -> pyarrow.Table:
            return group

        if num_partitions is None and not self._partition_keys:
            num_partitions = self._buckets
        return (
            dataset.map_batches(add_bucket, batch_format="pyarrow", batch_size=None)
            .groupby([*self._partition_keys, BUCKET_COLUMN], num_partitions=num_partitions)
            .map_groups(whole_group, batch_format="pyarrow")
        )

    def _route_to_assigners(
        self, dataset: Any, key: tuple[Any, ...], num_partitions: Optional[int]
    ) -> Any:
        """``route`` for a dynamic-bucket table: ``num_partitions`` assigners (default the
        cluster's CPUs), each row tagged with its assigner and the rows grouped by it."""
        assigners = num_partitions or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._assigners = assigners
        warehouse, table, options = self.warehouse, self.table, self._catalog_options

        def add_assigner(batch: pyarrow.Table) -> pyarrow.Table:
            owners = _routing_table(key, warehouse, table, options).assigner_ids(batch, assigners)
            return batch.append_column(ASSIGNER_COLUMN, owners)

        def whole_group(group: pyarrow.Table) -> pyarrow.Table:
            return group

        return (
            dataset.map_batches(add_assigner, batch_format="pyarrow", batch_size=None)
            .groupby(ASSIGNER_COLUMN, num_partitions=assigners)
            .map_groups(whole_group, batch_format="pyarrow")
        )

    # --- driver side -------------------------------------------------------------------

    def _open(self) -> Table:
        return open_table(self.warehouse, self.table, catalog_options=self._catalog_options)

    def _coordinator(self, table: Optional[Table] = None) -> Coordinator:
        return Coordinator(
            table if table is not None else self._open(),
            self.commit_user,
            overwrite=self.overwrite,
            allow_compaction=self.allow_compaction,
            verify_compaction=self.verify_compaction,
            hash_index_budget=self.hash_index_budget,
        )

    def _start_job(self) -> None:
        if self._fixed_identifier is not None:
            identifier = self._fixed_identifier
        else:
            identifier = time.time_ns() // 1_000_000
            if self._last_identifier is not None:
                identifier = max(identifier, self._last_identifier + 1)
        self._last_identifier = identifier
        self.commit_identifier = identifier
        self.outcome = None
        self._pending = None
        self._commit_started = False
        # A fixed identifier may be committed already: by an earlier run of this job whose
        # driver died after committing. Then this run writes nothing (write() returns at once).
        self._committed_before = None
        if self._fixed_identifier is not None:
            self._committed_before = self._coordinator().commit_status(identifier)
        self._write_nothing = self._committed_before is not None

    def on_write_start(self, schema: Optional[pyarrow.Schema] = None) -> None:
        """Fixes the job's commit identifier and the key under which its write tasks record
        what they prepare (driver). With a fixed identifier that is already committed, the job
        writes nothing."""
        self._start_job()
        if not self._write_nothing:
            self._prepared = _PreparedRecord()

    def on_write_complete(self, write_result: WriteResult[Optional[Payload]]) -> None:
        """Validates, merges and commits every task's payload once (driver)."""
        if self.commit_identifier is None:
            # Ray did not call on_write_start (an empty dataset).
            self._start_job()
        payloads = [p for p in write_result.write_returns if p is not None]
        if self._committed_before is not None:
            # Nothing was written (write() returned None in every task).
            self.outcome = self._committed_before
            logger.info(
                "Paimon table %s: identifier %s of commit user %s was committed before this "
                "job started (%s): nothing written, nothing committed",
                self.table,
                self.commit_identifier,
                self.commit_user,
                self.outcome,
            )
            return
        self._pending = payloads
        self.outcome = self._commit(payloads)
        self._pending = None
        self._discard_untracked(payloads)
        logger.info(
            "Paimon table %s: %s (commit user %s, identifier %s, %d write task(s))",
            self.table,
            self.outcome,
            self.commit_user,
            self.commit_identifier,
            len(payloads),
        )

    def _commit(self, payloads: list[Payload]) -> CommitOutcome:
        assert self.commit_identifier is not None
        coordinator = self._coordinator()
        # Decoding, validation and merging commit nothing: a failure there is safe to abort.
        merged = coordinator.merge([_decode(coordinator, payload) for payload in payloads])
        self._commit_started = True
        return coordinator.commit(merged, self.commit_identifier)

    def retry_commit(self) -> CommitOutcome:
        """Commits the last job's payloads again under the same identifier, after a commit
        that raised (its outcome unknown). Commits nothing twice."""
        if self._pending is None:
            raise RuntimeError("no commit of this sink is waiting to be retried")
        payloads = self._pending
        self.outcome = self._commit(payloads)
        self._pending = None
        self._discard_untracked(payloads)
        return self.outcome

    def on_write_failed(self, error: Exception) -> None:
        """Deletes the files of every task that prepared, unless a commit was attempted
        (driver)."""
        if self._commit_started:
            # The commit itself failed: its outcome may be unknown, so deleting the files
            # could break a committed snapshot. Keep them; retry_commit() settles it.
            logger.error(
                "Paimon table %s: the commit (user %s, identifier %s) failed: %s; the "
                "written files are kept, call retry_commit() on the sink to commit them",
                self.table,
                self.commit_user,
                self.commit_identifier,
                error,
            )
            return
        prepared = self._recorded_payloads()
        self._clear_record()
        self._abort(prepared)

    # --- clean-up ----------------------------------------------------------------------

    def _recorded_payloads(self) -> list[Payload]:
        if self._prepared is None:
            return []
        try:
            return self._prepared.payloads()
        except Exception as e:  # the GCS unreachable, say
            logger.warning("cannot read the prepared payloads back: %s", e)
            return []

    def _clear_record(self) -> None:
        if self._prepared is not None:
            try:
                self._prepared.clear()
            except Exception as e:
                logger.warning("cannot delete the record of prepared payloads: %s", e)
            self._prepared = None

    def _discard_untracked(self, committed: list[Payload]) -> None:
        """Deletes the files of payloads prepared by task attempts whose results Ray did not
        pass on (a task run again after its first attempt had prepared): they are not in
        the commit, so nothing references them."""
        strays = [p for p in self._recorded_payloads() if p not in committed]
        self._clear_record()
        self._abort(strays)

    def _abort(self, payloads: list[Payload]) -> None:
        if not payloads:
            return
        coordinator = self._coordinator()
        for payload in payloads:
            try:
                coordinator.abort(_decode(coordinator, payload))
            except Exception as e:  # best effort: report and go on with the others
                logger.warning("cannot delete the files of a prepared payload: %s", e)

    # --- worker side -------------------------------------------------------------------

    def write(self, blocks: Iterable[Block], ctx: TaskContext) -> Optional[Payload]:
        """Writes this task's blocks and returns their payload (worker); nothing when the
        job's identifier was committed before it started. On a dynamic-bucket table, one
        writer per assigner whose rows reach this task (usually one), their payloads
        returned as one set."""
        if self._write_nothing:
            return None
        table = self._open()
        writers: dict[Optional[int], Any] = {}
        if not self._dynamic:
            writers[None] = table.new_writer(self.commit_user, overwrite=self.overwrite)
        prepared: Optional[Payload] = None
        try:
            for block in blocks:
                data = BlockAccessor.for_block(block).to_arrow()
                if not data.num_rows:
                    # Ray hands a task empty blocks too (after a groupby, without columns).
                    continue
                for owner, rows in self._rows_by_writer(data):
                    writer = writers.get(owner)
                    if writer is None:
                        # _rows_by_writer yields an owner only once route() set the count
                        assigners = self._assigners
                        share = None if owner is None or assigners is None else (owner, assigners)
                        writer = table.new_writer(
                            self.commit_user, overwrite=self.overwrite, assigner=share
                        )
                        writers[owner] = writer
                    writer.write(rows)
            parts: list[bytes] = []
            version = 0
            for owner in sorted(writers, key=lambda o: -1 if o is None else o):
                payload, version = writers[owner].prepare_commit()
                parts.append(payload)
                # Prepared from here on: a failure below (a split that cannot fit) still
                # aborts these files, which close() no longer deletes.
                prepared = (list(parts), version)
            if prepared is not None and self.max_payload_bytes is not None:
                limit = self.max_payload_bytes
                prepared = (
                    [piece for part in parts for piece in split_payload(part, limit, version)],
                    version,
                )
            if prepared is not None and self._prepared is not None:
                self._prepared.add(prepared)
        except BaseException:
            # Files not yet prepared are deleted by close(); prepared ones here, since this
            # task's result will never reach the commit.
            for writer in writers.values():
                writer.close()
            if prepared is not None:
                coordinator = self._coordinator(table)
                coordinator.abort(_decode(coordinator, prepared))
            raise
        for writer in writers.values():
            writer.close()
        return prepared

    def _rows_by_writer(self, data: pyarrow.Table) -> Iterable[tuple[Optional[int], pyarrow.Table]]:
        """The rows of one block, by the writer that takes them: the assigner on a
        dynamic-bucket table, else the task's one writer (``None``). Refuses unrouted blocks
        of a table that needs routing."""
        if not self._routed:
            yield None, data
            return
        column = ASSIGNER_COLUMN if self._dynamic else BUCKET_COLUMN
        if column not in data.column_names or (self._dynamic and self._assigners is None):
            what = (
                "dynamic buckets: each row must reach the writer that is its bucket assigner"
                if self._dynamic
                else "fixed buckets: each bucket needs exactly one writer task"
            )
            raise UnsupportedError(
                f"table {self.table} is a primary-key table with {what}, so route the dataset "
                "first (ds = sink.route(ds); ds.write_datasink(sink)); nothing was committed"
            )
        if not self._dynamic:
            yield None, data.drop_columns([BUCKET_COLUMN])
            return
        owners = data.column(ASSIGNER_COLUMN)
        rows = data.drop_columns([ASSIGNER_COLUMN])
        for owner in pyarrow.compute.unique(owners).to_pylist():
            yield owner, rows.filter(pyarrow.compute.equal(owners, owner))

    # --- Ray's knobs -------------------------------------------------------------------

    def get_name(self) -> str:
        return "Paimon"

    @property
    def min_rows_per_write(self) -> Optional[int]:
        return self._min_rows_per_write

    def __repr__(self) -> str:
        # Never the catalog options: they may hold credentials.
        return f"PaimonDatasink({self.table!r}, warehouse={self.warehouse!r})"

    def __getstate__(self) -> dict[str, Any]:
        # Workers need the table, the binding and the record's key, not the driver's job state.
        state = self.__dict__.copy()
        state["_pending"] = None
        state["outcome"] = None
        state["_committed_before"] = None
        return state


def _run_compaction_task(table: Table, task: CompactionTask) -> tuple[bytes, int]:
    return task.run(table)


def compact(
    table: Table,
    *,
    full: bool = False,
    commit_user: str = "paimon-wire-compact",
    ray_remote_args: Optional[Mapping[str, Any]] = None,
) -> Optional[CommitOutcome]:
    """Compacts ``table`` with Ray: plans on the driver (``Table.plan_compaction``), runs one
    Ray task per bucket to compact (``CompactionTask.run``; the table and the task are sent
    pickled), and commits every task's payload once on the driver with a coordinator that
    verifies the compaction, under the planned snapshot's id as the identifier. Returns the
    commit's outcome, or None when nothing needs compacting. If a task fails, the files of
    the tasks that finished are deleted (``Coordinator.abort``) and the error is raised;
    nothing is committed. ``ray_remote_args`` go to each task (``num_cpus``, ...)."""
    tasks = table.plan_compaction(full)
    if not tasks:
        return None
    remote = ray.remote(_run_compaction_task)
    if ray_remote_args:
        remote = remote.options(**ray_remote_args)
    table_ref = ray.put(table)
    refs = [remote.remote(table_ref, task) for task in tasks]
    coordinator = Coordinator(table, commit_user, verify_compaction=True)
    payloads: list[tuple[bytes, int]] = []
    failure: Optional[BaseException] = None
    for ref in refs:
        try:
            payloads.append(ray.get(ref))
        except Exception as error:  # a task failed: keep collecting to clean up the rest
            failure = failure or error
    if failure is not None:
        for payload, version in payloads:
            coordinator.abort(coordinator.deserialize(payload, version))
        raise failure
    return coordinator.commit_payloads(payloads, identifier=tasks[0].snapshot_id)
