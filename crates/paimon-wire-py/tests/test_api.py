"""The Python API without Ray: writers, payloads, the coordinator, errors."""

from __future__ import annotations

import contextlib
import http.server
import logging
import pathlib
import pickle
import re
import threading
import traceback
from collections.abc import Iterator

import pyarrow as pa
import pytest
from conftest import (
    SCHEMA,
    TABLE,
    ArrayOnly,
    StreamOnly,
    create_orders,
    data_files,
    prepare,
    read_with_pypaimon,
    rows,
    run_cli,
    sorted_ids,
)

import paimon_wire as pw


def test_two_writers_commit_once_and_both_readers_see_every_row(warehouse):
    table = create_orders(warehouse)
    payloads = []
    for worker, ids in enumerate([range(0, 600), range(600, 1000)]):
        with table.new_writer("job-1") as writer:
            assert writer.write(rows(ids, worker=worker)) == len(ids)
            payloads.append(writer.prepare_commit())
    assert all(version == pw.CURRENT_SERIALIZER_VERSION for _, version in payloads)

    outcome = table.new_coordinator("job-1").commit_payloads(payloads, 7)

    assert (outcome.status, outcome.snapshot_id) == ("committed", 1)
    snapshot = table.latest_snapshot()
    assert snapshot["id"] == 1
    assert snapshot["commit_user"] == "job-1"
    assert snapshot["commit_identifier"] == 7
    assert snapshot["total_record_count"] == 1000
    assert sorted_ids(table.read()) == list(range(1000))
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(1000))


def test_a_refused_payload_among_many_is_named_and_nothing_is_committed(warehouse):
    table = create_orders(warehouse)
    payloads = []
    for worker in range(4):
        with table.new_writer("job-1") as writer:
            writer.write(rows(range(worker * 10, worker * 10 + 10), worker=worker))
            payloads.append(writer.prepare_commit())
    good, version = payloads[2]
    payloads[2] = (good[: len(good) // 2], version)
    coordinator = table.new_coordinator("job-1")
    with pytest.raises(pw.CodecError, match=r"^payload 2 \(counting from 0") as raised:
        coordinator.commit_payloads(payloads, 1)
    assert raised.value.payload_index == 2
    assert raised.value.version == version
    assert table.latest_snapshot() is None

    payloads[2] = (good, version)
    assert coordinator.commit_payloads(payloads, 1).status == "committed"
    assert sorted_ids(table.read()) == list(range(40))


def test_an_identifier_commits_once(warehouse):
    table = create_orders(warehouse)
    coordinator = pw.Coordinator(table, "job-1")
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(10)))
        first = writer.prepare_commit()
        writer.write(rows(range(10, 20)))
        second = writer.prepare_commit()

    assert coordinator.commit_payloads([first], 5).status == "committed"
    status, rerun = coordinator.commit_status(5), coordinator.commit_payloads([first], 5)
    assert (status.status, status.snapshot_id) == (rerun.status, rerun.snapshot_id)
    # The rerun reports what it was handed; commit_status was handed nothing.
    assert (rerun.rows, rerun.files, status.rows, status.files) == (10, 4, 0, 0)
    again = coordinator.commit_payloads([first], 5)
    assert (again.status, again.snapshot_id) == ("already_committed", 1)
    # Identifiers increase per commit user: a lower one that was never committed is refused,
    # never reported as done (its files would silently not be in the table).
    with pytest.raises(pw.IdentifierSupersededError, match="identifier 4 .* was never committed"):
        coordinator.commit_payloads([second], 4)
    assert coordinator.commit_status(4) is None
    assert coordinator.commit_status(6) is None
    committed = coordinator.commit_payloads([second], 6)
    assert (committed.status, committed.snapshot_id) == ("committed", 2)
    assert coordinator.commit_status(6).snapshot_id == 2
    assert table.latest_snapshot()["id"] == 2
    assert sorted_ids(table.read()) == list(range(20))


def test_a_retried_worker_payload_is_merged_once(warehouse):
    table = create_orders(warehouse)
    payload = prepare(table, range(100))
    coordinator = table.new_coordinator("job-1")
    merged = coordinator.merge([coordinator.deserialize(*payload), coordinator.deserialize(*payload)])
    assert merged.reported_row_count == 100
    assert coordinator.commit(merged, 1).status == "committed"
    assert sorted_ids(table.read()) == list(range(100))


