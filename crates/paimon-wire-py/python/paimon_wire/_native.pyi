"""Typed stubs of the native module ``paimon_wire._native`` (built from Rust with PyO3)."""

import os
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, ClassVar, Literal, Optional, Union, final

import pyarrow

__all__ = [
    "__version__",
    "CURRENT_SERIALIZER_VERSION",
    "DEFAULT_HASH_INDEX_BUDGET",
    "open_table",
    "create_table",
    "inspect",
    "summarize",
    "split_payload",
    "wrap_envelope",
    "unwrap_envelope",
    "is_envelope",
    "frame_dpcm",
    "unframe_dpcm",
    "is_dpcm_frame",
    "Table",
    "Writer",
    "Coordinator",
    "BoundMessages",
    "CommitOutcome",
    "CompactionTask",
    "PaimonWireError",
    "CodecError",
    "EnvelopeError",
    "FrameError",
    "ValidationError",
    "MergeConflictError",
    "SharedBucketError",
    "SplitError",
    "SplitSetError",
    "CommitConflictError",
    "IdentifierSupersededError",
    "IdentifierReusedError",
    "CommitOutcomeUnknownError",
    "ForeignMessagesError",
    "InvalidTableNameError",
    "TableNotFoundError",
    "UnsupportedError",
    "StorageBackendNotCompiledError",
    "ArrowError",
    "PaimonError",
    "SchemaMismatchError",
]

__version__: str
CURRENT_SERIALIZER_VERSION: int
"""The newest serializer version (Paimon Java's ``CommitMessageSerializer``) this library
writes; ``Writer.prepare_commit()`` uses it by default."""
DEFAULT_HASH_INDEX_BUDGET: int
"""The ``hash_index_budget`` a ``Coordinator`` has unless given another: 1 GiB (``1 << 30``
bytes), the keys of about 89 million rows (12 bytes a key)."""

_BytesLike = Union[bytes, bytearray, memoryview]
_Payload = Union[tuple[_BytesLike, int], _BytesLike]
"""A payload as it travels: ``(bytes, version)``, or the bytes of a PWIR envelope or of a
DPCM frame."""

class PaimonWireError(Exception):
    """Base class of every error raised by paimon_wire."""

    outcome_unknown: ClassVar[bool]
    """True only on ``CommitOutcomeUnknownError``: a failed commit's snapshot may be in the
    table or may still land, so its files must be kept."""

class CodecError(PaimonWireError):
    """Payload bytes that do not decode at their serializer version, or messages that cannot
    be encoded at the requested one."""

    version: Optional[int]
    """The serializer version being read or written, if known."""
    offset: Optional[int]
    """The byte offset in the payload where the bad field starts (decoding only)."""
    field: Optional[str]
    """The field path, e.g. ``messages[0].new_files[1]._FILE_NAME``."""

class EnvelopeError(PaimonWireError):
    """A PWIR envelope that is truncated, corrupted (CRC32C mismatch) or of an unknown
    format."""

    offset: int
    """Byte offset in the envelope of the field that is wrong."""

class FrameError(PaimonWireError):
    """An Apache Doris DPCM frame that is malformed (bad magic, truncated, bytes after its
    body, a negative length, an unknown serializer version) or that names a serializer version
    other than the one the payload was handed over with."""

    offset: int
    """Byte offset in the frame of the field that is wrong."""

class ValidationError(PaimonWireError):
    """A decoded message breaks a rule of the bound table; nothing was committed."""

    message_index: int
    """Index of the message in its payload (0-based)."""
    field: str
    """Path of the offending field, e.g. ``new_files[2].file_name``."""
    rule: str
    """The rule broken, e.g. ``plain-file-name``, ``bucket``, ``partition``."""

class MergeConflictError(PaimonWireError):
    """Two payloads name the same file with different metadata; nothing was committed."""

class SharedBucketError(PaimonWireError):
    """Two payloads write new files into one bucket of a primary-key table; nothing was
    committed."""

    partition: str
    """The partition as ``key=value/...`` (values as Paimon prints them, strings quoted:
    ``region='eu'``), empty for an unpartitioned table."""
    bucket: int
    """The bucket both payloads write."""
    first_payload: int
    """Position of the first payload in the merge input."""
    second_payload: int
    """Position of the other payload in the merge input."""

class SplitError(PaimonWireError):
    """``split_payload`` cannot split into payloads of the limit: part of one message that is
    never split (one file, or its compaction and index files) is larger on its own; the
    message names it."""

