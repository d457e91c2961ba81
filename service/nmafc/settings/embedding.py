"""The local embedding model."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class EmbeddingSettings(BaseModel):
    """Which embedder turns text into vectors."""

    base_url: str | None = Field(
        None,
        description="An OpenAI-compatible /v1 base URL; unset uses the bundled offline model.",
    )
    model: str | None = Field(
        None,
        description="Model name sent to base_url. The bundled model is all-MiniLM-L6-v2-int8.",
    )
    api_key: SecretStr | None = Field(None, description="Bearer key for base_url.")
    dim: int | None = Field(
        None, gt=0, description="Vector size of the remote model (probed when unset)."
    )
    batch_size: int = Field(
        16,
        ge=1,
        le=2048,
        description="Texts per embedding batch (the bundled int8 model is fastest at 8-16 on "
        "CPU: larger batches cost more per text).",
    )
    threads: int = Field(
        0,
        ge=0,
        description="ONNX Runtime intra-op threads for the bundled model; 0 = auto (up to 4; "
        "with several server workers, each worker its share of the cores).",
    )
    quantized_queries: bool = Field(
        True,
        description="Embed search questions with the bundled model's int8-activation graph: "
        "about 2x less CPU per question, vectors within cosine 0.995 of the float32 path "
        "that stored texts always take (built once, cached in the user cache folder). "
        "False: questions take the float32 path too.",
    )
    timeout_s: float = Field(30.0, gt=0, description="Remote embedding request timeout.")