def test_every_arrow_form_is_written(warehouse):
    table = create_orders(warehouse)
    chunked = pa.concat_tables([rows(range(40, 50)), rows(range(50, 60))])
    assert chunked.column("id").num_chunks == 2
    inputs = [
        rows(range(0, 10)).to_batches()[0],
        rows(range(10, 20)),
        pa.RecordBatchReader.from_batches(SCHEMA, rows(range(20, 30)).to_batches()),
        ArrayOnly(rows(range(30, 40)).to_batches()[0]),
        StreamOnly(chunked),
    ]
    with table.new_writer("job-1") as writer:
        assert [writer.write(data) for data in inputs] == [10, 10, 10, 10, 20]
        payload = writer.prepare_commit()
    table.new_coordinator("job-1").commit_payloads([payload], 1)
    assert sorted_ids(table.read()) == list(range(60))


def test_columns_are_matched_by_name_and_extra_or_missing_ones_are_refused(warehouse):
    table = create_orders(warehouse)
    shuffled = rows(range(3)).select(["region", "id", "amount", "note"])
    with table.new_writer("job-1") as writer:
        assert writer.write(shuffled) == 3
        extra = rows(range(3, 6)).append_column("debug", pa.array([1, 2, 3]))
        with pytest.raises(pw.SchemaMismatchError, match="column.* the table does not have: debug"):
            writer.write(extra)
        with pytest.raises(pw.SchemaMismatchError, match="lack column.* of the table: amount"):
            writer.write(rows(range(3, 6)).drop_columns(["amount"]))
        payload = writer.prepare_commit()
    table.new_coordinator("job-1").commit_payloads([payload], 1)
    # Only the reordered rows were written: nothing of the refused batches.
    assert sorted_ids(table.read()) == [0, 1, 2]
    assert issubclass(pw.SchemaMismatchError, pw.PaimonError)


CAST_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("at", pa.timestamp("us")),
        pa.field("price", pa.decimal128(10, 2)),
    ]
)


def test_lossless_casts_are_made_and_lossy_ones_refused_naming_the_column(warehouse):
    import decimal

    table = pw.create_table(warehouse, "db.casts", CAST_SCHEMA)
    names = ["a", "b", "a"]

    def batch(name_column, at_type="ns", at=(1_000, 2_000_000, 3_000), price=("1.230", "0.500", "-7.000")):
        return pa.table(
            {
                "id": pa.array([1, 2, 3], pa.int64()),
                "name": name_column,
                "at": pa.array(list(at), pa.timestamp(at_type)),
                "price": pa.array([decimal.Decimal(p) for p in price], pa.decimal128(12, 3)),
            }
        )

    lossless = [
        batch(pa.array(names, pa.large_string())),
        batch(pa.array(names, pa.string_view())),
        batch(pa.array(names).dictionary_encode()),
    ]
    with table.new_writer("job-1") as writer:
        for data in lossless:
            assert writer.write(data) == 3
        lossy_time = batch(pa.array(names), at=(1_000, 2_000_001, 3_000))
        with pytest.raises(pw.SchemaMismatchError, match="column at .* row 1 would change"):
            writer.write(lossy_time)
        lossy_price = batch(pa.array(names), price=("1.230", "0.501", "-7.000"))
        with pytest.raises(pw.SchemaMismatchError, match="column price .* row 1 would change"):
            writer.write(lossy_price)
        payload = writer.prepare_commit()
    table.new_coordinator("job-1").commit_payloads([payload], 1)
    got = table.read().sort_by("id")
    assert got.schema.field("at").type == pa.timestamp("us")
    assert got.num_rows == 9
    assert got.column("name").to_pylist() == ["a"] * 3 + ["b"] * 3 + ["a"] * 3
    assert sorted(set(got.column("at").cast(pa.int64()).to_pylist())) == [1, 3, 2_000]
    assert sorted(set(str(p) for p in got.column("price").to_pylist())) == ["-7.00", "0.50", "1.23"]


def test_create_table_from_large_string_takes_rows_of_that_schema(warehouse):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.large_string())])
    table = pw.create_table(warehouse, "db.large", schema)
    with table.new_writer("job-1") as writer:
        writer.write(pa.table({"id": [1, 2], "s": pa.array(["x", "y"], pa.large_string())}))
        payload = writer.prepare_commit()
    table.new_coordinator("job-1").commit_payloads([payload], 1)
    assert table.read().column("s").to_pylist() == ["x", "y"]


def test_an_identifier_reused_for_other_data_raises_and_an_honest_rerun_passes(warehouse):
    table = create_orders(warehouse)
    first = prepare(table, range(10))
    other = prepare(table, range(10, 20))
    coordinator = table.new_coordinator("job-1")
    assert coordinator.commit_payloads([first], 3).status == "committed"
    assert coordinator.commit_payloads([first], 3).status == "already_committed"
    with pytest.raises(pw.IdentifierReusedError, match="identifier 3 .* already committed .* reused"):
        coordinator.commit_payloads([other], 3)
    assert table.latest_snapshot()["id"] == 1
    assert sorted_ids(table.read()) == list(range(10))