class SplitSetError(PaimonWireError):
    """``Coordinator.deserialize_parts`` got a split set that is not whole (a payload missing,
    named by index; an index with other bytes; counts that differ); nothing was decoded."""

class ForeignMessagesError(PaimonWireError):
    """Messages bound to one coordinator were handed to another."""

class InvalidTableNameError(PaimonWireError):
    """A table name that is not ``database.table``."""

class TableNotFoundError(PaimonWireError):
    """The table or its database does not exist in the warehouse."""

class UnsupportedError(PaimonWireError):
    """A table, binding or operation this library does not support."""

class StorageBackendNotCompiledError(UnsupportedError):
    """The warehouse is a URI whose storage backend this build does not have; the message
    names the cargo feature (e.g. ``storage-hdfs``) to build it with."""

class ArrowError(PaimonWireError):
    """Arrow data that cannot be imported."""

class CommitConflictError(PaimonWireError):
    """Other committers took every snapshot this commit tried to publish, on every attempt
    the table's ``commit.max-retries`` allows. Nothing was committed; commit again with the
    same identifier (never abort)."""

class IdentifierSupersededError(PaimonWireError):
    """The identifier was never committed, but the same commit user already committed a
    higher one. Nothing was committed; give each concurrent job its own commit user."""

class IdentifierReusedError(PaimonWireError):
    """The identifier is already committed, by a snapshot that does not hold this commit's
    files: it was reused for other data. Nothing was committed; use a new identifier."""

class PaimonError(PaimonWireError):
    """Any other failure of the paimon table engine: I/O, rows that do not fit the table,
    a commit that failed before publishing anything."""

class CommitOutcomeUnknownError(PaimonError):
    """A commit failed after a request that publishes its snapshot went unanswered: the
    snapshot may be in the table or may still land. Keep the files and commit again with the
    same identifier. ``Coordinator.abort`` raises it too (deleting nothing) while such a
    commit's requests may still land."""

    commit_user: str
    identifier: int

class SchemaMismatchError(PaimonError):
    """Rows whose columns do not fit the table: a column the table does not have, a missing
    column, a column name given twice, or a type that cannot be converted to the table's
    without changing a value (the message names the column)."""

def open_table(
    warehouse: Union[str, os.PathLike[str]],
    table: str,
    *,
    catalog_options: Optional[Mapping[str, str]] = None,
) -> Table:
    """Opens ``table`` (``"database.table"``) in the warehouse ``warehouse`` (a local path,
    a URI such as ``s3://bucket/warehouse`` whose storage backend is compiled in, or, with
    ``metastore=rest``, the REST catalog's warehouse name, passed on unchanged).
    ``catalog_options`` are Paimon catalog options: storage endpoint, region and credentials
    (``s3.endpoint``, ``s3.region``, ``s3.access-key``, ``s3.secret-key``,
    ``s3.path-style-access``, ...) or a REST catalog (``metastore=rest``, ``uri``, ``token``).
    Values of secret keys never appear in errors or ``repr``.

    Raises ``InvalidTableNameError``, ``TableNotFoundError``, or
    ``StorageBackendNotCompiledError`` for a URI whose storage backend is not compiled in."""

def create_table(
    warehouse: Union[str, os.PathLike[str]],
    table: str,
    schema: pyarrow.Schema,
    *,
    partition_keys: Sequence[str] = ...,
    primary_keys: Sequence[str] = ...,
    options: Mapping[str, str] = ...,
    ignore_if_exists: bool = False,
    catalog_options: Optional[Mapping[str, str]] = None,
) -> Table:
    """Creates ``table`` (and its database if needed) with the columns of ``schema`` and
    opens it. ``partition_keys`` and ``primary_keys`` default to none, ``options`` (Paimon
    table options, e.g. ``{"bucket": "-1"}``) to none."""

def inspect(payload: _BytesLike, version: Optional[int] = None) -> list[dict[str, Any]]:
    """Decodes a payload into one dict per message (the schema ``paimon-wire inspect``
    prints: binary rows as lowercase hex, ``creation_time`` in epoch milliseconds). Without
    ``version``, ``payload`` must be a PWIR envelope or a DPCM frame; a DPCM frame given with
    ``version`` must carry that version."""

def summarize(payload: _BytesLike, version: Optional[int] = None) -> dict[str, int]:
    """Counts a payload's messages, new data files and rows (``{"version", "messages",
    "data_files", "rows"}``) by reading it in place, without decoding it into messages.
    Checks the whole payload like ``inspect``. Without ``version``, ``payload`` must be a PWIR
    envelope or a DPCM frame."""

