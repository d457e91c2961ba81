"""The Hot store on an S3-compatible server: connection options and what a connect failure means."""

from __future__ import annotations

from nmafc.errors import ConfigurationError

__all__ = ["missing_bucket", "storage_options"]


def storage_options(
    *,
    endpoint: str | None,
    region: str,
    access_key_id: str | None,
    secret_access_key: str | None,
    allow_http: bool,
    max_retries: int = 3,
    retry_timeout_s: int = 10,
    connect_timeout_s: int = 5,
) -> dict[str, str]:
    """LanceDB ``storage_options`` for S3-compatible stores."""
    # object_store's defaults retry one request for up to 3 minutes: with S3 down, a write
    # would hold its scope lock (and the client) that long before failing over to the log.
    options = {
        "region": region,
        "client_max_retries": str(max_retries),
        "client_retry_timeout": str(retry_timeout_s),
        "connect_timeout": f"{connect_timeout_s}s",
    }
    if endpoint:
        options["endpoint"] = endpoint
    if access_key_id:
        options["access_key_id"] = access_key_id
    if secret_access_key:
        options["secret_access_key"] = secret_access_key
    if allow_http:
        options["allow_http"] = "true"
    return options


def missing_bucket(uri: str, exc: Exception) -> ConfigurationError | None:
    """The error naming the bucket to create when ``exc`` says it does not exist, else None.

    LanceDB reports S3's ``NoSuchBucket`` as a ``ValueError`` with the server's reply inside;
    NMAFC creates tables, never buckets (an operator's choice of region, policy and keys).
    """
    if not uri.startswith("s3://") or "NoSuchBucket" not in str(exc):
        return None
    bucket = uri.removeprefix("s3://").split("/", 1)[0]
    return ConfigurationError(
        f"The Hot store's S3 bucket {bucket!r} (NMAFC_HOT_URI={uri}) does not exist.",
        fix=f"Create the bucket {bucket!r} on the S3 server (e.g. `aws s3 mb s3://{bucket}` "
        "with --endpoint-url NMAFC_HOT_S3_ENDPOINT; SeaweedFS: `weed shell` then "
        f"`s3.bucket.create -name {bucket}`), or set NMAFC_HOT_URI to an existing bucket.",
    )
