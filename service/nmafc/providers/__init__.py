"""Upstream LLM providers behind one OpenAI-shaped interface (``ChatProvider``).

Requests, responses and stream chunks are OpenAI Chat Completions JSON objects whatever the
upstream speaks: ``openai_compat`` forwards them as they are, ``anthropic`` and ``bedrock``
translate both ways. ``factory.create_provider(settings.llm)`` picks one.
"""

from nmafc.providers.base import ChatProvider, Chunk, Json
from nmafc.providers.factory import create_provider, llm_configured

__all__ = ["ChatProvider", "Chunk", "Json", "create_provider", "llm_configured"]
