"""The Ray Data sink on a local Ray cluster (one session for the module: Ray starts slowly)."""

from __future__ import annotations

import logging
import os
import pathlib
import pickle
import re
import struct
import time
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pytest
import ray
from ray.data.datasource.datasink import WriteResult
from conftest import (
    RecordingSink,
    create_orders,
    data_files,
    pypaimon_files,
    read_with_pypaimon,
    rows,
    sorted_ids,
)

import paimon_wire as pw
from paimon_wire.ray import PaimonDatasink

ROWS = 20_000
TASKS = 6


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        configure_logging=False,
        log_to_driver=False,
    )
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    # Ray Data reserves half the CPUs per operator by default, which on two CPUs runs the
    # write tasks one at a time; the tests want them side by side.
    context.op_resource_reservation_enabled = False
    yield
    ray.shutdown()


def dataset_of(ids: range, blocks: int) -> ray.data.Dataset:
    step = -(-len(ids) // blocks)
    parts = [rows(ids[i : i + step], worker=i // step) for i in range(0, len(ids), step)]
    return ray.data.from_arrow(parts)


def test_workers_write_a_partitioned_table_committed_once(warehouse):
    table = create_orders(warehouse)
    sink = RecordingSink(warehouse, "db.orders")

    dataset_of(range(ROWS), TASKS).write_datasink(sink, concurrency=2)

    assert (sink.outcome.status, sink.outcome.snapshot_id) == ("committed", 1)
    returns = sink.write_result.write_returns
    assert len(returns) == TASKS
    assert len({pid for _, _, pid in returns}) >= 2, "several worker processes wrote"
    snapshot = table.latest_snapshot()
    assert snapshot["id"] == 1
    assert snapshot["commit_user"] == sink.commit_user
    assert snapshot["commit_identifier"] == sink.commit_identifier
    assert snapshot["total_record_count"] == ROWS
    # Every row exactly once, by two independent readers.
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(ROWS))
    assert sorted_ids(table.read()) == list(range(ROWS))
    partitions = {partition for partition, *_ in pypaimon_files(warehouse)}
    assert partitions == {(f"region-{p}",) for p in range(4)}
    # No file but the committed ones (no orphans from retried attempts).
    committed = sorted(
        f"region={partition[0]}/bucket-{bucket}/{name}"
        for partition, bucket, name, _ in pypaimon_files(warehouse)
    )
    assert data_files(table) == committed

    # The driver committing the same job again commits nothing.
    first_identifier = sink.commit_identifier
    sink.on_write_complete(sink.write_result)
    assert (sink.outcome.status, sink.outcome.snapshot_id) == ("already_committed", 1)
    assert sink.commit_identifier == first_identifier
    assert table.latest_snapshot()["id"] == 1
    assert sorted_ids(table.read()) == list(range(ROWS))

    # A second job through the same sink gets a higher identifier and a snapshot of its own.
    dataset_of(range(ROWS, ROWS + 100), 2).write_datasink(sink)
    assert sink.commit_identifier > first_identifier
    assert (sink.outcome.status, sink.outcome.snapshot_id) == ("committed", 2)
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(ROWS + 100))


def test_split_payloads_travel_as_sets_and_commit_as_one(warehouse):
    table = create_orders(warehouse)
    limit = 1024
    sink = RecordingSink(warehouse, "db.orders", max_payload_bytes=limit)

    dataset_of(range(4000), 3).write_datasink(sink, concurrency=2)

    returns = sink.write_result.write_returns
    sizes = [len(part) for parts, _version, _pid in returns for part in parts]
    assert max(sizes) <= limit, sizes
    assert max(len(parts) for parts, _, _ in returns) > 1, "no task's payload was split"
    # Each set decodes to the unsplit payload's files: one commit, every row once.
    assert (sink.outcome.status, sink.outcome.snapshot_id) == ("committed", 1)
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(4000))
    committed = sorted(
        f"region={partition[0]}/bucket-{bucket}/{name}"
        for partition, bucket, name, _ in pypaimon_files(warehouse)
    )
    assert data_files(table) == committed


