"""A round trip through an installed `paimon_wire` (scripts/test-python-package runs it in a
fresh virtualenv after `pip install` of the wheel or of the sdist; pytest does not collect it).

    python installed_smoke.py VENV [--bundled-ssl]

Checks that `paimon_wire` is imported from VENV (not from a source tree), then creates a
table in a temporary warehouse, writes it from two writers, commits both payloads once under
one identifier, commits them again (nothing is committed), and reads the rows back. With
`--bundled-ssl`, also checks that the libssl the process loaded is the one the wheel bundles
(a manylinux wheel may not use the system's).
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

import pyarrow as pa

import paimon_wire as pw


def main() -> None:
    venv = pathlib.Path(sys.argv[1]).resolve()
    bundled_ssl = "--bundled-ssl" in sys.argv[2:]
    module = pathlib.Path(pw.__file__).resolve()
    if venv not in module.parents:
        sys.exit(f"paimon_wire was imported from {module}, not from {venv}")

    schema = pa.schema([("id", pa.int64()), ("kind", pa.string())])
    with tempfile.TemporaryDirectory() as warehouse:
        table = pw.create_table(
            warehouse, "db.smoke", schema, partition_keys=["kind"], options={"bucket": "-1"}
        )
        payloads = []
        for ids in (range(0, 60), range(60, 100)):
            batch = pa.record_batch(
                [pa.array(list(ids), pa.int64()), pa.array(["odd" if i % 2 else "even" for i in ids])],
                schema=schema,
            )
            with table.new_writer("smoke") as writer:
                writer.write(batch)
                payloads.append(writer.prepare_commit())

        first = pw.Coordinator(table, "smoke").commit_payloads(payloads, 1)
        again = pw.Coordinator(table, "smoke").commit_payloads(payloads, 1)
        rows = pw.open_table(warehouse, "db.smoke").read()
        ids = sorted(rows.column("id").to_pylist())

    checks = {
        "first commit": (first.status, first.snapshot_id, first.rows) == ("committed", 1, 100),
        "second commit of the identifier": again.status == "already_committed",
        "rows read back": ids == list(range(100)),
    }
    if bundled_ssl:
        maps = pathlib.Path("/proc/self/maps").read_text().splitlines()
        ssl = sorted({line.split()[-1] for line in maps if "/libssl" in line})
        checks[f"libssl loaded from the wheel ({ssl})"] = bool(ssl) and all(
            str(venv) in path and "paimon_wire.libs" in path for path in ssl
        )
    failed = [name for name, ok in checks.items() if not ok]
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(f"paimon_wire {module.parent}: {first.status} snapshot {first.snapshot_id}, {len(ids)} rows")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
