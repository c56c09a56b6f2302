"""What bounds the Ray append job of ray_vs_pypaimon.py: the cost of one write task outside Ray,
ours against pypaimon's, and Ray's own share of the job.

1. One write task's work, outside Ray: open the table, write one block of ROWS rows (the
   benchmark's schema, 8 partitions), prepare the commit, close; ours (`Table.new_writer`) and
   pypaimon's (`new_batch_write_builder().new_write()`), alternating, 3 tasks per turn. Prints
   the wall time and the process's CPU time (user + system, `getrusage`) per task.
2. Ray's floor: the benchmark's job (16 blocks of ROWS / 16 rows) through a sink that only
   counts rows, on a local Ray with 2 CPUs; the median of 5 jobs after a warm-up.

Usage: python write_task_cost.py [--rows N]   (in the virtualenv scripts/bench-ray makes:
target/bench-ray/venv/bin/python)
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time

from ray_vs_pypaimon import block, create

import paimon_wire as pw


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def task_costs(rows: int) -> None:
    from pypaimon import CatalogFactory

    warehouse = os.path.join(tempfile.mkdtemp(), "warehouse")
    create(warehouse, "db.ours", "append")
    create(warehouse, "db.theirs", "append")
    data = block(0, rows)

    def ours() -> None:
        writer = pw.open_table(warehouse, "db.ours").new_writer("cost")
        writer.write(data)
        writer.prepare_commit()
        writer.close()

    def theirs() -> None:
        table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.theirs")
        write = table.new_batch_write_builder().new_write()
        write.write_arrow(data)
        write.prepare_commit()
        write.close()

    for side, task in [("paimon-wire", ours), ("pypaimon", theirs)] * 2:
        cpu, wall = cpu_seconds(), time.perf_counter()
        for _ in range(3):
            task()
        print(
            f"{side}: one task of {rows:,} rows: wall {(time.perf_counter() - wall) / 3 * 1e3:.1f} ms, "
            f"CPU {(cpu_seconds() - cpu) / 3 * 1e3:.1f} ms"
        )


def ray_floor(rows: int) -> None:
    import ray
    from ray.data.block import BlockAccessor
    from ray.data.datasource.datasink import Datasink

    class CountingSink(Datasink):
        def write(self, blocks, ctx):
            return sum(BlockAccessor.for_block(b).num_rows() for b in blocks)

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    per_block = rows // 16
    ds = ray.data.from_arrow([block(i * per_block, per_block) for i in range(16)]).materialize()
    times = []
    for _ in range(6):
        start = time.perf_counter()
        ds.write_datasink(CountingSink())
        times.append(time.perf_counter() - start)
    print(f"Ray's floor: the job of {rows:,} rows through a sink that writes nothing: "
          f"{statistics.median(times[1:]):.3f} s (median of 5 after a warm-up)")
    ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_250_000)
    args = parser.parse_args()
    task_costs(args.rows)
    ray_floor(args.rows * 16)


if __name__ == "__main__":
    main()