def test_a_rerun_with_a_committed_identifier_writes_nothing_and_commits_nothing(warehouse):
    table = create_orders(warehouse)
    first = PaimonDatasink(warehouse, "db.orders", "nightly", commit_identifier=42)
    dataset_of(range(1000), 2).write_datasink(first)
    assert (first.outcome.status, first.outcome.snapshot_id) == ("committed", 1)
    files_after_first = data_files(table)

    # A new driver (a new sink) runs the same job again: same user, same identifier.
    rerun = RecordingSink(warehouse, "db.orders", "nightly", commit_identifier=42)
    dataset_of(range(1000), 2).write_datasink(rerun)

    assert (rerun.outcome.status, rerun.outcome.snapshot_id) == ("already_committed", 1)
    assert rerun.write_result.write_returns and all(
        r is None for r in rerun.write_result.write_returns
    ), "a write task of the rerun wrote"
    assert data_files(table) == files_after_first, "the rerun wrote files"
    assert table.latest_snapshot()["id"] == 1
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(1000))


def test_a_payload_that_cannot_be_split_to_the_limit_fails_the_job_and_leaves_no_files(warehouse):
    table = create_orders(warehouse)
    # 256 bytes: the minimum, smaller than one data file's entry.
    sink = PaimonDatasink(warehouse, "db.orders", max_payload_bytes=256)
    with pytest.raises(Exception, match="cannot be split into payloads of at"):
        dataset_of(range(1000), 2).write_datasink(sink)
    assert table.latest_snapshot() is None
    assert data_files(table) == [], "the prepared files of the failed split were left behind"


def test_a_payload_limit_below_the_minimum_is_refused_before_writing(warehouse):
    create_orders(warehouse)
    with pytest.raises(ValueError, match="at least 256, got 255"):
        PaimonDatasink(warehouse, "db.orders", max_payload_bytes=255)


class InjectedFailure(RuntimeError):
    pass


class FailingSink(PaimonDatasink):
    """The task holding row 0 writes its first block, waits until another task has prepared
    its payload, then fails: a failure mid-write while another task's files wait for the
    commit."""

    def write(self, blocks, ctx):
        def first_block_then_failure():
            for block in blocks:
                yield block
                if 0 in block["id"].to_pylist():
                    self._fail_after_another_task_prepared()

        return super().write(first_block_then_failure(), ctx)

    def _fail_after_another_task_prepared(self):
        deadline = time.monotonic() + 120
        while not (payloads := self._prepared.payloads()):
            assert time.monotonic() < deadline, "no other write task prepared in time"
            time.sleep(0.1)
        prepared = {
            f["file_name"]
            for parts, version in payloads
            for part in parts
            for message in pw.inspect(part, version)
            for f in message["new_files"]
        }
        on_disk = {
            os.path.basename(f) for f in data_files(pw.open_table(self.warehouse, self.table))
        }
        raise InjectedFailure(
            f"injected failure mid-write: {len(on_disk - prepared)} unprepared and "
            f"{len(prepared & on_disk)} prepared data files on disk"
        )


def test_a_task_failing_mid_write_leaves_no_data_and_no_files(warehouse):
    # Small files, so the failing task has rolled files onto disk before it fails.
    table = create_orders(warehouse, **{"target-file-size": "8 kb"})
    sink = FailingSink(warehouse, "db.orders")
    # Two tasks on two CPUs run at once; no retries, so the failure ends the job.
    dataset = ray.data.from_arrow([rows(range(0, 5000)), rows(range(5000, 10_000), worker=1)])

    with pytest.raises(Exception) as raised:
        dataset.write_datasink(sink, concurrency=2, ray_remote_args={"max_retries": 0})

    found = re.search(
        r"injected failure mid-write: (\d+) unprepared and (\d+) prepared data files",
        str(raised.value),
    )
    assert found, str(raised.value)
    unprepared, prepared = int(found.group(1)), int(found.group(2))
    # The failing task had files on disk, and the other task had prepared files for the commit.
    assert unprepared >= 1 and prepared >= 1
    assert sink.outcome is None
    assert table.latest_snapshot() is None
    assert data_files(table) == []
    assert read_with_pypaimon(warehouse).num_rows == 0


class LostAttemptSink(PaimonDatasink):
    """Each write task writes its blocks twice: the first attempt prepares (and records its
    payload) but its result is dropped, as Ray drops the result of an attempt lost with its
    node; the second attempt's result reaches the driver."""

    def write(self, blocks, ctx):
        kept = list(blocks)
        lost = super().write(iter(kept), ctx)
        assert lost is not None
        return super().write(iter(kept), ctx)


def test_the_files_of_an_attempt_whose_result_was_lost_are_deleted_after_the_commit(warehouse):
    table = create_orders(warehouse)
    sink = LostAttemptSink(warehouse, "db.orders")

    dataset_of(range(ROWS), TASKS).write_datasink(sink, concurrency=2)

    assert sink.outcome.status == "committed"
    # Every row once: the lost attempts' files were written, recorded and then deleted.
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(ROWS))
    committed = sorted(
        f"region={partition[0]}/bucket-{bucket}/{name}"
        for partition, bucket, name, _ in pypaimon_files(warehouse)
    )
    assert data_files(table) == committed
    # The job's record is gone from the GCS.
    from ray.experimental import internal_kv

    assert internal_kv._internal_kv_list("job-", namespace="paimon_wire") == []


