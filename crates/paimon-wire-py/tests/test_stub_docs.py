"""The docstrings of the typed stubs (``python/paimon_wire/_native.pyi``), each checked by a
test of the behavior it describes.

Every documented item of the stubs (a top-level function or constant, a class, a method, a
property, an exception's attribute) has at least one test named ``test_doc_<Item>_<claim>``:
``<Item>`` is the function or constant name, the class name for a claim of the class
docstring, ``<Class>_<member>`` for a member and ``<Class>_new`` for a documented
``__new__``. ``test_every_documented_stub_item_has_a_doc_test`` parses the stubs and names
every item without one; a docstring changed to claim something new needs a test here.

Claims about compaction results need payloads that carry them: a real Paimon Java 2.0 writer
that compacts writes them (compat/java, as tests/test_java_compaction.py; Java 17 and Maven).
"""

from __future__ import annotations

import ast
import os
import pathlib
import pickle
import re
import shutil
import struct
import subprocess
import time
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
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

STUBS = pathlib.Path(__file__).resolve().parents[1] / "python" / "paimon_wire" / "_native.pyi"

PK_SCHEMA = pa.schema(
    [field.with_nullable(False) if field.name == "region" else field for field in SCHEMA]
)


def pk_table(warehouse: str, bucket: str = "4", name: str = "db.users", **options: str) -> pw.Table:
    """A primary-key table partitioned by region, with `bucket` buckets."""
    return pw.create_table(
        warehouse,
        name,
        PK_SCHEMA,
        partition_keys=["region"],
        primary_keys=["region", "id"],
        options={"bucket": bucket, **options},
    )


def write(table: pw.Table, data: pa.Table, user: str = "job-1") -> tuple[bytes, int]:
    """The payload of one writer of job `user` that wrote `data`."""
    with table.new_writer(user) as writer:
        writer.write(data)
        return writer.prepare_commit()


def file_names(payload: tuple[bytes, int]) -> set[str]:
    return {f["file_name"] for m in pw.inspect(*payload) for f in m["new_files"]}


def crc32c(data: bytes) -> int:
    """CRC32C (Castagnoli), bit by bit."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


# --- top-level constants and functions ------------------------------------------------------


def test_doc_CURRENT_SERIALIZER_VERSION_is_the_newest_written_and_prepare_commits_default(
    warehouse,
):
    table = create_orders(warehouse)
    newest = pw.CURRENT_SERIALIZER_VERSION
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(5)))
        assert writer.prepare_commit()[1] == newest
        writer.write(rows(range(5, 10)))
        assert writer.prepare_commit(newest)[1] == newest
        with pytest.raises(pw.CodecError, match=f"version {newest + 1}"):
            writer.prepare_commit(newest + 1)


def test_doc_DEFAULT_HASH_INDEX_BUDGET_is_one_gib_and_a_coordinators_default(warehouse):
    assert pw.DEFAULT_HASH_INDEX_BUDGET == 1 << 30
    table = pk_table(warehouse, bucket="-1", name="db.dynamic")
    assert pw.Coordinator(table, "job-1").hash_index_budget == pw.DEFAULT_HASH_INDEX_BUDGET
    assert table.new_coordinator("job-1").hash_index_budget == pw.DEFAULT_HASH_INDEX_BUDGET


def test_doc_open_table_opens_database_dot_table_from_a_path_or_a_uri(warehouse):
    created = create_orders(warehouse)
    for where in (warehouse, pathlib.Path(warehouse), "file:" + warehouse):
        table = pw.open_table(where, TABLE)
        assert (table.name, table.field_names) == (TABLE, created.field_names)


def test_doc_open_table_invalid_name_raises_InvalidTableNameError(warehouse):
    create_orders(warehouse)
    for name in ("orders", "a.b.c", ""):
        with pytest.raises(pw.InvalidTableNameError):
            pw.open_table(warehouse, name)


def test_doc_open_table_missing_raises_TableNotFoundError(warehouse):
    create_orders(warehouse)
    with pytest.raises(pw.TableNotFoundError, match="db.missing"):
        pw.open_table(warehouse, "db.missing")
    with pytest.raises(pw.TableNotFoundError, match="nodb.orders"):
        pw.open_table(warehouse, "nodb.orders")


def test_doc_open_table_uri_without_its_backend_raises_StorageBackendNotCompiledError():
    # The default build (the storage-s3 feature) has no HDFS backend.
    with pytest.raises(pw.StorageBackendNotCompiledError, match="storage-hdfs"):
        pw.open_table("hdfs://namenode/warehouse", TABLE)


def test_doc_open_table_secret_option_values_never_appear_in_errors_or_repr(warehouse):
    # The engine's error for an S3 warehouse without a region quotes "region is missing":
    # made a secret's value, it is replaced in the message.
    secrets = {"s3.access-key": "AKIADOCTESTKEY", "s3.secret-key": "region is missing"}
    with pytest.raises(pw.PaimonWireError) as raised:
        pw.open_table("s3://bucket/warehouse", TABLE, catalog_options=secrets)
    assert "<redacted>" in str(raised.value)
    with pytest.raises(pw.TableNotFoundError) as missing:
        pw.open_table(warehouse, "db.missing", catalog_options=secrets)
    create_orders(warehouse)
    table = pw.open_table(warehouse, TABLE, catalog_options=secrets)
    for text in (str(raised.value), str(missing.value), repr(table)):
        for secret in secrets.values():
            assert secret not in text, text


def test_doc_create_table_creates_the_database_if_needed_and_opens_the_table(warehouse):
    schema = pa.schema([pa.field("k", pa.int32(), nullable=False), pa.field("s", pa.string())])
    table = pw.create_table(warehouse, "newdb.things", schema)
    assert (pathlib.Path(warehouse) / "newdb.db").is_dir()
    assert pw.open_table(warehouse, "newdb.things").schema == schema
    assert (table.name, table.schema) == ("newdb.things", schema)


def test_doc_create_table_partition_keys_primary_keys_and_options_default_to_none(warehouse):
    table = pw.create_table(warehouse, "db.plain", SCHEMA)
    assert (table.partition_keys, table.primary_keys, table.options) == ([], [], {})
    keyed = pk_table(warehouse, bucket="2")
    assert (keyed.partition_keys, keyed.primary_keys) == (["region"], ["region", "id"])
    assert keyed.options == {"bucket": "2"}


def test_doc_inspect_returns_one_dict_per_message(warehouse):
    table = create_orders(warehouse)
    payload = prepare(table, range(100))  # 4 partitions: 4 messages
    messages = pw.inspect(*payload)
    assert len(messages) == 4 == pw.summarize(*payload)["messages"]
    assert all(isinstance(m, dict) for m in messages)
    assert sorted(bytes.fromhex(m["partition"])[-8:].decode() for m in messages) == [
        f"region-{i}" for i in range(4)
    ]


def test_doc_inspect_prints_the_schema_of_the_cli_inspect(warehouse, cli, tmp_path):
    import json

    payload, version = prepare(create_orders(warehouse), range(10))
    path = tmp_path / "payload.bin"
    path.write_bytes(payload)
    printed = run_cli(cli, "inspect", "--version", str(version), str(path)).stdout
    assert pw.inspect(payload, version) == json.loads(printed)


def test_doc_inspect_binary_rows_are_lowercase_hex_and_creation_time_is_epoch_millis(warehouse):
    table = create_orders(warehouse)
    before = int(time.time() * 1000)
    payload = prepare(table, range(10))
    after = int(time.time() * 1000)
    for message in pw.inspect(*payload):
        assert re.fullmatch(r"(?:[0-9a-f]{2})+", message["partition"])
        for file in message["new_files"]:
            for row in (file["min_key"], file["max_key"], file["value_stats"]["min_values"]):
                assert re.fullmatch(r"(?:[0-9a-f]{2})+", row), row
            assert before - 1 <= file["creation_time"] <= after + 1


def test_doc_inspect_without_version_takes_only_an_envelope_or_a_dpcm_frame(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    assert pw.inspect(pw.wrap_envelope(payload, version)) == pw.inspect(payload, version)
    assert pw.inspect(pw.frame_dpcm(payload, version)) == pw.inspect(payload, version)
    with pytest.raises(pw.EnvelopeError, match="not a paimon-wire envelope"):
        pw.inspect(payload)


def test_doc_inspect_a_dpcm_frame_given_with_version_must_carry_it(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10), version=13)
    framed = pw.frame_dpcm(payload, version)
    assert pw.inspect(framed, 13) == pw.inspect(payload, 13)
    with pytest.raises(pw.FrameError, match="serializer version 13 at offset 4, but the payload was sent as version 14") as refused:
        pw.inspect(framed, 14)
    assert refused.value.offset == 4


def test_doc_frame_dpcm_writes_magic_big_endian_version_and_length_then_the_payload(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    framed = pw.frame_dpcm(payload, version)
    assert struct.unpack(">4sii", framed[:12]) == (b"DPCM", version, len(payload))
    assert framed[12:] == payload
    with pytest.raises(pw.CodecError, match="99"):
        pw.frame_dpcm(payload, 99)


def test_doc_unframe_dpcm_returns_payload_and_version(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10), version=12)
    unframed = pw.unframe_dpcm(pw.frame_dpcm(memoryview(payload), version))
    assert unframed == (payload, 12)
    assert type(unframed[0]) is bytes


def test_doc_is_dpcm_frame_checks_the_DPCM_magic(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    assert pw.is_dpcm_frame(pw.frame_dpcm(payload, version))
    assert pw.is_dpcm_frame(b"DPCM")  # the magic alone: nothing else is checked
    assert not pw.is_dpcm_frame(payload)
    assert not pw.is_dpcm_frame(pw.wrap_envelope(payload, version))
    assert not pw.is_dpcm_frame(b"DPC")
    assert not pw.is_dpcm_frame(b"dpcm" + bytes(8))


def test_doc_summarize_counts_messages_data_files_and_rows(warehouse):
    payload, version = prepare(create_orders(warehouse), range(100))
    messages = pw.inspect(payload, version)
    assert pw.summarize(payload, version) == {
        "version": version,
        "messages": len(messages),
        "data_files": sum(len(m["new_files"]) for m in messages),
        "rows": sum(f["row_count"] for m in messages for f in m["new_files"]),
    }
    assert pw.summarize(payload, version)["rows"] == 100


def test_doc_summarize_checks_the_whole_payload_like_inspect(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    for bad in (payload[:-3], payload + b"\x00\x00"):
        with pytest.raises(pw.CodecError) as inspected:
            pw.inspect(bad, version)
        with pytest.raises(pw.CodecError) as summarized:
            pw.summarize(bad, version)
        assert str(summarized.value) == str(inspected.value)


def test_doc_summarize_without_version_takes_only_an_envelope_or_a_dpcm_frame(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    assert pw.summarize(pw.wrap_envelope(payload, version)) == pw.summarize(payload, version)
    assert pw.summarize(pw.frame_dpcm(payload, version)) == pw.summarize(payload, version)
    with pytest.raises(pw.EnvelopeError):
        pw.summarize(payload)


def many_messages(table: pw.Table) -> tuple[bytes, int]:
    """One writer's payload of 16 messages (16 partitions)."""
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(160), partitions=16))
        return writer.prepare_commit()


