"""The same payload bytes committed by the Rust CLI and by Python give identical tables."""

from __future__ import annotations

import shutil

import pyarrow as pa
from conftest import TABLE, create_orders, pypaimon_files, read_with_pypaimon, rows, run_cli

import paimon_wire as pw

COMMIT_USER = "parity-job"
IDENTIFIER = 3


def by_id(table: pa.Table) -> pa.Table:
    return table.sort_by("id")


def test_cli_and_python_commits_of_the_same_payloads_give_identical_tables(tmp_path, cli):
    cli_warehouse = str(tmp_path / "cli")
    python_warehouse = str(tmp_path / "python")
    table = create_orders(cli_warehouse)

    # One payload from a Python writer, one from the CLI's Rust worker.
    with table.new_writer(COMMIT_USER) as writer:
        writer.write(rows(range(1000)))
        python_payload, version = writer.prepare_commit()
    python_file = tmp_path / "python.bin"
    python_file.write_bytes(python_payload)
    rust_file = tmp_path / "rust.bin"
    run_cli(
        cli, "worker", "--warehouse", cli_warehouse, "--table", TABLE,
        "--commit-user", COMMIT_USER, "--index", "1", "--workers", "2", "--rows", "2000",
        "--partitions", "4", "--version", str(version), "--output", str(rust_file),
    )
    # Both warehouses hold the same written, uncommitted files.
    shutil.copytree(cli_warehouse, python_warehouse)
    payload_args = ["--version", str(version), str(python_file), str(rust_file)]

    committed = run_cli(
        cli, "commit", "--warehouse", cli_warehouse, "--table", TABLE,
        "--commit-user", COMMIT_USER, "--identifier", str(IDENTIFIER), *payload_args,
    )
    outcome = pw.open_table(python_warehouse, TABLE).new_coordinator(COMMIT_USER).commit_payloads(
        [(python_file.read_bytes(), version), (rust_file.read_bytes(), version)], IDENTIFIER
    )

    assert "committed snapshot 1: 8 message(s), 8 new data file(s), 2000 row(s)" in committed.stdout
    assert (outcome.status, outcome.snapshot_id) == ("committed", 1)
    snapshots = [pw.open_table(w, TABLE).latest_snapshot() for w in (cli_warehouse, python_warehouse)]
    for snapshot in snapshots:
        del snapshot["time_millis"]
    assert snapshots[0] == snapshots[1]
    assert snapshots[0]["commit_user"] == COMMIT_USER
    assert snapshots[0]["commit_identifier"] == IDENTIFIER
    assert pypaimon_files(cli_warehouse) == pypaimon_files(python_warehouse)
    assert len(pypaimon_files(cli_warehouse)) == 8
    cli_rows = by_id(read_with_pypaimon(cli_warehouse))
    assert cli_rows.equals(by_id(read_with_pypaimon(python_warehouse)))
    assert cli_rows.column("id").to_pylist() == list(range(2000))
    assert by_id(pw.open_table(cli_warehouse, TABLE).read()).equals(
        by_id(pw.open_table(python_warehouse, TABLE).read())
    )

    # Each side sees the other's commit as done: a rerun commits nothing.
    rerun = run_cli(
        cli, "commit", "--warehouse", python_warehouse, "--table", TABLE,
        "--commit-user", COMMIT_USER, "--identifier", str(IDENTIFIER), *payload_args,
    )
    assert "was already committed in snapshot 1; nothing committed" in rerun.stdout
    again = pw.open_table(cli_warehouse, TABLE).new_coordinator(COMMIT_USER).commit_payloads(
        [(python_file.read_bytes(), version)], IDENTIFIER
    )
    assert (again.status, again.snapshot_id) == ("already_committed", 1)