@ray.remote(num_cpus=0)
def write_in_a_task(sink, table):
    """One write task of ``sink``'s job, outside any Ray Data job: it prepares, records its
    payload in the GCS and returns it (the job stays in flight until its driver commits)."""
    return sink.write([table], None)


@ray.remote(num_cpus=0)
def put_as_another_client(key, value):
    """What any client of the cluster can do: put ``value`` under ``key`` in the sink's
    namespace of the GCS."""
    from ray.experimental import internal_kv

    internal_kv._internal_kv_put(key, value, namespace="paimon_wire")


def legacy_frame(payload):
    """A payload in the record layout before records were sealed: no tag, only the frame."""
    parts, version = payload
    return struct.pack("<iI", version, len(parts)) + b"".join(
        struct.pack("<Q", len(part)) + part for part in parts
    )


def prepared_file_names(payload):
    parts, version = payload
    return {
        f["file_name"]
        for part in parts
        for message in pw.inspect(part, version)
        for f in message["new_files"]
    }


def recorded_values(prefix):
    from ray.experimental import internal_kv

    keys = internal_kv._internal_kv_list(prefix, namespace="paimon_wire")
    return [internal_kv._internal_kv_get(key, namespace="paimon_wire") for key in keys]


# What another client of the cluster puts under a running job's prefix, naming the prepared
# files of another job in flight (`victim` is its payload, `victim_record` its own record in
# the GCS). Each is a key suffix under the job's prefix and a value.
FOREIGN_RECORDS = {
    "the-other-jobs-own-record-copied": lambda victim, victim_record: (
        uuid.uuid4().hex,
        victim_record,
    ),
    "untagged-at-a-key-of-its-own-choosing": lambda victim, victim_record: (
        "evil",
        legacy_frame(victim),
    ),
    "sealed-layout-with-a-wrong-tag": lambda victim, victim_record: (
        uuid.uuid4().hex,
        b"PWRR\x01" + os.urandom(32) + legacy_frame(victim),
    ),
    "garbage": lambda victim, victim_record: ("garbage", b"\x00\x01 not a record \xff"),
}


class ForeignRecordSink(LostAttemptSink):
    """A job whose every task also has an attempt whose result is lost (its files must still
    be deleted, from the job's own records), and into whose record another client of the
    cluster puts ``foreign`` (suffix, value) between the writes and the commit."""

    foreign: tuple[str, bytes] | None = None
    foreign_key: str | None = None

    def on_write_complete(self, write_result):
        suffix, value = self.foreign
        self.foreign_key = self._prepared._prefix + suffix
        ray.get(put_as_another_client.remote(self.foreign_key, value))
        super().on_write_complete(write_result)


@pytest.mark.parametrize("forgery", list(FOREIGN_RECORDS))
def test_a_foreign_record_under_a_jobs_prefix_deletes_no_file_of_another_job(
    warehouse, forgery, caplog
):
    table = create_orders(warehouse)
    # Another job on the same table, in flight: its task prepared and recorded its payload,
    # its driver has not committed yet.
    other = PaimonDatasink(warehouse, "db.orders", "the-other-job")
    other.on_write_start()
    victim = ray.get(write_in_a_task.remote(other, rows(range(2000, 2500), worker=9)))
    victim_files = prepared_file_names(victim)
    (victim_record,) = recorded_values(other._prepared._prefix)

    sink = ForeignRecordSink(warehouse, "db.orders")
    sink.foreign = FOREIGN_RECORDS[forgery](victim, victim_record)
    with caplog.at_level(logging.WARNING, logger="paimon_wire.ray"):
        dataset_of(range(2000), 2).write_datasink(sink, concurrency=2)
    assert sink.outcome.status == "committed"

    # The other job's files are all still there, and its commit goes through.
    on_disk = {os.path.basename(f) for f in data_files(table)}
    assert victim_files and victim_files <= on_disk, "the other job's prepared files were deleted"
    other.on_write_complete(WriteResult(num_rows=500, size_bytes=0, write_returns=[victim]))
    assert (other.outcome.status, other.outcome.snapshot_id) == ("committed", 2)
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(2500))
    assert sorted_ids(table.read()) == list(range(2500))
    # The job's own records still counted: its lost attempts' files were deleted; no orphan.
    committed = sorted(
        f"region={partition[0]}/bucket-{bucket}/{name}"
        for partition, bucket, name, _ in pypaimon_files(warehouse)
    )
    assert data_files(table) == committed
    # The driver said which record it ignored, by its key.
    ignored = [r.getMessage() for r in caplog.records if "ignoring the record" in r.getMessage()]
    assert len(ignored) == 1 and repr(sink.foreign_key) in ignored[0], ignored
    from ray.experimental import internal_kv

    assert internal_kv._internal_kv_list("job-", namespace="paimon_wire") == []