def test_messages_are_plain_sentences(warehouse):
    table = create_orders(warehouse)
    texts = []
    with table.new_writer("job-1") as writer:
        for bad in (rows(range(2)).drop_columns(["note"]), rows(range(2)).cast(
            pa.schema([f.with_type(pa.string()) if f.name == "amount" else f for f in SCHEMA])
        )):
            with pytest.raises(pw.PaimonWireError) as raised:
                writer.write(bad)
            texts.append(str(raised.value))
    with pytest.raises(pw.PaimonWireError) as raised:
        table.new_coordinator("job-1").deserialize(b"\x00" * 3, 12)
    texts.append(str(raised.value))
    for text in texts:
        assert not re.search(r"Some\(|DataInvalid|\{ message|source: ", text), text


def test_non_arrow_data_and_null_rows_are_refused(warehouse):
    table = create_orders(warehouse)
    with table.new_writer("job-1") as writer:
        with pytest.raises(TypeError, match="expected Arrow data .* got list$"):
            writer.write([1, 2, 3])
        with pytest.raises(pw.ArrowError, match="struct array, got an array of Int64"):
            writer.write(ArrayOnly(pa.array([1, 2], pa.int64())))
        nullable_rows = pa.StructArray.from_arrays(
            rows(range(2)).to_batches()[0].columns,
            fields=list(SCHEMA),
            mask=pa.array([False, True]),
        )
        with pytest.raises(pw.ArrowError, match="must have no null rows"):
            writer.write(ArrayOnly(nullable_rows))


def test_close_deletes_unprepared_files_and_abort_deletes_prepared_ones(warehouse):
    table = create_orders(warehouse)
    writer = table.new_writer("job-1")
    writer.write(rows(range(5000)))
    payload = writer.prepare_commit()
    prepared = data_files(table)
    assert prepared
    writer.write(rows(range(5000, 10000)))
    writer.close()
    assert writer.closed
    assert data_files(table) == prepared  # the unprepared rows' files are gone
    with pytest.raises(pw.PaimonWireError, match="the writer is closed"):
        writer.write(rows(range(1)))

    coordinator = table.new_coordinator("job-1")
    coordinator.abort(coordinator.deserialize(*payload))
    assert data_files(table) == []
    assert table.latest_snapshot() is None


def test_writes_release_the_gil(warehouse):
    table = create_orders(warehouse)
    big = rows(range(300_000))
    ticks = 0
    running = True

    def tick():
        nonlocal ticks
        while running:
            ticks += 1

    with table.new_writer("job-1") as writer:
        ticker = threading.Thread(target=tick)
        ticker.start()
        try:
            before = ticks
            writer.write(big)
            writer.prepare_commit()
            during = ticks - before
        finally:
            running = False
            ticker.join()
    # Holding the GIL through the call would have stopped the other thread entirely.
    assert during > 1000


def test_threads_sharing_one_writer_take_turns(warehouse):
    table = create_orders(warehouse)
    writer = table.new_writer("job-1")
    errors = []

    def write(ids):
        try:
            writer.write(rows(ids))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [
        threading.Thread(target=write, args=(range(i * 100_000, (i + 1) * 100_000),), daemon=True)
        for i in range(3)
    ]
    for thread in threads:
        thread.start()
    # A thread waiting for the writer while holding the GIL would stop the one inside it.
    assert not writer.closed
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive(), "deadlock: a writer call never returned"
    assert errors == []
    payload = writer.prepare_commit()
    writer.close()
    table.new_coordinator("job-1").commit_payloads([payload], 1)
    assert sorted_ids(table.read()) == list(range(300_000))


def test_inspect_matches_the_cli(warehouse, cli, tmp_path):
    import json

    table = create_orders(warehouse)
    payload, version = prepare(table, range(100))
    path = tmp_path / "payload.bin"
    path.write_bytes(payload)

    messages = pw.inspect(payload, version)

    assert messages == json.loads(run_cli(cli, "inspect", "--version", str(version), str(path)).stdout)
    assert len(messages) == 4  # one per partition
    assert sum(f["row_count"] for m in messages for f in m["new_files"]) == 100
    assert messages == table.new_coordinator("job-1").deserialize(payload, version).to_dicts()


