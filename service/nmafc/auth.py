"""API keys: who is calling, and which agent's memory they may reach.

Keys come from two places: ``NMAFC_API_KEYS`` (bootstrap, ``secret:agent`` pairs, agent
``*`` for an admin key) and the Cold ROM's ``api_keys`` table (``nmafc keys create``),
which stores only an HMAC-SHA256 of each secret under a per-deployment pepper. A key is
bound to one agent, or is an admin key that may name any agent.

``NMAFC_AUTH``: ``on`` always checks keys, ``off`` never does, ``auto`` (the default)
checks them as soon as any key exists — and keeps checking after every stored key has been
revoked, so revoking keys never opens the service. With no key ever configured ``auto``
leaves the service open, which is allowed only on a loopback address.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from dataclasses import dataclass

from nmafc.core.scope import AgentScope, AllAgents, KeyOwner, validate_id
from nmafc.errors import (
    AgentNotReachable,
    ConfigurationError,
    Conflict,
    InvalidScope,
    NotFound,
    Unauthorized,
)
from nmafc.settings import Settings
from nmafc.storage.cold import ColdStore
from nmafc.storage.cold.keys_repo import ApiKeyRow

SECRET_PREFIX = "nmafc_"
PREFIX_CHARS = 14  # "nmafc_" + 8 random characters, shown in listings and used to revoke


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: bound to one agent, or admin (any agent, named per request)."""

    agent_id: str | None
    is_admin: bool
    key: str  # the key's prefix or "bootstrap" / "open": for logs, never the secret

    def agent(self, requested: str | None) -> str:
        """The agent this request acts for: the key's own, or the one an admin names."""
        if self.is_admin:
            if requested is None:
                raise InvalidScope(
                    "No agent named.",
                    fix="Send the X-Agent-ID header (admin keys and an open service need it).",
                )
            return validate_id(requested, "agent_id")
        assert self.agent_id is not None
        if requested is not None and requested != self.agent_id:
            # 404, not 403: the answer is the same whether or not that agent exists.
            raise AgentNotReachable("Nothing was found for this agent.")
        return self.agent_id


OPEN = Principal(agent_id=None, is_admin=True, key="open")


@dataclass(frozen=True, slots=True)
class CreatedKey:
    secret: str
    row: ApiKeyRow


def parse_bootstrap_keys(value: str) -> dict[str, Principal]:
    """``"s1:agent-a,s2:*"`` → secret → principal. The first ``:`` separates the secret."""
    keys: dict[str, Principal] = {}
    for index, item in enumerate(part.strip() for part in value.split(",")):
        if not item:
            continue
        secret, sep, agent = item.partition(":")
        if not sep or not secret or not agent:
            raise ConfigurationError(
                f"NMAFC_API_KEYS entry {index + 1} is not of the form secret:agent.",
                fix='Set NMAFC_API_KEYS="secret1:agent-a,secret2:*" (agent * = admin).',
            )
        if agent == "*":
            keys[secret] = Principal(None, True, "bootstrap")
        else:
            keys[secret] = Principal(validate_id(agent, "agent_id"), False, "bootstrap")
    return keys