def test_doc_split_payload_splits_into_raw_payloads_of_at_most_max_bytes(warehouse):
    payload, version = many_messages(create_orders(warehouse))
    parts = pw.split_payload(payload, 2048, version)
    assert len(parts) > 1 and all(type(p) is bytes and len(p) <= 2048 for p in parts)
    # The same messages, at the same version, in order.
    assert [m for p in parts for m in pw.inspect(p, version)] == pw.inspect(payload, version)


def test_doc_split_payload_within_the_limit_comes_back_byte_for_byte(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    assert pw.split_payload(payload, len(payload), version) == [payload]


def test_doc_split_payload_below_256_raises_ValueError(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    with pytest.raises(ValueError, match="below the minimum of 256 bytes"):
        pw.split_payload(payload, 255, version)


def test_doc_split_payload_without_version_takes_an_envelope_or_a_dpcm_frame(warehouse):
    payload, version = many_messages(create_orders(warehouse))
    framed = pw.wrap_envelope(payload, version)
    assert pw.split_payload(framed, 2048) == pw.split_payload(payload, 2048, version)
    in_dpcm = pw.frame_dpcm(payload, version)
    assert pw.split_payload(in_dpcm, 2048) == pw.split_payload(payload, 2048, version)
    with pytest.raises(pw.EnvelopeError):
        pw.split_payload(payload, 2048)


def test_doc_split_payload_send_each_with_index_count_and_version(warehouse):
    table = create_orders(warehouse)
    payload, version = many_messages(table)
    parts = pw.split_payload(payload, 2048, version)
    sent = [(index, len(parts), part) for index, part in enumerate(parts)]
    coordinator = table.new_coordinator("job-1")
    assert coordinator.commit(coordinator.deserialize_parts(sent, version), 1).rows == 160
    assert sorted_ids(table.read()) == list(range(160))


def test_doc_split_payload_raises_SplitError_naming_what_does_not_fit(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    with pytest.raises(pw.SplitError, match="a payload holding only data file .* needs"):
        pw.split_payload(payload, 256, version)


def test_doc_Coordinator_deserialize_parts_a_set_with_a_payload_missing_decodes_nothing(warehouse):
    table = create_orders(warehouse)
    payload, version = many_messages(table)
    parts = pw.split_payload(payload, 2048, version)
    count = len(parts)
    coordinator = table.new_coordinator("job-1")
    with pytest.raises(pw.SplitSetError, match=r"missing \(index 1\)"):
        coordinator.deserialize_parts([(0, count, parts[0])] + [
            (i, count, parts[i]) for i in range(2, count)
        ], version)
    with pytest.raises(pw.SplitSetError, match="twice with different bytes"):
        coordinator.deserialize_parts([(0, count, parts[0]), (0, count, parts[1])], version)
    assert table.latest_snapshot() is None


def test_doc_Coordinator_deserialize_parts_any_order_and_a_duplicate_kept_once(warehouse):
    table = create_orders(warehouse)
    payload, version = many_messages(table)
    parts = pw.split_payload(payload, 2048, version)
    sent = [(i, len(parts), p) for i, p in enumerate(parts)]
    coordinator = table.new_coordinator("job-1")
    shuffled = coordinator.deserialize_parts(sent[::-1] + sent[:1], version)
    whole = coordinator.deserialize(payload, version)
    assert (len(shuffled), shuffled.data_file_count, shuffled.reported_row_count) == (
        len(whole), whole.data_file_count, 160,
    )  # fmt: skip


def test_doc_Coordinator_deserialize_parts_a_bucket_spanning_payloads_is_one_writer(warehouse):
    table = pk_table(warehouse, bucket="2")
    # One writer's two flushes: both payloads write every bucket, numbers continuing.
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(0, 200), partitions=2).cast(PK_SCHEMA))
        first, version = writer.prepare_commit()
        writer.write(rows(range(200, 400), partitions=2).cast(PK_SCHEMA))
        second, _ = writer.prepare_commit()
    coordinator = table.new_coordinator("job-1")
    # As two workers' payloads, one bucket written twice is refused ...
    with pytest.raises(pw.SharedBucketError):
        coordinator.merge([coordinator.deserialize(first, version), coordinator.deserialize(second, version)])
    # ... as one worker's set it is one writer's.
    bound = coordinator.deserialize_parts([(0, 2, first), (1, 2, second)], version)
    assert coordinator.commit(coordinator.merge([bound]), 1).rows == 400
    assert sorted_ids(table.read()) == list(range(400))


def test_doc_wrap_envelope_frames_magic_versions_length_and_crc32c(warehouse):
    assert crc32c(b"123456789") == 0xE3069283  # the check value of CRC-32C
    payload, version = prepare(create_orders(warehouse), range(10))
    framed = pw.wrap_envelope(payload, version)
    header = struct.unpack(">4sHHiQI", framed[:24])
    # magic, envelope format version, reserved, serializer version, payload length, CRC32C
    assert header == (b"PWIR", 1, 0, version, len(payload), crc32c(payload))
    assert framed[24:] == payload


def test_doc_unwrap_envelope_returns_payload_and_version(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10), version=11)
    unwrapped = pw.unwrap_envelope(pw.wrap_envelope(payload, version))
    assert unwrapped == (payload, 11)
    assert type(unwrapped[0]) is bytes