def test_summarize_counts_what_inspect_decodes(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(100))
    messages = pw.inspect(payload, version)

    summary = pw.summarize(payload, version)

    assert summary == {
        "version": version,
        "messages": len(messages),
        "data_files": sum(len(m["new_files"]) for m in messages),
        "rows": 100,
    }
    assert pw.summarize(pw.wrap_envelope(payload, version)) == summary
    with pytest.raises(pw.CodecError, match="offset"):
        pw.summarize(payload[:-3], version)


def test_codec_errors_carry_the_cli_message_and_location(warehouse, cli, tmp_path):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10))
    truncated = payload[:-3]
    path = tmp_path / "truncated.bin"
    path.write_bytes(truncated)
    cli_error = run_cli(cli, "inspect", "--version", str(version), str(path), check=False).stderr

    with pytest.raises(pw.CodecError) as raised:
        pw.inspect(truncated, version)

    assert cli_error.strip() == f"paimon-wire: error: {path}: {raised.value}"
    assert raised.value.version == version
    assert raised.value.offset == len(truncated) - 2
    assert raised.value.field.startswith("messages[")
    with pytest.raises(pw.CodecError, match="unsupported commit message serializer version 99"):
        pw.inspect(payload, 99)
    with pytest.raises(pw.CodecError, match="payload rejected, cannot decode it: truncated"):
        table.new_coordinator("job-1").deserialize(truncated, version)


def test_compaction_is_opt_in_and_refuse_compaction_is_a_deprecated_no_op(warehouse):
    # Refusing compaction results is the default; tests/test_java_compaction.py shows a real
    # compacting payload refused by default and committed with allow_compaction=True.
    table = create_orders(warehouse)
    assert not pw.Coordinator(table, "job-1").allow_compaction
    assert not table.new_coordinator("job-1").allow_compaction
    assert not table.new_coordinator("job-1", refuse_compaction=True).allow_compaction
    assert pw.Coordinator(table, "job-1", allow_compaction=True).allow_compaction
    allowing = table.new_coordinator("job-1", allow_compaction=True)
    assert allowing.allow_compaction
    with pytest.raises(ValueError, match="refuse_compaction=True contradicts allow_compaction=True"):
        table.new_coordinator("job-1", allow_compaction=True, refuse_compaction=True)
    with pytest.raises(ValueError, match="refuse_compaction"):
        pw.Coordinator(table, "job-1", allow_compaction=True, refuse_compaction=True)
    # Payloads without compaction results commit the same either way.
    payload, version = prepare(table, range(10))
    assert allowing.commit_payloads([(payload, version)], 1).status == "committed"
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(10))


def test_verify_compaction_implies_allow_compaction_and_refuses_unverifiable_tables(warehouse):
    table = create_orders(warehouse)
    assert not pw.Coordinator(table, "job-1").verify_compaction
    assert not table.new_coordinator("job-1", allow_compaction=True).verify_compaction
    verifying = pw.Coordinator(table, "job-1", verify_compaction=True)
    assert verifying.allow_compaction and verifying.verify_compaction
    from_table = table.new_coordinator("job-1", verify_compaction=True)
    assert from_table.allow_compaction and from_table.verify_compaction
    both = table.new_coordinator("job-1", allow_compaction=True, verify_compaction=True)
    assert both.allow_compaction and both.verify_compaction
    with pytest.raises(ValueError, match="refuse_compaction=True contradicts verify_compaction=True"):
        pw.Coordinator(table, "job-1", verify_compaction=True, refuse_compaction=True)

    # A postpone table compacts across buckets: its compactions cannot be verified, so a
    # verifying coordinator is refused at bind; trusting compaction by metadata still binds.
    postponed = pk_table(warehouse, bucket="-2")
    assert pw.Coordinator(postponed, "job-1", allow_compaction=True).allow_compaction
    with pytest.raises(pw.UnsupportedError, match="cannot be verified"):
        pw.Coordinator(postponed, "job-1", verify_compaction=True)
    with pytest.raises(pw.UnsupportedError, match="cannot be verified"):
        postponed.new_coordinator("job-1", allow_compaction=True, verify_compaction=True)

    # Payloads without compaction results commit the same.
    payload, version = prepare(table, range(10))
    assert verifying.commit_payloads([(payload, version)], 1).status == "committed"
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(10))


