"""Distributed writes to Apache Paimon tables.

Writers on many processes write rows and hand out *payloads*: the bytes Paimon Java's
``CommitMessageSerializer`` writes, with the serializer version beside them. One
coordinator decodes the payloads, validates every message against the table, merges them
and commits once under a commit identifier, so a retried commit never commits twice::

    import paimon_wire as pw

    # on each worker
    table = pw.open_table("/data/warehouse", "db.orders")
    with table.new_writer("job-42") as writer:
        writer.write(batch)                 # pyarrow.RecordBatch / Table / reader
        payload, version = writer.prepare_commit()

    # on the coordinator
    coordinator = pw.Coordinator(table, "job-42")
    outcome = coordinator.commit_payloads([(payload, version), ...], identifier=1)

``paimon_wire.ray.PaimonDatasink`` does the same inside ``ray.data.Dataset.write_datasink``.

Every error is a :class:`PaimonWireError`; its message is the Rust library's.
"""

from paimon_wire._native import (
    CURRENT_SERIALIZER_VERSION,
    DEFAULT_HASH_INDEX_BUDGET,
    ArrowError,
    BoundMessages,
    CodecError,
    CommitConflictError,
    CommitOutcome,
    CommitOutcomeUnknownError,
    CompactionTask,
    Coordinator,
    EnvelopeError,
    ForeignMessagesError,
    FrameError,
    IdentifierReusedError,
    IdentifierSupersededError,
    InvalidTableNameError,
    MergeConflictError,
    PaimonError,
    PaimonWireError,
    SchemaMismatchError,
    SharedBucketError,
    SplitError,
    SplitSetError,
    Table,
    StorageBackendNotCompiledError,
    TableNotFoundError,
    UnsupportedError,
    ValidationError,
    Writer,
    __version__,
    create_table,
    frame_dpcm,
    inspect,
    is_dpcm_frame,
    split_payload,
    summarize,
    is_envelope,
    open_table,
    unframe_dpcm,
    unwrap_envelope,
    wrap_envelope,
)

__all__ = [
    "CURRENT_SERIALIZER_VERSION",
    "DEFAULT_HASH_INDEX_BUDGET",
    "ArrowError",
    "BoundMessages",
    "CodecError",
    "CommitConflictError",
    "CommitOutcome",
    "CommitOutcomeUnknownError",
    "CompactionTask",
    "Coordinator",
    "EnvelopeError",
    "ForeignMessagesError",
    "FrameError",
    "IdentifierReusedError",
    "IdentifierSupersededError",
    "InvalidTableNameError",
    "MergeConflictError",
    "PaimonError",
    "PaimonWireError",
    "SchemaMismatchError",
    "SharedBucketError",
    "SplitError",
    "SplitSetError",
    "Table",
    "StorageBackendNotCompiledError",
    "TableNotFoundError",
    "UnsupportedError",
    "ValidationError",
    "Writer",
    "__version__",
    "create_table",
    "frame_dpcm",
    "inspect",
    "is_dpcm_frame",
    "summarize",
    "is_envelope",
    "open_table",
    "unframe_dpcm",
    "unwrap_envelope",
    "wrap_envelope",
]
