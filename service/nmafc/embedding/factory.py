"""Choose the embedder the settings describe."""

from __future__ import annotations

from pathlib import Path

from nmafc.embedding.base import Embedder
from nmafc.embedding.onnx_minilm import MODEL_NAME, OnnxMiniLM
from nmafc.errors import ConfigurationError
from nmafc.settings.embedding import EmbeddingSettings


def create_embedder(settings: EmbeddingSettings, cache_dir: Path | None = None) -> Embedder:
    """The bundled offline model unless ``NMAFC_EMBEDDING_BASE_URL`` points elsewhere.

    ``cache_dir`` keeps what the bundled model derives once (``Settings.resolved_cache_dir``);
    without it that is rebuilt at every start.
    """
    if settings.base_url:
        from nmafc.embedding.openai_compat import OpenAICompatibleEmbedder

        if not settings.model:
            raise ConfigurationError(
                "NMAFC_EMBEDDING_BASE_URL is set but no model is named.",
                fix="Set NMAFC_EMBEDDING_MODEL to the endpoint's embedding model.",
            )
        return OpenAICompatibleEmbedder(
            settings.base_url,
            settings.model,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            dim=settings.dim,
            timeout_s=settings.timeout_s,
        )
    if settings.model not in (None, MODEL_NAME):
        raise ConfigurationError(
            f"Embedding model {settings.model!r} needs an endpoint.",
            fix="Set NMAFC_EMBEDDING_BASE_URL, or unset NMAFC_EMBEDDING_MODEL to use "
            f"{MODEL_NAME}.",
        )
    return OnnxMiniLM(
        batch_size=settings.batch_size,
        threads=settings.threads,
        quantized_queries=settings.quantized_queries,
        cache_dir=cache_dir,
    )
