"""An s3:// warehouse on a real S3 server (S3Proxy 3.0.0 on loopback, started by
scripts/services/s3proxy for this module): catalog options through open_table, create_table
and the Ray Data sink (to every write task), read back by pypaimon's own S3 client, and no
secret in any error or repr."""

from __future__ import annotations

import os
import pathlib
import pickle
import subprocess
import uuid

import pytest
import ray
from conftest import SCHEMA, RecordingSink, rows

import paimon_wire as pw
from paimon_wire.ray import PaimonDatasink

ROOT = pathlib.Path(__file__).resolve().parents[3]
S3PROXY = ROOT / "scripts" / "services" / "s3proxy"


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """The running server's env (S3_ENDPOINT, S3_BUCKET, keys); stopped after the module."""
    # Never the cloud credential chain: only the static keys the tests pass.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        os.environ.pop(name, None)
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    state = tmp_path_factory.mktemp("s3proxy")
    started = subprocess.run(
        [str(S3PROXY), "start", str(state)], capture_output=True, text=True, timeout=180
    )
    assert started.returncode == 0, started.stderr
    env = dict(line.split("=", 1) for line in started.stdout.splitlines() if "=" in line)
    try:
        yield env
    finally:
        subprocess.run([str(S3PROXY), "stop", str(state)], timeout=60, check=False)


def catalog_options(s3, secret: str | None = None) -> dict[str, str]:
    return {
        "s3.endpoint": s3["S3_ENDPOINT"],
        "s3.region": s3["S3_REGION"],
        "s3.path-style-access": "true",
        "s3.access-key": s3["S3_ACCESS_KEY_ID"],
        "s3.secret-key": secret or s3["S3_SECRET_ACCESS_KEY"],
    }


def fresh_warehouse(s3) -> str:
    return f"s3://{s3['S3_BUCKET']}/py-{uuid.uuid4().hex[:8]}"


def read_with_pypaimon(warehouse: str, options: dict[str, str], name: str):
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse, **options}).get_table(name)
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def seed_database(s3, warehouse: str, database: str) -> None:
    """Puts an empty object under `<database>.db/`: S3Proxy 3.0.0 does not list the directory
    marker a filesystem catalog creates (real S3 does), so without an object under the prefix
    the paimon crate would find no database (see scripts/s3/common.sh, seed_database)."""
    path = warehouse.removeprefix(f"s3://{s3['S3_BUCKET']}/")
    subprocess.run(
        [
            "curl", "-sf", "-o", "/dev/null",
            "--aws-sigv4", f"aws:amz:{s3['S3_REGION']}:s3",
            "--user", f"{s3['S3_ACCESS_KEY_ID']}:{s3['S3_SECRET_ACCESS_KEY']}",
            "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
            "-X", "PUT", "--data-binary", "",
            f"{s3['S3_ENDPOINT']}/{s3['S3_BUCKET']}/{path}/{database}.db/.s3proxy-keep",
        ],
        check=True,
        timeout=30,
    )


def create(s3, warehouse: str) -> pw.Table:
    seed_database(s3, warehouse, "db")
    return pw.create_table(
        warehouse,
        "db.orders",
        SCHEMA,
        partition_keys=["region"],
        options={"bucket": "-1"},
        catalog_options=catalog_options(s3),
    )


def test_writers_and_coordinator_on_s3(s3):
    warehouse = fresh_warehouse(s3)
    table = create(s3, warehouse)
    assert table.location.startswith(warehouse)
    # A table pickles with its catalog options: another process reopens it on S3.
    table = pickle.loads(pickle.dumps(table))
    payloads = []
    for worker, ids in enumerate([range(0, 700), range(700, 1500)]):
        with table.new_writer("job-s3") as writer:
            writer.write(rows(ids, worker=worker))
            payloads.append(writer.prepare_commit())
    coordinator = pw.Coordinator(
        pw.open_table(warehouse, "db.orders", catalog_options=catalog_options(s3)), "job-s3"
    )
    merged = coordinator.merge([coordinator.deserialize(p, v) for p, v in payloads])
    outcome = coordinator.commit(merged, 1)
    assert outcome.status == "committed" and outcome.snapshot_id == 1
    ids = read_with_pypaimon(warehouse, catalog_options(s3), "db.orders").column("id").to_pylist()
    assert sorted(ids) == list(range(1500))


def test_no_secret_in_errors_or_repr(s3):
    warehouse = fresh_warehouse(s3)
    create(s3, warehouse)
    wrong = "wrong-secret-" + uuid.uuid4().hex
    with pytest.raises(pw.PaimonWireError) as refused:
        pw.open_table(warehouse, "db.orders", catalog_options=catalog_options(s3, wrong))
    assert wrong not in str(refused.value)
    assert s3["S3_SECRET_ACCESS_KEY"] not in str(refused.value)
    with pytest.raises(pw.TableNotFoundError) as missing:
        pw.open_table(warehouse, "db.missing", catalog_options=catalog_options(s3))
    assert s3["S3_SECRET_ACCESS_KEY"] not in str(missing.value)
    sink = PaimonDatasink(warehouse, "db.orders", catalog_options=catalog_options(s3))
    table = pw.open_table(warehouse, "db.orders", catalog_options=catalog_options(s3))
    for shown in (repr(sink), repr(table)):
        assert s3["S3_SECRET_ACCESS_KEY"] not in shown and s3["S3_ACCESS_KEY_ID"] not in shown


def test_backend_not_compiled_in_is_its_own_error():
    # storage-hdfs is opt-in; the wheel is built with the default features.
    with pytest.raises(pw.StorageBackendNotCompiledError, match="storage-hdfs"):
        pw.open_table("hdfs://namenode:8020/warehouse", "db.t")


def test_ray_sink_on_s3(s3):
    warehouse = fresh_warehouse(s3)
    create(s3, warehouse)
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    try:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.op_resource_reservation_enabled = False
        total = 6_000
        blocks = [rows(range(start, start + 1_000)) for start in range(0, total, 1_000)]
        dataset = ray.data.from_arrow(blocks)
        sink = RecordingSink(warehouse, "db.orders", catalog_options=catalog_options(s3))
        dataset.write_datasink(sink)
        assert sink.outcome is not None and sink.outcome.status == "committed"
        # The write tasks ran in Ray worker processes, not in the driver: the catalog options
        # reached them with the pickled sink (the driver's environment has no S3 credentials).
        assert sink.write_result is not None
        writer_pids = {pid for _payload, _version, pid in sink.write_result.write_returns}
        assert writer_pids and os.getpid() not in writer_pids
    finally:
        ray.shutdown()
    ids = read_with_pypaimon(warehouse, catalog_options(s3), "db.orders").column("id").to_pylist()
    assert sorted(ids) == list(range(total))
