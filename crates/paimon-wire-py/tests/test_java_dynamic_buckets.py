"""A dynamic-bucket primary-key table written alternately by Paimon Java 2.0's assigners and
ours, through the Python package.

Paimon Java 2.0 creates the table (`bucket = -1`, 8 keys per bucket, compat/java `create-table
--kind dynamic`). Rounds alternate between three Java writers (`write --assigner i/3`: Java's
`HashBucketAssigner` i of 3, rows routed by Java's `BucketAssigner.computeAssigner`) and three
Python writers (`Table.assigner_ids` routes the rows, `Table.new_writer(..., assigner=(i, 3))`
writes them); each round is committed by the Python coordinator or by Java's
(`StreamTableCommit`), two rounds each, so every writer/committer pair occurs. Every round
rewrites every key so far and adds 10. After every round pypaimon and Java read each key once
with its latest value, and Java finds every key in one bucket's HASH index and every row in that
bucket (`check-hash-index`).

Needs Java 17 and Maven (`.ci/run` installs them); the harness builds itself on first use.
"""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pyarrow.compute as pc
from conftest import read_with_pypaimon
from test_java_compaction import expected_rows, java

import paimon_wire as pw

TABLE = "db.dynamic"
COMMIT_USER = "paimon-wire-py-dynamic"
ASSIGNERS = 3
ROUNDS = 4


def round_rows(round_: int) -> pa.Table:
    """The compat harness's rows of round `round_`: ids 0..20+10r, `(i, "p" + i % 3, "r<r>_<i>")`."""
    ids = list(range(20 + 10 * round_))
    return pa.table(
        {
            "id": pa.array(ids, pa.int32()),
            "pt": [f"p{i % 3}" for i in ids],
            "v": [f"r{round_}_{i}" for i in ids],
        }
    )


def java_assigners_write(tmp_path, warehouse: str, round_: int) -> list[str]:
    """Java's ASSIGNERS assigners write round `round_`; returns their payload files (v12)."""
    files = []
    for i in range(ASSIGNERS):
        out = tmp_path / f"round-{round_}-{i}.bin"
        java(
            "write", "--warehouse", warehouse, "--table", TABLE,
            "--commit-user", COMMIT_USER, "--identifier", str(round_),
            "--rows", f"0:{20 + 10 * round_}", "--value-prefix", f"r{round_}_",
            "--assigner", f"{i}/{ASSIGNERS}", "--out", str(out),
        )  # fmt: skip
        files.append(str(out))
    return files


def java_commit(warehouse: str, round_: int, files: list[str]) -> None:
    """Java's coordinator commits the payload files of round `round_` (version 12)."""
    java(
        "commit", "--warehouse", warehouse, "--table", TABLE,
        "--commit-user", COMMIT_USER, "--identifier", str(round_), "--version", "12", *files,
    )  # fmt: skip


def check_round(warehouse: str, round_: int, where: str) -> None:
    """After round `round_`: pypaimon and Java read each key once with its latest value, and
    Java finds every key in one bucket's HASH index and every row in that bucket."""
    expected = expected_rows(round_)
    read = read_with_pypaimon(warehouse, TABLE)
    got = sorted(zip(read.column("id").to_pylist(), read.column("pt").to_pylist(),
                     read.column("v").to_pylist()))  # fmt: skip
    assert got == expected, f"{where}: pypaimon reads one row per key, the latest"
    assert java_read(warehouse) == expected, f"{where}: Java reads one row per key"
    checked = java("check-hash-index", "--warehouse", warehouse, "--table", TABLE)
    assert f"{len(expected)} rows" in checked, checked


def java_read(warehouse: str) -> list[tuple[int, str, str]]:
    """Java's `read`: `rows N`, then `id TAB pt TAB v` lines."""
    lines = java("read", "--warehouse", warehouse, "--table", TABLE).splitlines()
    return sorted(
        (int(i), pt, v) for i, pt, v in (line.split("\t") for line in lines[1:] if line)
    )


def test_java_and_python_assigners_alternate_and_every_key_reads_back_once(tmp_path):
    warehouse = str(tmp_path / "warehouse")
    java("create-table", "--warehouse", warehouse, "--table", TABLE, "--kind", "dynamic")
    table = pw.open_table(warehouse, TABLE)
    for round_ in range(1, ROUNDS + 1):
        writer_side = "java" if round_ % 2 == 1 else "python"
        committer = "java" if (round_ + 1) // 2 % 2 == 1 else "python"
        if writer_side == "java":
            files = java_assigners_write(tmp_path, warehouse, round_)
            payloads = [(pathlib.Path(f).read_bytes(), 12) for f in files]
        else:
            data = round_rows(round_).cast(table.schema)
            owners = table.assigner_ids(data, ASSIGNERS)
            payloads = []
            for i in range(ASSIGNERS):
                with table.new_writer(COMMIT_USER, assigner=(i, ASSIGNERS)) as writer:
                    writer.write(data.filter(pc.equal(owners, i)))
                    payloads.append(writer.prepare_commit(12))
            files = []
            for i, (payload, _) in enumerate(payloads):
                path = tmp_path / f"commit-{round_}-{i}.bin"
                path.write_bytes(payload)
                files.append(str(path))
        if committer == "python":
            outcome = table.new_coordinator(COMMIT_USER).commit_payloads(payloads, round_)
            assert outcome.status == "committed", outcome
        else:
            java_commit(warehouse, round_, files)
        check_round(warehouse, round_, f"round {round_} ({writer_side} writers, {committer} commit)")
