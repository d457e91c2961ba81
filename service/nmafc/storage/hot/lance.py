"""The durable Hot store: one LanceDB table holding every scope's working set.

Writes are batched: one ``merge_insert`` per operation carries the changed records, the
removed ones (rewritten as ``state = 'gone'`` rows, physically deleted by compaction) and
the scope's watermark row — the log position this Hot state reflects. Because the
watermark travels in the same commit as the rows, Hot can never claim to be further
ahead than it is, and replay after a crash is "apply the log after the watermark".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Concatenate, ParamSpec, TypeVar

import lancedb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from nmafc.core.record_columns import RecordColumns
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import AnyScope, Scope
from nmafc.errors import EmbeddingModelMismatch, StoreNotWritable, StoreUnavailable
from nmafc.rwlock import SharedLock
from nmafc.storage.erasure import Erasure
from nmafc.storage.hot import ann, compaction
from nmafc.storage.hot.ann import AnnPolicy
from nmafc.storage.hot.compaction import CompactionPolicy, Pruner
from nmafc.storage.hot.guard import HotGuard
from nmafc.storage.hot.rows import (
    GONE,
    LIVE,
    META,
    Vector,
    VectorRows,
    Watermark,
    about_filter,
    check_pinned,
    create_scalar_indexes,
    hot_schema,
    live_filter,
    live_table,
    marker_table,
    record_columns_of,
    scope_filter,
    watermark_id,
)
from nmafc.storage.hot.s3 import missing_bucket

P = ParamSpec("P")
T = TypeVar("T")
log = logging.getLogger(__name__)


# A write that missed its deadline keeps running (see guard) and may land after the
# catch-up that replaced it: every row carries the log position that wrote it, and an
# older write leaves newer rows, gone markers and the watermark as they are.
_NOT_OLDER = "target.seq IS NULL OR target.seq <= source.seq"
# A merge joins its rows to the table's through the id index, at a cost per row merged,
# or by scanning the table's ids. On a 10^6-row table: 10 rows 0.02 s through the index
# against 0.14 s scanned, 10^4 rows alike (0.2 s), 10^5 (an expiry) 2.8-4.3 s against 1.1 s.
_INDEXED_JOIN_MAX_ROWS = 10_000
# Rows per batch of a scope load: 12 MB of float32 vectors in flight at 384 dimensions.
_LOAD_BATCH_ROWS = 8192


@dataclass(frozen=True, slots=True)
class HotSnapshot:
    columns: RecordColumns
    vectors: npt.NDArray[Any]  # in the dtype the load asked for
    watermark: Watermark | None

    @property
    def records(self) -> list[MemoryRecord]:
        """The records as objects (each built on the call)."""
        return [self.columns.record(row) for row in range(len(self.columns))]


def _guarded(
    method: Callable[Concatenate[HotStore, P], T],
) -> Callable[Concatenate[HotStore, P], T]:
    """Run the call under the store's :class:`HotGuard` when it has one (S3).

    A call that meets a file removed with a pruned version (it began on that version, or
    this process's handle lagged another replica's compaction) re-opens the latest
    version and runs once more.
    """

    def attempt(store: HotStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(store, *args, **kwargs)
        except (OSError, RuntimeError) as exc:
            if not compaction.is_stale_read(exc):
                raise
            log.info("a Hot call met a pruned version; retrying on the latest")
            store._table.checkout_latest()
            return method(store, *args, **kwargs)

    def call(store: HotStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        if store.guard is None:
            return attempt(store, *args, **kwargs)
        return store.guard.call(attempt, store, *args, **kwargs)

    return call


class HotStore:
    """Scoped, batched access to the LanceDB table."""

    def __init__(
        self,
        table: Any,
        dim: int,
        model: str,
        policy: CompactionPolicy | None = None,
        ann_policy: AnnPolicy | None = None,
    ) -> None:
        self.guard: HotGuard | None = None
        self._reopen: Callable[[], tuple[Any, Any]] | None = None
        self._session: Any = None
        self._table = table
        self.dim = dim
        self.model = model
        self.policy = policy or CompactionPolicy()
        self.ann = ann_policy or AnnPolicy()
        self._index_use = ann.IndexUse(self.ann)
        self._pruner = Pruner(self.policy.retention_s)
        self._compacted_at = 0  # the table version this process's last compaction left
        # Compaction and a purge's erasure both rewrite fragments: in one process they
        # take turns (replicas take the ``compaction`` lease, and Lance's commit check
        # makes the loser of a race plan again).
        self._compacting = threading.Lock()
        # Lance refuses a compaction whose fragments a write changed meanwhile (every write
        # updates its scope's watermark row), so under steady writes it would never
        # commit: this process's writes share this lock and a compaction's rewrite takes
        # it alone, for a bounded wait (see compaction.compact).
        self._committing = SharedLock()
        self._erasure_owed = False  # a purge's erasure failed: the next compaction does it
        self._unit = np.zeros(dim, dtype=np.float32)
        self._unit[0] = 1.0  # placeholder vector of gone/meta rows: never searched

    @classmethod
    def open(
        cls,
        uri: str,
        *,
        table: str,
        model: str,
        dim: int,
        options: Mapping[str, str] | None = None,
        policy: CompactionPolicy | None = None,
        ann_policy: AnnPolicy | None = None,
        read_consistency_s: float | None = 1.0,
    ) -> HotStore:
        """Open or create the table, refusing one written with another embedding model.

        LanceDB's default is never to look for versions other handles commit: a replica
        searching the table in LanceDB would then miss every row another one wrote since
        it opened. ``read_consistency_s`` bounds that lag (None: the default, no checks).
        """
        policy = policy or CompactionPolicy()
        session = policy.session()
        consistency = None if read_consistency_s is None else timedelta(seconds=read_consistency_s)

        def connect(through: Any) -> Any:
            return lancedb.connect(
                uri,
                storage_options=dict(options or {}) or None,
                session=through,
                read_consistency_interval=consistency,
            )

        try:
            db = connect(session)
            if table in db.list_tables().tables:
                handle = db.open_table(table)
                check_pinned(handle.schema, model, dim, uri)
            else:
                handle = db.create_table(table, schema=hot_schema(dim, model), exist_ok=True)
                check_pinned(handle.schema, model, dim, uri)
                create_scalar_indexes(handle)
        except (EmbeddingModelMismatch, StoreNotWritable):
            raise
        except PermissionError as exc:
            raise StoreNotWritable(f"The Hot store at {uri} is not writable: {exc}.") from exc
        except ValueError as exc:  # lancedb reports a failed connect as ValueError
            if (missing := missing_bucket(uri, exc)) is None:
                raise
            raise missing from exc
        except OSError as exc:
            if uri.startswith("s3://"):
                raise StoreUnavailable(f"The Hot store at {uri} is unreachable: {exc}.") from exc
            raise StoreNotWritable(f"The Hot store at {uri} cannot be opened: {exc}.") from exc
        store = cls(handle, dim, model, policy, ann_policy)
        store._session = session

        def reopen() -> tuple[Any, Any]:
            # A session (and so an S3 client) of its own: after an outage, new calls through
            # the old one were seen to hang for minutes behind calls stuck on the dead server.
            fresh = policy.session()
            return connect(fresh).open_table(table), fresh

        store._reopen = reopen
        return store

    def guard_calls(self, timeout_s: float, cooldown_s: float) -> None:
        """Give every call a deadline and a circuit breaker (a Hot store on S3)."""
        self.guard = HotGuard(timeout_s, cooldown_s, reconnect=self._reconnect)

    def _reconnect(self) -> None:
        if self._reopen is None:
            return
        try:
            self._table, self._session = self._reopen()
        except Exception as exc:  # lancedb reports a failed connect as ValueError
            raise StoreUnavailable(f"The Hot store cannot be reached: {exc}.") from exc

    @_guarded
    def write(
        self,
        scope: Scope,
        watermark: Watermark,
        upserts: Sequence[tuple[MemoryRecord, Vector]],
        removed: Iterable[str],
    ) -> None:
        """Apply one batch: upserts, removals and the new watermark, in a single commit."""
        with self._committing:
            self._merge(scope, watermark, upserts, removed)

    def _merge(
        self,
        scope: Scope,
        watermark: Watermark,
        upserts: Sequence[tuple[MemoryRecord, Vector]],
        removed: Iterable[str],
    ) -> None:
        schema = self._table.schema
        data = pa.concat_tables(
            [
                live_table(schema, upserts, watermark.seq),
                marker_table(schema, scope, list(removed), GONE, watermark, self._unit),
                marker_table(
                    schema, scope, [watermark_id(scope)], META, watermark, self._unit, "watermark"
                ),
            ]
        )
        (
            self._table.merge_insert("id")
            .use_index(data.num_rows < _INDEXED_JOIN_MAX_ROWS)
            .when_matched_update_all(where=_NOT_OLDER)
            .when_not_matched_insert_all()
            .execute(data)
        )

    @_guarded
    def load(self, scope: Scope, vector_dtype: npt.DTypeLike = np.float32) -> HotSnapshot:
        """The scope's live records with their vectors as ``vector_dtype``, and its watermark.

        Read as a stream of batches, each batch's vectors cast into the matrix as it comes:
        a whole read had held every float32 vector at once beside the matrix, 1.5 KB per
        record on top of the working set while it loads.
        """
        with _reading():
            expected = int(self._table.count_rows(live_filter(scope)))
            reader = (
                self._table.search()
                .where(f"{scope_filter(scope)} AND state IN ('{LIVE}', '{META}')")
                .limit(None)
                .to_batches(_LOAD_BATCH_ROWS)
            )
            vectors = VectorRows(self.dim, vector_dtype, expected)
            kept: list[pa.RecordBatch] = []
            watermark: Watermark | None = None
            for batch in reader:
                marked = pc.equal(batch.column("kind"), "watermark")
                if pc.any(marked).as_py():
                    for mark in batch.filter(marked).select(["scope_pk", "seq"]).to_pylist():
                        watermark = Watermark(int(mark["scope_pk"]), int(mark["seq"]))
                    batch = batch.filter(pc.invert(marked))
                vectors.extend(batch.column("vector"))
                kept.append(batch.drop_columns(["vector"]))
            schema = reader.schema.remove(reader.schema.get_field_index("vector"))
        columns = record_columns_of(pa.Table.from_batches(kept, schema))
        del kept
        # The read's Arrow buffers went to pyarrow's pool, which keeps freed pages.
        pa.default_memory_pool().release_unused()
        return HotSnapshot(columns, vectors.matrix(), watermark)

    @_guarded
    def search(self, scope: AnyScope, vector: Vector, limit: int) -> list[tuple[str, float]]:
        """Cosine similarity search over the scope's live records: ``(id, cosine)`` best first.

        The tenant filter selects the rows first (``prefilter``), so an agent-wide search
        reads only that agent's rows, exactly. Once the table has a vector index (built
        by :meth:`compact`), a reach holding a large share of the table searches the IVF
        partitions nearest the query instead, re-ranked on the float32 vectors (see
        :mod:`~nmafc.storage.hot.ann` for when, and why not for every reach).
        """
        with _reading():
            indexed = self._index_use.wanted(self._table, live_filter(scope))
        return self._search(scope, vector, limit, indexed=indexed)

    @_guarded
    def search_about(
        self, scope: AnyScope, entity: str, vector: Vector, limit: int
    ) -> list[tuple[str, float]]:
        """As :meth:`search`, over only the live records about, or linking to, ``entity``.

        Exact: the prefilter leaves one entity's rows, fewer than a vector index is for.
        """
        return self._search(scope, vector, limit, indexed=False, where=about_filter(entity))

    @_guarded
    def known_entities(self, scope: AnyScope, entities: Sequence[str]) -> set[str]:
        """Those of ``entities`` that a live record of ``scope`` is about or links to.

        One query for all of them: each query scans the scope's rows (no index on them).
        """
        if not entities:
            return set()
        wanted = " OR ".join(about_filter(entity) for entity in entities)
        with _reading():
            rows = (
                self._table.search()
                .where(f"{live_filter(scope)} AND ({wanted})")
                .select(["entity", "related_entities"])
                .limit(None)
                .to_arrow()
            )
        said = set(rows["entity"].to_pylist())
        said.update(pc.list_flatten(rows["related_entities"]).to_pylist())
        return said & set(entities)

    def _search(
        self, scope: AnyScope, vector: Vector, limit: int, *, indexed: bool, where: str = ""
    ) -> list[tuple[str, float]]:
        predicate = f"{live_filter(scope)} AND {where}" if where else live_filter(scope)
        with _reading():
            query = (
                self._table.search(
                    np.asarray(vector, dtype=np.float32), vector_column_name="vector"
                )
                .distance_type("cosine")
                .where(predicate, prefilter=True)
                # Naming the score column keeps it (and silences Lance's warning that an
                # unnamed one will stop being returned).
                .select(["id", "_distance"])
                .limit(limit)
            )
            query = ann.tuned(query, self.ann) if indexed else query.bypass_vector_index()
            hits = query.to_list()
        return [(h["id"], 1.0 - float(h["_distance"])) for h in hits]

    @_guarded
    def watermarks(self, scope: AnyScope | None = None) -> dict[Scope, Watermark]:
        """Watermarks of every scope (start-up recovery) or of one agent / scope."""
        where = f"kind = 'watermark' AND state = '{META}'"
        if scope is not None:
            where = f"{scope_filter(scope)} AND {where}"
        with _reading():
            rows = (
                self._table.search()
                .where(where)
                .select(["agent_id", "conversation_id", "scope_pk", "seq"])
                .limit(None)
                .to_list()
            )
        return {
            Scope(r["agent_id"], r["conversation_id"]): Watermark(int(r["scope_pk"]), int(r["seq"]))
            for r in rows
        }

    @_guarded
    def versions(self, scope: Scope) -> dict[str, int]:
        """``{record id: version}`` of the scope's live rows (to check them against the log)."""
        with _reading():
            rows = (
                self._table.search()
                .where(live_filter(scope))
                .select(["id", "version"])
                .limit(None)
                .to_arrow()
            )
        return dict(zip(rows["id"].to_pylist(), rows["version"].to_pylist(), strict=True))

    @_guarded
    def count(self, scope: AnyScope) -> int:
        with _reading():
            return int(self._table.count_rows(live_filter(scope)))

    @_guarded
    def total_rows(self) -> int:
        """Rows in the table, every scope and marker included (a size, not tenant data)."""
        with _reading():
            return int(self._table.count_rows())

    @_guarded
    def ping(self) -> None:
        """Raise :class:`StoreUnavailable` unless the table can be read."""
        try:
            self._table.count_rows("id = ''")
        except Exception as exc:  # any failure to read the table means "not ready"
            raise StoreUnavailable(f"The Hot store cannot be read: {type(exc).__name__}.") from exc

    @_guarded
    def purge(self, scope: AnyScope) -> int:
        """Delete every row of the scope or agent (records, gone markers, watermark)."""
        with self._committing:
            before = int(self._table.count_rows(scope_filter(scope)))
            self._table.delete(scope_filter(scope))
        return before

    @_guarded
    def replace_scope(
        self, scope: Scope, watermark: Watermark, rows: Sequence[tuple[MemoryRecord, Vector]]
    ) -> None:
        """Rebuild a scope from scratch (its incarnation changed, or a repair)."""
        with self._committing:
            self._table.delete(scope_filter(scope))
            self._merge(scope, watermark, rows, ())

    @_guarded
    def compaction_due(self, max_fragments: int) -> bool:
        """Whether the table holds ``max_fragments`` small fragments (beyond the full ones
        of its size), or twice as many commits were made since this process last
        compacted it (deletes add versions, not fragments)."""
        if compaction.small_fragments(self._table, self.policy.target_rows) >= max_fragments:
            return True
        if ann.due(self._table, self.ann):
            return True
        return int(self._table.version) - self._compacted_at >= 2 * max_fragments

    def lance_cache_bytes(self) -> int:
        """Bytes held by LanceDB's index and metadata caches in this process."""
        return int(self._session.size_bytes) if self._session is not None else 0

    @_guarded
    def shape(self) -> dict[str, int]:
        """Fragments and the version number of the latest table version (no tenant data)."""
        return {
            "fragments": compaction.fragment_count(self._table),
            "version": int(self._table.version),
        }

    @_guarded
    def search_with(
        self, scope: AnyScope, vector: Vector, limit: int, *, indexed: bool
    ) -> list[tuple[str, float]]:
        """As :meth:`search`, on the path named (what ``nmafc bench ann`` compares)."""
        return self._search(scope, vector, limit, indexed=indexed)

    def uses_index(self, scope: AnyScope) -> bool:
        """Whether :meth:`search` of ``scope`` takes the vector index now."""
        return self._index_use.wanted(self._table, live_filter(scope))

    @_guarded
    def vector_index(self) -> dict[str, Any] | None:
        """The table's vector index: its type and indexed / unindexed rows, or None."""
        index = ann.vector_index(self._table)
        if index is None:
            return None
        return {
            "name": index.name,
            "index_type": index.index_type,
            "indexed_rows": index.num_indexed_rows,
            "unindexed_rows": index.num_unindexed_rows,
        }

    @_guarded
    def compact(self) -> dict[str, int]:
        """Drop gone rows, merge small fragments, refresh indexes, prune old versions;
        build the vector index once the table is large enough (``AnnPolicy.min_rows``).

        Versions are pruned once superseded for ``policy.retention_s`` (see
        :class:`~nmafc.storage.hot.compaction.Pruner`), so their count stays bounded by
        the commits of that window plus one pass.
        """
        if self._erasure_owed:
            self.erase_deleted()
        with self._compacting:
            gone = int(self._table.count_rows(f"state = '{GONE}'"))
            if gone:
                self._table.delete(f"state = '{GONE}'")
            rewritten = compaction.compact(
                self._table, self._committing, target_rows=self.policy.target_rows, threshold=0.1
            )
            built = ann.build(self._table, self.ann)
            if built:
                self._index_use.forget()
            self._compacted_at = int(self._table.version)
            self._pruner.note(self._compacted_at)
            due = self._pruner.due(self._table)
            pruned = compaction.prune(self._table, due)
            if due and not pruned.failed:
                self._pruner.removed_below(due.stop)
        return {
            "gone_rows_deleted": gone,
            "rows": int(self._table.count_rows()),
            "fragments_rewritten": rewritten,
            "versions_removed": pruned.versions,
            "vector_index_built": int(built),
        }

    @_guarded
    def erase_deleted(self) -> Erasure:
        """Make deleted rows unreadable on disk: rewrite every fragment holding one, then
        remove every version older than that rewrite (and the files only they reference).

        Readers still on a removed version, in this process or another replica, retry on
        the latest (see :func:`_guarded`). Files of Lance transactions that failed are
        not "verified" as unused and stay until ``nmafc erase`` (LanceDB keeps them for
        7 days, since they may belong to a commit in progress).
        """
        with self._compacting:
            self._erasure_owed = True  # until it succeeds
            rewritten = compaction.compact(
                self._table, self._committing, target_rows=self.policy.target_rows, threshold=0.0
            )
            latest = int(self._table.version)
            pruned = compaction.prune(self._table, self._pruner.below(self._table, latest))
            if not pruned.failed:
                self._pruner.removed_below(latest)
                self._erasure_owed = False
        return compaction.erasure(rewritten, pruned, unverified_kept=True)

    @_guarded
    def erase_all(self) -> Erasure:
        """The offline erasure of ``nmafc erase``: as :meth:`erase_deleted`, and also the
        files of failed transactions. Only safe while no other process uses the table."""
        with self._compacting:
            gone = int(self._table.count_rows(f"state = '{GONE}'"))
            if gone:
                self._table.delete(f"state = '{GONE}'")
            rewritten = compaction.compact(
                self._table, self._committing, target_rows=self.policy.target_rows, threshold=0.0
            )
            latest = int(self._table.version)
            below = self._pruner.below(self._table, latest)
            pruned = compaction.prune(self._table, below, delete_unverified=True)
            if not pruned.failed:
                self._pruner.removed_below(latest)
        return compaction.erasure(rewritten, pruned, unverified_kept=False)


@contextmanager
def _reading() -> Iterator[None]:
    """Turn an I/O failure of the object store (S3 down) into a retryable 503, not a 500."""
    try:
        yield
    except OSError as exc:
        if compaction.is_stale_read(exc):
            raise  # a pruned version: the guarded call retries on the latest
        raise StoreUnavailable(f"The Hot store cannot be read: {exc}.") from exc
    except RuntimeError as exc:  # lance reports object-store errors as RuntimeError
        if "LanceError(IO)" not in str(exc) or compaction.is_stale_read(exc):
            raise
        raise StoreUnavailable(f"The Hot store cannot be read: {exc}.") from exc
