"use client";
// Recall through POST /v1/memories/search, showing each hit's score breakdown.
import { useState, type FormEvent } from "react";
import { unwrap, type HitOut, type SearchResult } from "@/api/client";
import { useSession } from "@/lib/session";
import { ErrorNotice } from "../ErrorNotice";
import { TierBadge } from "../Badges";

function num(value: number | null, digits = 3): string {
  return value === null ? "–" : value.toFixed(digits);
}

function Breakdown({ hit }: { hit: HitOut }) {
  const b = hit.breakdown;
  const ranks = Object.entries(b.ranks).map(([name, rank]) => `${name} #${rank}`);
  const parts: [string, string][] = [
    ["score", num(hit.score, 4)],
    ["vector", num(b.vector)],
    ["keyword", num(b.keyword)],
    ["graph hops", b.graph_hops === null ? "–" : String(b.graph_hops)],
    ["weight", num(b.weight, 2)],
    ["ranks", ranks.join(", ") || "–"],
  ];
  return (
    <dl className="breakdown" aria-label="Score breakdown">
      {parts.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function HitBody({ hit }: { hit: HitOut }) {
  return (
    <>
      <div className="meta">
        {hit.memory ? (
          <>
            <TierBadge tier={hit.memory.tier} />
            <span>{hit.memory.valid ? "valid" : "superseded"}</span>
          </>
        ) : (
          <>
            <span className="badge" style={{ background: "#5d6d7e" }}>
              turn
            </span>
            {hit.turn && (
              <span>
                {hit.turn.speaker}, turn {hit.turn.turn}
              </span>
            )}
          </>
        )}
      </div>
      <div>{hit.content}</div>
      <Breakdown hit={hit} />
    </>
  );
}

export function SearchPanel({
  selected,
  onSelect,
}: {
  selected: string | null;
  onSelect: (id: string) => void;
}) {
  const { api } = useSession();
  const [query, setQuery] = useState("");
  const [includeInvalidated, setIncludeInvalidated] = useState(false);
  const [reinforce, setReinforce] = useState(false);
  const [result, setResult] = useState<SearchResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const search = async (event: FormEvent) => {
    event.preventDefault();
    if (!query.trim()) return;
    setBusy(true);
    try {
      const body = { query, top_k: 10, include_invalidated: includeInvalidated, reinforce };
      setResult(await unwrap(api.POST("/v1/memories/search", { body })));
      setError(null);
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="panel" aria-labelledby="search-h">
      <h2 id="search-h">Search</h2>
      <form onSubmit={search} role="search">
        <div className="row">
          <label className="field grow">
            Search memories (recall)
            <input
              type="search"
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              placeholder="e.g. Where does Maya live?"
            />
          </label>
          <button type="submit" disabled={busy || !query.trim()}>
            {busy ? "Searching…" : "Search"}
          </button>
        </div>
        <div className="row" style={{ marginTop: "0.4rem" }}>
          <label className="check">
            <input
              type="checkbox"
              checked={includeInvalidated}
              onChange={(e) => setIncludeInvalidated(e.target.checked)}
            />
            Include superseded facts
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={reinforce}
              onChange={(e) => setReinforce(e.target.checked)}
            />
            Reinforce what is recalled
          </label>
        </div>
      </form>
      <ErrorNotice error={error} />
      {result && (
        <div aria-live="polite">
          <p className="muted small">
            {result.hits.length} hits · context {result.tokens} tokens · preset {result.preset}
            {result.reinforced > 0 && ` · ${result.reinforced} reinforced`}
          </p>
          <ol className="list" aria-label="Search hits">
            {result.hits.map((hit) => (
              <li key={`${hit.kind}-${hit.id}`} className="hit">
                {hit.memory ? (
                  <button
                    type="button"
                    className="item-button"
                    aria-pressed={selected === hit.memory.id}
                    onClick={() => hit.memory && onSelect(hit.memory.id)}
                  >
                    <HitBody hit={hit} />
                  </button>
                ) : (
                  <div className="item-static">
                    <HitBody hit={hit} />
                  </div>
                )}
              </li>
            ))}
          </ol>
          <details>
            <summary>Rendered context</summary>
            <pre>{result.context}</pre>
          </details>
        </div>
      )}
    </section>
  );
}