class SecretWatchingSink(PaimonDatasink):
    """Keeps the job's secret where the test can look for it, and looks for it in every value
    of the GCS's key-value namespaces while the job's records are there."""

    secret: bytes | None = None
    found_in_gcs: list | None = None

    def on_write_complete(self, write_result):
        from ray.experimental import internal_kv

        self.secret = self._prepared._secret.key
        namespaces = [None, "paimon_wire", "fun", "job", "session", "cluster", "dashboard"]
        self.found_in_gcs = [
            (namespace, key)
            for namespace in namespaces
            for key in internal_kv._internal_kv_list("", namespace=namespace)
            if self.secret in (internal_kv._internal_kv_get(key, namespace=namespace) or b"")
        ]
        self.checked_keys = sum(
            len(internal_kv._internal_kv_list("", namespace=n)) for n in namespaces
        )
        super().on_write_complete(write_result)


def test_the_jobs_secret_stays_out_of_the_gcs_reprs_and_logs(warehouse, caplog):
    create_orders(warehouse)
    sink = SecretWatchingSink(warehouse, "db.orders")
    with caplog.at_level(logging.DEBUG):
        dataset_of(range(1000), 2).write_datasink(sink, concurrency=2)
        assert sink.outcome.status == "committed"
        # The next job's record, with foreign records under its prefix.
        sink.on_write_start()
        record = sink._prepared
        for suffix, value in [("evil", b"forged"), ("evil2", b"PWRR\x01" + bytes(40))]:
            ray.get(put_as_another_client.remote(record.prefix + suffix, value))
        assert record.payloads() == []
    assert sink.found_in_gcs == [] and sink.checked_keys > 0
    keys = [sink.secret, record._secret.key]  # two jobs, two secrets
    assert all(len(k) == 32 for k in keys) and keys[0] != keys[1]
    spellings = [spelling for k in keys for spelling in (k, k.hex().encode(), repr(k).encode())]
    state = {k: v for k, v in vars(sink).items() if k != "secret"}  # but the test's own copy
    shown = " ".join(
        [repr(sink), repr(record), repr(record._secret), str(state), str(vars(record))]
        + [r.getMessage() for r in caplog.records]
    ).encode()
    assert not any(spelling in shown for spelling in spellings)
    assert f"{record.prefix}evil2".encode() in shown, "the ignored records' keys are named"
    # The secret travels to the write tasks with the sink.
    assert pickle.loads(pickle.dumps(record))._secret.key == record._secret.key
    record.clear()


def test_a_record_opens_only_under_its_own_key_with_its_own_jobs_secret():
    from paimon_wire.ray import (
        RecordFormat,
        _JobSecret,
        _open_sealed,
        _RecordRejected,
        _seal,
    )

    secret, other = _JobSecret(os.urandom(32)), _JobSecret(os.urandom(32))
    key = b"job-" + b"a" * 32 + b"/" + b"b" * 32
    payload = ([b"abc", b"\x00" * 300], 12)
    sealed = _seal(secret, key, payload)
    assert sealed[:5] == b"PWRR" + bytes([RecordFormat.HMAC_SHA256])
    assert _open_sealed(secret, key, sealed) == payload
    flipped = bytearray(sealed)
    flipped[-1] ^= 1
    refusals = {
        "another job's secret": (other, key, sealed),
        "another key of the job": (secret, key[:-1] + b"c", sealed),
        "another job's prefix": (secret, b"job-" + b"c" * 32 + key[36:], sealed),
        "a bit flipped in the payload": (secret, key, bytes(flipped)),
        "a wrong tag": (secret, key, sealed[:5] + bytes(32) + sealed[37:]),
    }
    for what, (s, k, v) in refusals.items():
        with pytest.raises(_RecordRejected, match="does not authenticate"):
            _open_sealed(s, k, v)
            pytest.fail(what)
    with pytest.raises(_RecordRejected, match="does not start with b'PWRR'"):
        _open_sealed(secret, key, legacy_frame(payload))
    with pytest.raises(_RecordRejected, match="record format 2 is unknown"):
        _open_sealed(secret, key, b"PWRR\x02" + sealed[5:])
    with pytest.raises(_RecordRejected, match="cut short at offset 20, before the tag ends"):
        _open_sealed(secret, key, sealed[:20])
    assert "redacted" in repr(secret) and secret.key.hex() not in repr(secret)


