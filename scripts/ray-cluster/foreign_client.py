#!/usr/bin/env python3
"""Another client of the Ray cluster of scripts/test-ray-cluster (job 4): a driver of its own,
with the cluster's token and nothing of the sink's job. It lists the sink's namespace in the
GCS (``paimon_wire``) until a job other than the victim's (``--victim-prefix``, a job still in
flight whose task recorded its prepared payload) has recorded a payload, then puts under that
job's prefix values that name the victim's prepared files (``--forgeries``, a comma-separated
list):

* ``copied``: the victim's own record, copied under a new key;
* ``untagged``: the victim's payload in the record layout before records were sealed (no
  tag), at the key ``<prefix>evil``;
* ``wrong-tag``: the sealed layout with a tag made up of random bytes;
* ``garbage``: bytes that are no record.

A driver before records were sealed deleted the files named by ``copied`` and ``untagged``;
a record it could not parse (``wrong-tag``, ``garbage``) made it drop the whole listing, which
hid the others, so scripts/test-ray-cluster injects those two alone.

It prints ``listening`` once connected, ``injected`` once the records are in, and writes their
keys to ``--report`` (JSON).

    foreign_client.py --address HOST:PORT --victim-prefix job-<uuid>/ --report FILE
                      [--forgeries copied,untagged,wrong-tag,garbage] [--timeout S]
"""
from __future__ import annotations

import argparse
import json
import os
import time
import uuid

import ray
from ray.experimental import internal_kv

NAMESPACE = "paimon_wire"
SEALED_HEADER = b"PWRR\x01"
TAG_BYTES = 32


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--victim-prefix", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--forgeries", default="copied,untagged")
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    ray.init(address=args.address, configure_logging=False, log_to_driver=False)

    victim = args.victim_prefix.encode()
    (victim_key,) = internal_kv._internal_kv_list(victim, namespace=NAMESPACE)
    victim_record = internal_kv._internal_kv_get(victim_key, namespace=NAMESPACE)
    # The payload's frame is readable in any record (sealed records are signed, not encrypted).
    if victim_record.startswith(SEALED_HEADER):
        frame = victim_record[len(SEALED_HEADER) + TAG_BYTES :]
    else:
        frame = victim_record

    print("listening", flush=True)
    deadline = time.monotonic() + args.timeout
    target = None
    while target is None:
        prefixes = {
            key.split(b"/", 1)[0] + b"/"
            for key in internal_kv._internal_kv_list(b"job-", namespace=NAMESPACE)
        }
        others = sorted(prefixes - {victim})
        if others:
            target = others[0]
        elif time.monotonic() > deadline:
            raise SystemExit(f"no other job recorded a payload within {args.timeout} s")
        else:
            time.sleep(0.05)

    forgeries = {
        "copied": (uuid.uuid4().hex.encode(), victim_record),
        "untagged": (b"evil", frame),
        "wrong-tag": (uuid.uuid4().hex.encode(), SEALED_HEADER + os.urandom(TAG_BYTES) + frame),
        "garbage": (b"garbage", b"\x00\x01 not a record \xff"),
    }
    values = {target + forgeries[n][0]: forgeries[n][1] for n in args.forgeries.split(",")}
    for key, value in values.items():
        internal_kv._internal_kv_put(key, value, namespace=NAMESPACE)
    print("injected", flush=True)
    with open(args.report, "w", encoding="utf-8") as f:
        json.dump({"target": target.decode(), "keys": [k.decode() for k in values]}, f)


if __name__ == "__main__":
    main()