def test_validation_errors_name_the_rule_as_the_cli_does(tmp_path, cli):
    warehouse = str(tmp_path / "warehouse")
    four = pw.create_table(warehouse, "db.four", SCHEMA, options={"bucket": "4", "bucket-key": "id"})
    two = pw.create_table(warehouse, "db.two", SCHEMA, options={"bucket": "2", "bucket-key": "id"})
    payload, version = prepare(four, range(100))
    path = tmp_path / "four.bin"
    path.write_bytes(payload)
    cli_error = run_cli(
        cli, "validate", "--warehouse", warehouse, "--table", "db.two",
        "--version", str(version), str(path), check=False,
    ).stderr

    with pytest.raises(pw.ValidationError) as raised:
        two.new_coordinator("job-1").deserialize(payload, version)

    assert raised.value.rule == "bucket"
    assert raised.value.field == "bucket"
    assert 0 <= raised.value.message_index < 4
    assert cli_error.strip() == f"paimon-wire: error: {path}: {raised.value}"
    assert str(raised.value).startswith("payload rejected by validation, nothing was committed:")
    assert two.latest_snapshot() is None


def test_envelopes(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10))
    framed = pw.wrap_envelope(payload, version)
    assert pw.is_envelope(framed) and not pw.is_envelope(payload)
    assert pw.unwrap_envelope(framed) == (payload, version)
    assert pw.inspect(framed) == pw.inspect(payload, version)

    corrupted = bytearray(framed)
    corrupted[-1] ^= 0xFF
    with pytest.raises(pw.EnvelopeError, match="payload corrupted: CRC32C") as raised:
        pw.unwrap_envelope(bytes(corrupted))
    assert raised.value.offset == 24
    with pytest.raises(pw.EnvelopeError, match="not a paimon-wire envelope"):
        pw.inspect(payload)

    outcome = table.new_coordinator("job-1").commit_payloads([framed], 1)
    assert outcome.status == "committed"
    assert sorted_ids(table.read()) == list(range(10))


def test_messages_belong_to_their_coordinator(warehouse):
    table = create_orders(warehouse)
    payload = prepare(table, range(10))
    bound = table.new_coordinator("job-1").deserialize(*payload)
    with pytest.raises(pw.ForeignMessagesError, match="deserialize the payload again"):
        table.new_coordinator("job-1").commit(bound, 1)


def test_older_serializer_versions(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10), version=11)
    assert version == 11
    assert table.new_coordinator("job-1").commit_payloads([(payload, 11)], 1).status == "committed"
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(10)))
        with pytest.raises(pw.CodecError, match="version 4"):
            writer.prepare_commit(version=4)


def test_table_errors_and_metadata(warehouse, tmp_path):
    with pytest.raises(pw.InvalidTableNameError, match='invalid table name "orders"'):
        pw.open_table(warehouse, "orders")
    with pytest.raises(pw.TableNotFoundError, match="db.missing"):
        pw.open_table(warehouse, "db.missing")
    with pytest.raises(pw.UnsupportedError, match="the commit user is empty"):
        create_orders(warehouse).new_coordinator("")

    table = pw.open_table(pathlib.Path(warehouse), TABLE)
    assert table.name == TABLE
    assert table.field_names == ["id", "region", "amount", "note"]
    assert table.partition_keys == ["region"]
    assert table.primary_keys == []
    assert table.options["bucket"] == "-1"
    assert table.schema.names == SCHEMA.names
    assert table.read().num_rows == 0

    import pickle

    assert pickle.loads(pickle.dumps(table)).location == table.location
    # Relative warehouses are resolved against the working directory once, when opened.
    assert pathlib.Path(table.warehouse).is_absolute()


def test_every_error_is_a_paimon_wire_error():
    for name in [
        "CodecError", "EnvelopeError", "FrameError", "ValidationError", "MergeConflictError",
        "ForeignMessagesError", "InvalidTableNameError", "TableNotFoundError",
        "UnsupportedError", "ArrowError", "PaimonError", "CommitConflictError",
        "IdentifierSupersededError", "IdentifierReusedError", "SharedBucketError",
        "SchemaMismatchError", "StorageBackendNotCompiledError",
    ]:
        assert issubclass(getattr(pw, name), pw.PaimonWireError), name
    assert issubclass(pw.PaimonWireError, Exception)


# --- a REST server that echoes the token (issue 40, case 8) ---------------------------------


TOKEN = "s3cr3t/t0ken+abc=xyz"

# The token as a server or proxy may echo it: raw, JSON-escaped (`\/`, `\u002f`),
# percent-encoded (upper and lower case).
TOKEN_SPELLINGS = [
    TOKEN,
    TOKEN.replace("/", "\\/"),
    TOKEN.replace("/", "\\u002f"),
    "s3cr3t%2Ft0ken%2Babc%3Dxyz",
    "s3cr3t%2ft0ken%2babc%3dxyz",
]