def test_a_recorded_payload_frames_and_unframes_to_itself():
    from paimon_wire.ray import _frame, _unframe

    for payload in [([b"abc"], 12), ([b"", b"\x00" * 300, b"x"], 14), ([], 1)]:
        assert _unframe(_frame(payload)) == payload
    with pytest.raises(ValueError, match="cut short at offset 16"):
        _unframe(_frame(([b"abcdef"], 12))[:-1])


def test_an_empty_dataset_commits_nothing(warehouse):
    table = create_orders(warehouse)
    sink = PaimonDatasink(warehouse, "db.orders", commit_user="empty-job")
    ray.data.from_arrow([rows([])]).write_datasink(sink)
    assert sink.outcome.status == "nothing_to_commit"
    assert table.latest_snapshot() is None


def test_overwrite_replaces_the_partitions_written(warehouse):
    table = create_orders(warehouse)
    dataset_of(range(400), 2).write_datasink(PaimonDatasink(warehouse, "db.orders"))
    # Ids 1000.. land in region-0 and region-1 only (partitions=2).
    replacement = ray.data.from_arrow([rows(range(1000, 1010), partitions=2)])
    sink = PaimonDatasink(warehouse, "db.orders", overwrite=True, commit_identifier=1)
    replacement.write_datasink(sink)
    assert sink.outcome.status == "committed"
    kept = [i for i in range(400) if i % 4 in (2, 3)]
    assert sorted_ids(read_with_pypaimon(warehouse)) == kept + list(range(1000, 1010))
    assert table.latest_snapshot()["commit_kind"] == "OVERWRITE"


def test_the_sink_passes_allow_compaction_to_its_coordinator(warehouse):
    create_orders(warehouse)
    assert not PaimonDatasink(warehouse, "db.orders")._coordinator().allow_compaction
    sink = PaimonDatasink(warehouse, "db.orders", allow_compaction=True)
    assert sink.allow_compaction
    assert sink._coordinator().allow_compaction


def test_the_sink_passes_hash_index_budget_to_its_coordinator(warehouse):
    create_orders(warehouse)
    default = PaimonDatasink(warehouse, "db.orders")
    assert default._coordinator().hash_index_budget == pw.DEFAULT_HASH_INDEX_BUDGET
    sink = PaimonDatasink(warehouse, "db.orders", hash_index_budget=8 << 20)
    assert sink.hash_index_budget == 8 << 20
    assert pickle.loads(pickle.dumps(sink))._coordinator().hash_index_budget == 8 << 20
    with pytest.raises(ValueError, match="hash_index_budget must be at least 1"):
        PaimonDatasink(warehouse, "db.orders", hash_index_budget=0)


def test_the_sink_refuses_a_missing_table(warehouse):
    create_orders(warehouse)
    with pytest.raises(pw.TableNotFoundError):
        PaimonDatasink(warehouse, "db.missing")


def test_blocks_with_columns_in_another_order_are_written(warehouse):
    create_orders(warehouse)
    shuffled = rows(range(100)).select(["note", "amount", "region", "id"])
    sink = PaimonDatasink(warehouse, "db.orders")
    ray.data.from_arrow([shuffled]).write_datasink(sink)
    assert sink.outcome.status == "committed"
    got = read_with_pypaimon(warehouse)
    assert got.column_names == ["id", "region", "amount", "note"]
    assert sorted_ids(got) == list(range(100))


def test_blocks_with_an_extra_column_are_refused_as_the_writer_refuses_them(warehouse):
    table = create_orders(warehouse)
    extra = rows(range(100)).append_column("debug", pa.array(range(100), pa.int64()))
    sink = PaimonDatasink(warehouse, "db.orders")
    with pytest.raises(Exception) as raised:
        ray.data.from_arrow([extra]).write_datasink(sink)
    # The task's exception pickles by name, so the driver catches the writer's own class.
    refused = [e for e in exception_chain(raised.value) if isinstance(e, pw.SchemaMismatchError)]
    assert refused, f"no paimon_wire.SchemaMismatchError in {exception_chain(raised.value)!r}"
    assert "does not have: debug" in str(refused[0])
    assert table.latest_snapshot() is None
    assert data_files(table) == []


