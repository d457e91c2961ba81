"""A scope's working set held in RAM: exact cosine search and the entity graph.

Memory is bounded by design (decay prunes the working set), so a scope's live records fit
in RAM, and a matrix product over them is both exact and faster than an approximate index
on disk (≈ 2 ms for 33k vectors against ≈ 66 ms for LanceDB's scoped flat scan here).
Vectors are held in half precision and widened for each product (see :mod:`half`). Sets
of ``int8_scan_min_rows`` records or more are scanned through an int8 copy first, with
the same exact result (see :mod:`int8_scan`). The cache is derived data: it is loaded
from the Hot table and kept in step from the log, and it is keyed by the scope's
incarnation so a purge-and-recreate never serves stale rows.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from nmafc.core.keyword import tie_key
from nmafc.core.record_columns import RecordColumns
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import Scope
from nmafc.index.half import HALF, Half, held, widened
from nmafc.index.int8_scan import Int8Scan
from nmafc.index.keyword_index import KeywordIndex, tie_keys
from nmafc.index.top_k import best_rows
from nmafc.index.working_records import WorkingRecords
from nmafc.rwlock import SharedLock

Vector = npt.NDArray[np.float32]
# Rows a new set starts with (capacity doubles as it grows). Most scopes are small, and
# a cache holds thousands of them: 64 rows of 384 floats were 96 KiB of zeros per scope,
# most of a server's RSS growth as conversations accumulated.
_INITIAL_ROWS = 4
_SCAN_ROWS = 16_384  # rows widened to float32 at a time by a scan without the int8 copy


@dataclass(frozen=True, slots=True)
class Update:
    """One record's new state; ``vector`` may be None when its version did not change."""

    record: MemoryRecord
    vector: Vector | None