def hash_secret(secret: str, pepper: str) -> str:
    return hmac.new(pepper.encode(), secret.encode(), hashlib.sha256).hexdigest()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Authenticator:
    """Turns a bearer token into a :class:`Principal`, or raises :class:`Unauthorized`."""

    def __init__(self, settings: Settings, cold: ColdStore) -> None:
        self.mode = settings.auth
        raw = settings.api.keys.get_secret_value() if settings.api.keys else ""
        self._bootstrap = parse_bootstrap_keys(raw)
        self._cold = cold
        self._cache_s = settings.api.keys_cache_s
        self._stored_seen: tuple[float, bool] | None = None
        self._lock = threading.Lock()
        configured = settings.api.key_pepper
        self._pepper = configured.get_secret_value() if configured else None

    @property
    def pepper(self) -> str:
        if self._pepper is None:
            with self._cold.write() as session:
                self._pepper = session.keys.pepper()
        return self._pepper

    def enabled(self) -> bool:
        """Whether requests must carry a key right now."""
        if self.mode != "auto":
            return self.mode == "on"
        if self._bootstrap:
            return True
        now = time.monotonic()
        with self._lock:
            seen = self._stored_seen
            # Once a key has existed auth stays on, so only a "no" needs re-checking.
            if seen is not None and (seen[1] or now - seen[0] < self._cache_s):
                return seen[1]
        with self._cold.read() as session:
            exists = session.keys.any_created()
        with self._lock:
            self._stored_seen = (now, exists)
        return exists

    def known(self, token: str | None) -> Principal | None:
        """The caller when no store needs asking (auth off, a bootstrap key), else None."""
        if self.mode == "off":
            return OPEN
        return self._bootstrap.get(token) if token else None

    def authenticate(self, token: str | None) -> Principal:
        """The caller behind ``token`` (None: no Authorization header)."""
        if not self.enabled():
            return OPEN
        if not token:
            raise Unauthorized("This request carries no API key.")
        principal = self._bootstrap.get(token)
        if principal is not None:
            return principal
        with self._cold.read() as session:
            row = session.keys.active_by_hash(hash_secret(token, self.pepper))
        if row is None:
            raise Unauthorized("The API key is unknown or revoked.")
        return Principal(row.agent_id, row.is_admin, row.prefix)

    def check_exposure(self, host: str) -> str | None:
        """Refuse an open service off loopback; return the loud warning for an open one."""
        if self.mode == "off":
            return (
                "AUTH IS OFF (NMAFC_AUTH=off): anyone who can reach this port can read and "
                "erase every agent's memory."
            )
        if self.mode == "on" or self.enabled():
            return None
        if not is_loopback(host):
            raise ConfigurationError(
                f"No API key is configured and the service would listen on {host}.",
                fix="Create a key (nmafc keys create --agent <agent>, or NMAFC_API_KEYS), "
                "bind to 127.0.0.1, or set NMAFC_AUTH=off to run open on purpose.",
            )
        return (
            "AUTH IS OFF: no API key exists yet, so every request is served (loopback only). "
            "Create one with `nmafc keys create --agent <agent>` or NMAFC_API_KEYS."
        )


class KeyAdmin:
    """Create, list and revoke the keys stored in the Cold ROM."""

    def __init__(self, cold: ColdStore, pepper: str | None = None) -> None:
        self._cold = cold
        self._pepper = pepper

    def _current_pepper(self) -> str:
        if self._pepper is None:
            with self._cold.write() as session:
                self._pepper = session.keys.pepper()
        return self._pepper

    def create(self, *, agent_id: str | None, admin: bool = False, name: str = "") -> CreatedKey:
        """A new key; the secret is returned once and never stored."""
        if admin == (agent_id is not None):
            raise ConfigurationError(
                "A key is either bound to one agent or admin.",
                fix="Pass exactly one of --agent <agent> or --admin.",
            )
        if agent_id is not None:
            validate_id(agent_id, "agent_id")
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        key_hash = hash_secret(secret, self._current_pepper())
        with self._cold.write() as session:
            row = session.keys.insert(
                key_hash=key_hash,
                prefix=secret[:PREFIX_CHARS],
                agent_id=agent_id,
                is_admin=admin,
                name=name[:128],
            )
        return CreatedKey(secret, row)

    def owned(self, owner: KeyOwner, *, include_revoked: bool = False) -> list[ApiKeyRow]:
        with self._cold.read() as session:
            return session.keys.owned(owner, include_revoked=include_revoked)

    def revoke(self, owner: KeyOwner, ref: str) -> ApiKeyRow:
        """Revoke the owner's key whose id or prefix is ``ref``."""
        with self._cold.write() as session:
            found = session.keys.matching(owner, ref)
            if not found:
                raise NotFound(f"No live key {ref!r}.", fix="List keys with `nmafc keys list`.")
            if len(found) > 1:
                raise Conflict(
                    f"{len(found)} keys match {ref!r}.", fix="Revoke by the numeric id instead."
                )
            session.keys.revoke(owner, found[0].id)
        return found[0]


def owner_of(agent_id: str | None) -> KeyOwner:
    """The reach of a key listing: one agent, or every agent (admin)."""
    return AllAgents() if agent_id is None else AgentScope(agent_id)