def test_pandas_blocks(warehouse):
    create_orders(warehouse)
    frame = rows(range(50)).to_pandas()
    sink = PaimonDatasink(warehouse, "db.orders")
    ray.data.from_pandas([frame]).write_datasink(sink)
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(50))


class _CommitsThenLosesTheAnswer:
    """A coordinator whose commit goes through but whose caller never hears back: the
    outcome is unknown to the driver."""

    def __init__(self, coordinator):
        self._coordinator = coordinator

    def __getattr__(self, name):
        return getattr(self._coordinator, name)

    def commit(self, messages, identifier):
        self._coordinator.commit(messages, identifier)
        raise pw.PaimonError("injected: the connection dropped before the commit answered")


class LostAnswerSink(PaimonDatasink):
    lose_next_answer = True

    def _coordinator(self):
        coordinator = super()._coordinator()
        if self.lose_next_answer:
            self.lose_next_answer = False
            return _CommitsThenLosesTheAnswer(coordinator)
        return coordinator


def test_a_commit_with_an_unknown_outcome_keeps_the_files_and_retries_once(warehouse):
    table = create_orders(warehouse)
    sink = LostAnswerSink(warehouse, "db.orders")
    with pytest.raises(Exception, match="injected: the connection dropped"):
        dataset_of(range(1000), 2).write_datasink(sink, concurrency=2)

    # on_write_failed must not delete files a snapshot may reference: this one does.
    assert table.latest_snapshot()["id"] == 1
    assert sorted_ids(read_with_pypaimon(warehouse)) == list(range(1000))
    outcome = sink.retry_commit()
    assert (outcome.status, outcome.snapshot_id) == ("already_committed", 1)
    assert table.latest_snapshot()["id"] == 1
    assert sorted_ids(table.read()) == list(range(1000))
    with pytest.raises(RuntimeError, match="no commit of this sink is waiting"):
        sink.retry_commit()


def readme_python_example(readme: pathlib.Path, after: str) -> str:
    """The first ```python block of `readme` after the text `after`."""
    text = readme.read_text()
    assert after in text, f"{after!r} not in {readme}"
    return text.split(after, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize(
    "readme, after",
    [
        (pathlib.Path(__file__).parents[1] / "README.md", "## Ray Data\n"),
        (pathlib.Path(__file__).parents[3] / "README.md", "## Python and Ray Data\n"),
    ],
    ids=["python-readme", "root-readme"],
)
def test_the_readme_example_runs(tmp_path, readme, after):
    example = readme_python_example(readme, after)
    warehouse = str(tmp_path / "warehouse")
    namespace: dict = {}
    exec(compile(example.replace("/data/warehouse", warehouse), str(readme), "exec"), namespace)
    assert (namespace["sink"].outcome.status, namespace["sink"].outcome.snapshot_id) == ("committed", 1)
    events = read_with_pypaimon(warehouse, "db.events")
    assert sorted(events.column("id").to_pylist()) == list(range(100_000))
    assert set(events.column("kind").to_pylist()) == {"odd", "even"}


# --- primary-key tables -------------------------------------------------------------------

PK_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("region", pa.string(), nullable=False),
        pa.field("seq", pa.int64()),
        pa.field("note", pa.string()),
    ]
)
KEYS = 3_000
BLOCKS = 3


def upsert_blocks(seed: int = 16) -> tuple[list[pa.Table], dict[int, str]]:
    """BLOCKS blocks, each holding every key once in its own random order; `seq` numbers
    every row of the feed, so the latest row of a key is the one with the highest `seq`.
    Returns the blocks and, per key, the note of its latest row."""
    import random

    rng = random.Random(seed)
    blocks, latest, seq = [], {}, 0
    for block in range(BLOCKS):
        ids = list(range(KEYS))
        rng.shuffle(ids)
        notes = []
        seqs = []
        for i in ids:
            seq += 1
            seqs.append(seq)
            notes.append(f"key {i} version {block}")
            latest[i] = notes[-1]
        blocks.append(
            pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "region": [f"r{i % 3}" for i in ids],
                    "seq": pa.array(seqs, pa.int64()),
                    "note": notes,
                },
                schema=PK_SCHEMA,
            )
        )
    return blocks, latest


def create_pk_table(warehouse: str, name: str, bucket: str, **options: str) -> pw.Table:
    return pw.create_table(
        warehouse,
        name,
        PK_SCHEMA,
        partition_keys=["region"],
        primary_keys=["region", "id"],
        options={"bucket": bucket, "sequence.field": "seq", **options},
    )