@contextlib.contextmanager
def echoing_rest_server(body: str) -> Iterator[str]:
    """A REST server on 127.0.0.1 that answers every request with HTTP 500 and the JSON
    `body`, for the `with` block (60 s at most); yields its URI."""
    encoded = body.encode()

    class Echo(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            self.send_response(500)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(encoded)))
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(encoded)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    deadline = threading.Timer(60, server.shutdown)
    serving.start()
    deadline.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        deadline.cancel()
        server.shutdown()
        server.server_close()
        serving.join(10)


@pytest.mark.parametrize(
    "spelled", TOKEN_SPELLINGS, ids=["raw", "json-slash", "json-u002f", "percent-upper", "percent-lower"]
)
def test_a_token_a_rest_server_echoes_in_any_spelling_is_never_in_the_exception(spelled, caplog):
    """The server echoes the bearer token in an error body without a `message` field: the
    exception shows the echo redacted, and no spelling of the token is in its text, repr,
    args, attributes, traceback, pickle or in a log record (as the CLI's
    `a_token_a_rest_server_echoes_in_any_spelling_is_never_printed`)."""
    escaped = TOKEN.replace("/", "\\/")
    body = f'{{"error":"bad credentials {spelled}","echo":"Authorization: Bearer {escaped}"}}'
    caplog.set_level(logging.DEBUG, logger="paimon_wire")
    with echoing_rest_server(body) as uri:
        with pytest.raises(pw.PaimonWireError) as raised:
            pw.open_table(
                "echo_warehouse",
                "db.t",
                catalog_options={
                    "metastore": "rest",
                    "uri": uri,
                    "token.provider": "bear",
                    "token": TOKEN,
                },
            )
    error = raised.value
    assert "<redacted>" in str(error), str(error)
    shown = {
        "str": str(error),
        "repr": repr(error),
        "args": repr(error.args),
        "attributes": repr(vars(error)),
        "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__)),
        "pickle": pickle.dumps(error).decode("latin-1"),
        "log": "\n".join(r.getMessage() for r in caplog.records),
    }
    for secret in [*TOKEN_SPELLINGS, "t0ken+abc"]:
        for where, text in shown.items():
            assert secret not in text, f"{secret!r} in the exception's {where}: {text}"


# --- bucket routing and one writer per bucket -----------------------------------------------


PK_SCHEMA = pa.schema(
    [field.with_nullable(False) if field.name == "region" else field for field in SCHEMA]
)


def pk_rows(ids) -> pa.Table:
    return rows(ids).cast(PK_SCHEMA)


def pk_table(warehouse: str, bucket: str = "4") -> pw.Table:
    return pw.create_table(
        warehouse,
        "db.users",
        PK_SCHEMA,
        partition_keys=["region"],
        primary_keys=["region", "id"],
        options={"bucket": bucket},
    )


def test_bucket_ids_are_the_buckets_the_writer_put_the_rows_in(warehouse):
    table = pk_table(warehouse)
    assert table.routing() == ("fixed-bucket", 4)
    with table.new_writer("job-1") as writer:
        writer.write(pk_rows(range(2_000)))
        payload = writer.prepare_commit()
    table.new_coordinator("job-1").commit_payloads([payload], identifier=1)

    from pypaimon import CatalogFactory

    reader = CatalogFactory.create({"warehouse": warehouse}).get_table("db.users")
    builder = reader.new_read_builder()
    seen = 0
    for split in builder.new_scan().plan().splits():
        data = builder.new_read().to_arrow([split])
        assert set(table.bucket_ids(data).to_pylist()) == {split.bucket}
        seen += data.num_rows
    assert seen == 2_000
    # Columns in any order; columns outside the bucket key do not matter.
    data = pk_rows(range(100))
    reordered = data.select(["note", "id", "region"])
    assert table.bucket_ids(reordered).to_pylist() == table.bucket_ids(data).to_pylist()


