"""Per-scope RAM sets (working sets, archives) served fresh, each refreshed by one thread.

Both RAM tiers keep a :class:`WorkingSetCache` that may miss (first use, eviction) or lag
the log (another replica wrote). Bringing a set up to date reads the scope from storage,
which for 10⁵ records takes seconds; concurrent recalls of that scope wait for the one
thread doing it and reuse its work instead of each reading the scope themselves.
"""

from __future__ import annotations

from collections.abc import Callable

from nmafc.engine.locks import ScopeLocks
from nmafc.index.working_set import WorkingSet, WorkingSetCache
from nmafc.storage.cold import ScopeRow

Refresh = Callable[[WorkingSet | None], WorkingSet]


class FreshSets:
    """A working-set cache whose misses and stale sets are refreshed once per scope."""

    def __init__(self, cache: WorkingSetCache) -> None:
        self.cache = cache
        self._refreshing = ScopeLocks()

    def get(self, row: ScopeRow, refresh: Refresh, *, keep: bool = True) -> WorkingSet:
        """The scope's set at least as fresh as ``row``: the cached one, or ``refresh``'s.

        ``refresh`` gets the cached set of this incarnation of the scope (None if there is
        none) and returns it caught up to ``row``, or a new set, which is then cached.
        With the cache off nothing is kept for another recall, so each refreshes its own;
        nor is a set built for a use that should not change what RAM holds (``keep``).
        """
        cached = self._usable(row)
        if cached is not None and cached.seq >= row.seq:
            return cached
        if not self.cache.enabled or (cached is None and not keep):
            return refresh(None)
        with self._refreshing.hold(row.scope):
            cached = self._usable(row)  # as the thread this one waited for left it
            if cached is not None and cached.seq >= row.seq:
                return cached
            fresh = refresh(cached)
            if fresh is not cached:
                self.cache.put(fresh)
            return fresh

    def follow(
        self,
        row: ScopeRow,
        first_seq: int,
        apply: Callable[[WorkingSet], None],
        empty: Callable[[], WorkingSet],
    ) -> None:
        """Keep the cached set in step with a write of the log from ``first_seq`` to
        ``row.seq``, so the next recall reads nothing for it.

        A set that lags the write or belongs to an earlier incarnation is dropped (built
        afresh on next use). A scope's first write begins its set, cached only in the
        room left: a scope that was written, not searched, takes no searched scope's place.
        """
        cached = self.cache.get(row.scope)
        if cached is None:
            if first_seq == 1 and self.cache.enabled:
                begun = empty()
                apply(begun)
                self.cache.offer(begun)
        elif cached.scope_pk != row.pk or cached.seq != first_seq - 1:
            self.cache.drop([row.scope])
        else:
            apply(cached)

    def peek(self, row: ScopeRow) -> WorkingSet | None:
        """The cached set if it is as fresh as ``row``; never loads or refreshes one."""
        cached = self._usable(row)
        return cached if cached is not None and cached.seq >= row.seq else None

    def held(self, row: ScopeRow) -> bool:
        """True if a set of this incarnation is cached, as fresh as ``row`` or not."""
        return self._usable(row) is not None

    def _usable(self, row: ScopeRow) -> WorkingSet | None:
        cached = self.cache.get(row.scope)
        return cached if cached is not None and cached.scope_pk == row.pk else None