def exception_chain(error: BaseException) -> list[BaseException]:
    chain = []
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


def test_fixed_bucket_primary_key_table_reads_back_one_row_per_key_the_latest(warehouse):
    table = create_pk_table(warehouse, "db.users", "4")
    assert table.routing() == ("fixed-bucket", 4)
    blocks, latest = upsert_blocks()
    sink = PaimonDatasink(warehouse, "db.users")
    assert sink.needs_routing

    sink.route(ray.data.from_arrow(blocks)).write_datasink(sink, concurrency=2)

    assert sink.outcome.status == "committed"
    for reader in (table.read(), read_with_pypaimon(warehouse, "db.users")):
        assert reader.num_rows == KEYS, "one row per key"
        got = dict(zip(reader.column("id").to_pylist(), reader.column("note").to_pylist()))
        assert got == latest, "the latest row of every key wins"
    # The commit went through, so the coordinator saw one writer task per (partition,
    # bucket); every one of the 3 x 4 was written.
    files = pypaimon_files(warehouse, "db.users")
    assert len({(partition, bucket) for partition, bucket, _, _ in files}) == 3 * 4


def test_routed_write_tasks_skip_the_empty_blocks_of_the_shuffle(warehouse):
    """Ray's hash shuffle makes more partitions than there are buckets (200 by default),
    so write tasks also get empty blocks, without columns; they carry no rows to route."""
    table = create_pk_table(warehouse, "db.users", "4")
    blocks, latest = upsert_blocks()
    sink = PaimonDatasink(warehouse, "db.users")

    sink.route(ray.data.from_arrow(blocks)).write_datasink(sink)

    assert sink.outcome.status == "committed"
    reader = read_with_pypaimon(warehouse, "db.users")
    got = dict(zip(reader.column("id").to_pylist(), reader.column("note").to_pylist()))
    assert reader.num_rows == KEYS and got == latest


@pytest.mark.parametrize(
    ("bucket", "why"),
    [("4", "each bucket needs exactly one writer task"), ("-1", "its bucket assigner")],
    ids=["fixed-bucket", "dynamic-bucket"],
)
def test_unrouted_blocks_of_a_primary_key_table_that_needs_routing_are_refused(
    warehouse, bucket, why
):
    table = create_pk_table(warehouse, "db.users", bucket)
    blocks, _ = upsert_blocks()
    sink = PaimonDatasink(warehouse, "db.users")
    with pytest.raises(Exception) as raised:
        ray.data.from_arrow(blocks).write_datasink(sink)
    refused = [e for e in exception_chain(raised.value) if isinstance(e, pw.UnsupportedError)]
    assert refused, f"no paimon_wire.UnsupportedError in {exception_chain(raised.value)!r}"
    assert "route the dataset first" in str(refused[0]) and why in str(refused[0])
    assert table.latest_snapshot() is None
    assert data_files(table) == []


def test_dynamic_bucket_primary_key_table_reads_back_one_row_per_key_the_latest(warehouse):
    """Two jobs on a dynamic-bucket table (500 keys per bucket), keys repeated across blocks
    in random order: the sink routes rows to 3 assigners; after each job Java's readers'
    rule holds for ours and pypaimon's: one row per key, the latest."""
    table = create_pk_table(
        warehouse, "db.users", "-1", **{"dynamic-bucket.target-row-num": "500"}
    )
    assert table.routing() == ("single-writer", None)
    latest: dict[int, str] = {}
    for job in range(2):
        blocks, newest = upsert_blocks(seed=16 + job)
        # the second job's rows come after the first's: its seq numbers continue
        offset = job * KEYS * BLOCKS
        blocks = [
            b.set_column(2, "seq", pc.add(b.column("seq"), offset)).set_column(
                3, "note", pc.binary_join_element_wise(b.column("note"), f"job {job}", " in ")
            )
            for b in blocks
        ]
        latest.update({k: f"{v} in job {job}" for k, v in newest.items()})
        sink = PaimonDatasink(warehouse, "db.users")
        assert sink.needs_routing
        sink.route(ray.data.from_arrow(blocks), num_partitions=3).write_datasink(
            sink, concurrency=2
        )
        assert sink.outcome.status == "committed"
        for reader in (table.read(), read_with_pypaimon(warehouse, "db.users")):
            assert reader.num_rows == KEYS, f"job {job}: one row per key"
            got = dict(zip(reader.column("id").to_pylist(), reader.column("note").to_pylist()))
            assert got == latest, f"job {job}: the latest row of every key wins"
    # 3,000 keys in 3 partitions, 500 per bucket: every partition has buckets of several
    # assigners, and every bucket was created by its owner (bucket % 3)
    buckets = {(partition, bucket) for partition, bucket, _, _ in pypaimon_files(warehouse, "db.users")}
    assert len(buckets) >= 6, buckets
    assert {bucket % 3 for _, bucket in buckets} == {0, 1, 2}