def test_a_value_kind_column_carries_row_kinds_and_duplicated_columns_are_refused(warehouse):
    table = pk_table(warehouse, bucket="1")
    with table.new_writer("job-1") as writer:
        writer.write(pk_rows(range(10)))
        payload = writer.prepare_commit()
    table.new_coordinator("job-1").commit_payloads([payload], identifier=1)

    # Row kinds (0 = +I, 3 = -D) in a `_VALUE_KIND` column given first: ids 0 and 1 are
    # deleted, id 2 gets a new note.
    changes = pk_rows([0, 1, 2]).set_column(3, "note", pa.array(["gone", "gone", "updated"]))
    changes = changes.add_column(0, "_VALUE_KIND", pa.array([3, 3, 0], pa.int8()))
    with table.new_writer("job-1") as writer:
        twice = pa.Table.from_arrays(
            [*pk_rows([5]).columns, pa.array([5], pa.int64())],
            names=[*PK_SCHEMA.names, "id"],
        )
        with pytest.raises(pw.SchemaMismatchError, match="more than once: id"):
            writer.write(twice)
        assert writer.write(changes) == 3
        payload = writer.prepare_commit()
    table.new_coordinator("job-1").commit_payloads([payload], identifier=2)

    read = table.read()
    assert sorted(read["id"].to_pylist()) == list(range(2, 10))
    notes = dict(zip(read["id"].to_pylist(), read["note"].to_pylist()))
    assert notes[2] == "updated"
    assert notes[3] == "row 3 from worker 0"


def test_bucket_ids_refuse_tables_without_fixed_buckets(warehouse):
    table = create_orders(warehouse)
    assert table.routing() == ("any-writer", None)
    with pytest.raises(pw.UnsupportedError, match="no fixed buckets"):
        table.bucket_ids(rows(range(3)))


def test_two_writers_of_one_bucket_raise_a_picklable_shared_bucket_error(warehouse):
    import pickle

    table = pk_table(warehouse)
    payloads = []
    for ids in (range(0, 100), range(100, 200)):
        with table.new_writer("job-1") as writer:
            writer.write(pk_rows(ids))
            payloads.append(writer.prepare_commit())
    coordinator = table.new_coordinator("job-1")
    with pytest.raises(pw.SharedBucketError) as raised:
        coordinator.commit_payloads(payloads, identifier=1)
    error = raised.value
    assert 0 <= error.bucket < 4
    assert error.partition.startswith("region='region-")
    assert (error.first_payload, error.second_payload) == (0, 1)
    assert "written by two writers" in str(error)
    assert table.latest_snapshot() is None

    assert type(error).__module__ == "paimon_wire"
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is pw.SharedBucketError
    assert isinstance(copy, pw.PaimonWireError)
    assert str(copy) == str(error)
    assert (copy.partition, copy.bucket, copy.first_payload, copy.second_payload) == (
        error.partition,
        error.bucket,
        error.first_payload,
        error.second_payload,
    )


def test_payloads_are_accepted_from_any_bytes_like_object(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(50))
    framed = pw.wrap_envelope(bytearray(payload), version)
    for blob in (bytearray(framed), memoryview(framed)):
        assert pw.is_envelope(blob)
        assert pw.unwrap_envelope(blob) == (payload, version)
    assert pw.inspect(memoryview(payload), version) == pw.inspect(payload, version)
    coordinator = table.new_coordinator("job-1")
    assert len(coordinator.deserialize(bytearray(payload), version)) == len(
        coordinator.deserialize(payload, version)
    )
    outcome = coordinator.commit_payloads([(memoryview(payload), version)], identifier=1)
    assert outcome.status == "committed"
    assert table.latest_snapshot()["total_record_count"] == 50
    with pytest.raises(TypeError, match="bytes-like object"):
        coordinator.deserialize("not bytes", version)


def test_commit_outcome_carries_rows_and_files_and_pickles(warehouse):
    import pickle

    table = create_orders(warehouse)
    payloads = [prepare(table, range(0, 60)), prepare(table, range(60, 100))]
    outcome = table.new_coordinator("job-1").commit_payloads(payloads, identifier=1)
    assert (outcome.status, outcome.snapshot_id, outcome.rows) == ("committed", 1, 100)
    assert outcome.files == len(data_files(table)) >= 2
    copy = pickle.loads(pickle.dumps(outcome))
    assert copy == outcome
    assert (copy.status, copy.snapshot_id, copy.rows, copy.files) == (
        "committed",
        1,
        100,
        outcome.files,
    )
    assert "rows=100" in repr(outcome)
    with pytest.raises(ValueError, match="status must be one of"):
        pw.CommitOutcome("done")