def test_doc_is_envelope_checks_the_PWIR_magic(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    assert pw.is_envelope(pw.wrap_envelope(payload, version))
    assert pw.is_envelope(b"PWIR")  # the magic alone: nothing else is checked
    assert not pw.is_envelope(payload)
    assert not pw.is_envelope(b"PWI")
    assert not pw.is_envelope(b"pwir" + bytes(20))


# --- Table ----------------------------------------------------------------------------------


def test_doc_Table_pickles_as_its_warehouse_name_and_catalog_options(warehouse):
    create_orders(warehouse)
    table = pw.open_table(warehouse, TABLE, catalog_options={"s3.region": "doc-region-1"})
    pickled = pickle.dumps(table)
    assert b"doc-region-1" in pickled
    copy = pickle.loads(pickled)
    assert (copy.name, copy.warehouse) == (table.name, table.warehouse)
    assert copy.location == table.location
    assert pickle.dumps(copy) == pickled  # the catalog options came along


def test_doc_Table_name_is_database_dot_table(warehouse):
    create_orders(warehouse, "sales.orders")
    assert pw.open_table(warehouse, "sales.orders").name == "sales.orders"


def test_doc_Table_warehouse_is_a_local_path_made_absolute_or_a_uri(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table = create_orders("relative/warehouse")
    absolute = os.path.join(os.getcwd(), "relative", "warehouse")
    assert table.warehouse == absolute
    uri = "file:" + absolute
    assert pw.open_table(uri, TABLE).warehouse == uri


def test_doc_Table_location_holds_the_tables_files(warehouse):
    table = create_orders(warehouse)
    payload = prepare(table, range(100))
    table.new_coordinator("job-1").commit_payloads([payload], 1)
    location = pathlib.Path(table.location.removeprefix("file:"))
    assert location.is_relative_to(warehouse)
    assert {pathlib.Path(f).name for f in data_files(table)} == file_names(payload)
    assert (location / "snapshot").is_dir()


def test_doc_Table_field_names_are_the_columns_in_table_order(warehouse):
    table = create_orders(warehouse)
    assert table.field_names == SCHEMA.names == table.schema.names
    # Not an order a batch must follow: columns are matched by name.
    with table.new_writer("job-1") as writer:
        assert writer.write(rows(range(3)).select(list(reversed(SCHEMA.names)))) == 3


def test_doc_Table_schema_is_the_columns_as_arrow(warehouse):
    table = create_orders(warehouse)
    assert isinstance(table.schema, pa.Schema)
    assert table.schema == SCHEMA  # names, types and nullability


def test_doc_Table_latest_snapshot_is_none_before_any_commit(warehouse):
    assert create_orders(warehouse).latest_snapshot() is None


def test_doc_Table_latest_snapshot_holds_the_listed_fields_of_the_latest(warehouse):
    table = create_orders(warehouse)
    coordinator = table.new_coordinator("job-1")
    coordinator.commit_payloads([prepare(table, range(10))], 3)
    coordinator.commit_payloads([prepare(table, range(10, 15))], 4)
    snapshot = table.latest_snapshot()
    assert set(snapshot) == {
        "id", "commit_user", "commit_identifier", "commit_kind", "schema_id", "time_millis",
        "total_record_count",
    }  # fmt: skip
    assert (snapshot["id"], snapshot["commit_user"]) == (2, "job-1")
    assert snapshot["commit_identifier"] == 4
    assert (snapshot["commit_kind"], snapshot["schema_id"], snapshot["total_record_count"]) == (
        "APPEND", 0, 15,
    )  # fmt: skip
    assert abs(snapshot["time_millis"] - time.time() * 1000) < 600_000


def test_doc_Table_read_returns_all_rows_of_the_latest_snapshot(warehouse):
    table = create_orders(warehouse)
    assert table.read().num_rows == 0
    table.new_coordinator("job-1").commit_payloads([prepare(table, range(10))], 1)
    table.new_coordinator("job-1").commit_payloads([prepare(table, range(10, 30))], 2)
    assert sorted_ids(table.read()) == list(range(30))
    # An overwrite of partition region-0 (ids 100, 104, ...): the latest snapshot only.
    with table.new_writer("job-1", overwrite=True) as writer:
        writer.write(rows(range(100, 120, 4)))
        payload = writer.prepare_commit()
    table.new_coordinator("job-1", overwrite=True).commit_payloads([payload], 3)
    assert sorted_ids(table.read()) == sorted(
        [i for i in range(30) if i % 4 != 0] + list(range(100, 120, 4))
    )


def test_doc_Table_routing_names_the_three_kinds(warehouse):
    assert pk_table(warehouse, bucket="4").routing() == ("fixed-bucket", 4)
    assert create_orders(warehouse).routing() == ("any-writer", None)
    assert pk_table(warehouse, bucket="-2", name="db.postponed").routing() == ("any-writer", None)
    assert pk_table(warehouse, bucket="-1", name="db.dynamic").routing() == ("single-writer", None)


def test_doc_Table_bucket_ids_are_the_buckets_the_writer_puts_rows_in(warehouse):
    table = pk_table(warehouse, bucket="4")
    data = rows(range(400)).cast(PK_SCHEMA)
    buckets = table.bucket_ids(data)
    assert isinstance(buckets, pa.Int32Array) and len(buckets) == data.num_rows
    assert set(buckets.to_pylist()) == {0, 1, 2, 3}
    for bucket in range(4):
        rows_of_bucket = data.filter(pc.equal(buckets, bucket))
        messages = pw.inspect(*write(table, rows_of_bucket))
        assert {m["bucket"] for m in messages if m["new_files"]} == {bucket}


def test_doc_Table_bucket_ids_fixed_bucket_tables_only(warehouse):
    for table in (create_orders(warehouse), pk_table(warehouse, bucket="-1")):
        with pytest.raises(pw.UnsupportedError, match="no fixed buckets"):
            table.bucket_ids(rows(range(3)).cast(table.schema))


def test_doc_Table_assigner_ids_route_rows_to_the_writer_that_assigns_their_buckets(warehouse):
    table = pk_table(warehouse, bucket="-1", **{"dynamic-bucket.target-row-num": "10"})
    data = rows(range(300)).cast(PK_SCHEMA)
    owners = table.assigner_ids(data, 3)
    assert isinstance(owners, pa.Int32Array) and len(owners) == data.num_rows
    assert set(owners.to_pylist()) == {0, 1, 2}
    for assigner in range(3):
        mine = data.filter(pc.equal(owners, assigner))
        with table.new_writer("job-1", assigner=(assigner, 3)) as writer:
            writer.write(mine)
            messages = pw.inspect(*writer.prepare_commit())
        # an assigner creates only its own buckets: bucket % 3 == assigner
        assert {m["bucket"] % 3 for m in messages if m["new_files"]} == {assigner}
        with table.new_writer("job-1", assigner=((assigner + 1) % 3, 3)) as other:
            with pytest.raises(pw.PaimonError, match=f"belongs to dynamic-bucket assigner {assigner}"):
                other.write(mine)


def test_doc_Table_assigner_ids_dynamic_bucket_tables_only(warehouse):
    for table in (create_orders(warehouse), pk_table(warehouse, bucket="4")):
        with pytest.raises(pw.UnsupportedError, match="bucket = -1"):
            table.assigner_ids(rows(range(3)).cast(table.schema), 2)


def test_doc_Table_new_writer_assigner_i_of_n_keeps_one_row_per_key_across_rounds(warehouse):
    from conftest import read_with_pypaimon

    table = pk_table(warehouse, bucket="-1", **{"dynamic-bucket.target-row-num": "10"})
    latest = {}
    for round_ in range(3):
        data = rows(range(round_ * 40, round_ * 40 + 120), worker=round_).cast(PK_SCHEMA)
        owners = table.assigner_ids(data, 3)
        payloads = []
        for assigner in range(3):
            with table.new_writer("job-1", assigner=(assigner, 3)) as writer:
                writer.write(data.filter(pc.equal(owners, assigner)))
                payloads.append(writer.prepare_commit())
        table.new_coordinator("job-1").commit_payloads(payloads, round_ + 1)
        latest.update(zip(data.column("id").to_pylist(), data.column("note").to_pylist()))
        for reader in (table.read(), read_with_pypaimon(warehouse, "db.users")):
            ids = reader.column("id").to_pylist()
            assert sorted(ids) == sorted(latest), f"round {round_}: one row per key"
            assert dict(zip(ids, reader.column("note").to_pylist())) == latest
    with pytest.raises(ValueError, match="one of 0..3"):
        table.new_writer("job-1", assigner=(3, 3))
    with pytest.raises(pw.UnsupportedError, match="bucket = -1"):
        create_orders(warehouse).new_writer("job-1", assigner=(0, 2))


def test_doc_Table_new_writer_is_bound_to_the_jobs_commit_user(warehouse):
    table = create_orders(warehouse)
    with table.new_writer("job-7") as writer:
        assert (writer.commit_user, writer.table_name) == ("job-7", TABLE)
        writer.write(rows(range(10)))
        payload = writer.prepare_commit()
    table.new_coordinator("job-7").commit_payloads([payload], 1)
    assert table.latest_snapshot()["commit_user"] == "job-7"


def test_doc_Table_new_coordinator_binds_the_jobs_commit_user(warehouse):
    table = create_orders(warehouse)
    coordinator = table.new_coordinator("job-7")
    assert (coordinator.commit_user, coordinator.table_name) == ("job-7", TABLE)
    assert coordinator.mode == "append"
    assert table.new_coordinator("job-7", overwrite=True).mode == "overwrite"


def test_doc_Table_new_coordinator_refuses_compaction_unless_allow_compaction(
    java_compaction, tmp_path
):
    table = compaction_table(java_compaction, tmp_path)
    with pytest.raises(pw.ValidationError) as raised:
        table.new_coordinator(JAVA_USER).deserialize(*java_compaction.versioned)
    assert raised.value.rule == "compact-increment"
    allowing = table.new_coordinator(JAVA_USER, allow_compaction=True)
    assert commit_compaction(allowing, java_compaction).status == "committed"


def test_doc_Table_new_coordinator_verify_compaction_verifies_by_reading(java_compaction, tmp_path):
    table = compaction_table(java_compaction, tmp_path)
    tamper_a_compaction_result(table, java_compaction)
    with pytest.raises(pw.ValidationError) as raised:
        commit_compaction(table.new_coordinator(JAVA_USER, verify_compaction=True), java_compaction)
    assert raised.value.rule == "compact-content"


def test_doc_Table_new_coordinator_hash_index_budget_bounds_one_commits_hash_index_checks(
    warehouse,
):
    table = pk_table(warehouse, bucket="-1", name="db.dynamic")
    payload = write(table, rows(range(10)).cast(PK_SCHEMA))
    with pytest.raises(pw.ValidationError) as raised:
        table.new_coordinator("job-1", hash_index_budget=1024).commit_payloads([payload], 1)
    assert raised.value.rule == "bounds"
    assert table.latest_snapshot() is None
    roomy = table.new_coordinator("job-1", hash_index_budget=2 << 20)
    assert roomy.hash_index_budget == 2 << 20
    assert roomy.commit_payloads([payload], 1).status == "committed"


def test_doc_Table_new_coordinator_refuse_compaction_is_deprecated_and_ignored(warehouse):
    table = create_orders(warehouse)
    refusing = table.new_coordinator("job-1", refuse_compaction=True)
    assert (refusing.allow_compaction, refusing.verify_compaction) == (False, False)
    assert refusing.commit_payloads([prepare(table, range(10))], 1).status == "committed"


# --- Writer ---------------------------------------------------------------------------------


def test_doc_Writer_with_block_discards_what_was_not_prepared(warehouse):
    table = create_orders(warehouse)
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(100)))
        payload = writer.prepare_commit()
        writer.write(rows(range(100, 200)))
    assert writer.closed
    assert {pathlib.Path(f).name for f in data_files(table)} == file_names(payload)


