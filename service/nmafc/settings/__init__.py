"""All settings: ``NMAFC_<GROUP>_<FIELD>`` environment variables, an optional TOML file, defaults.

Groups nest one level (``NMAFC_HOT_URI`` sets ``hot.uri``, ``NMAFC_DECAY_ETA`` sets
``decay.eta``). The TOML file (``NMAFC_CONFIG``, ``load_settings(config_file=…)``, or the
per-user ``config.toml`` that ``nmafc init`` writes) uses
the same names as tables: ``[hot] uri = "s3://…"``. Environment beats the file; the file
beats defaults.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import Field, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from nmafc.settings.embedding import EmbeddingSettings
from nmafc.settings.llm import ChatSettings, LlmSettings
from nmafc.settings.maintenance import MaintenanceSettings
from nmafc.settings.memory_model import (
    ConsolidationSettings,
    DecaySettings,
    ExtractionSettings,
    ReinforcementSettings,
    RetrievalSettings,
)
from nmafc.settings.server import ApiSettings, LiveSettings, ServerSettings
from nmafc.settings.stores import ColdSettings, HotSettings

_config_file: ContextVar[Path | None] = ContextVar("nmafc_config_file", default=None)


class Settings(BaseSettings):
    """Every NMAFC setting."""

    model_config = SettingsConfigDict(
        env_prefix="NMAFC_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
    )

    data_dir: Path | None = Field(
        None, description="Where embedded stores live. Default: the per-user data directory."
    )
    cache_dir: Path | None = Field(
        None,
        description="Where NMAFC keeps files it derives and can rebuild (the bundled model's "
        "quantized query graph, 22 MB, built once in about 4 s). Default: <data_dir>/cache. "
        "NMAFC writes nowhere else: not into the home folder, not into the current folder.",
    )

    extractor: Literal["rules", "verbatim", "llm"] = Field(
        "rules",
        description="rules: LLM-free fact extraction; verbatim: one fact per message as said; "
        "llm: one tool call per exchange to the upstream LLM (NMAFC_LLM_*), falling back "
        "to rules when its output is unusable.",
    )
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    hot: HotSettings = Field(default_factory=HotSettings)
    cold: ColdSettings = Field(default_factory=ColdSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    decay: DecaySettings = Field(default_factory=DecaySettings)
    reinforcement: ReinforcementSettings = Field(default_factory=ReinforcementSettings)
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    auth: Literal["auto", "on", "off"] = Field(
        "auto",
        description="API authentication. auto: on as soon as any key exists (NMAFC_API_KEYS "
        "or the Cold ROM); on: always (no key, no access); off: never - anyone who reaches "
        "the port reads every agent's memory.",
    )
    api: ApiSettings = Field(default_factory=ApiSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    live: LiveSettings = Field(default_factory=LiveSettings)
    maintenance: MaintenanceSettings = Field(default_factory=MaintenanceSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = _config_file.get() or _env_config_file()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    @field_validator("data_dir", "cache_dir", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # NMAFC_DATA_DIR= would otherwise be Path(""): the current folder, which the
        # service never writes into.
        return None if isinstance(value, str) and not value.strip() else value

    def resolved_data_dir(self) -> Path:
        """The data directory, created on first use."""
        path = self.data_dir or Path(platformdirs.user_data_dir("nmafc", appauthor=False))
        return path.expanduser()

    def resolved_cache_dir(self) -> Path:
        """The cache directory: ``cache_dir``, else ``cache`` inside the data directory."""
        return (self.cache_dir or self.resolved_data_dir() / "cache").expanduser()

    def resolved_hot_uri(self) -> str:
        return self.hot.uri or str(self.resolved_data_dir() / "hot")

    def resolved_cold_uri(self) -> str:
        return self.cold.uri or f"sqlite:///{self.resolved_data_dir() / 'cold.db'}"


def _env_config_file() -> Path | None:
    value = os.environ.get("NMAFC_CONFIG")
    if value:
        return Path(value)
    # What `nmafc init` writes when told no other path; read only if it exists.
    default = default_config_file()
    return default if default.is_file() else None


def default_config_file() -> Path:
    """Where ``nmafc init`` writes its settings unless told otherwise (per-user config dir)."""
    return Path(platformdirs.user_config_dir("nmafc", appauthor=False)) / "config.toml"


def load_settings(config_file: Path | str | None = None, **overrides: Any) -> Settings:
    """Settings from the environment, an optional TOML file and explicit overrides."""
    token = _config_file.set(Path(config_file) if config_file else None)
    try:
        return Settings(**overrides)
    finally:
        _config_file.reset(token)