class WorkingSet:
    """Live records of one scope incarnation at log position ``seq``."""

    def __init__(self, scope: Scope, scope_pk: int, dim: int, int8_scan_min_rows: int = 0) -> None:
        self.scope = scope
        self.scope_pk = scope_pk
        self.seq = 0
        self.dim = dim
        self.by_entity: dict[str, set[str]] = {}
        self.linked_from: dict[str, set[str]] = {}
        self._row_of: dict[str, int] = {}
        self.records = WorkingRecords(self._row_of)
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._matrix: Half = np.zeros((_INITIAL_ROWS, dim), dtype=HALF)
        self._alive = np.zeros(_INITIAL_ROWS, dtype=bool)
        self._keywords = KeywordIndex()
        self.lock = SharedLock()  # `with lock:` reads; apply() takes it exclusive
        # Large sets are scanned through an int8 copy first (exact, see int8_scan).
        self._int8_min_rows = int8_scan_min_rows
        self._int8: Int8Scan | None = None

    def __len__(self) -> int:
        return len(self.records)

    @property
    def nbytes(self) -> int:
        return int(
            self._matrix.nbytes
            + (self._int8.nbytes if self._int8 is not None else 0)
            + self.records.nbytes
            + self._keywords.nbytes
        )

    def needs_vector(self, record: MemoryRecord) -> bool:
        """True unless this exact version's vector is already held."""
        current = self.records.get(record.id)
        return current is None or current.version != record.version

    def apply(self, updates: Iterable[Update], removed: Iterable[str], seq: int) -> None:
        """Bring the set to log position ``seq``."""
        updates = list(updates)
        with self.lock.exclusive():
            for record_id in removed:
                self._remove(record_id)
            # Room for every update at once: a set loaded row by row would otherwise copy
            # its matrix at each doubling (≈ 0.4 GB of copies while 10^5 records load).
            new = sum(1 for update in updates if update.record.id not in self._row_of)
            self._reserve(len(self._ids) + max(0, new - len(self._free)))
            for update in updates:
                self._put(update.record, update.vector)
            self.seq = seq
            self._sync_int8()

    def load(
        self, records: Sequence[MemoryRecord] | RecordColumns, vectors: Vector | Half, seq: int
    ) -> None:
        """Fill an empty set with ``records``, row ``i`` of ``vectors`` being record ``i``'s.

        What :meth:`apply` does update by update, done for the whole scope at once: the
        records kept as columns (see :mod:`working_records`), ids and rows mapped in one
        pass, the keyword index built in one batch (see :meth:`KeywordIndex.load`). A
        C-ordered half-precision ``vectors`` becomes the set's own matrix, not a copy.
        """
        columns = records if isinstance(records, RecordColumns) else RecordColumns.of(records)
        ids = columns.ids
        if vectors.shape != (len(ids), self.dim):
            raise ValueError(f"vectors must be ({len(ids)}, {self.dim}), got {vectors.shape}")
        row_of = dict(zip(ids, range(len(ids)), strict=True))
        if len(row_of) != len(ids):
            raise ValueError("a record id occurs twice in one load")
        with self.lock.exclusive():
            if self._ids:
                raise ValueError("load() fills an empty working set; apply() changes one")
            if ids:
                self._matrix = held(vectors)
                self._alive = np.ones(len(ids), dtype=bool)
                self._ids = list(ids)
                self._row_of = row_of
                self.records.fill(columns, self._row_of)
                every_row = np.arange(len(ids))
                links = np.diff(columns.related_ends)
                for index, codes, rows in (
                    (self.by_entity, columns.entity_codes, every_row),
                    (self.linked_from, columns.related_codes, np.repeat(every_row, links)),
                ):
                    for code, members in _grouped(codes, rows):
                        index[columns.values[code]] = set(map(ids.__getitem__, members))
                entities = columns.entities()
                self._keywords.load(range(len(ids)), entities, columns.contents(), tie_keys(ids))
            self.seq = seq
            self._sync_int8()

    def search_many(self, queries: Vector, limit: int) -> list[list[tuple[str, float]]]:
        """Exact cosine similarity (vectors are unit length) for each row of ``queries``
        (q × dim) with the stored vectors, in one matrix product a block of rows at a
        time: ``(id, cosine)`` best first, per query.

        The matrix is read once for all queries, which is what makes concurrent recalls
        cheaper together: a scan is bound by memory bandwidth, not arithmetic. With several
        queries the scores may differ from a single query's in the last float bit (a
        matrix-matrix product sums in another order), which can swap two near-equal scores.
        """
        queries = np.asarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise ValueError(f"queries must be (q, {self.dim}), got {queries.shape}")
        with self.lock:
            n = len(self._ids)
            if n == 0 or not self.records:
                return [[] for _ in range(len(queries))]
            matrix, alive = self._matrix[:n], self._alive[:n]
            k = min(limit, len(self.records))
            if self._int8 is not None:
                return [
                    [(self._ids[i], float(score)) for i, score in zip(top, scores, strict=True)]
                    for top, scores in self._int8.search(
                        matrix,
                        alive,
                        queries,
                        k,
                        all_alive=not self._free,  # free rows: dead
                    )
                ]
            scores = _scores(matrix, queries)
            scores[~alive] = -np.inf
            found: list[list[tuple[str, float]]] = []
            for row in scores.T:
                top = best_rows(row, k)
                hits = [(self._ids[i], float(row[i])) for i in top if alive[i]][:limit]
                found.append(hits)
            return found

    def keyword_stats(self, terms: Iterable[str]) -> tuple[int, int, dict[str, int]]:
        """Documents, their total length in tokens, and each term's document frequency."""
        with self.lock:
            index = self._keywords
            return len(index), index.total_length, {t: index.frequency(t) for t in terms}

    def keyword_search(
        self, idf: Mapping[str, float], average_length: float, limit: int
    ) -> list[tuple[MemoryRecord, float]]:
        """BM25 over the records' texts with the caller's corpus statistics, best first.

        The statistics come from the caller so that several sets searched together (an
        agent's conversations, a scope's archive) weigh a term alike. Ties go by
        ``tie_key`` of the id.
        """
        if limit <= 0 or not idf:
            return []
        with self.lock:
            rows, scores = self._keywords.top(idf, average_length, limit)
            return [
                (self.records[rid], float(score))
                for rid, score in zip((self._ids[int(r)] for r in rows), scores, strict=True)
                if rid is not None
            ]

    def pairs_above(
        self, record_ids: Iterable[str], threshold: float, chunk: int = 256
    ) -> list[tuple[str, str, float]]:
        """``(a, b, cosine)`` for each of ``record_ids`` and any other live record ≥ threshold.

        Exact. The matrix is widened a block of rows at a time and each block multiplied by
        up to ``chunk`` queries at once, so it is read once per ``chunk`` queries and memory
        stays at a block of scores (100 queries over 10^6 rows: 0.8-1.0 s, against
        2.0-2.3 s reading it once per 64). Pairs come query by query, each in row order.
        """
        with self.lock:
            rows = [(rid, self._row_of[rid]) for rid in record_ids if rid in self._row_of]
            n = len(self._ids)
            pairs: list[tuple[str, str, float]] = []
            if n < 2:
                return pairs
            alive = self._alive[:n]
            for start in range(0, len(rows), chunk):
                part = rows[start : start + chunk]
                queries = widened(self._matrix[[row for _, row in part]])
                found: list[list[tuple[str, str, float]]] = [[] for _ in part]
                for first in range(0, n, _SCAN_ROWS):
                    scores = widened(self._matrix[first : min(n, first + _SCAN_ROWS)]) @ queries.T
                    hit_rows, hit_queries = np.nonzero(scores >= threshold)
                    for r, qi in zip(hit_rows.tolist(), hit_queries.tolist(), strict=True):
                        row = first + r
                        other = self._ids[row]
                        if alive[row] and row != part[qi][1] and other is not None:
                            found[qi].append((part[qi][0], other, float(scores[r, qi])))
                for hits in found:
                    pairs.extend(hits)
            return pairs

    def vector(self, record_id: str) -> Vector | None:
        with self.lock:
            row = self._row_of.get(record_id)
            return None if row is None else widened(self._matrix[row])

    def vectors(self, record_ids: Iterable[str]) -> dict[str, Vector]:
        with self.lock:
            return {
                rid: widened(self._matrix[self._row_of[rid]])
                for rid in record_ids
                if rid in self._row_of
            }

    def neighbours(self, entities: Iterable[str], max_fanout: int | None = None) -> set[str]:
        """Ids of records about, or linking to, any of ``entities``.

        Entities touching more than ``max_fanout`` records are skipped: a hub such as the
        speaker's own name connects everything, so walking it activates nothing specific.
        """
        with self.lock:
            found: set[str] = set()
            for entity in entities:
                about = self.by_entity.get(entity, set())
                linking = self.linked_from.get(entity, set())
                if max_fanout is not None and len(about) + len(linking) > max_fanout:
                    continue
                found |= about
                found |= linking
            return found

    def nearest_about(
        self, entities: Iterable[str], query: Vector, limit: int
    ) -> list[tuple[str, float]]:
        """The ``limit`` records about, or linking to, any of ``entities`` nearest ``query``.

        Unlike :meth:`neighbours`, hubs are not skipped: this is how a question about a
        person ranks everything said about them, however much that is.
        """
        with self.lock:
            ids: set[str] = set()
            for entity in entities:
                ids |= self.by_entity.get(entity, set())
                ids |= self.linked_from.get(entity, set())
            rows = np.fromiter(
                (self._row_of[rid] for rid in ids if rid in self._row_of), dtype=np.intp
            )
            if limit <= 0 or not rows.size:
                return []
            rows.sort()  # gathers in row order, and ties go by row like a scan's
            q = np.asarray(query, dtype=np.float32)
            scores = np.empty(len(rows), dtype=np.float32)
            for start in range(0, len(rows), _SCAN_ROWS):  # a hub's gather stays small
                part = rows[start : start + _SCAN_ROWS]
                scores[start : start + len(part)] = widened(self._matrix[part]) @ q
            return [
                (rid, float(scores[i]))
                for i in best_rows(scores, min(limit, len(rows)))
                if (rid := self._ids[int(rows[i])]) is not None
            ]

    def _sync_int8(self) -> None:
        n = len(self._ids)
        if self._int8 is None and 0 < self._int8_min_rows <= n:
            self._int8 = Int8Scan(self.dim)
        if self._int8 is not None:
            self._int8.sync(self._matrix, n)

    def _put(self, record: MemoryRecord, vector: Vector | None) -> None:
        previous = self.records.get(record.id)
        if previous is not None:
            self._unindex(previous)
        row = self._row_of.get(record.id)
        if row is None:
            if vector is None:
                raise ValueError(f"no vector for new record {record.id}")
            row = self._allocate(record.id)
        if vector is not None:
            self._matrix[row] = vector
            if self._int8 is not None:
                self._int8.mark(row)
        if previous is None or (previous.entity, previous.content) != (
            record.entity,
            record.content,
        ):
            self._keywords.put(row, record.entity, record.content, tie_key(record.id))
        self.records.put(record)
        self.by_entity.setdefault(record.entity, set()).add(record.id)
        for entity in record.related_entities:
            self.linked_from.setdefault(entity, set()).add(record.id)

    def _remove(self, record_id: str) -> None:
        record = self.records.pop(record_id)
        if record is not None:
            self._unindex(record)
        row = self._row_of.pop(record_id, None)
        if row is not None:
            self._keywords.remove(row)
            self._alive[row] = False
            self._ids[row] = None
            self._free.append(row)

    def _unindex(self, record: MemoryRecord) -> None:
        _discard(self.by_entity, record.entity, record.id)
        for entity in record.related_entities:
            _discard(self.linked_from, entity, record.id)

    def _reserve(self, rows: int) -> None:
        """Capacity for ``rows`` rows; grows by doubling, so row-by-row growth stays cheap."""
        if rows <= len(self._matrix):
            return
        capacity = max(rows, len(self._matrix) * 2)
        grown = np.zeros((capacity, self.dim), dtype=HALF)
        grown[: len(self._matrix)] = self._matrix
        self._matrix = grown
        alive = np.zeros(capacity, dtype=bool)
        alive[: len(self._alive)] = self._alive
        self._alive = alive

    def _allocate(self, record_id: str) -> int:
        if self._free:
            row = self._free.pop()
            self._ids[row] = record_id
        else:
            row = len(self._ids)
            self._reserve(row + 1)
            self._ids.append(record_id)
        self._alive[row] = True
        self._row_of[record_id] = row
        return row


