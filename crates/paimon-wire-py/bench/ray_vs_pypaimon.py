"""The same Ray Data write job through paimon-wire's PaimonDatasink and pypaimon's
`TableWrite.write_ray`, side by side in one run (issue 16, item 5).

Each run writes a fresh table of the same schema and options, created by paimon_wire, from
one materialized dataset (ROWS rows in BLOCKS blocks), and commits once; the time is the
wall time of the whole job on the driver (write tasks + commit). Runs alternate between the
two sides. Both tables are then read back by pypaimon to check the row count. Prints a
Markdown table of medians, min-max and the ratio.

Usage: python ray_vs_pypaimon.py [--rows N] [--blocks N] [--runs N] [--cpus N]
(scripts/bench-ray builds the package and runs this in its virtualenv.)
"""

from __future__ import annotations

import argparse
import os
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


def write_paimon_wire(ds, warehouse: str, name: str, kind: str, tracked: bool) -> None:
    sink = PaimonDatasink(warehouse, name) if tracked else _UntrackedSink(warehouse, name)
    if kind in ("pk", "dynamic"):
        ds = sink.route(ds)
    ds.write_datasink(sink)
    assert sink.outcome is not None and sink.outcome.status == "committed", sink.outcome


class _UntrackedSink(PaimonDatasink):
    """The sink without its payload-tracking actor (what the actor costs: a failed job would
    leave its prepared files behind)."""

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=os.cpu_count())
    parser.add_argument(
        "--kinds",
        default="append,pk",
        help="comma-separated: append, pk (4 fixed buckets), dynamic (bucket = -1; paimon-wire "
        "only, as pypaimon refuses it)",
    )
    args = parser.parse_args()

    kinds = args.kinds.split(",")
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    per_block = args.rows // args.blocks
    ds = ray.data.from_arrow([block(i * per_block, per_block) for i in range(args.blocks)])
    ds = ds.materialize()
    rows = per_block * args.blocks

    sides = {
        "paimon-wire": lambda ds, w, n, k: write_paimon_wire(ds, w, n, k, tracked=True),
        "paimon-wire, no tracker": lambda ds, w, n, k: write_paimon_wire(ds, w, n, k, tracked=False),
        "pypaimon": lambda ds, w, n, k: write_pypaimon(ds, w, n, k),
    }
    times: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = os.path.join(tmp, "warehouse")
        counter = 0
        # One warm-up job per side and kind (worker processes, imports), not timed.
        for run in range(-1, args.runs):
            for kind in kinds:
                for side, job in sides.items():
                    if kind == "dynamic" and side != "paimon-wire":
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
                        times.setdefault((kind, side), []).append(elapsed)

    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"{rows:,} rows in {args.blocks} blocks, Ray with {args.cpus} CPUs, {args.runs} runs "
          f"per cell after one warm-up; load average at the end: {load}")
    print()
    print("| table | side | median s | min-max s | pypaimon / side |")
    print("|---|---|---:|---:|---:|")
    for kind in kinds:
        base = statistics.median(times[(kind, "pypaimon")]) if kind != "dynamic" else None
        for side in sides:
            if (kind, side) not in times:
                continue
            t = times[(kind, side)]
            median = statistics.median(t)
            ratio = f"{base / median:.2f}x" if base is not None else "(refused)"
            print(f"| {kind} | {side} | {median:.2f} | {min(t):.2f}-{max(t):.2f} | {ratio} |")
    if ("dynamic", "paimon-wire") in times and ("pk", "paimon-wire") in times:
        dynamic = statistics.median(times[("dynamic", "paimon-wire")])
        fixed = statistics.median(times[("pk", "paimon-wire")])
        print()
        print(f"paimon-wire, the same job on a dynamic-bucket table (routed to {args.cpus} "
              f"assigners): {dynamic:.2f} s, on the 4-fixed-bucket table: {fixed:.2f} s "
              f"(dynamic / fixed = {dynamic / fixed:.2f})")


if __name__ == "__main__":
    main()