def test_writer_mode_and_coordinator_mode_must_match(warehouse):
    """A payload does not say how its writer was made; on a primary-key table its sequence
    numbers do (an overwrite writer starts every bucket at 0, an append writer continues
    it), and the coordinator refuses the payload in the other mode with nothing committed."""
    table = pk_table(warehouse)
    with table.new_writer("job-1") as writer:
        writer.write(pk_rows(range(200)))
        table.new_coordinator("job-1").commit_payloads([writer.prepare_commit()], identifier=1)
    before = sorted_ids(read_with_pypaimon(warehouse, "db.users"))

    def payload(ids, overwrite):
        with table.new_writer("job-1", overwrite=overwrite) as writer:
            writer.write(pk_rows(ids))
            return writer.prepare_commit()

    append = table.new_coordinator("job-1")
    overwrite = table.new_coordinator("job-1", overwrite=True)
    for coordinator, writer_overwrites, named in (
        (append, True, "overwrite writer"),
        (overwrite, False, "append writer"),
    ):
        with pytest.raises(pw.ValidationError) as raised:
            coordinator.commit_payloads([payload(range(0, 200, 2), writer_overwrites)], identifier=2)
        assert raised.value.rule == "sequence-numbers"
        assert named in str(raised.value)
        assert table.latest_snapshot()["id"] == 1

    # In matching modes: the append writer's updates merge, the overwrite replaces.
    append.commit_payloads([payload(range(0, 200, 2), False)], identifier=2)
    assert sorted_ids(read_with_pypaimon(warehouse, "db.users")) == before
    # ids 1000, 1004, ... all land in partition region-0, which the overwrite replaces.
    overwrite.commit_payloads([payload(range(1000, 1040, 4), True)], identifier=3)
    assert sorted_ids(read_with_pypaimon(warehouse, "db.users")) == [
        i for i in range(200) if i % 4 != 0
    ] + list(range(1000, 1040, 4))


def exception_class_names() -> set[str]:
    """The names of the exception classes the module exports, the base class left out."""
    return {
        name
        for name in dir(pw)
        if isinstance(getattr(pw, name), type)
        and issubclass(getattr(pw, name), pw.PaimonWireError)
        and name != "PaimonWireError"
    }


def test_the_readme_error_table_lists_every_exception_class():
    """Every exception class the module exports has a row in the README's error table (and
    the table names no class the module lacks)."""
    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    table_rows = [line for line in readme.splitlines() if re.match(r"^\| `\w+Error`", line)]
    documented = {re.match(r"^\| `(\w+Error)`", line).group(1) for line in table_rows}
    exported = exception_class_names()
    assert exported - documented == set(), "exceptions missing from the README's table"
    assert documented - exported == set(), "README rows naming no exception of the module"


def test_the_errors_table_of_every_surface_names_every_exception_class():
    """ERRORS.md (one row per failure, every surface) names every exception class."""
    errors = (pathlib.Path(__file__).parents[3] / "ERRORS.md").read_text()
    exported = exception_class_names()
    missing = {name for name in exported if f"`{name}`" not in errors}
    assert missing == set(), "exceptions ERRORS.md does not name"


def test_log_records_reach_python_logging_under_paimon_wire(warehouse, caplog):
    table = create_orders(warehouse)
    # A "%" in the commit user: the message must be passed as data, not as a format string.
    user = "job-50%d"
    with table.new_writer(user) as writer:
        writer.write(rows(range(10)))
        payload = writer.prepare_commit()
    coordinator = pw.Coordinator(table, user)

    caplog.set_level(logging.WARNING, logger="paimon_wire")
    coordinator.commit_payloads([payload], 1)
    assert [r for r in caplog.records if r.name.startswith("paimon_wire")] == []

    caplog.set_level(logging.DEBUG, logger="paimon_wire")
    coordinator.commit_payloads([payload], 1)
    records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert (
        "paimon_wire.coordinator",
        logging.DEBUG,
        f'committing 4 messages to db.orders as "{user}", identifier 1',
    ) in records, records
    assert (
        "paimon_wire.coordinator",
        logging.INFO,
        f'db.orders, "{user}", identifier 1: AlreadyCommitted {{ snapshot_id: Some(1) }}',
    ) in records, records
    # Only records of the library's own loggers, none from the crates beneath at DEBUG.
    assert all(name.startswith("paimon_wire") for name, _, _ in records), records


def test_the_readme_api_sketch_runs(warehouse):
    """The README's API sketch, with its two placeholders filled (a batch of rows; the other
    workers' payloads, `...`, left out)."""
    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    sketch = readme.split("## The API\n\n```python\n", 1)[1].split("```", 1)[0]
    assert ", ...]" in sketch and "record_batch_or_table_or_reader" in sketch
    sketch = sketch.replace("/data/warehouse", str(warehouse)).replace(", ...]", "]")
    create_orders(warehouse)
    namespace: dict = {"record_batch_or_table_or_reader": rows(range(10))}
    exec(compile(sketch, "README.md", "exec"), namespace)
    assert (namespace["outcome"].status, namespace["outcome"].snapshot_id) == ("committed", 1)
    assert sorted_ids(namespace["table"].read()) == list(range(10))
