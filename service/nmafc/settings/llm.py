"""The upstream LLM and the chat proxy in front of it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class LlmSettings(BaseModel):
    """The upstream LLM: what the chat proxy forwards to and the LLM extractor calls."""

    provider: Literal["auto", "openai", "anthropic", "bedrock"] = Field(
        "auto",
        description="Wire format of the upstream. auto: anthropic when base_url names "
        "anthropic.com or the model is a claude-* name with ANTHROPIC_API_KEY set, bedrock "
        "when base_url names bedrock, otherwise any OpenAI-compatible endpoint.",
    )
    base_url: str | None = Field(
        None,
        description="Upstream base URL, e.g. https://api.openai.com/v1, "
        "http://127.0.0.1:11434/v1 (Ollama), https://api.anthropic.com; for bedrock, an "
        "optional endpoint URL.",
    )
    model: str | None = Field(
        None,
        description="Model used when a request names none, by the LLM extractor and by "
        "`nmafc chat` (a Bedrock model id for bedrock).",
    )
    api_key: SecretStr | None = Field(
        None,
        description="Upstream key. Unset: the provider's usual variable (OPENAI_API_KEY, "
        "ANTHROPIC_API_KEY, AZURE_OPENAI_API_KEY, GROQ_API_KEY, OPENROUTER_API_KEY, "
        "TOGETHER_API_KEY); Bedrock uses the AWS credential chain.",
    )
    api_version: str | None = Field(
        None,
        description="Azure OpenAI api-version query parameter (e.g. 2024-10-21), or the "
        "anthropic-version header (default 2023-06-01).",
    )
    aws_region: str | None = Field(
        None, description="Bedrock region (default: AWS_REGION / the AWS config)."
    )
    timeout_s: float = Field(
        120.0, gt=0, description="Longest wait for the upstream's answer (or next chunk)."
    )
    connect_timeout_s: float = Field(10.0, gt=0, description="Upstream connect timeout.")
    max_retries: int = Field(
        2, ge=0, le=10, description="Retries after a 429, 5xx, timeout or connection error."
    )
    retry_max_wait_s: float = Field(
        30.0,
        ge=0,
        description="Longest Retry-After honoured before retrying; a longer one is passed "
        "back to the caller as 429 with that Retry-After.",
    )
    requests_per_minute: float = Field(
        0.0, ge=0, description="Client-side rate limit (token bucket) on upstream calls; 0: off."
    )
    max_concurrency: int = Field(64, ge=1, description="Upstream calls in flight at once.")
    max_tokens: int = Field(
        4096,
        ge=1,
        description="max_tokens sent to Anthropic / Bedrock when a request sets none "
        "(their APIs require one).",
    )


class ChatSettings(BaseModel):
    """The memory side of ``/v1/chat/completions`` and of ``nmafc.proxy.MemoryOpenAI``."""

    budget_tokens: int | None = Field(
        None,
        ge=50,
        description="Context budget recalled per call (X-NMAFC-Budget wins); unset: "
        "NMAFC_RETRIEVAL_BUDGET_TOKENS.",
    )
    recall: bool = Field(True, description="Recall by default (memory_recall per call wins).")
    remember: bool = Field(
        True, description="Remember exchanges by default (memory_remember per call wins)."
    )
    queue_enabled: bool = Field(
        True,
        description="Background service that remembers queued exchanges left undone (after "
        "a crash or a failure); it also runs once at start-up.",
    )
    queue_interval_s: float = Field(
        10.0, gt=0, description="Seconds between walks over queued exchanges."
    )
    queue_max_attempts: int = Field(
        5,
        ge=1,
        description="Attempts before a queued exchange is left for an operator (it stays in "
        "the queue with its last error; nothing is dropped).",
    )
    queue_delay_s: float = Field(
        0.0,
        ge=0,
        description="Wait before remembering an exchange right after the reply (tests use "
        "it to crash between queueing and remembering).",
    )
    queue_keep_done_s: float = Field(
        86400.0, ge=0, description="How long remembered exchanges stay in the queue table."
    )
