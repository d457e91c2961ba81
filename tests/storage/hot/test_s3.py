"""The Hot store on S3: a bucket that does not exist is named, with how to create it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nmafc.errors import ConfigurationError
from nmafc.storage.hot.lance import HotStore
from nmafc.testing.seaweedfs import S3Server, free_port

pytestmark = pytest.mark.s3


def test_opening_the_hot_store_in_a_missing_bucket_names_the_bucket_and_the_fix(
    s3_server: S3Server,
) -> None:
    options = s3_server.lance_options()
    with pytest.raises(ConfigurationError) as raised:
        HotStore.open("s3://no-such-bucket/hot", table="memories", model="m", dim=4,
                      options=options)  # fmt: skip
    assert "'no-such-bucket'" in raised.value.detail
    assert "s3.bucket.create -name no-such-bucket" in raised.value.fix
    assert "NMAFC_HOT_URI" in raised.value.fix


def test_serve_with_a_missing_bucket_exits_with_the_error_not_a_lancedb_traceback(
    s3_server: S3Server, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        **s3_server.env("hot"),
        "NMAFC_HOT_URI": "s3://no-such-bucket/hot",
        "NMAFC_DATA_DIR": str(tmp_path),
    }
    serve = [sys.executable, "-m", "nmafc.cli.main", "serve", "--port", str(free_port())]
    out = subprocess.run(serve, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode != 0
    assert "nmafc.errors.ConfigurationError: The Hot store's S3 bucket 'no-such-bucket'" in (
        out.stderr
    )
    assert "Fix: Create the bucket 'no-such-bucket'" in out.stderr
