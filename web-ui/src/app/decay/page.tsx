"use client";
// Decay curves: each valid record's projected weight over the next N turns, against the
// prune line, with the same constants the service uses (from /v1/stats).
import { useState } from "react";
import { TIERS, unwrap, type EventOut } from "@/api/client";
import { Swatch, TierBadge } from "@/components/Badges";
import { ErrorNotice } from "@/components/ErrorNotice";
import { LineChart, type Series } from "@/components/charts/LineChart";
import { TIER_COLORS } from "@/lib/colors";
import { clockNow, weightAt } from "@/lib/decay";
import { formatTurn } from "@/lib/format";
import { loadMemories } from "@/lib/memories";
import { useApiData } from "@/lib/useApiData";

const HORIZONS = [10, 50, 100, 500, 1000] as const;
const SAMPLES = 60;
const RECORD_CAP = 500;
const changesWeights = (event: EventOut) => event.kind !== "turn";

export default function DecayPage() {
  const [horizon, setHorizon] = useState<number>(100);
  const [highlight, setHighlight] = useState<string | null>(null);
  const data = useApiData(
    async (api) => {
      const [stats, memories] = await Promise.all([
        unwrap(api.GET("/v1/stats")),
        loadMemories(api, {}, RECORD_CAP),
      ]);
      return { stats, memories };
    },
    [],
    changesWeights,
  );

  if (!data.data) return <><h1>Decay curves</h1><ErrorNotice error={data.error} /></>;
  const { stats, memories } = data.data;
  const { decay } = stats;
  const unit = decay.clock === "hours" ? "hours" : "turns";
  const now = clockNow(decay, stats.turn);
  const end = now + horizon;
  const rows = memories.items
    .map((m) => ({
      memory: m,
      now: weightAt(decay, m, now),
      end: weightAt(decay, m, end),
      left: m.expires_turn === null ? Infinity : m.expires_turn - now,
    }))
    .sort((a, b) => a.left - b.left || a.end - b.end);
  const series: Series[] = rows.map(({ memory }) => ({
    id: memory.id,
    label: `${memory.content} (${memory.tier})`,
    color: TIER_COLORS[memory.tier],
    points: Array.from({ length: SAMPLES + 1 }, (_, i) => {
      const t = now + (horizon * i) / SAMPLES;
      return [t, weightAt(decay, memory, t)] as const;
    }),
  }));
  const pruned = rows.filter((r) => r.left <= horizon).length;

  return (
    <>
      <h1>Decay curves</h1>
      <ErrorNotice error={data.error} />
      <section className="panel" aria-labelledby="curves-h">
        <h2 id="curves-h">
          Projected weight over the next {horizon} {unit}
        </h2>
        <div className="row" style={{ marginBottom: "0.5rem" }}>
          <label className="field">
            Horizon ({unit})
            <select value={horizon} onChange={(e) => setHorizon(Number(e.target.value))}>
              {HORIZONS.map((h) => (
                <option key={h} value={h}>
                  {h}
                </option>
              ))}
            </select>
          </label>
          <p className="muted small grow" style={{ margin: 0 }}>
            Now: {unit === "turns" ? `turn ${formatTurn(now)}` : "this hour"}. {pruned} of {rows.length}{" "}
            records cross the prune line (w = {decay.w_prune}) within the horizon, unless recalled
            again (each recall slows decay by e<sup>−{decay.eta}</sup>).
          </p>
        </div>
        <LineChart
          series={series}
          x0={now}
          x1={end}
          threshold={{ at: decay.w_prune, label: `prune line ${decay.w_prune}` }}
          highlight={highlight}
          label={`Projected weight of ${rows.length} records over ${horizon} ${unit}; ${pruned} reach the prune line`}
          xLabel={unit}
        />
        <div className="legend">
          {TIERS.map((tier) => (
            <span key={tier}>
              <Swatch color={TIER_COLORS[tier]} />
              {tier} (λ {decay.lambdas[tier] ?? 0})
            </span>
          ))}
        </div>
      </section>
      <section className="panel" aria-labelledby="records-h" style={{ marginTop: "var(--gap)" }}>
        <h2 id="records-h">Records, soonest pruned first</h2>
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th>Record</th>
                <th>Tier</th>
                <th className="num">Weight now</th>
                <th className="num">In {horizon}</th>
                <th className="num">Pruned in</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr
                  key={r.memory.id}
                  tabIndex={0}
                  onMouseEnter={() => setHighlight(r.memory.id)}
                  onFocus={() => setHighlight(r.memory.id)}
                  onMouseLeave={() => setHighlight(null)}
                  onBlur={() => setHighlight(null)}
                  style={r.memory.id === highlight ? { background: "#eef3ff" } : undefined}
                >
                  <td>{r.memory.content}</td>
                  <td>
                    <TierBadge tier={r.memory.tier} />
                  </td>
                  <td className="num">{r.now.toFixed(3)}</td>
                  <td className="num">{r.end.toFixed(3)}</td>
                  <td className="num">
                    {r.left === Infinity ? "never" : r.left <= 0 ? "due now" : `${formatTurn(Math.ceil(r.left))} ${unit}`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {memories.more && <p className="muted small">Showing the first {RECORD_CAP} records.</p>}
      </section>
    </>
  );
}