def test_doc_Writer_write_takes_every_arrow_form(warehouse):
    table = create_orders(warehouse)
    forms = [
        rows(range(0, 10)).to_batches()[0],
        rows(range(10, 20)),
        pa.RecordBatchReader.from_batches(SCHEMA, rows(range(20, 30)).to_batches()),
        StreamOnly(rows(range(30, 40))),
        ArrayOnly(rows(range(40, 50)).to_batches()[0]),
    ]
    with table.new_writer("job-1") as writer:
        for data in forms:
            writer.write(data)
        payload = writer.prepare_commit()
    table.new_coordinator("job-1").commit_payloads([payload], 1)
    assert sorted_ids(table.read()) == list(range(50))


def test_doc_Writer_write_matches_columns_by_name_in_any_order(warehouse):
    table = create_orders(warehouse)
    shuffled = rows(range(10)).select(["note", "amount", "id", "region"])
    payload = write(table, shuffled)
    table.new_coordinator("job-1").commit_payloads([payload], 1)
    assert table.read().sort_by("id").equals(rows(range(10)))


def test_doc_Writer_write_returns_the_number_of_rows_written(warehouse):
    table = create_orders(warehouse)
    chunked = pa.concat_tables([rows(range(0, 7)), rows(range(7, 20))])
    with table.new_writer("job-1") as writer:
        assert writer.write(chunked) == 20
        assert writer.write(rows(range(20, 20))) == 0
        assert writer.write(rows(range(20, 23)).to_batches()[0]) == 3
        assert pw.summarize(*writer.prepare_commit())["rows"] == 23


def test_doc_Writer_prepare_commit_holds_the_files_written_since_the_previous_one(warehouse):
    table = create_orders(warehouse)
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(10)))
        first = writer.prepare_commit()
        writer.write(rows(range(10, 30)))
        second = writer.prepare_commit()
    assert (pw.summarize(*first)["rows"], pw.summarize(*second)["rows"]) == (10, 20)
    assert not file_names(first) & file_names(second)
    coordinator = table.new_coordinator("job-1")
    coordinator.commit_payloads([first], 1)
    coordinator.commit_payloads([second], 2)
    assert sorted_ids(table.read()) == list(range(30))


def test_doc_Writer_prepare_commit_defaults_to_the_newest_version(warehouse):
    table = create_orders(warehouse)
    assert prepare(table, range(10))[1] == pw.CURRENT_SERIALIZER_VERSION == 14


def test_doc_Writer_prepare_commit_writes_at_the_version_asked(warehouse):
    table = create_orders(warehouse)
    for version in (3, 11, 14):
        payload = prepare(table, range(10), version=version)
        assert payload[1] == version
        summary = {"version": version, "messages": 4, "data_files": 4, "rows": 10}
        assert pw.summarize(*payload) == summary


def test_doc_Writer_prepare_commit_keeps_the_files_of_a_payload_it_could_not_encode(warehouse):
    table = create_orders(warehouse)
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(3)))
        # Version 4: readable, but no Paimon release writes it.
        with pytest.raises(pw.CodecError, match="4"):
            writer.prepare_commit(4)
        writer.write(rows(range(3, 5)))
        payload = writer.prepare_commit()
    assert pw.summarize(*payload)["rows"] == 5
    table.new_coordinator("job-1").commit_payloads([payload], 1)
    assert sorted_ids(table.read()) == list(range(5))


def test_doc_Writer_close_discards_unprepared_files_and_closes(warehouse):
    table = create_orders(warehouse)
    writer = table.new_writer("job-1")
    writer.write(rows(range(100)))
    payload = writer.prepare_commit()
    writer.write(rows(range(100, 200)))
    assert not writer.closed
    writer.close()
    assert writer.closed
    assert {pathlib.Path(f).name for f in data_files(table)} == file_names(payload)
    with pytest.raises(pw.PaimonWireError, match="the writer is closed"):
        writer.write(rows(range(1)))
    writer.close()  # closing again does nothing


# --- Coordinator ----------------------------------------------------------------------------


def test_doc_Coordinator_commits_once_per_identifier_and_identifiers_increase(warehouse):
    table = create_orders(warehouse)
    coordinator = pw.Coordinator(table, "job-1")
    payload = prepare(table, range(10))
    assert coordinator.commit_payloads([payload], 5).status == "committed"
    assert coordinator.commit_payloads([payload], 5).status == "already_committed"
    assert table.latest_snapshot()["id"] == 1
    with pytest.raises(pw.IdentifierSupersededError):
        coordinator.commit_payloads([prepare(table, range(10, 20))], 4)
    # Per commit user: another job starts its own sequence.
    other_job = write(table, rows(range(20, 30)), user="job-2")
    assert pw.Coordinator(table, "job-2").commit_payloads([other_job], 1).status == "committed"
    assert sorted_ids(table.read()) == list(range(10)) + list(range(20, 30))


def test_doc_Coordinator_new_refuses_compaction_results_by_default(java_compaction, tmp_path):
    table = compaction_table(java_compaction, tmp_path)
    with pytest.raises(pw.ValidationError) as raised:
        pw.Coordinator(table, JAVA_USER).deserialize(*java_compaction.versioned)
    assert raised.value.rule == "compact-increment"


def test_doc_Coordinator_new_allow_compaction_takes_compaction_results(java_compaction, tmp_path):
    table = compaction_table(java_compaction, tmp_path)
    before = table.latest_snapshot()["id"]
    allowing = pw.Coordinator(table, JAVA_USER, allow_compaction=True)
    assert commit_compaction(allowing, java_compaction).status == "committed"
    assert table.latest_snapshot()["id"] > before


def test_doc_Coordinator_new_verify_compaction_commits_an_honest_compaction(
    java_compaction, tmp_path
):
    table = compaction_table(java_compaction, tmp_path)
    verifying = pw.Coordinator(table, JAVA_USER, verify_compaction=True)
    assert commit_compaction(verifying, java_compaction).status == "committed"


def test_doc_Coordinator_new_verify_compaction_refuses_one_whose_rows_differ(
    java_compaction, tmp_path
):
    table = compaction_table(java_compaction, tmp_path)
    before = table.latest_snapshot()
    tamper_a_compaction_result(table, java_compaction)
    with pytest.raises(pw.ValidationError) as raised:
        commit_compaction(pw.Coordinator(table, JAVA_USER, verify_compaction=True), java_compaction)
    assert raised.value.rule == "compact-content"
    assert table.latest_snapshot() == before
    # Trusting compaction by its metadata, the same payload is taken.
    trusting = pw.Coordinator(table, JAVA_USER, allow_compaction=True)
    assert commit_compaction(trusting, java_compaction).status == "committed"


def test_doc_Coordinator_new_verify_compaction_implies_allow_compaction(warehouse):
    coordinator = pw.Coordinator(create_orders(warehouse), "job-1", verify_compaction=True)
    assert (coordinator.allow_compaction, coordinator.verify_compaction) == (True, True)


def test_doc_Coordinator_new_verify_compaction_refuses_tables_it_cannot_verify(warehouse):
    postponed = pk_table(warehouse, bucket="-2", name="db.postponed")
    with pytest.raises(pw.UnsupportedError, match="cannot be verified"):
        pw.Coordinator(postponed, "job-1", verify_compaction=True)
    assert pw.Coordinator(postponed, "job-1", allow_compaction=True).allow_compaction
    verifiable = [
        pk_table(warehouse, bucket="2", name="db.deduplicated"),
        pk_table(warehouse, bucket="2", name="db.partial", **{"merge-engine": "partial-update"}),
        pk_table(warehouse, bucket="2", name="db.aggregated", **{"merge-engine": "aggregation"}),
    ]
    for table in verifiable:
        assert pw.Coordinator(table, "job-1", verify_compaction=True).verify_compaction


def test_doc_Coordinator_new_refuse_compaction_is_ignored_and_contradictions_raise_ValueError(
    warehouse,
):
    table = create_orders(warehouse)
    assert not pw.Coordinator(table, "job-1", refuse_compaction=True).allow_compaction
    for taking in ("allow_compaction", "verify_compaction"):
        with pytest.raises(ValueError, match=f"refuse_compaction=True contradicts {taking}=True"):
            pw.Coordinator(table, "job-1", refuse_compaction=True, **{taking: True})


def test_doc_Coordinator_new_hash_index_budget_refuses_a_commit_whose_checks_need_more(warehouse):
    # 10 keys: 12 bytes each plus the 1 MiB read buffer, above a budget of 1 KiB.
    table = pk_table(warehouse, bucket="-1", name="db.dynamic")
    payload = write(table, rows(range(10)).cast(PK_SCHEMA))
    tiny = pw.Coordinator(table, "job-1", hash_index_budget=1024)
    bound = tiny.deserialize(*payload)  # the budget is charged at the commit, against the table
    with pytest.raises(pw.ValidationError, match="above the HASH index budget of 1024 bytes") as raised:
        tiny.commit(bound, 1)
    assert raised.value.rule == "bounds"
    assert raised.value.field.startswith("new_index_files[")
    assert table.latest_snapshot() is None
    # The default budget commits the same payload.
    outcome = pw.Coordinator(table, "job-1").commit_payloads([payload], 1)
    assert (outcome.status, outcome.rows) == ("committed", 10)
    assert sorted_ids(table.read()) == list(range(10))


