#!/usr/bin/env python3
"""The driver of one Ray Data write job on the multi-host cluster of scripts/test-ray-cluster:
writes ids START..END into a Paimon table on S3 through ``paimon_wire.ray.PaimonDatasink``,
optionally kills one worker node while its write tasks hold written files, then reads the
table back (pypaimon and paimon_wire) and lists the table's files on S3. Writes a JSON
report to --report (Ray's own log lines go to stdout and stderr); the shell script checks it.

    job.py --address HOST:PORT --warehouse s3://B/P --options FILE --table db.t
           --kind append|pk --ids START:END --blocks N [--kill-node-ip IP --kill-pid PID]
           [--commit-user U --identifier I] [--die-after-commit] [--max-payload-bytes N]
           [--foreign-records --victim-ids START:END] --report FILE

The append table (partitioned by region) has a small target file size, so a write task
closes files on S3 while it writes, as a large job does. --kind pk writes every id twice (versions 1 and 2, ``sequence.field = version``) through
``sink.route``: the table must read back one row per id, version 2. --die-after-commit kills
this driver (SIGKILL) right after the sink's commit returns, before anything else happens.

--foreign-records: before the job, another job on the same table (commit user
``ray-cluster-victim``, ids --victim-ids) prepares its payload in one write task on a worker
node and stays in flight. While this job's tasks write, another client of the cluster
(``foreign_client.py``, a driver of its own) puts records naming the victim's prepared files
under this job's prefix in the GCS; this driver waits for them to be in before it commits.
After the commit the victim's files must all be on S3, and the victim's driver (this process)
then commits them: the table holds both jobs' ids.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.compute
import pyarrow.fs
import pyarrow.parquet
import ray
from ray.data.block import BlockAccessor
from ray.data.datasource.datasink import WriteResult
from ray.experimental import internal_kv
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import paimon_wire as pw
from paimon_wire.ray import PaimonDatasink

CHUNK_ROWS = 1000
METADATA_DIRS = {"schema", "snapshot", "manifest", "index", "statistics", "changelog"}
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("region", pa.string(), nullable=False),
        pa.field("version", pa.int32(), nullable=False),
        pa.field("note", pa.string()),
    ]
)


def read_options(path: str) -> dict[str, str]:
    options = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.strip() and not line.lstrip().startswith("#"):
                key, _, value = line.partition("=")
                options[key.strip()] = value
    return options


def progress_actor(driver_node: str) -> Any:
    """What every write attempt did, recorded on the driver's node (it outlives the workers)."""

    class Progress:
        def __init__(self) -> None:
            self.attempts: dict[str, dict[str, Any]] = {}

        def started(self, attempt: str, node: str) -> None:
            self.attempts[attempt] = {"node": node, "chunks": 0, "ids": None, "prepared": None}

        def chunk_written(self, attempt: str, first_id: int, last_id: int) -> None:
            """Counts the chunk and adds its ids to the attempt's id ranges (a chunk that
            continues the previous one's ids extends its range)."""
            state = self.attempts[attempt]
            state["chunks"] += 1
            ranges = state["ids"] or []
            if ranges and ranges[-1][1] + 1 == first_id:
                ranges[-1] = (ranges[-1][0], last_id)
            else:
                ranges.append((first_id, last_id))
            state["ids"] = ranges

        def prepared(self, attempt: str, files: list[str]) -> None:
            self.attempts[attempt]["prepared"] = files

        def report(self) -> dict[str, dict[str, Any]]:
            return self.attempts

    return ray.remote(
        num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(driver_node, soft=False)
    )(Progress).remote()