def split_payload(
    payload: _BytesLike, max_bytes: int, version: Optional[int] = None
) -> list[bytes]:
    """Splits a payload into raw payloads of at most ``max_bytes`` each, at the same version,
    for a transport with a frame limit; one within the limit comes back byte for byte. Send
    each with its index, the count and the version (``Coordinator.deserialize_parts``).
    ``max_bytes`` below 256 raises ``ValueError``. Without ``version``, ``payload`` must be a
    PWIR envelope or a DPCM frame."""

def wrap_envelope(payload: _BytesLike, version: int) -> bytes:
    """Frames a raw payload in a PWIR envelope (magic, versions, length, CRC32C)."""

def unwrap_envelope(data: _BytesLike) -> tuple[bytes, int]:
    """Unwraps a PWIR envelope into ``(payload, version)``."""

def is_envelope(data: _BytesLike) -> bool:
    """Whether ``data`` starts with the envelope magic ``PWIR``."""

def frame_dpcm(payload: _BytesLike, version: int) -> bytes:
    """Frames a raw payload as Apache Doris's frontend reads a backend's commit messages: the
    magic ``DPCM``, the serializer version and the payload's length as big-endian 32-bit
    integers, then the payload."""

def unframe_dpcm(data: _BytesLike) -> tuple[bytes, int]:
    """Unframes a DPCM frame into ``(payload, version)``."""

def is_dpcm_frame(data: _BytesLike) -> bool:
    """Whether ``data`` starts with the DPCM frame magic."""

@final
class Table:
    """A Paimon table in a warehouse (a local directory or an object store). Pickles as its
    warehouse, name and catalog options (unpickling opens the table again)."""

    @property
    def name(self) -> str:
        """``database.table``."""
    @property
    def warehouse(self) -> str:
        """The warehouse (a local path made absolute, or a URI)."""
    @property
    def location(self) -> str:
        """Where the table's files are."""
    @property
    def field_names(self) -> list[str]:
        """Column names, in the table's order (a written batch may have them in any order:
        ``Writer.write`` matches columns by name)."""
    @property
    def partition_keys(self) -> list[str]: ...
    @property
    def primary_keys(self) -> list[str]: ...
    @property
    def options(self) -> dict[str, str]: ...
    @property
    def schema(self) -> pyarrow.Schema:
        """The table's columns as Arrow."""
    def latest_snapshot(self) -> Optional[dict[str, Any]]:
        """The latest snapshot (``id``, ``commit_user``, ``commit_identifier``,
        ``commit_kind``, ``schema_id``, ``time_millis``, ``total_record_count``), or None."""
    def read(self) -> pyarrow.Table:
        """All rows of the latest snapshot, read with the paimon crate's reader."""
    def plan_compaction(self, full: bool = False) -> list[CompactionTask]:
        """The compaction of the latest snapshot: one task per partition and bucket to
        compact, none when nothing needs it. Append tables: a bucket's files below
        ``target-file-size`` once there are ``compaction.min.file-num`` (default 5) of them.
        Primary-key tables (every merge engine, ``sequence.field``, deletion vectors): every
        sorted run of a bucket once there are ``num-sorted-run.compaction-trigger`` (default
        5), merged into one at the highest level. ``full=True`` compacts every bucket not
        already compacted. Tables it cannot compact (a changelog producer, postpone tables)
        raise ``UnsupportedError`` naming why."""
    def routing(self) -> tuple[str, Optional[int]]:
        """``("fixed-bucket", n)``, ``("any-writer", None)`` or ``("single-writer", None)``."""
    def bucket_ids(self, data: Any) -> pyarrow.Int32Array:
        """The bucket of every row, as Paimon Java assigns it (fixed-bucket tables only)."""
    def assigner_ids(self, data: Any, assigners: int) -> pyarrow.Int32Array:
        """The dynamic-bucket assigner of every row, as Paimon Java routes it (dynamic-bucket
        primary-key tables only)."""
    def new_writer(
        self,
        commit_user: str,
        *,
        overwrite: bool = False,
        assigner: Optional[tuple[int, int]] = None,
    ) -> Writer:
        """A writer for one worker of the job ``commit_user``; ``assigner=(i, n)`` makes it
        dynamic-bucket assigner ``i`` of ``n``."""
    def new_coordinator(
        self,
        commit_user: str,
        *,
        overwrite: bool = False,
        postpone_fixed_bucket: bool = False,
        allow_deletes: bool = False,
        allow_compaction: bool = False,
        verify_compaction: bool = False,
        refuse_compaction: bool = False,
        hash_index_budget: int = ...,
    ) -> Coordinator:
        """The coordinator of the job ``commit_user`` on this table. Compaction results are
        refused (``ValidationError``, rule ``compact-increment``) unless
        ``allow_compaction=True``, or ``verify_compaction=True`` which also verifies each
        compaction by reading its inputs and results (see ``Coordinator``);
        ``refuse_compaction`` is deprecated and ignored. ``hash_index_budget`` (bytes,
        default ``DEFAULT_HASH_INDEX_BUDGET``) bounds the memory of one commit's HASH index
        checks, as for ``Coordinator``."""