def test_doc_Coordinator_new_hash_index_budget_of_0_raises_ValueError(warehouse):
    table = pk_table(warehouse, bucket="-1", name="db.dynamic")
    with pytest.raises(ValueError, match="hash_index_budget=0"):
        pw.Coordinator(table, "job-1", hash_index_budget=0)
    with pytest.raises(ValueError, match="hash_index_budget=0"):
        table.new_coordinator("job-1", hash_index_budget=0)


def test_doc_Coordinator_hash_index_budget_is_the_budget_given_or_the_default(warehouse):
    table = create_orders(warehouse)
    assert pw.Coordinator(table, "job-1").hash_index_budget == pw.DEFAULT_HASH_INDEX_BUDGET
    given = pw.Coordinator(table, "job-1", hash_index_budget=8 << 20)
    assert given.hash_index_budget == 8 << 20
    # A table without HASH indexes ignores it: a tiny budget commits.
    tiny = pw.Coordinator(table, "job-1", hash_index_budget=1)
    assert tiny.commit_payloads([prepare(table, range(10))], 1).status == "committed"


def test_doc_Coordinator_allow_compaction_is_set_by_allow_or_verify_compaction(warehouse):
    table = create_orders(warehouse)
    assert not pw.Coordinator(table, "job-1").allow_compaction
    assert pw.Coordinator(table, "job-1", allow_compaction=True).allow_compaction
    assert pw.Coordinator(table, "job-1", verify_compaction=True).allow_compaction


def test_doc_Coordinator_verify_compaction_is_set_by_verify_compaction_only(warehouse):
    table = create_orders(warehouse)
    assert not pw.Coordinator(table, "job-1").verify_compaction
    assert not pw.Coordinator(table, "job-1", allow_compaction=True).verify_compaction
    assert pw.Coordinator(table, "job-1", verify_compaction=True).verify_compaction


def test_doc_Coordinator_outcome_horizon_s_is_0_on_a_local_file_system_or_the_horizon_given(
    warehouse,
):
    table = create_orders(warehouse)
    assert pw.Coordinator(table, "job-1").outcome_horizon_s == 0
    assert pw.Coordinator(table, "job-1", outcome_horizon_s=12.5).outcome_horizon_s == 12.5
    # A local table has no request that can land late: abort deletes at once.
    coordinator = pw.Coordinator(table, "job-1")
    bound = coordinator.deserialize(*prepare(table, range(10)))
    assert coordinator.abort(bound)["deleted"]


def exported_exception_classes() -> list[type]:
    return [
        value
        for name in pw.__all__
        if isinstance(value := getattr(pw, name), type) and issubclass(value, BaseException)
    ]


def test_doc_PaimonWireError_is_the_base_class_of_every_error_paimon_wire_raises():
    classes = exported_exception_classes()
    assert {cls.__name__ for cls in classes} == {n for n in pw.__all__ if n.endswith("Error")}
    for cls in classes:
        assert issubclass(cls, pw.PaimonWireError), cls


def test_doc_PaimonWireError_outcome_unknown_is_true_only_on_CommitOutcomeUnknownError():
    for cls in exported_exception_classes():
        expected = issubclass(cls, pw.CommitOutcomeUnknownError)
        assert cls.outcome_unknown is expected, cls
        assert cls("message").outcome_unknown is expected, cls


def test_doc_Coordinator_deserialize_decodes_and_validates_against_the_bound_table(warehouse):
    two, payload = bucket_refused(warehouse)
    four = pw.open_table(warehouse, "db.four")
    bound = four.new_coordinator("job-1").deserialize(*payload)
    assert (len(bound), bound.reported_row_count) == (len(pw.inspect(*payload)), 100)
    with pytest.raises(pw.ValidationError, match="table db.two is fixed"):
        two.new_coordinator("job-1").deserialize(*payload)


def test_doc_Coordinator_deserialize_without_version_takes_an_envelope(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10))
    coordinator = table.new_coordinator("job-1")
    framed = coordinator.deserialize(pw.wrap_envelope(payload, version))
    assert framed.to_dicts() == coordinator.deserialize(payload, version).to_dicts()
    with pytest.raises(pw.EnvelopeError):
        coordinator.deserialize(payload)


def test_doc_Coordinator_deserialize_without_version_takes_a_dpcm_frame(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10))
    coordinator = table.new_coordinator("job-1")
    framed = pw.frame_dpcm(payload, version)
    expected = coordinator.deserialize(payload, version).to_dicts()
    assert coordinator.deserialize(framed).to_dicts() == expected
    assert coordinator.deserialize(framed, version).to_dicts() == expected
    # Delivered twice, as a retried RPC would: the same files, committed once.
    outcome = coordinator.commit_payloads([framed, framed, (framed, version)], 1)
    assert outcome.rows == 10
    assert sorted_ids(table.read()) == list(range(10))


def test_doc_Coordinator_deserialize_a_dpcm_frame_given_with_version_must_carry_it(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10))
    framed = pw.frame_dpcm(payload, version)
    coordinator = table.new_coordinator("job-1")
    with pytest.raises(pw.FrameError, match="but the payload was sent as version 13"):
        coordinator.deserialize(framed, 13)


def test_doc_FrameError_raised_for_malformed_frames_and_version_disagreements(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10))
    framed = pw.frame_dpcm(payload, version)
    cases = [
        (framed[:-1], "truncated"),
        (framed + b"\x00", "one frame is one payload"),
        (framed[:4] + (99).to_bytes(4, "big") + framed[8:], "serializer version 99"),
        (framed[:8] + (-1).to_bytes(4, "big", signed=True) + framed[12:], "body of -1 bytes"),
    ]
    coordinator = table.new_coordinator("job-1")
    for bad, said in cases:
        with pytest.raises(pw.FrameError, match=said):
            pw.unframe_dpcm(bad)
        with pytest.raises(pw.FrameError, match=said):
            coordinator.deserialize(bad)
    with pytest.raises(pw.FrameError, match="expected magic"):
        pw.unframe_dpcm(payload)


