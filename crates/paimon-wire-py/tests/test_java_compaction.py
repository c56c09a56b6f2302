"""Compaction results from Java writers, committed by the Python coordinator.

Real Paimon Java 2.0 writers (compat/java, `write --compact true`: write-only = false,
compaction awaited at prepare) write a primary-key table with 2 fixed buckets round after
round; every round updates every key so far and adds 10. The Python coordinator, made with
``allow_compaction=True`` (compaction is opt-in: a default coordinator refuses such payloads),
commits each round's payload (an APPEND snapshot, then a COMPACT snapshot when the payload
carries compaction results). Java and pypaimon then read every key once, with its latest
value.

Needs Java 17 and Maven (`.ci/run` installs them); the harness builds itself on first use
and is cached in compat/java/target/ (scripts/java-interop builds it earlier in
scripts/test-all).
"""

from __future__ import annotations

import pathlib
import re
import subprocess

import pytest
from conftest import read_with_pypaimon

import paimon_wire as pw

ROOT = pathlib.Path(__file__).resolve().parents[3]
HARNESS = ROOT / "compat" / "java" / "harness.sh"
RELEASE = "2.0.0"
TABLE = "db.compacting"
COMMIT_USER = "paimon-wire-py-compaction"
ROUNDS = 10


def java(*args: str) -> str:
    """Runs one command of the Java 2.0 harness and returns its stdout."""
    done = subprocess.run(
        [str(HARNESS), RELEASE, *args],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"harness {args[0]} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def expected_rows(rounds: int) -> list[tuple[int, str, str]]:
    """Round r writes ids 0..20+10r with values r<r>_<id>: each id ends with the last round's."""
    return [(i, f"p{i % 3}", f"r{rounds}_{i}") for i in range(20 + 10 * rounds)]


def test_java_compacting_writers_committed_by_the_python_coordinator(tmp_path):
    warehouse = str(tmp_path / "warehouse")
    java("create-table", "--warehouse", warehouse, "--table", TABLE, "--kind", "pk")
    table = pw.open_table(warehouse, TABLE)
    coordinator = table.new_coordinator(COMMIT_USER, allow_compaction=True)
    refusing = table.new_coordinator(COMMIT_USER)

    rounds_with_compaction = 0
    for round_ in range(1, ROUNDS + 1):
        payload = tmp_path / f"round-{round_}.bin"
        out = java(
            "write", "--warehouse", warehouse, "--table", TABLE,
            "--commit-user", COMMIT_USER, "--identifier", str(round_),
            "--rows", f"0:{20 + 10 * round_}", "--value-prefix", f"r{round_}_",
            "--compact", "true", "--out", str(payload),
        )  # fmt: skip
        found = re.search(r"(\d+) compaction file\(s\)", out)
        assert found, out
        compacted = int(found.group(1)) > 0
        rounds_with_compaction += compacted
        written_version = re.search(r"version (\d+)", out)
        assert written_version, out
        version = int(written_version.group(1))

        if compacted:
            # Compaction is opt-in: a default coordinator refuses the payload by rule.
            with pytest.raises(pw.ValidationError) as raised:
                refusing.deserialize(payload.read_bytes(), version)
            assert raised.value.rule == "compact-increment", raised.value
            assert "allow_compaction=True" in str(raised.value)

        outcome = coordinator.commit_payloads([(payload.read_bytes(), version)], round_)
        assert outcome.status == "committed", outcome
        table = pw.open_table(warehouse, TABLE)
        latest = table.latest_snapshot()
        assert latest is not None
        # A payload with compaction results ends in a COMPACT snapshot under the identifier.
        assert latest["commit_identifier"] == round_, latest
        assert latest["commit_kind"] == ("COMPACT" if compacted else "APPEND"), latest
        # Committing the identifier again commits nothing.
        again = coordinator.commit_payloads([(payload.read_bytes(), version)], round_)
        assert again.status == "already_committed", again

    assert rounds_with_compaction >= 1, "no Java payload carried compaction results"

    expected = expected_rows(ROUNDS)
    java_read = java("read", "--warehouse", warehouse, "--table", TABLE).splitlines()
    assert java_read[0] == f"rows {len(expected)}", java_read[:3]
    java_rows = sorted(
        (int(id_), pt, v) for id_, pt, v in (line.split("\t") for line in java_read[1:])
    )
    assert java_rows == expected

    read = read_with_pypaimon(warehouse, TABLE)
    pypaimon_rows = sorted(zip(read["id"].to_pylist(), read["pt"].to_pylist(), read["v"].to_pylist()))
    assert pypaimon_rows == expected