@final
class Writer:
    """One worker's writer. ``write()`` batches, then ``prepare_commit()``; ``close()`` (or
    leaving a ``with`` block) discards what was not prepared."""

    @property
    def commit_user(self) -> str: ...
    @property
    def table_name(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def write(self, data: Any) -> int:
        """Writes a ``pyarrow.RecordBatch``, ``pyarrow.Table``, ``pyarrow.RecordBatchReader``
        or any object with ``__arrow_c_stream__`` / ``__arrow_c_array__`` (no copies).
        Columns are matched by name, in any order (the package README, "Columns and types").
        Returns the number of rows written."""
    def prepare_commit(self, version: Optional[int] = None) -> tuple[bytes, int]:
        """``(payload, version)``: the files written since the previous ``prepare_commit()``
        (all of them for the first), as Paimon Java's ``CommitMessageSerializer`` bytes at
        ``version`` (default: the newest). The writer can write again afterwards. A
        ``version`` that cannot carry them raises ``CodecError``, and the files stay with the
        writer: the next ``prepare_commit()`` sends them too."""
    def close(self) -> None:
        """Discards whatever was not prepared and closes the writer."""
    def __enter__(self) -> Writer: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

@final
class Coordinator:
    """The coordinator of one commit job: decodes and validates payloads against the bound
    table, merges them and commits once per identifier (identifiers increase per commit
    user; committing an identifier again commits nothing)."""

    def __new__(
        cls,
        table: Table,
        commit_user: str,
        *,
        overwrite: bool = False,
        postpone_fixed_bucket: bool = False,
        allow_deletes: bool = False,
        allow_compaction: bool = False,
        verify_compaction: bool = False,
        refuse_compaction: bool = False,
        hash_index_budget: int = ...,
        outcome_horizon_s: Optional[float] = None,
    ) -> Coordinator:
        """Binds a coordinator. ``allow_compaction=True`` takes messages carrying compaction
        results (writers that compact, such as Java writers with ``write-only = false``),
        refused by default (``ValidationError``, rule ``compact-increment``).
        ``verify_compaction=True`` implies ``allow_compaction=True`` and also reads each
        compaction's inputs and results, raising ``ValidationError`` (rule
        ``compact-content``) for one whose rows differ; it reads every compacted byte twice,
        and binding raises ``UnsupportedError`` for tables whose compactions cannot be
        verified (postpone tables, ``bucket = -2``).
        ``refuse_compaction`` is deprecated and ignored (refusing is the default); together
        with ``allow_compaction=True`` or ``verify_compaction=True`` it raises
        ``ValueError``.
        ``hash_index_budget`` is the most bytes of memory one commit's HASH index checks
        (dynamic-bucket tables, ``bucket = -1``) may hold: 12 for each key of the indexes the
        commit adds, replaces or checks against, plus a 1 MiB read buffer (default
        ``DEFAULT_HASH_INDEX_BUDGET``, 1 GiB). A commit that would need more raises
        ``ValidationError`` (rule ``bounds``, naming the budget) before any index is read and
        commits nothing; 0 raises ``ValueError``."""
    @property
    def commit_user(self) -> str: ...
    @property
    def mode(self) -> Literal["append", "overwrite"]: ...
    @property
    def table_name(self) -> str: ...
    @property
    def allow_compaction(self) -> bool:
        """Whether messages carrying compaction results are taken (also with
        ``verify_compaction=True``)."""
    @property
    def verify_compaction(self) -> bool:
        """Whether each compaction is verified by reading its inputs and results (rule
        ``compact-content``)."""
    @property
    def hash_index_budget(self) -> int:
        """The most bytes of memory one commit's HASH index checks may hold
        (``hash_index_budget=``, default ``DEFAULT_HASH_INDEX_BUDGET``)."""
    def deserialize(self, payload: _BytesLike, version: Optional[int] = None) -> BoundMessages:
        """Decodes and validates one payload (without ``version``: a PWIR envelope or a DPCM
        frame). A DPCM frame given with ``version`` must carry that version (else
        ``FrameError``)."""
    def deserialize_parts(
        self, parts: Sequence[tuple[int, int, _BytesLike]], version: int
    ) -> BoundMessages:
        """Decodes one worker's split set, ``(index, count, payload)`` per payload in any
        order, as the payload it was split from (a bucket spanning payloads is one writer's);
        an index given twice with the same bytes is kept once."""
    def merge(self, parts: Sequence[BoundMessages]) -> BoundMessages:
        """Merges message sets; identical duplicates kept once, conflicts refused."""
    def commit(self, messages: BoundMessages, identifier: int) -> CommitOutcome:
        """Commits once under ``identifier``. After ``CommitOutcomeUnknownError`` the snapshot
        may be in the table or may still land: commit again with the same identifier."""
    def commit_payloads(self, payloads: Sequence[_Payload], identifier: int) -> CommitOutcome:
        """Deserializes, merges and commits ``payloads`` once under ``identifier``; nothing is
        committed if a payload is refused. Payloads are decoded on two threads. A refused
        payload raises what ``deserialize`` raises for it, with its position (counting from 0)
        in the message and in the exception's ``payload_index`` attribute."""
    @property
    def outcome_horizon_s(self) -> float:
        """Seconds after a ``CommitOutcomeUnknownError`` during which ``abort`` deletes
        nothing (default 300 on object stores and REST catalogs, 0 on local file systems)."""
    def abort(
        self, messages: BoundMessages, *, despite_unknown_outcome: bool = False
    ) -> dict[str, list[Any]]:
        """Deletes the files of messages that will never be committed (best effort), only
        files no snapshot references: ``{"deleted": [name], "skipped": [(name, reason)]}``.
        Raises ``CommitOutcomeUnknownError`` (deleting nothing) while a commit of this
        coordinator whose outcome is unknown may still land, unless
        ``despite_unknown_outcome=True``."""
    def commit_status(self, identifier: int) -> Optional[CommitOutcome]:
        """An ``already_committed`` outcome if ``identifier`` is committed, else None."""

@final
class BoundMessages:
    """Messages validated and bound to one coordinator."""

    @property
    def data_file_count(self) -> int: ...
    @property
    def reported_row_count(self) -> int: ...
    def to_dicts(self) -> list[dict[str, Any]]:
        """The messages in the schema of ``inspect``."""
    def __len__(self) -> int: ...

@final
class CompactionTask:
    """One partition and bucket to compact. Pickles as its bytes, so it can be sent to another
    process (a Ray task) and run there."""

    def __new__(cls, data: _BytesLike) -> CompactionTask:
        """The task whose ``to_bytes`` are ``data``; ``ValueError`` for other bytes."""
    @property
    def bucket(self) -> int:
        """The bucket."""
    @property
    def snapshot_id(self) -> int:
        """The snapshot the task was planned from: commit its result under this identifier."""
    @property
    def input_files(self) -> int:
        """How many files the task rewrites."""
    @property
    def input_bytes(self) -> int:
        """The bytes of the files the task rewrites."""
    @property
    def output_level(self) -> int:
        """The level its results are written to: 0 on an append table, the highest level
        (``num-levels - 1``) on a primary-key table."""
    def to_bytes(self) -> bytes:
        """The task as bytes."""
    def run(self, table: Table, version: Optional[int] = None) -> tuple[bytes, int]:
        """Rewrites the task's files in ``table`` and returns the payload of the compaction,
        ``(bytes, version)``: commit it with a coordinator bound with
        ``verify_compaction=True``, which reads inputs and results and compares them."""

@final
class CommitOutcome:
    """What a commit did."""

    @property
    def status(self) -> Literal["committed", "already_committed", "nothing_to_commit"]: ...
    def __new__(
        cls,
        status: Literal["committed", "already_committed", "nothing_to_commit"],
        snapshot_id: Optional[int] = None,
        rows: int = 0,
        files: int = 0,
    ) -> CommitOutcome: ...
    @property
    def snapshot_id(self) -> Optional[int]:
        """The snapshot committed or found, if any."""
    @property
    def rows(self) -> int:
        """Rows the workers reported for the new data files handed to the commit."""
    @property
    def files(self) -> int:
        """New data files handed to the commit."""