def test_doc_FrameError_offset_is_where_the_wrong_field_is(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    framed = pw.frame_dpcm(payload, version)
    cases = {
        0: b"XPCM" + framed[4:],  # magic
        4: framed[:4] + (0).to_bytes(4, "big") + framed[8:],  # serializer version
        8: framed[:8] + (-5).to_bytes(4, "big", signed=True) + framed[12:],  # length
        12 + len(payload): framed + b"\x01",  # the first byte after the body
    }
    for offset, bad in cases.items():
        with pytest.raises(pw.FrameError) as refused:
            pw.unframe_dpcm(bad)
        assert refused.value.offset == offset, (offset, str(refused.value))


def written_jobs(table: pw.Table, jobs: int, first: int = 1, per_job: int = 40) -> None:
    """`jobs` committed jobs (identifiers from `first` on), each writing ids 0..per_job (one
    file per partition)."""
    for job in range(first, first + jobs):
        payload = prepare(table, range(per_job))
        table.new_coordinator("job-1").commit_payloads([payload], identifier=job)


def compact(table: pw.Table, full: bool = False) -> pw.CommitOutcome | None:
    """Plans, runs every task here and commits once with verified compaction."""
    tasks = table.plan_compaction(full)
    if not tasks:
        return None
    coordinator = pw.Coordinator(table, "compactor", verify_compaction=True)
    payloads = [task.run(table) for task in tasks]
    return coordinator.commit_payloads(payloads, identifier=tasks[0].snapshot_id)


def test_doc_Table_plan_compaction_one_task_per_bucket_to_compact(warehouse):
    table = create_orders(warehouse)
    written_jobs(table, 4)
    assert table.plan_compaction() == [], "four files a bucket, compaction.min.file-num is 5"
    written_jobs(table, 1, first=5)
    tasks = table.plan_compaction()
    assert len(tasks) == 4, "four partitions, one bucket each"
    assert all(task.input_files == 5 for task in tasks)


def test_doc_Table_plan_compaction_full_compacts_every_bucket_not_compacted(warehouse):
    table = create_orders(warehouse)
    written_jobs(table, 2)
    assert table.plan_compaction() == []
    assert [t.input_files for t in table.plan_compaction(full=True)] == [2, 2, 2, 2]
    compact(table, full=True)
    assert table.plan_compaction(full=True) == [], "one file a bucket"


def test_doc_Table_plan_compaction_primary_key_tables_merge_every_run_into_the_highest_level(warehouse):
    table = pk_table(warehouse, bucket="2")
    for job in range(1, 6):
        data = pa.table(
            {
                "id": pa.array(range(50), pa.int64()),
                "region": [f"region-{i % 2}" for i in range(50)],
                "amount": [float(job)] * 50,
                "note": [f"job {job}"] * 50,
            },
            schema=PK_SCHEMA,
        )
        table.new_coordinator("job-1").commit_payloads([write(table, data)], identifier=job)
    before = sorted(table.read().to_pylist(), key=lambda r: (r["region"], r["id"]))
    tasks = table.plan_compaction()
    assert tasks and all(t.output_level == 5 and t.input_files == 5 for t in tasks)
    assert compact(table).status == "committed"
    after = sorted(table.read().to_pylist(), key=lambda r: (r["region"], r["id"]))
    assert after == before and {r["note"] for r in after} == {"job 5"}
    # pypaimon, an independent reader, reads the compacted table the same.
    by_pypaimon = read_with_pypaimon(warehouse, "db.users").to_pylist()
    assert sorted(by_pypaimon, key=lambda r: (r["region"], r["id"])) == before
    assert table.plan_compaction(full=True) == []


def test_doc_Table_plan_compaction_refuses_tables_it_cannot_compact_naming_why(warehouse):
    table = pk_table(warehouse, **{"changelog-producer": "lookup"})
    with pytest.raises(pw.UnsupportedError, match="changelog-producer"):
        table.plan_compaction()


def test_doc_CompactionTask_pickles_as_its_bytes(warehouse):
    table = create_orders(warehouse)
    written_jobs(table, 2)
    task = table.plan_compaction(full=True)[0]
    back = pickle.loads(pickle.dumps(task))
    assert back.to_bytes() == task.to_bytes()
    assert (back.bucket, back.snapshot_id, back.input_files) == (task.bucket, task.snapshot_id, 2)


def test_doc_CompactionTask_new_takes_to_bytes_and_refuses_other_bytes(warehouse):
    table = create_orders(warehouse)
    written_jobs(table, 2)
    task = table.plan_compaction(full=True)[0]
    assert pw.CompactionTask(task.to_bytes()).to_bytes() == task.to_bytes()
    with pytest.raises(ValueError, match="not a compaction task"):
        pw.CompactionTask(b"{}")


def test_doc_CompactionTask_bucket_is_the_bucket(warehouse):
    table = pk_table(warehouse, bucket="2")
    data = rows(range(40)).cast(PK_SCHEMA)
    table.new_coordinator("job-1").commit_payloads([write(table, data)], identifier=1)
    buckets = sorted({t.bucket for t in table.plan_compaction(full=True)})
    assert buckets == [0, 1]


def test_doc_CompactionTask_snapshot_id_is_the_planned_snapshot(warehouse):
    table = create_orders(warehouse)
    written_jobs(table, 2)
    assert {t.snapshot_id for t in table.plan_compaction(full=True)} == {2}


def test_doc_CompactionTask_input_files_counts_the_files_it_rewrites(warehouse):
    table = create_orders(warehouse)
    written_jobs(table, 3)
    assert [t.input_files for t in table.plan_compaction(full=True)] == [3] * 4


def test_doc_CompactionTask_input_bytes_sums_their_sizes(warehouse):
    table = create_orders(warehouse)
    written_jobs(table, 2)
    tasks = table.plan_compaction(full=True)
    files = sum(f.stat().st_size for f in pathlib.Path(table.location.removeprefix("file:")).rglob("*.parquet"))
    assert sum(t.input_bytes for t in tasks) == files


def test_doc_CompactionTask_output_level_is_0_for_append_and_the_highest_for_primary_keys(warehouse):
    append = create_orders(warehouse)
    written_jobs(append, 2)
    assert {t.output_level for t in append.plan_compaction(full=True)} == {0}
    keyed = pk_table(warehouse, bucket="1", **{"num-levels": "4"})
    data = rows(range(10)).cast(PK_SCHEMA)
    keyed.new_coordinator("job-1").commit_payloads([write(keyed, data)], identifier=1)
    assert {t.output_level for t in keyed.plan_compaction(full=True)} == {3}


def test_doc_CompactionTask_to_bytes_is_what_new_takes(warehouse):
    table = create_orders(warehouse)
    written_jobs(table, 2)
    task = table.plan_compaction(full=True)[0]
    assert type(task.to_bytes()) is bytes
    assert pw.CompactionTask(memoryview(task.to_bytes())).input_files == 2


def test_doc_CompactionTask_run_returns_a_payload_a_verifying_coordinator_commits(warehouse):
    table = create_orders(warehouse)
    written_jobs(table, 6)
    before = sorted(table.read().column("id").to_pylist())
    tasks = table.plan_compaction()
    payload, version = tasks[0].run(table)
    assert version == pw.CURRENT_SERIALIZER_VERSION
    (message,) = pw.inspect(payload, version)
    assert len(message["compact_before"]) == 6 and len(message["compact_after"]) == 1
    outcome = compact(table)
    assert outcome.status == "committed"
    assert sorted(table.read().column("id").to_pylist()) == before
    assert table.latest_snapshot()["commit_kind"].upper() == "COMPACT"


def test_doc_Coordinator_merge_keeps_identical_duplicates_once(warehouse):
    table = create_orders(warehouse)
    payload = prepare(table, range(100))
    coordinator = table.new_coordinator("job-1")
    once = coordinator.deserialize(*payload)
    twice = coordinator.merge([once, coordinator.deserialize(*payload)])
    assert (len(twice), twice.data_file_count, twice.reported_row_count) == (
        len(once), once.data_file_count, 100,
    )  # fmt: skip
    coordinator.commit(twice, 1)
    assert sorted_ids(table.read()) == list(range(100))


def with_file_size_changed(payload: tuple[bytes, int]) -> tuple[bytes, int]:
    """The payload with the first new file's size one byte larger (a stale worker's claim
    to the same file)."""
    data, version = payload
    messages = pw.inspect(data, version)
    file = messages[0]["new_files"][0]
    # The size is a little-endian long in the fixed part of the file's binary row, which
    # comes before the row's variable part, which starts with the file's name.
    name_at = data.index(file["file_name"].encode())
    size_at = data.rindex(struct.pack("<q", file["file_size"]), 0, name_at)
    changed = data[:size_at] + struct.pack("<q", file["file_size"] + 1) + data[size_at + 8 :]
    file["file_size"] += 1
    assert pw.inspect(changed, version) == messages  # that one field, nothing else
    return changed, version


def test_doc_Coordinator_merge_refuses_conflicting_duplicates(warehouse):
    table = create_orders(warehouse)
    payload = prepare(table, range(10))
    coordinator = table.new_coordinator("job-1")
    stale = with_file_size_changed(payload)
    parts = [coordinator.deserialize(*payload), coordinator.deserialize(*stale)]
    with pytest.raises(pw.MergeConflictError, match="different file metadata"):
        coordinator.merge(parts)


def test_doc_Coordinator_commit_commits_once_under_the_identifier(warehouse):
    table = create_orders(warehouse)
    coordinator = table.new_coordinator("job-1")
    messages = coordinator.deserialize(*prepare(table, range(10)))
    first = coordinator.commit(messages, 9)
    again = coordinator.commit(messages, 9)  # as after a PaimonError of unknown outcome
    assert (first.status, again.status) == ("committed", "already_committed")
    assert first.snapshot_id == again.snapshot_id == table.latest_snapshot()["id"] == 1
    assert table.latest_snapshot()["commit_identifier"] == 9
    assert sorted_ids(table.read()) == list(range(10))


def test_doc_Coordinator_commit_payloads_deserializes_merges_and_commits_once(warehouse):
    table = create_orders(warehouse)
    coordinator = table.new_coordinator("job-1")
    a, version = prepare(table, range(0, 50))
    b = prepare(table, range(50, 100))
    payloads = [(a, version), pw.wrap_envelope(*b), (a, version)]  # a retried worker sends a twice
    outcome = coordinator.commit_payloads(payloads, 1)
    assert (outcome.status, outcome.rows) == ("committed", 100)
    assert coordinator.commit_payloads(payloads, 1).status == "already_committed"
    assert table.latest_snapshot()["id"] == 1
    assert sorted_ids(table.read()) == list(range(100))


def test_doc_Coordinator_abort_deletes_only_files_no_snapshot_references(warehouse):
    table = create_orders(warehouse)
    coordinator = table.new_coordinator("job-1")
    committed = prepare(table, range(10))
    coordinator.commit_payloads([committed], 1)
    abandoned = prepare(table, range(10, 20))

    report = coordinator.abort(coordinator.deserialize(*abandoned))
    assert (sorted(report["deleted"]), report["skipped"]) == (sorted(file_names(abandoned)), [])
    kept = coordinator.abort(coordinator.deserialize(*committed))
    assert kept["deleted"] == []
    assert {name for name, _ in kept["skipped"]} == file_names(committed)
    assert all(isinstance(reason, str) and reason for _, reason in kept["skipped"])
    assert {pathlib.Path(f).name for f in data_files(table)} == file_names(committed)
    assert sorted_ids(table.read()) == list(range(10))


def test_doc_Coordinator_commit_status_is_already_committed_or_none(warehouse):
    table = create_orders(warehouse)
    coordinator = table.new_coordinator("job-1")
    assert coordinator.commit_status(1) is None
    coordinator.commit_payloads([prepare(table, range(10))], 1)
    status = coordinator.commit_status(1)
    assert (status.status, status.snapshot_id) == ("already_committed", 1)
    assert coordinator.commit_status(2) is None
    assert table.latest_snapshot()["id"] == 1  # asking commits nothing


# --- BoundMessages and CommitOutcome --------------------------------------------------------


def test_doc_BoundMessages_are_bound_to_one_coordinator(warehouse):
    table = create_orders(warehouse)
    payload = prepare(table, range(10))
    bound = table.new_coordinator("job-1").deserialize(*payload)
    other = table.new_coordinator("job-1")
    with pytest.raises(pw.ForeignMessagesError):
        other.commit(bound, 1)
    with pytest.raises(pw.ForeignMessagesError):
        other.merge([bound])
    assert table.latest_snapshot() is None


def test_doc_BoundMessages_to_dicts_is_the_schema_of_inspect(warehouse):
    table = create_orders(warehouse)
    payload = prepare(table, range(100))
    assert table.new_coordinator("job-1").deserialize(*payload).to_dicts() == pw.inspect(*payload)


def test_doc_CommitOutcome_snapshot_id_is_the_snapshot_committed_or_found(warehouse):
    table = create_orders(warehouse)
    coordinator = table.new_coordinator("job-1")
    payload = prepare(table, range(10))
    assert coordinator.commit_payloads([payload], 1).snapshot_id == 1
    assert coordinator.commit_payloads([payload], 1).snapshot_id == 1  # found
    empty = coordinator.commit_payloads([write(table, rows(range(0)))], 2)
    assert (empty.status, empty.snapshot_id) == ("nothing_to_commit", None)


def test_doc_CommitOutcome_rows_are_the_reported_rows_of_the_new_files_handed_in(warehouse):
    table = create_orders(warehouse)
    coordinator = table.new_coordinator("job-1")
    a, b = prepare(table, range(0, 60)), prepare(table, range(60, 100))
    assert coordinator.commit_payloads([a, b, a], 1).rows == 100  # a merged once
    assert coordinator.commit_payloads([b], 1).rows == 40  # handed in, though already committed
    assert coordinator.commit_status(1).rows == 0  # nothing handed in


def test_doc_CommitOutcome_files_count_the_new_data_files_handed_in(warehouse):
    table = create_orders(warehouse)
    payloads = [prepare(table, range(0, 60)), prepare(table, range(60, 100))]
    outcome = table.new_coordinator("job-1").commit_payloads(payloads, 1)
    handed_in = sum(pw.summarize(*p)["data_files"] for p in payloads)
    assert outcome.files == handed_in == len(data_files(table))


# --- exceptions with attributes -------------------------------------------------------------


def test_doc_CodecError_raised_for_bytes_that_do_not_decode_or_messages_that_cannot_be_encoded(
    warehouse,
):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10))
    with pytest.raises(pw.CodecError, match="truncated"):
        pw.inspect(payload[:-3], version)
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(3)))
        with pytest.raises(pw.CodecError, match="cannot be written without losing data"):
            writer.prepare_commit(2)  # version 2 has no file_source


