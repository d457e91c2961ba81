"use client";
// Memory explorer: recall with score breakdowns, the filtered list, and one record's
// detail with its history and actions.
import { useState } from "react";
import { unwrap } from "@/api/client";
import { MemoryDetail } from "@/components/explorer/MemoryDetail";
import { MemoryList } from "@/components/explorer/MemoryList";
import { SearchPanel } from "@/components/explorer/SearchPanel";
import { useApiData } from "@/lib/useApiData";

export default function ExplorerPage() {
  const [selected, setSelected] = useState<string | null>(null);
  const graph = useApiData(
    (api) => unwrap(api.GET("/v1/graph", { params: { query: { max_nodes: 500 } } })),
    [],
    (event) => event.kind === "add" || event.kind === "purge",
  );
  const entities = (graph.data?.nodes ?? []).filter((n) => n.records > 0).map((n) => n.entity);

  return (
    <>
      <h1>Memory explorer</h1>
      <div className="split">
        <div style={{ display: "grid", gap: "var(--gap)" }}>
          <SearchPanel selected={selected} onSelect={setSelected} />
          <MemoryList selected={selected} onSelect={setSelected} entities={entities} />
        </div>
        <section className="panel sticky" aria-labelledby="detail-h">
          <h2 id="detail-h">Memory</h2>
          {selected ? (
            <MemoryDetail id={selected} />
          ) : (
            <p className="muted">Choose a memory from the search hits or the list.</p>
          )}
        </section>
      </div>
    </>
  );
}
