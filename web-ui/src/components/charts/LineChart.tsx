"use client";
import { MARGIN, useFrame } from "./axis";

export interface Series {
  id: string;
  label: string;
  color: string;
  points: readonly (readonly [number, number])[];
}

/** Lines over x ∈ [x0, x1], y ∈ [0, 1], with a dashed horizontal threshold. */
export function LineChart({
  series,
  x0,
  x1,
  threshold,
  highlight,
  label,
  xLabel,
}: {
  series: readonly Series[];
  x0: number;
  x1: number;
  threshold: { at: number; label: string };
  highlight: string | null;
  label: string;
  xLabel: string;
}) {
  const [box, { WIDTH, HEIGHT, PLOT_W, PLOT_H }] = useFrame();
  const x = (v: number) => MARGIN.left + ((v - x0) / Math.max(1e-9, x1 - x0)) * PLOT_W;
  const y = (v: number) => MARGIN.top + PLOT_H - v * PLOT_H;
  const xTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => x0 + f * (x1 - x0));
  return (
    <div ref={box}>
      <svg className="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label}>
        {[0, 0.25, 0.5, 0.75, 1].map((t) => (
          <g key={t}>
            <line x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={y(t)} y2={y(t)} stroke="#e6e9ef" />
            <text x={MARGIN.left - 6} y={y(t) + 4} textAnchor="end">
              {t}
            </text>
          </g>
        ))}
        {xTicks.map((t) => (
          <text key={t} x={x(t)} y={HEIGHT - 14} textAnchor="middle">
            {Math.round(t)}
          </text>
        ))}
        <text x={WIDTH - MARGIN.right} y={HEIGHT - 2} textAnchor="end">
          {xLabel}
        </text>
        {series.map((s) => (
          <polyline
            key={s.id}
            points={s.points.map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(" ")}
            fill="none"
            stroke={s.color}
            strokeWidth={s.id === highlight ? 3.5 : 1.5}
            strokeOpacity={highlight === null || s.id === highlight ? 0.9 : 0.25}
          >
            <title>{s.label}</title>
          </polyline>
        ))}
        <line
          x1={MARGIN.left}
          x2={WIDTH - MARGIN.right}
          y1={y(threshold.at)}
          y2={y(threshold.at)}
          stroke="#c0392b"
          strokeDasharray="6 4"
          strokeWidth={2}
        />
        <text x={WIDTH - MARGIN.right - 4} y={y(threshold.at) - 5} textAnchor="end" style={{ fill: "#c0392b" }}>
          {threshold.label}
        </text>
      </svg>
    </div>
  );
}