def test_doc_CodecError_version_is_the_version_read_or_written(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10), version=11)
    with pytest.raises(pw.CodecError) as decoding:
        pw.inspect(payload[:-3], version)
    assert decoding.value.version == 11
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(3)))
        with pytest.raises(pw.CodecError) as encoding:
            writer.prepare_commit(2)
    assert encoding.value.version == 2
    with pytest.raises(pw.CodecError) as unknown:
        pw.inspect(payload, 99)
    assert unknown.value.version is None  # not a version at all


def test_doc_CodecError_offset_is_where_the_bad_field_starts_when_decoding(warehouse):
    table = create_orders(warehouse)
    payload, version = prepare(table, range(10))
    with pytest.raises(pw.CodecError, match="trailing bytes") as decoding:
        pw.inspect(payload + b"\x00\x00", version)
    assert decoding.value.offset == len(payload)
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(3)))
        with pytest.raises(pw.CodecError) as encoding:
            writer.prepare_commit(2)
    assert encoding.value.offset is None


def test_doc_CodecError_field_is_the_field_path(warehouse):
    table = create_orders(warehouse)
    with table.new_writer("job-1") as writer:
        writer.write(rows(range(3)))
        with pytest.raises(pw.CodecError) as encoding:
            writer.prepare_commit(2)
    assert encoding.value.field == "messages[0].new_files[0].file_source"
    payload, version = prepare(table, range(10))
    with pytest.raises(pw.CodecError) as decoding:
        pw.inspect(payload[:-3], version)
    assert re.fullmatch(r"messages\[3\]\.\w+", decoding.value.field), decoding.value.field


