"use client";
// Overview: counts by tier, the weight histogram, Hot vs Cold sizes, recent events and
// what the live stream has delivered since the page opened.
import { TIERS, unwrap } from "@/api/client";
import { EventList } from "@/components/EventList";
import { ErrorNotice } from "@/components/ErrorNotice";
import { StatCards } from "@/components/StatCards";
import { HBars } from "@/components/charts/HBars";
import { Histogram } from "@/components/charts/Histogram";
import { EVENT_KINDS, TIER_COLORS } from "@/lib/colors";
import { formatNumber, formatTurn } from "@/lib/format";
import { useLive } from "@/lib/live";
import { useApiData } from "@/lib/useApiData";

const RECENT = 12;

export default function OverviewPage() {
  const stats = useApiData((api) => unwrap(api.GET("/v1/stats")), []);
  const recent = useApiData(
    (api) => unwrap(api.GET("/v1/events", { params: { query: { limit: RECENT } } })),
    [],
  );
  const live = useLive();
  const s = stats.data;
  const sum = (values: Partial<Record<string, number>>) =>
    Object.values(values).reduce<number>((a, b) => a + (b ?? 0), 0);

  return (
    <>
      <h1>Overview</h1>
      <ErrorNotice error={stats.error ?? recent.error} />
      {s && (
        <StatCards
          stats={[
            { label: "Turn (clock)", value: formatTurn(s.turn) },
            { label: "Turns stored", value: formatNumber(s.turns) },
            { label: "Valid records", value: formatNumber(sum(s.records)) },
            { label: "Superseded or forgotten", value: formatNumber(sum(s.invalidated)) },
            { label: "Events logged", value: formatNumber(sum(s.events)) },
            { label: "Mean weight", value: s.mean_weight === null ? "–" : s.mean_weight.toFixed(2) },
          ]}
        />
      )}
      <div className="grid">
        <section className="panel" aria-labelledby="tiers-h">
          <h2 id="tiers-h">Records by tier</h2>
          {s && (
            <HBars
              label="Valid records per tier"
              bars={TIERS.map((tier) => ({
                label: tier,
                value: s.records[tier] ?? 0,
                color: TIER_COLORS[tier],
                note: `decay λ = ${s.decay.lambdas[tier] ?? 0} per ${s.decay.clock === "hours" ? "hour" : "turn"}`,
              }))}
            />
          )}
        </section>
        <section className="panel" aria-labelledby="weights-h">
          <h2 id="weights-h">Weight histogram</h2>
          {s && (
            <Histogram
              label="Valid records per weight decile"
              counts={s.weight_histogram}
              marker={{ at: s.decay.w_prune, label: `prune ${s.decay.w_prune}` }}
            />
          )}
        </section>
        <section className="panel" aria-labelledby="stores-h">
          <h2 id="stores-h">Hot vs Cold</h2>
          {s && (
            <HBars
              label="Rows in the Hot and Cold stores"
              bars={[
                { label: "Hot: working set rows (LanceDB)", value: s.hot_rows, color: "#d9822b" },
                {
                  label: "Cold: fact versions",
                  value: sum(s.records) + sum(s.invalidated),
                  color: "#2f5fd0",
                  note: "every version, valid or not",
                },
                { label: "Cold: turns", value: s.turns, color: "#5d6d7e" },
                { label: "Cold: events", value: sum(s.events), color: "#8a94a6" },
              ]}
            />
          )}
        </section>
        <section className="panel" aria-labelledby="counters-h">
          <h2 id="counters-h">Live counters</h2>
          <p className="muted small">Events received over /ws/live since this page connected.</p>
          <table>
            <tbody>
              {EVENT_KINDS.filter((kind) => live.counts[kind]).map((kind) => (
                <tr key={kind}>
                  <td>{kind}</td>
                  <td className="num">{live.counts[kind]}</td>
                </tr>
              ))}
              <tr>
                <th scope="row">total</th>
                <td className="num">{formatNumber(sum(live.counts))}</td>
              </tr>
            </tbody>
          </table>
        </section>
        <section className="panel" aria-labelledby="recent-h" style={{ gridColumn: "1 / -1" }}>
          <h2 id="recent-h">Recent events</h2>
          {recent.data && <EventList events={[...recent.data.items].reverse()} />}
        </section>
      </div>
    </>
  );
}