def test_dynamic_bucket_table_alternating_java_assigners_and_ray_jobs(tmp_path):
    """Paimon Java 2.0's assigners (3, `HashBucketAssigner` i of 3) and Ray jobs through the
    sink (routed to 3 assigners, keys in random order across blocks) take turns on one
    dynamic-bucket table that Java created; each round rewrites every key so far and adds 10.
    After every round pypaimon and Java read one row per key, the latest, and Java finds every
    key in one bucket's HASH index (compat/java `check-hash-index`)."""
    import random

    from test_java_compaction import java
    from test_java_dynamic_buckets import (
        TABLE,
        check_round,
        java_assigners_write,
        java_commit,
        round_rows,
    )

    warehouse = str(tmp_path / "warehouse")
    java("create-table", "--warehouse", warehouse, "--table", TABLE, "--kind", "dynamic")
    for round_ in range(1, 5):
        if round_ % 2 == 1:
            java_commit(warehouse, round_, java_assigners_write(tmp_path, warehouse, round_))
        else:
            data = round_rows(round_)
            order = list(range(data.num_rows))
            random.Random(round_).shuffle(order)
            data = data.take(order)
            blocks = [data.slice(start, 7) for start in range(0, data.num_rows, 7)]
            sink = PaimonDatasink(warehouse, TABLE, commit_user=f"ray-{round_}")
            sink.route(ray.data.from_arrow(blocks), num_partitions=3).write_datasink(sink)
            assert sink.outcome.status == "committed", sink.outcome
        check_round(warehouse, round_, f"round {round_}")


def test_cross_partition_dynamic_bucket_table_is_refused_before_writing(warehouse):
    table = pw.create_table(
        warehouse,
        "db.users",
        PK_SCHEMA,
        partition_keys=["region"],
        primary_keys=["id"],
        options={"bucket": "-1"},
    )
    assert table.routing() == ("single-writer", None)
    with pytest.raises(pw.UnsupportedError, match="cross-partition"):
        PaimonDatasink(warehouse, "db.users")
    assert table.latest_snapshot() is None


def test_postpone_bucket_table_takes_every_task_writing_any_key(warehouse):
    table = create_pk_table(warehouse, "db.users", "-2")
    assert table.routing() == ("any-writer", None)
    blocks, _ = upsert_blocks()
    sink = PaimonDatasink(warehouse, "db.users")
    assert not sink.needs_routing

    ray.data.from_arrow(blocks).write_datasink(sink, concurrency=2)

    assert sink.outcome.status == "committed"
    snapshot = table.latest_snapshot()
    assert snapshot["total_record_count"] == KEYS * BLOCKS
    # The rows wait in bucket-postpone until a compaction assigns buckets.
    assert data_files(table)
    assert all("/bucket-postpone/" in f for f in data_files(table))


def test_the_default_commit_user_follows_commit_user_prefix(warehouse):
    create_orders(warehouse, "db.prefixed", **{"commit.user-prefix": "nightly-etl"})
    sink = PaimonDatasink(warehouse, "db.prefixed")
    prefix, _, rest = sink.commit_user.partition("_")
    assert prefix == "nightly-etl" and len(rest) == 36, sink.commit_user
    create_orders(warehouse)
    assert PaimonDatasink(warehouse, "db.orders").commit_user.startswith("ray-data-")


def test_compact_runs_a_ray_task_per_bucket_and_commits_once(warehouse):
    from paimon_wire.ray import compact

    table = create_orders(warehouse)
    for job in range(1, 6):
        with table.new_writer("job-1") as writer:
            writer.write(rows(range(40)))
            payload = writer.prepare_commit()
        table.new_coordinator("job-1").commit_payloads([payload], identifier=job)
    before = sorted(table.read().column("id").to_pylist())
    outcome = compact(table)
    assert outcome is not None and outcome.status == "committed"
    assert table.latest_snapshot()["commit_user"] == "paimon-wire-compact"
    assert sorted(table.read().column("id").to_pylist()) == before
    assert table.plan_compaction(full=True) == [], "one file a bucket"
    assert compact(table) is None, "nothing left to compact"