def test_doc_EnvelopeError_raised_for_truncated_corrupted_or_unknown_envelopes(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    framed = pw.wrap_envelope(payload, version)
    corrupted = framed[:-1] + bytes([framed[-1] ^ 0xFF])
    newer_format = framed[:4] + (2).to_bytes(2, "big") + framed[6:]
    cases = [(framed[:-1], "truncated"), (corrupted, "CRC32C"), (newer_format, "format version 2")]
    for bad, said in cases:
        with pytest.raises(pw.EnvelopeError, match=said):
            pw.unwrap_envelope(bad)


def test_doc_EnvelopeError_offset_is_where_the_wrong_field_is(warehouse):
    payload, version = prepare(create_orders(warehouse), range(10))
    framed = pw.wrap_envelope(payload, version)

    def at(offset: int, value: bytes) -> bytes:
        return framed[:offset] + value + framed[offset + len(value):]

    cases = {
        0: at(0, b"XWIR"),  # magic
        4: at(4, (9).to_bytes(2, "big")),  # envelope format version
        6: at(6, (1).to_bytes(2, "big")),  # reserved
        8: at(8, (99).to_bytes(4, "big")),  # serializer version
        24: at(24, bytes([framed[24] ^ 0xFF])),  # the payload its CRC32C does not match
        10: framed[:10],  # truncated header: where the bytes end
    }
    for offset, bad in cases.items():
        with pytest.raises(pw.EnvelopeError) as raised:
            pw.unwrap_envelope(bad)
        assert raised.value.offset == offset, raised.value


def bucket_refused(tmp_warehouse: str) -> tuple[pw.Table, tuple[bytes, int]]:
    """A table of 2 buckets and a payload of a table of 4 (its buckets 2 and 3 are refused)."""
    def fixed(name: str, buckets: str) -> pw.Table:
        options = {"bucket": buckets, "bucket-key": "id"}
        return pw.create_table(tmp_warehouse, name, SCHEMA, options=options)

    four, two = fixed("db.four", "4"), fixed("db.two", "2")
    return two, prepare(four, range(100))


def test_doc_ValidationError_nothing_was_committed(warehouse):
    two, refused = bucket_refused(warehouse)
    good = prepare(two, range(10))
    with pytest.raises(pw.ValidationError):
        two.new_coordinator("job-1").commit_payloads([good, refused], 1)
    assert two.latest_snapshot() is None
    assert data_files(two)  # the good payload's files are there, not committed


def test_doc_ValidationError_message_index_is_the_0_based_index_in_its_payload(warehouse):
    two, refused = bucket_refused(warehouse)
    first_bad = next(i for i, m in enumerate(pw.inspect(*refused)) if m["bucket"] >= 2)
    with pytest.raises(pw.ValidationError) as raised:
        two.new_coordinator("job-1").deserialize(*refused)
    assert raised.value.message_index == first_bad


def test_doc_ValidationError_field_is_the_path_of_the_offending_field(warehouse):
    two, refused = bucket_refused(warehouse)
    with pytest.raises(pw.ValidationError) as raised:
        two.new_coordinator("job-1").deserialize(*refused)
    assert raised.value.field == "bucket"


def test_doc_ValidationError_rule_is_the_rule_broken(warehouse):
    two, refused = bucket_refused(warehouse)
    with pytest.raises(pw.ValidationError) as raised:
        two.new_coordinator("job-1").deserialize(*refused)
    assert raised.value.rule == "bucket"


def test_doc_SharedBucketError_raised_for_two_payloads_in_one_bucket_of_a_primary_key_table(
    warehouse,
):
    table = pk_table(warehouse, bucket="1")
    payloads = [write(table, rows([0]).cast(PK_SCHEMA)), write(table, rows([4]).cast(PK_SCHEMA))]
    with pytest.raises(pw.SharedBucketError):
        table.new_coordinator("job-1").commit_payloads(payloads, 1)
    assert table.latest_snapshot() is None
    # An append table takes many writers of one bucket.
    options = {"bucket": "1", "bucket-key": "id"}
    append = pw.create_table(warehouse, "db.append", SCHEMA, options=options)
    payloads = [write(append, rows([0])), write(append, rows([4]))]
    assert append.new_coordinator("job-1").commit_payloads(payloads, 1).status == "committed"


def shared_bucket_error(table: pw.Table, *ids: list[int]) -> pw.SharedBucketError:
    """The error committing one payload per list of ids (rows of 2 partitions) raises."""
    payloads = [write(table, rows(i, partitions=2).cast(table.schema)) for i in ids]
    with pytest.raises(pw.SharedBucketError) as raised:
        table.new_coordinator("job-1").commit_payloads(payloads, 1)
    return raised.value


def test_doc_SharedBucketError_partition_is_key_value_or_empty(warehouse):
    partitioned = pk_table(warehouse, bucket="1")
    assert shared_bucket_error(partitioned, [1], [3]).partition == "region='region-1'"
    unpartitioned = pw.create_table(
        warehouse, "db.flat", PK_SCHEMA, primary_keys=["id"], options={"bucket": "1"}
    )
    assert shared_bucket_error(unpartitioned, [1], [3]).partition == ""


def test_doc_SharedBucketError_bucket_is_the_bucket_both_payloads_write(warehouse):
    table = pk_table(warehouse, bucket="4")
    candidates = rows(range(0, 40, 2), partitions=2).cast(PK_SCHEMA)  # all in region-0
    buckets = table.bucket_ids(candidates).to_pylist()
    ids = candidates.column("id").to_pylist()
    bucket = buckets[0]
    same = [i for i, b in zip(ids, buckets) if b == bucket][:2]
    assert len(same) == 2
    assert shared_bucket_error(table, [same[0]], [same[1]]).bucket == bucket


def test_doc_SharedBucketError_first_payload_is_the_position_of_the_first(warehouse):
    table = pk_table(warehouse, bucket="1")
    # Payloads 0 and 2 write region-0, payload 1 region-1.
    assert shared_bucket_error(table, [0, 2], [1, 3], [4]).first_payload == 0
    assert shared_bucket_error(table, [1], [0, 2], [4]).first_payload == 1


def test_doc_SharedBucketError_second_payload_is_the_position_of_the_other(warehouse):
    table = pk_table(warehouse, bucket="1")
    assert shared_bucket_error(table, [0, 2], [1, 3], [4]).second_payload == 2
    # Positions in the input of Coordinator.merge too.
    coordinator = table.new_coordinator("job-1")
    payloads = [write(table, rows(i, partitions=2).cast(PK_SCHEMA)) for i in ([1], [0], [3])]
    parts = [coordinator.deserialize(*payload) for payload in payloads]
    with pytest.raises(pw.SharedBucketError) as raised:
        coordinator.merge(parts)
    assert (raised.value.first_payload, raised.value.second_payload) == (0, 2)


# --- compaction results from a real Java writer ---------------------------------------------

JAVA_HARNESS = pathlib.Path(__file__).resolve().parents[3] / "compat" / "java" / "harness.sh"
JAVA_RELEASE = "2.0.0"
JAVA_TABLE = "db.compacting"
JAVA_USER = "paimon-wire-py-docs"


@dataclass
class JavaCompaction:
    """A warehouse whose table a compacting Java writer wrote (every round committed), and
    the next round's payload, which carries compaction results and is not committed."""

    warehouse: pathlib.Path
    payload: bytes
    version: int
    identifier: int

    @property
    def versioned(self) -> tuple[bytes, int]:
        return self.payload, self.version


def java(*args: str) -> str:
    """Runs one command of the Java 2.0 harness and returns its stdout."""
    done = subprocess.run(
        [str(JAVA_HARNESS), JAVA_RELEASE, *args], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"harness {args[0]} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def java_compaction(tmp_path_factory) -> JavaCompaction:
    root = tmp_path_factory.mktemp("java-compaction")
    warehouse = root / "warehouse"
    java("create-table", "--warehouse", str(warehouse), "--table", JAVA_TABLE, "--kind", "pk")
    coordinator = pw.open_table(str(warehouse), JAVA_TABLE).new_coordinator(JAVA_USER)
    # The harness's compacting writer compacts from its third or fourth round on.
    for round_ in range(1, 9):
        path = root / f"round-{round_}.bin"
        out = java(
            "write", "--warehouse", str(warehouse), "--table", JAVA_TABLE,
            "--commit-user", JAVA_USER, "--identifier", str(round_),
            "--rows", f"0:{20 + 10 * round_}", "--value-prefix", f"r{round_}_",
            "--compact", "true", "--out", str(path),
        )  # fmt: skip
        compaction_files = re.search(r"(\d+) compaction file\(s\)", out)
        version = re.search(r"version (\d+)", out)
        assert compaction_files and version, out
        payload = path.read_bytes()
        if int(compaction_files.group(1)) > 0:
            return JavaCompaction(warehouse, payload, int(version.group(1)), round_)
        coordinator.commit_payloads([(payload, int(version.group(1)))], round_)
    pytest.fail("no round of the Java writer compacted")


def compaction_table(java_compaction: JavaCompaction, tmp_path: pathlib.Path) -> pw.Table:
    """A copy of the Java writer's table, for one test to commit to or tamper with."""
    copy = tmp_path / "java-warehouse"
    shutil.copytree(java_compaction.warehouse, copy)
    return pw.open_table(str(copy), JAVA_TABLE)


def commit_compaction(coordinator: pw.Coordinator, compaction: JavaCompaction) -> pw.CommitOutcome:
    return coordinator.commit_payloads([compaction.versioned], compaction.identifier)


def tamper_a_compaction_result(table: pw.Table, java_compaction: JavaCompaction) -> None:
    """Changes one value in the first compaction result's data file, keeping the file's size
    (zero bytes before the Parquet footer make up the difference): the metadata the payload
    carries still matches, only reading the rows tells."""
    messages = pw.inspect(java_compaction.payload, java_compaction.version)
    result = next(m for m in messages if m["compact_after"])["compact_after"][0]
    path = next(pathlib.Path(table.location.removeprefix("file:")).rglob(result["file_name"]))
    data = pq.ParquetFile(path).read()
    values = data.column("v").to_pylist()
    values[0] = values[0][:-1] + ("X" if values[0][-1] != "X" else "Y")
    field = data.schema.field("v")
    column = data.schema.get_field_index("v")
    data = data.set_column(column, field, pa.array(values, field.type))
    pq.write_table(data, path, compression="zstd", store_schema=False)
    written = path.read_bytes()
    missing = result["file_size"] - len(written)
    assert missing >= 0, "the rewritten file is larger than the original"
    footer_start = len(written) - 8 - int.from_bytes(written[-8:-4], "little")
    path.write_bytes(written[:footer_start] + bytes(missing) + written[footer_start:])
    assert pq.ParquetFile(path).read().column("v").to_pylist() == values


# --- the map from docstrings to tests -------------------------------------------------------

# Documented items whose docstrings state no behavior a test could check (the reason beside
# each). Anything else documented in the stubs needs a test_doc_<Item>_... test.
UNTESTABLE = {
    # "What a commit did.": a title; the claims are in the docstrings of its properties.
    "CommitOutcome": "title only",
}


def _is_docstring(node: ast.stmt | None) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _documented(body: list[ast.stmt]) -> list[tuple[str, ast.stmt]]:
    """(name, node) of every function with a docstring and every annotated name followed by
    a docstring (the attribute docstring convention) in `body`."""
    found = []
    for node, following in zip(body, [*body[1:], None]):
        if isinstance(node, ast.FunctionDef) and ast.get_docstring(node):
            found.append((node.name, node))
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and _is_docstring(following)
        ):
            found.append((node.target.id, node))
    return found


def documented_items() -> set[str]:
    """Every documented public item of the stubs, named as its doc tests are: a function or
    constant by its name; a class with a docstring by its name (the claims of the class
    docstring); `<Class>_<member>` for each documented method, property or attribute;
    `<Class>_new` for a documented `__new__` (the constructor's keywords are documented
    there). Other dunder methods are left out, and so are exception classes without
    documented members (their docstrings say when they are raised; the tests of the
    functions raising them check that)."""
    tree = ast.parse(STUBS.read_text())
    exceptions = {"Exception", "BaseException"}
    items = {name for name, _ in _documented(tree.body) if not name.startswith("_")}
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.name.startswith("_"):
            continue
        bases = {base.id for base in cls.bases if isinstance(base, ast.Name)}
        is_exception = bool(bases & exceptions)
        if is_exception:
            exceptions.add(cls.name)
        members = set()
        for name, _ in _documented(cls.body):
            if name == "__new__":
                members.add("new")
            elif not name.startswith("_"):
                members.add(name)
        if is_exception and not members:
            continue
        if ast.get_docstring(cls):
            items.add(cls.name)
        items |= {f"{cls.name}_{member}" for member in members}
    return items


def doc_tests() -> list[str]:
    return [name for name in globals() if name.startswith("test_doc_")]


def item_of(test: str, items: set[str]) -> str | None:
    """The item a doc test checks: the longest item its name starts with (followed by `_`),
    so `test_doc_Coordinator_commit_payloads_...` is `Coordinator.commit_payloads`, not
    `Coordinator.commit`."""
    claim = test.removeprefix("test_doc_")
    return max((item for item in items if claim.startswith(item + "_")), key=len, default=None)


def test_the_stub_parser_finds_the_documented_items():
    items = documented_items()
    for expected in (
        "CURRENT_SERIALIZER_VERSION", "open_table", "Table", "Table_field_names", "Writer_write",
        "Coordinator_new", "Coordinator_commit_payloads", "CommitOutcome_rows", "CodecError",
        "CodecError_offset", "SharedBucketError_second_payload", "PaimonWireError",
        "PaimonWireError_outcome_unknown",
    ):  # fmt: skip
        assert expected in items, expected
    for left_out in (
        "__version__", "_Payload", "Writer___enter__", "Writer_closed", "Table_partition_keys",
        "CommitOutcome_new", "TableNotFoundError", "BoundMessages___len__",
    ):  # fmt: skip
        assert left_out not in items, left_out


def test_every_documented_stub_item_has_a_doc_test():
    items = documented_items()
    assert set(UNTESTABLE) <= items, "exclusions naming no documented item of the stubs"
    covered = {item_of(test, items) for test in doc_tests()}
    assert not covered & set(UNTESTABLE), "an excluded item has a doc test: drop its exclusion"
    missing = sorted(items - covered - set(UNTESTABLE))
    assert not missing, (
        "documented in _native.pyi without a test_doc_<Item>_<claim> test in "
        f"{pathlib.Path(__file__).name}: {', '.join(missing)}"
    )


def test_every_doc_test_names_a_documented_stub_item():
    items = documented_items()
    orphans = sorted(test for test in doc_tests() if item_of(test, items) is None)
    assert not orphans, f"doc tests naming no documented item of _native.pyi: {', '.join(orphans)}"
