"use client";
// GET /v1/memories with the tier / entity / validity filters, following the cursor.
import { useState } from "react";
import { TIERS, type Tier } from "@/api/client";
import { formatTurn } from "@/lib/format";
import { loadMemories, type Validity } from "@/lib/memories";
import { useApiData } from "@/lib/useApiData";
import { ErrorNotice } from "../ErrorNotice";
import { TierBadge } from "../Badges";

const PAGE = 50;

export function MemoryList({
  selected,
  onSelect,
  entities,
}: {
  selected: string | null;
  onSelect: (id: string) => void;
  entities: readonly string[];
}) {
  const [tier, setTier] = useState<Tier | null>(null);
  const [validity, setValidity] = useState<Validity>("valid");
  const [entityText, setEntityText] = useState("");
  const [entity, setEntity] = useState<string | null>(null);
  const [wanted, setWanted] = useState(PAGE);
  const filters = { tier, entity, validity };
  const list = useApiData((api) => loadMemories(api, filters, wanted), [tier, entity, validity, wanted]);
  const applyEntity = () => setEntity(entityText.trim() || null);

  return (
    <section className="panel" aria-labelledby="list-h">
      <h2 id="list-h">Memories</h2>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          applyEntity();
        }}
      >
        <label className="field">
          Tier
          <select value={tier ?? ""} onChange={(e) => setTier((e.target.value || null) as Tier | null)}>
            <option value="">all tiers</option>
            {TIERS.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Validity
          <select value={validity} onChange={(e) => setValidity(e.target.value as Validity)}>
            <option value="valid">valid only</option>
            <option value="all">valid and superseded</option>
            <option value="invalid">superseded or forgotten only</option>
          </select>
        </label>
        <label className="field grow">
          Entity
          <input
            list="entity-options"
            value={entityText}
            onChange={(e) => setEntityText(e.target.value)}
            onBlur={applyEntity}
            placeholder="any entity"
          />
        </label>
        <datalist id="entity-options">
          {entities.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        <button type="submit" className="secondary">
          Filter
        </button>
      </form>
      <ErrorNotice error={list.error} />
      {list.data && (
        <>
          <p className="muted small" aria-live="polite">
            {list.data.items.length}
            {list.data.more ? "+" : ""} memories
          </p>
          <ul className="list" aria-label="Memories">
            {list.data.items.map((memory) => (
              <li key={memory.id}>
                <button
                  type="button"
                  className="item-button"
                  aria-pressed={selected === memory.id}
                  onClick={() => onSelect(memory.id)}
                >
                  <div className="meta">
                    <TierBadge tier={memory.tier} />
                    <span>{memory.entity}</span>
                    <span>
                      v{memory.version} · turn {formatTurn(memory.valid_at)}
                    </span>
                    {!memory.valid && <span>{memory.invalid_reason ?? "invalid"}</span>}
                  </div>
                  <div style={memory.valid ? undefined : { textDecoration: "line-through" }}>
                    {memory.content}
                  </div>
                </button>
              </li>
            ))}
          </ul>
          {list.data.more && (
            <button type="button" className="secondary" onClick={() => setWanted((w) => w + PAGE)}>
              Load more
            </button>
          )}
        </>
      )}
    </section>
  );
}