def _scores(matrix: npt.NDArray[np.float16], queries: Vector) -> Vector:
    """``matrix`` (n × dim, half) times ``queries`` (q × dim): n × q cosines, float32.

    n × q is the fast layout for BLAS here; one query keeps the matrix-vector product.
    """
    scores = np.empty((len(matrix), len(queries)), dtype=np.float32)
    for start in range(0, len(matrix), _SCAN_ROWS):
        block = widened(matrix[start : start + _SCAN_ROWS])
        if len(queries) == 1:
            scores[start : start + len(block), 0] = block @ queries[0]
        else:
            scores[start : start + len(block)] = block @ queries.T
    return scores


def _grouped(
    codes: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]
) -> Iterator[tuple[int, list[int]]]:
    """Each distinct code with the rows holding it (``rows[i]`` holds ``codes[i]``)."""
    order = np.argsort(codes, kind="stable")
    codes, rows = codes[order], rows[order]
    starts = np.flatnonzero(np.diff(codes, prepend=-1))
    bounds = [*starts.tolist(), len(codes)]
    listed = rows.tolist()
    for code, start, stop in zip(codes[starts].tolist(), bounds, bounds[1:], strict=False):
        yield code, listed[start:stop]


def _discard(index: dict[str, set[str]], key: str, record_id: str) -> None:
    members = index.get(key)
    if members is not None:
        members.discard(record_id)
        if not members:
            del index[key]


