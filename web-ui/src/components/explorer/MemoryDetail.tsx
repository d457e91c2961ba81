"use client";
// One memory: its fields, validity window, decay, full history, and the actions the API
// offers (change tier, correct = a new version, forget = invalidate).
import { useEffect, useState } from "react";
import { TIERS, unwrap, type Api, type Memory, type Tier } from "@/api/client";
import { clockNow, weightAt } from "@/lib/decay";
import { formatTime, formatTurn } from "@/lib/format";
import { useSession } from "@/lib/session";
import { useApiData } from "@/lib/useApiData";
import { TierBadge } from "../Badges";
import { ErrorNotice } from "../ErrorNotice";
import { EventList } from "../EventList";

async function loadDetail(api: Api, id: string) {
  const path = { params: { path: { memory_id: id } } };
  const [memory, history, stats] = await Promise.all([
    unwrap(api.GET("/v1/memories/{memory_id}", path)),
    unwrap(api.GET("/v1/memories/{memory_id}/history", path)),
    unwrap(api.GET("/v1/stats")),
  ]);
  return { memory, history, stats };
}

function ValidityWindow({ memory }: { memory: Memory }) {
  const from = `turn ${formatTurn(memory.valid_at)} (${formatTime(memory.valid_at_time)})`;
  if (memory.invalid_at === null) return <>from {from}, still valid</>;
  const until = memory.invalid_at_time ? ` (${formatTime(memory.invalid_at_time)})` : "";
  return (
    <>
      from {from} to turn {formatTurn(memory.invalid_at)}
      {until}: {memory.invalid_reason ?? "invalidated"}
    </>
  );
}

function Actions({ memory, onDone }: { memory: Memory; onDone: () => void }) {
  const { api } = useSession();
  const [tier, setTier] = useState<Tier>(memory.tier);
  const [content, setContent] = useState(memory.content);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setTier(memory.tier);
    setContent(memory.content);
  }, [memory]);

  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await action();
      setError(null);
      onDone();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };
  const path = { path: { memory_id: memory.id } };
  const patch = (body: { tier?: Tier; content?: string }) =>
    run(() =>
      unwrap(
        api.PATCH("/v1/memories/{memory_id}", {
          params: path,
          body: { ...body, expected_version: memory.version },
        }),
      ),
    );
  const forget = () => {
    if (window.confirm("Forget this memory? It stops being recalled; its history is kept.")) {
      void run(() => unwrap(api.DELETE("/v1/memories/{memory_id}", { params: path })));
    }
  };

  return (
    <div>
      <h3>Actions</h3>
      <ErrorNotice error={error} />
      <div className="row">
        <label className="field">
          Tier
          <select value={tier} onChange={(e) => setTier(e.target.value as Tier)}>
            {TIERS.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <button type="button" disabled={busy || tier === memory.tier} onClick={() => patch({ tier })}>
          Change tier
        </button>
      </div>
      <label className="field" style={{ marginTop: "0.6rem" }}>
        Corrected content (saved as a new version; this one is superseded)
        <textarea rows={2} value={content} onChange={(e) => setContent(e.target.value)} />
      </label>
      <div className="row" style={{ marginTop: "0.4rem" }}>
        <button
          type="button"
          disabled={busy || !content.trim() || content === memory.content}
          onClick={() => patch({ content })}
        >
          Save correction
        </button>
        <button type="button" className="danger" disabled={busy} onClick={forget}>
          Forget (invalidate)
        </button>
      </div>
    </div>
  );
}

export function MemoryDetail({ id }: { id: string }) {
  const detail = useApiData((api) => loadDetail(api, id), [id], (event) =>
    event.records.some((r) => r.id === id) || (event.closed ?? []).includes(id),
  );
  if (detail.error) return <ErrorNotice error={detail.error} />;
  if (!detail.data) return <p className="muted">Loading…</p>;
  const { memory, history, stats } = detail.data;
  const weight = weightAt(stats.decay, memory, clockNow(stats.decay, stats.turn));
  return (
    <div>
      <p style={{ fontSize: "1.05rem", marginTop: 0 }}>{memory.content}</p>
      <dl className="facts">
        <dt>Tier</dt>
        <dd>
          <TierBadge tier={memory.tier} />
        </dd>
        <dt>Entity</dt>
        <dd>{memory.entity}</dd>
        <dt>Valid</dt>
        <dd>
          <ValidityWindow memory={memory} />
        </dd>
        <dt>Weight now</dt>
        <dd>
          {weight.toFixed(3)} (w₀ {memory.weight0.toFixed(2)}, reinforced {memory.k}×, anchor turn{" "}
          {formatTurn(memory.anchor_turn)})
        </dd>
        <dt>Pruned at</dt>
        <dd>{memory.expires_turn === null ? "never (does not decay)" : `turn ${formatTurn(memory.expires_turn)}`}</dd>
        <dt>Related</dt>
        <dd>{memory.related_entities.join(", ") || "–"}</dd>
        <dt>Version</dt>
        <dd>
          {memory.version} · importance {memory.importance} · source turns{" "}
          {memory.source_turn_ids.join(", ") || "–"}
        </dd>
      </dl>
      {memory.valid && <Actions memory={memory} onDone={detail.reload} />}
      <h3>Versions</h3>
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th className="num">v</th>
              <th>Content</th>
              <th>Tier</th>
              <th>Validity</th>
            </tr>
          </thead>
          <tbody>
            {history.versions.map((v) => (
              <tr key={v.version}>
                <td className="num">{v.version}</td>
                <td>{v.content}</td>
                <td>{v.tier}</td>
                <td>
                  <ValidityWindow memory={v} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3>Events</h3>
      <EventList events={[...history.events].reverse()} />
    </div>
  );
}
