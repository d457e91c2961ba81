import { formatNumber } from "@/lib/format";

export interface HBar {
  label: string;
  value: number;
  color: string;
  note?: string;
}

/** Horizontal bars as plain HTML: one labelled row per value, scaled to the largest. */
export function HBars({ bars, label }: { bars: readonly HBar[]; label: string }) {
  const max = Math.max(1, ...bars.map((b) => b.value));
  return (
    <ul className="list" aria-label={label}>
      {bars.map((bar) => (
        <li key={bar.label} style={{ border: 0, padding: "0.2rem 0" }}>
          <div className="meta" style={{ justifyContent: "space-between", color: "var(--ink)" }}>
            <span>{bar.label}</span>
            <strong>{formatNumber(bar.value)}</strong>
          </div>
          <div style={{ background: "#eef0f4", borderRadius: 4, height: 10 }} aria-hidden="true">
            <div
              style={{
                width: `${(bar.value / max) * 100}%`,
                background: bar.color,
                height: "100%",
                borderRadius: 4,
                minWidth: bar.value > 0 ? 3 : 0,
              }}
            />
          </div>
          {bar.note && <div className="muted small">{bar.note}</div>}
        </li>
      ))}
    </ul>
  );
}
