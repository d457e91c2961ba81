"""The test S3 server starts even when a port picked for it is taken before weed binds it."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

import pytest

from nmafc.testing.seaweedfs import PortTaken, SeaweedFS


def _hold(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_a_first_start_moves_to_new_ports_when_one_was_taken(tmp_path: Path) -> None:
    weed = SeaweedFS(tmp_path / "weed")
    taken = weed.ports["volume"]
    with _hold(taken):
        server = weed.start()
        try:
            assert weed.ports["volume"] != taken
            s3 = server.client()
            s3.put_object(Bucket=server.bucket, Key="probe", Body=b"up")
            assert s3.get_object(Bucket=server.bucket, Key="probe")["Body"].read() == b"up"
        finally:
            weed.stop()


def test_a_restart_keeps_its_ports_and_says_which_one_was_taken(tmp_path: Path) -> None:
    weed = SeaweedFS(tmp_path / "weed")
    weed.start()
    weed.stop()
    ports = dict(weed.ports)
    with _hold(ports["volume"]), pytest.raises(PortTaken, match="weed.log"):
        weed.start()
    assert weed.ports == ports  # clients hold the endpoint: a restart never moves
    weed.stop()


def test_the_server_has_room_for_the_filer_s_volumes_and_the_bucket_s(tmp_path: Path) -> None:
    # Volumes of SeaweedFS's default 30 GB left a disk with 77 GB free room for two; the
    # filer took both and every PUT to the bucket failed with 500 InternalError. Each
    # collection grows by seven volumes at a time.
    weed = SeaweedFS(tmp_path / "weed")
    server = weed.start()
    try:
        master = f"http://127.0.0.1:{weed.ports['master']}/dir/status"
        with urllib.request.urlopen(master, timeout=10) as reply:  # noqa: S310 (loopback)
            topology = json.load(reply)["Topology"]
        assert topology["Max"] >= 2 * 7
        s3 = server.client()
        for i in range(20):
            s3.put_object(Bucket=server.bucket, Key=f"probe/{i}", Body=b"x" * 1000)
        assert len(s3.list_objects_v2(Bucket=server.bucket, Prefix="probe/")["Contents"]) == 20
    finally:
        weed.stop()
