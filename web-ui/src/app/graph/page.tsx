"use client";
// Entity graph: force-directed, bounded by max_nodes; choosing a node lists its facts.
import { useState } from "react";
import { TIERS, unwrap, type EventOut } from "@/api/client";
import { Swatch, TierBadge } from "@/components/Badges";
import { ErrorNotice } from "@/components/ErrorNotice";
import { ForceGraph } from "@/components/graph/ForceGraph";
import { TIER_COLORS } from "@/lib/colors";
import { entityLabel } from "@/lib/format";
import { loadMemories } from "@/lib/memories";
import { useApiData } from "@/lib/useApiData";

const SIZES = [50, 150, 300] as const;
const FACT_CAP = 2000;
const changesGraph = (event: EventOut) => event.kind !== "reinforce" && event.kind !== "turn";

export default function GraphPage() {
  const [maxNodes, setMaxNodes] = useState<number>(150);
  const [selected, setSelected] = useState<string | null>(null);
  const data = useApiData(
    async (api) => {
      const [graph, memories] = await Promise.all([
        unwrap(api.GET("/v1/graph", { params: { query: { max_nodes: maxNodes } } })),
        loadMemories(api, {}, FACT_CAP),
      ]);
      return { graph, memories };
    },
    [maxNodes],
    changesGraph,
  );
  const graph = data.data?.graph;
  const facts = (data.data?.memories.items ?? []).filter(
    (m) => selected !== null && (m.entity === selected || m.related_entities.includes(selected)),
  );
  const names = [...(graph?.nodes ?? [])].map((n) => n.entity).sort();

  return (
    <>
      <h1>Entity graph</h1>
      <ErrorNotice error={data.error} />
      <div className="split">
        <section className="panel" aria-labelledby="graph-h">
          <h2 id="graph-h">Entities and their links</h2>
          <div className="row" style={{ marginBottom: "0.5rem" }}>
            <label className="field">
              Largest entities shown
              <select value={maxNodes} onChange={(e) => setMaxNodes(Number(e.target.value))}>
                {SIZES.map((size) => (
                  <option key={size} value={size}>
                    {size}
                  </option>
                ))}
              </select>
            </label>
            <label className="field grow">
              Entity
              <select value={selected ?? ""} onChange={(e) => setSelected(e.target.value || null)}>
                <option value="">choose an entity</option>
                {names.map((name) => (
                  <option key={name} value={name}>
                    {entityLabel(name)}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {graph && graph.truncated && (
            <p className="muted small">
              Showing the {graph.nodes.length} entities with the most records; raise the limit to see more.
            </p>
          )}
          {graph && graph.nodes.length > 0 && (
            <ForceGraph graph={graph} selected={selected} onSelect={setSelected} />
          )}
          {graph && graph.nodes.length === 0 && <p className="muted">No entities yet.</p>}
          <div className="legend">
            {TIERS.map((tier) => (
              <span key={tier}>
                <Swatch color={TIER_COLORS[tier]} />
                {tier}
              </span>
            ))}
            <span>
              <Swatch color="#9aa3b2" />
              only named by links
            </span>
          </div>
        </section>
        <section className="panel" aria-labelledby="facts-h" aria-live="polite">
          <h2 id="facts-h">{selected ? entityLabel(selected) : "Facts"}</h2>
          {selected === null && <p className="muted">Click a node (or Tab to it and press Enter).</p>}
          {selected !== null && facts.length === 0 && <p className="muted">No valid facts name this entity.</p>}
          <ul className="list" aria-label="Facts of the entity">
            {facts.map((m) => (
              <li key={m.id}>
                <div className="meta">
                  <TierBadge tier={m.tier} />
                  <span>{m.entity === selected ? "about it" : `links to it (${entityLabel(m.entity)})`}</span>
                </div>
                <div>{m.content}</div>
              </li>
            ))}
          </ul>
        </section>
      </div>
    </>
  );
}
