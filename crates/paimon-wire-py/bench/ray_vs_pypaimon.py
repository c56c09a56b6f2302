"""The same Ray Data write job through paimon-wire's PaimonDatasink and pypaimon's
`TableWrite.write_ray`, side by side in one run (issue 16, item 5).

Each run writes a fresh table of the same schema and options, created by paimon_wire, from
one materialized dataset (ROWS rows in BLOCKS blocks), and commits once; the time is the
wall time of the whole job on the driver (write tasks + commit). Runs alternate between the
two sides. Both tables are then read back by pypaimon to check the row count. Prints a
Markdown table of medians, min-max and the ratio.

Usage: python ray_vs_pypaimon.py [--rows N[,N...]] [--blocks N] [--runs N] [--cpus N]
    [--kinds append,pk,dynamic] [--sides ...]
(scripts/bench-ray builds the package and runs this in its virtualenv.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

import pyarrow as pa
import ray

import paimon_wire as pw
from paimon_wire.ray import PaimonDatasink

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("region", pa.string(), nullable=False),
        pa.field("amount", pa.float64()),
        pa.field("note", pa.string()),
    ]
)
PARTITIONS = 8


def block(start: int, count: int) -> pa.Table:
    ids = pa.array(range(start, start + count), pa.int64())
    return pa.table(
        {
            "id": ids,
            "region": [f"region-{i % PARTITIONS}" for i in range(start, start + count)],
            "amount": [(i % 10_000) * 0.25 for i in range(start, start + count)],
            "note": [f"order {i}" for i in range(start, start + count)],
        },
        schema=SCHEMA,
    )


def create(warehouse: str, name: str, kind: str) -> None:
    if kind == "append":
        pw.create_table(warehouse, name, SCHEMA, partition_keys=["region"], options={"bucket": "-1"})
    else:
        # pk: 4 fixed buckets; dynamic: bucket = -1 (Paimon's default for a primary key)
        pw.create_table(
            warehouse,
            name,
            SCHEMA,
            partition_keys=["region"],
            primary_keys=["region", "id"],
            options={"bucket": "4" if kind == "pk" else "-1"},
        )


def write_paimon_wire(ds, warehouse: str, name: str, kind: str, recorded: bool) -> None:
    sink = PaimonDatasink(warehouse, name) if recorded else _UnrecordedSink(warehouse, name)
    if kind in ("pk", "dynamic"):
        ds = sink.route(ds)
    ds.write_datasink(sink)
    assert sink.outcome is not None and sink.outcome.status == "committed", sink.outcome


class _UnrecordedSink(PaimonDatasink):
    """The sink without its record of prepared payloads (what the record costs: a failed job
    would leave its prepared files behind)."""

    def on_write_start(self, schema=None) -> None:
        self._start_job()


def write_pypaimon(ds, warehouse: str, name: str, kind: str) -> None:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table(name)
    write = table.new_batch_write_builder().new_write()
    if kind == "pk":
        # pypaimon refuses a fixed-bucket primary-key Ray write without its pre-clustering
        # (one task per bucket), as our sink refuses one without route().
        write.write_ray(ds, hash_fixed_precluster="map_groups")
    else:
        write.write_ray(ds)


def count_rows(warehouse: str, name: str) -> int:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table(name)
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits()).num_rows


def data_files(warehouse: str, name: str) -> dict:
    """What the job wrote, read from the files themselves (not the options): how many data
    files, their bytes, their formats, the Parquet compression codecs and row groups."""
    import pyarrow.parquet as pq

    database, table = name.split(".")
    root = os.path.join(warehouse, f"{database}.db", table)
    files, size, formats, codecs, row_groups = 0, 0, set(), set(), 0
    for directory, _, names in os.walk(root):
        if os.path.relpath(directory, root).split(os.sep)[0] in ("snapshot", "manifest", "schema", "index"):
            continue
        for file in names:
            path = os.path.join(directory, file)
            files += 1
            size += os.path.getsize(path)
            formats.add(file.rsplit(".", 1)[-1])
            if file.endswith(".parquet"):
                meta = pq.ParquetFile(path).metadata
                row_groups += meta.num_row_groups
                for g in range(meta.num_row_groups):
                    for c in range(meta.num_columns):
                        codecs.add(meta.row_group(g).column(c).compression)
    return {
        "files": files,
        "mb": size / 1e6,
        "format": "+".join(sorted(formats)),
        "codec": "+".join(sorted(codecs)),
        "row_groups": row_groups,
    }


def dataset(ray_data, rows: int, blocks: int):
    per_block = rows // blocks
    ds = ray_data.from_arrow([block(i * per_block, per_block) for i in range(blocks)])
    return ds.materialize(), per_block * blocks


SIDES = ("paimon-wire", "paimon-wire (no record)", "pypaimon")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="2000000", help="comma-separated row counts, e.g. 2000000,20000000")
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=os.cpu_count())
    parser.add_argument(
        "--kinds",
        default="append,pk",
        help="comma-separated: append, pk (4 fixed buckets), dynamic (bucket = -1; paimon-wire "
        "only, as pypaimon refuses it)",
    )
    parser.add_argument(
        "--sides",
        default=",".join(SIDES),
        help="comma-separated, of: " + ", ".join(SIDES) + " (\"(no record)\": the sink without "
        "its record of prepared payloads, to show what the record costs)",
    )
    parser.add_argument(
        "--pk-max-rows",
        type=int,
        default=None,
        help="run the primary-key kinds (pk, dynamic) only at row counts up to this (pypaimon "
        "takes about 20 s per million rows there)",
    )
    args = parser.parse_args()

    kinds = args.kinds.split(",")
    skipped = []
    chosen = args.sides.split(",")
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    jobs = {
        "paimon-wire": lambda ds, w, n, k: write_paimon_wire(ds, w, n, k, recorded=True),
        "paimon-wire (no record)": lambda ds, w, n, k: write_paimon_wire(ds, w, n, k, recorded=False),
        "pypaimon": lambda ds, w, n, k: write_pypaimon(ds, w, n, k),
    }
    sides = {side: jobs[side] for side in SIDES if side in chosen}
    times: dict[tuple[int, str, str], list[float]] = {}
    files: dict[tuple[int, str, str], dict] = {}
    row_counts = []
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = os.path.join(tmp, "warehouse")
        counter = 0
        warmed: set[str] = set()
        for wanted in (int(r) for r in args.rows.split(",")):
            ds, rows = dataset(ray.data, wanted, args.blocks)
            row_counts.append(rows)
            # Kind by kind, each with one warm-up job per side (worker processes, imports, and
            # whatever the previous kind's jobs left running), not timed, at the first row count
            # the kind runs at (at a larger count the processes are warm already, and a
            # primary-key warm-up through pypaimon would cost minutes); then the runs, the
            # sides alternating.
            for kind in kinds:
                if kind != "append" and args.pk_max_rows is not None and rows > args.pk_max_rows:
                    skipped.append(f"{kind} at {rows:,} rows")
                    continue
                first_run = 0 if kind in warmed else -1
                warmed.add(kind)
                for run in range(first_run, args.runs):
                    for side, job in sides.items():
                        if kind == "dynamic" and side == "pypaimon":
                            continue  # pypaimon refuses dynamic-bucket Ray writes
                        counter += 1
                        name = f"db.t{counter}"
                        create(warehouse, name, kind)
                        start = time.perf_counter()
                        job(ds, warehouse, name, kind)
                        elapsed = time.perf_counter() - start
                        got = count_rows(warehouse, name)
                        assert got == rows, f"{side} {kind}: read {got} rows, wrote {rows}"
                        if run >= 0:
                            times.setdefault((rows, kind, side), []).append(elapsed)
                            files[(rows, kind, side)] = data_files(warehouse, name)
                        shutil.rmtree(os.path.join(warehouse, "db.db", name.split(".")[1]))
            del ds

    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"rows in {args.blocks} blocks, Ray with {args.cpus} CPUs, {args.runs} runs per cell "
          f"after one warm-up job per side and table (at the first row count only); load average at the end: {load}. The files columns are read from "
          "the last run's data files (Parquet footers), not from the options.")
    if skipped:
        print()
        print(f"Not run (--pk-max-rows {args.pk_max_rows:,}): {', '.join(skipped)}.")
    print()
    print("| rows | table | side | median s | min-max s | pypaimon / side | data files | MB | format | compression | row groups |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---|---|---:|")
    for rows in row_counts:
        for kind in kinds:
            base_times = times.get((rows, kind, "pypaimon"))
            base = statistics.median(base_times) if base_times else None
            for side in sides:
                if (rows, kind, side) not in times:
                    continue
                t = times[(rows, kind, side)]
                f = files[(rows, kind, side)]
                median = statistics.median(t)
                ratio = f"{base / median:.2f}x" if base is not None else "(refused)" if kind == "dynamic" else "-"
                print(f"| {rows:,} | {kind} | {side} | {median:.2f} | {min(t):.2f}-{max(t):.2f} | {ratio} "
                      f"| {f['files']} | {f['mb']:.1f} | {f['format']} | {f['codec']} | {f['row_groups']} |")
    # After the table, so that it stays one Markdown table.
    for rows in row_counts:
        dynamic = times.get((rows, "dynamic", "paimon-wire"))
        fixed = times.get((rows, "pk", "paimon-wire"))
        if dynamic and fixed:
            d, x = statistics.median(dynamic), statistics.median(fixed)
            print()
            print(f"paimon-wire, {rows:,} rows, the same job on a dynamic-bucket table (routed to "
                  f"{args.cpus} assigners): {d:.2f} s, on the 4-fixed-bucket table: {x:.2f} s "
                  f"(dynamic / fixed = {d / x:.2f})")


if __name__ == "__main__":
    main()
