"""Choose the upstream provider from ``settings.llm``."""

from __future__ import annotations

import os
from urllib.parse import urlparse

from nmafc.errors import ProviderNotConfigured
from nmafc.providers.base import ChatProvider
from nmafc.settings.llm import LlmSettings


def provider_kind(settings: LlmSettings) -> str:
    """``openai``, ``anthropic`` or ``bedrock``: the setting, or what ``auto`` infers."""
    if settings.provider != "auto":
        return settings.provider
    host = urlparse(settings.base_url or "").hostname or ""
    if "anthropic.com" in host:
        return "anthropic"
    if "bedrock" in host:
        return "bedrock"
    model = settings.model or ""
    if not settings.base_url and model.startswith("claude") and os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    return "openai"


def llm_configured(settings: LlmSettings) -> bool:
    """Whether an upstream is set up: a base URL, an explicit provider, or a provider key."""
    if settings.base_url or settings.provider != "auto" or settings.api_key is not None:
        return True
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("ANTHROPIC_API_KEY"))


def create_provider(settings: LlmSettings) -> ChatProvider:
    """The provider ``settings`` describe; :class:`ProviderNotConfigured` if none is."""
    if not llm_configured(settings):
        raise ProviderNotConfigured("No upstream LLM is configured.")
    kind = provider_kind(settings)
    if kind == "anthropic":
        from nmafc.providers.anthropic import AnthropicProvider

        return AnthropicProvider(settings)
    if kind == "bedrock":
        from nmafc.providers.bedrock import BedrockProvider

        return BedrockProvider(settings)
    from nmafc.providers.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(settings)