class WorkingSetCache:
    """Least-recently-used working sets within a byte budget.

    With ``freeze_every`` records, once sets of that many records in all have been put in
    since the last time, the heap is moved out of the reach of Python's full garbage
    collections (``gc.freeze``). A set's records, postings and ids are a few long-lived
    objects per record, and a full collection walks every one of them with the GIL held:
    ≈ 0.15 s at 10^5 records, stalling every request several times a minute under load.
    Frozen objects are still freed by reference counting when a set is evicted (a set
    holds no reference cycles: a test checks). What freezing costs: objects alive at that
    moment that later become unreachable *cycles* are never collected, so it happens at
    most once per ``freeze_every`` records loaded (loading that many takes seconds anyway).
    Records that enter a cached set later (ingestion) stay collectable until the next
    freeze.
    """

    def __init__(self, max_bytes: int, *, freeze_every: int = 0) -> None:
        self.max_bytes = max_bytes
        self.freeze_every = freeze_every  # records put in between freezes; 0: never
        self._unfrozen = 0
        self._sets: OrderedDict[Scope, WorkingSet] = OrderedDict()
        # Each set's size when it was last put or got, and their sum: eviction must not
        # walk every cached set (thousands of scopes) on each load. A set that grows in
        # between is counted at its new size on its next access.
        self._sizes: dict[Scope, int] = {}
        self._total = 0
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    def get(self, scope: Scope) -> WorkingSet | None:
        with self._lock:
            found = self._sets.get(scope)
            if found is not None:
                self._sets.move_to_end(scope)
                if self._account(scope, found):
                    self._evict()
            return found

    def put(self, working_set: WorkingSet) -> None:
        self._store(working_set, into_room=False)

    def offer(self, working_set: WorkingSet) -> bool:
        """Cache ``working_set`` only if its scope has none and it fits beside the others.

        For a set built because its scope was written, not searched: it may take the room
        that is left, never a searched scope's place.
        """
        return self._store(working_set, into_room=True)

    def _store(self, working_set: WorkingSet, *, into_room: bool) -> bool:
        with self._lock:
            if into_room and (
                working_set.scope in self._sets or self._total + working_set.nbytes > self.max_bytes
            ):
                return False
            self._sets[working_set.scope] = working_set
            self._sets.move_to_end(working_set.scope)
            self._account(working_set.scope, working_set)
            self._evict()
            self._unfrozen += len(working_set.records)
            freeze = 0 < self.freeze_every <= self._unfrozen
            if freeze:
                self._unfrozen = 0
        if freeze:
            gc.collect(1)  # young garbage is not frozen with the set: it would never go
            gc.freeze()
        return True

    def drop(self, scopes: Iterable[Scope] | None = None) -> None:
        with self._lock:
            if scopes is None:
                self._sets.clear()
                self._sizes.clear()
                self._total = 0
                return
            for scope in scopes:
                self._forget(scope)

    def drop_agent(self, agent_id: str) -> None:
        with self._lock:
            for scope in [s for s in self._sets if s.agent_id == agent_id]:
                self._forget(scope)

    def nbytes(self) -> int:
        with self._lock:
            return sum(ws.nbytes for ws in self._sets.values())

    def scopes(self) -> list[Scope]:
        """The cached scopes, least recently used first (looking touches none of them)."""
        with self._lock:
            return list(self._sets)

    def _account(self, scope: Scope, working_set: WorkingSet) -> bool:
        """Record the set's current size; True if the total grew."""
        size = working_set.nbytes
        grown = size - self._sizes.get(scope, 0)
        self._sizes[scope] = size
        self._total += grown
        return grown > 0

    def _forget(self, scope: Scope) -> None:
        self._sets.pop(scope, None)
        self._total -= self._sizes.pop(scope, 0)

    def _evict(self) -> None:
        while self._total > self.max_bytes and len(self._sets) > 1:
            oldest = next(iter(self._sets))
            self._forget(oldest)