class ClusterSink(PaimonDatasink):
    """The sink as users get it, with each write attempt reporting to ``progress``: where it
    runs, each chunk of rows it has written, the files it prepared. The blocks reach the
    writer in chunks of ``CHUNK_ROWS`` rows with a short pause after each, so a task is in
    flight, holding closed files, long enough for a node to die under it."""

    def __init__(self, *args: Any, progress: Any, chunk_pause: float, die_after_commit: bool, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.progress = progress
        self.chunk_pause = chunk_pause
        self.die_after_commit = die_after_commit

    def write(self, blocks, ctx):  # type: ignore[no-untyped-def]
        attempt = uuid.uuid4().hex
        ray.get(self.progress.started.remote(attempt, ray.get_runtime_context().get_node_id()))

        def reporting(blocks):  # type: ignore[no-untyped-def]
            for block in blocks:
                rows = BlockAccessor.for_block(block).to_arrow()
                for offset in range(0, rows.num_rows, CHUNK_ROWS):
                    chunk = rows.slice(offset, CHUNK_ROWS)
                    yield chunk  # written before the next is asked for
                    ids = pyarrow.compute.min_max(chunk.column("id"))
                    ray.get(self.progress.chunk_written.remote(attempt, ids["min"].as_py(), ids["max"].as_py()))
                    time.sleep(self.chunk_pause)

        result = super().write(reporting(blocks), ctx)
        if result is not None:
            parts, version = result
            files = [
                f["file_name"]
                for part in parts
                for message in pw.inspect(part, version)
                for f in message["new_files"]
            ]
            ray.get(self.progress.prepared.remote(attempt, files))
        return result

    def on_write_complete(self, write_result):  # type: ignore[no-untyped-def]
        before_commit = getattr(self, "before_commit", None)
        if before_commit is not None:
            before_commit(self._prepared._prefix)
        super().on_write_complete(write_result)
        if self.die_after_commit:
            print(f"committed, now killed: {self.outcome}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("before_commit", None)  # the driver's (a process handle); no task needs it
        return state


def write_one_task(sink: PaimonDatasink, rows: pa.Table) -> Any:
    """One write task of ``sink``'s job outside any Ray Data job: it prepares, records its
    payload in the GCS and returns it; the job stays in flight until its driver commits."""
    return sink.write([rows], None)  # type: ignore[arg-type]


class WarningLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def s3_filesystem(options: dict[str, str]) -> pyarrow.fs.S3FileSystem:
    """The MinIO warehouse's file system, from the catalog options the jobs use."""
    return pyarrow.fs.S3FileSystem(
        access_key=options["s3.access-key"],
        secret_key=options["s3.secret-key"],
        region=options["s3.region"],
        endpoint_override=options["s3.endpoint"],
        force_virtual_addressing=False,
    )


def table_root(warehouse: str, table: str) -> str:
    database, name = table.split(".")
    return f"{warehouse.removeprefix('s3://').rstrip('/')}/{database}.db/{name}"


def id_range(s3: pyarrow.fs.S3FileSystem, path: str) -> tuple[int, int]:
    """The smallest and largest id in a closed data file, from its Parquet footer."""
    with s3.open_input_file(path) as f:
        metadata = pyarrow.parquet.ParquetFile(f).metadata
    column = metadata.schema.to_arrow_schema().get_field_index("id")
    groups = [metadata.row_group(g).column(column).statistics for g in range(metadata.num_row_groups)]
    return min(g.min for g in groups), max(g.max for g in groups)


def table_files(options: dict[str, str], warehouse: str, table: str) -> list[str]:
    """Every data file under the table's directory on S3 (not metadata), as
    ``partition/bucket/name`` relative paths."""
    s3 = s3_filesystem(options)
    root = table_root(warehouse, table)
    found = []
    for info in s3.get_file_info(pyarrow.fs.FileSelector(root, recursive=True)):
        relative = info.path[len(root) + 1 :]
        if info.type == pyarrow.fs.FileType.File and relative.split("/")[0] not in METADATA_DIRS:
            found.append(relative)
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--options", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--kind", choices=["append", "pk"], required=True)
    parser.add_argument("--ids", required=True)
    parser.add_argument("--blocks", type=int, default=12)
    parser.add_argument("--chunk-pause", type=float, default=0.2)
    parser.add_argument("--kill-node-ip")
    parser.add_argument("--kill-pid", type=int)
    parser.add_argument("--commit-user")
    parser.add_argument("--identifier", type=int)
    parser.add_argument("--die-after-commit", action="store_true")
    parser.add_argument("--max-payload-bytes", type=int)
    parser.add_argument("--foreign-records", action="store_true")
    parser.add_argument("--victim-ids")
    parser.add_argument("--report", required=True)
    args = parser.parse_args()
    start, end = (int(x) for x in args.ids.split(":"))
    options = read_options(args.options)

    started = time.monotonic()
    ray.init(address=args.address, configure_logging=False, log_to_driver=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.op_resource_reservation_enabled = False
    driver_node = ray.get_runtime_context().get_node_id()
    nodes = {n["NodeID"]: n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]}
    worker_nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU", 0) > 0}
    victim = next((node for node, ip in nodes.items() if ip == args.kill_node_ip), None)
    if args.kill_node_ip and victim is None:
        raise SystemExit(f"no live node at {args.kill_node_ip}: {nodes}")

    pk = args.kind == "pk"
    pw.create_table(
        args.warehouse,
        args.table,
        SCHEMA,
        partition_keys=[] if pk else ["region"],
        primary_keys=["id"] if pk else [],
        options={"bucket": "3", "sequence.field": "version"} if pk else {"target-file-size": "8 kb"},
        ignore_if_exists=True,
        catalog_options=options,
    )
    progress = progress_actor(driver_node)
    sink = ClusterSink(
        args.warehouse,
        args.table,
        args.commit_user,
        commit_identifier=args.identifier,
        catalog_options=options,
        max_payload_bytes=args.max_payload_bytes,
        progress=progress,
        chunk_pause=args.chunk_pause,
        die_after_commit=args.die_after_commit,
    )

    versions = [1, 2] if pk else [1]

    def to_rows(batch: pa.Table) -> pa.Table:
        ids = pa.concat_arrays([batch.column("id").combine_chunks()] * len(versions))
        version = pa.array([v for v in versions for _ in range(batch.num_rows)], pa.int32())
        region = pa.array([f"r{i % 4}" for i in ids.to_pylist()])
        note = pa.array([f"id {i} v{v}" for i, v in zip(ids.to_pylist(), version.to_pylist())])
        return pa.Table.from_arrays([ids, region, version, note], schema=SCHEMA)

    dataset = ray.data.range(end - start, override_num_blocks=args.blocks).map_batches(
        lambda b: to_rows(pa.table({"id": pa.compute.add(b.column("id"), start)})),
        batch_format="pyarrow",
    )
    dataset = sink.route(dataset)

    foreign: dict[str, Any] = {}
    victim_sink = None
    warnings = WarningLines()
    logging.getLogger("paimon_wire.ray").addHandler(warnings)
    if args.foreign_records:
        victim_start, victim_end = (int(x) for x in args.victim_ids.split(":"))
        victim_sink = PaimonDatasink(args.warehouse, args.table, "ray-cluster-victim", catalog_options=options)
        victim_sink.on_write_start()
        victim_rows = to_rows(pa.table({"id": pa.array(range(victim_start, victim_end), pa.int64())}))
        victim_payload = ray.get(
            ray.remote(num_cpus=1)(write_one_task).remote(victim_sink, victim_rows)
        )
        victim_files = sorted(
            f["file_name"]
            for part in victim_payload[0]
            for message in pw.inspect(part, victim_payload[1])
            for f in message["new_files"]
        )
        foreign["victim_files"] = victim_files
        client = subprocess.Popen(
            [
                sys.executable,
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "foreign_client.py"),
                "--address",
                args.address,
                "--victim-prefix",
                victim_sink._prepared._prefix,
                "--report",
                args.report + ".foreign",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )

        client_listening = threading.Event()

        def note_injection() -> None:
            assert client.stdout is not None
            for line in client.stdout:
                if line.strip() == "listening":
                    client_listening.set()
                if line.strip() == "injected":
                    states = ray.get(progress.report.remote()).values()
                    foreign["at_injection"] = {
                        "attempts": len(states),
                        "prepared": sum(1 for s in states if s["prepared"] is not None),
                    }

        watcher = threading.Thread(target=note_injection, daemon=True)
        watcher.start()
        # The job starts once the other client watches the GCS, so its records land mid-job.
        if not client_listening.wait(timeout=120):
            raise SystemExit("the foreign client did not connect to the cluster within 120 s")

        def wait_for_the_foreign_client(prefix: str) -> None:
            foreign["job_prefix"] = prefix
            foreign["client_exit"] = client.wait(timeout=120)
            watcher.join(timeout=10)
            with open(args.report + ".foreign", encoding="utf-8") as f:
                foreign.update(json.load(f))
            # The watcher saw the client's "injected" before this driver went on to commit.
            foreign["injected_before_commit"] = "at_injection" in foreign

        sink.before_commit = wait_for_the_foreign_client

    killed: dict[str, Any] = {}
    job_done = threading.Event()

    def kill_when_a_task_there_holds_files() -> None:
        """Kills the victim node once one of its write attempts, not yet prepared, holds a
        closed file. On the append table that file is seen on S3: its ids (from its footer)
        lie within one range of ids the attempt has written, which no other attempt writes. The
        writer closes rolled files in the background, so the attempt's chunk count alone
        cannot say a file is on S3. On the primary-key table (routed rows, ids of every
        attempt interleaved) two written chunks are the trigger."""
        s3 = s3_filesystem(options)
        root = table_root(args.warehouse, args.table)
        ranges: dict[str, tuple[int, int]] = {}

        def busy_attempts() -> dict[str, list[tuple[int, int]]]:
            return {
                a: s["ids"]
                for a, s in ray.get(progress.report.remote()).items()
                if s["node"] == victim and s["chunks"] >= (1 if not pk else 2) and s["prepared"] is None
            }

        while not job_done.is_set():
            busy = busy_attempts()
            closed: list[str] = []
            if busy and not pk:
                files = table_files(options, args.warehouse, args.table)
                for relative in files:
                    if relative not in ranges:
                        ranges[relative] = id_range(s3, f"{root}/{relative}")
                # Reading the footers took time: only attempts still unprepared count.
                busy = {a: w for a, w in busy_attempts().items() if a in busy}
                closed = [
                    relative
                    for relative in files
                    if any(a <= ranges[relative][0] and ranges[relative][1] <= b for w in busy.values() for a, b in w)
                ]
            if busy and (pk or closed):
                attempts = ray.get(progress.report.remote())
                os.kill(args.kill_pid, signal.SIGKILL)
                killed.update(
                    at=round(time.monotonic() - started, 2),
                    node=victim,
                    busy_attempts=sorted(busy),
                    closed_files=closed,
                    attempts_before=len(attempts),
                )
                return
            time.sleep(0.05)

    killer = None
    if victim is not None:
        killer = threading.Thread(target=kill_when_a_task_there_holds_files, daemon=True)
        killer.start()
    write_started = time.monotonic()
    dataset.write_datasink(sink)
    write_seconds = time.monotonic() - write_started
    job_done.set()
    if killer is not None:
        killer.join()

    if killed:
        # The job may end before Ray's health checks have declared the node dead (its tasks
        # fail at once, when their worker connections drop): wait for that, bounded.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(n["NodeID"] == victim and n["Alive"] for n in ray.nodes()):
            time.sleep(0.25)
        killed["declared_dead_after"] = round(time.monotonic() - started - killed["at"], 2)
    attempts = ray.get(progress.report.remote())
    prepared_files = {f for s in attempts.values() if s["prepared"] for f in s["prepared"]}
    if victim_sink is not None:
        # After this job's commit: the victim's prepared files, then the victim's own commit.
        names = {f.rsplit("/", 1)[-1] for f in table_files(options, args.warehouse, args.table)}
        foreign["victim_files_missing_after_commit"] = sorted(set(foreign["victim_files"]) - names)
        foreign["ignored"] = [line for line in warnings.lines if "ignoring the record" in line]
        try:
            victim_sink.on_write_complete(WriteResult(num_rows=0, size_bytes=0, write_returns=[victim_payload]))
            assert victim_sink.outcome is not None
            foreign["victim_outcome"] = {
                "status": victim_sink.outcome.status,
                "snapshot_id": victim_sink.outcome.snapshot_id,
            }
        except Exception as e:
            foreign["victim_outcome"] = {"status": "failed", "error": str(e)[:500]}
        prepared_files |= set(foreign["victim_files"])
    from pypaimon import CatalogFactory

    read_table = CatalogFactory.create({"warehouse": args.warehouse, **options}).get_table(args.table)
    builder = read_table.new_read_builder()
    splits = builder.new_scan().plan().splits()
    pypaimon_rows = builder.new_read().to_arrow(splits)
    referenced = sorted(
        "/".join(
            [*(f"{k}={v}" for k, v in zip(["region"] if not pk else [], split.partition.values)), f"bucket-{split.bucket}", f.file_name]
        )
        for split in splits
        for f in split.files
    )
    ours = pw.open_table(args.warehouse, args.table, catalog_options=options)
    our_rows = ours.read()
    on_s3 = table_files(options, args.warehouse, args.table)
    unreferenced = sorted(set(on_s3) - set(referenced))

    def id_summary(rows: pa.Table) -> dict[str, Any]:
        ids = rows.column("id").to_pylist()
        summary = {"rows": len(ids), "distinct_ids": len(set(ids)), "min_id": min(ids, default=None), "max_id": max(ids, default=None)}
        if pk:
            summary["versions"] = sorted(set(rows.column("version").to_pylist()))
        return summary

    report = {
        "outcome": {
            "status": sink.outcome.status,
            "snapshot_id": sink.outcome.snapshot_id,
        },
        "commit_user": sink.commit_user,
        "commit_identifier": sink.commit_identifier,
        "snapshot": ours.latest_snapshot()["id"],
        "write_seconds": round(write_seconds, 2),
        "driver_node": driver_node,
        "worker_nodes": sorted(worker_nodes),
        "alive_after": sorted(n["NodeID"] for n in ray.nodes() if n["Alive"]),
        "attempt_nodes": sorted({s["node"] for s in attempts.values()}),
        "attempts": len(attempts),
        "attempts_prepared": sum(1 for s in attempts.values() if s["prepared"] is not None),
        "killed": killed,
        "pypaimon": id_summary(pypaimon_rows),
        "paimon_wire": id_summary(our_rows),
        "files_on_s3": len(on_s3),
        "files_referenced": len(referenced),
        "referenced_missing_on_s3": sorted(set(referenced) - set(on_s3)),
        "unreferenced": unreferenced,
        "unreferenced_prepared": sorted(f for f in unreferenced if f.rsplit("/", 1)[-1] in prepared_files),
        "foreign": foreign,
        "records_left": len(internal_kv._internal_kv_list("job-", namespace="paimon_wire")),
    }
    with open(args.report, "w", encoding="utf-8") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
