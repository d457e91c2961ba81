"use client";
import { MARGIN, ticks, useFrame } from "./axis";

/** Counts per equal-width bin of [0, 1], with a labelled vertical line at `marker`. */
export function Histogram({
  counts,
  marker,
  label,
}: {
  counts: readonly number[];
  marker?: { at: number; label: string };
  label: string;
}) {
  const [box, { WIDTH, HEIGHT, PLOT_W, PLOT_H }] = useFrame();
  const max = Math.max(1, ...counts);
  const band = PLOT_W / Math.max(1, counts.length);
  const y = (v: number) => MARGIN.top + PLOT_H - (v / max) * PLOT_H;
  const described = counts
    .map((c, i) => `${(i / counts.length).toFixed(1)}–${((i + 1) / counts.length).toFixed(1)}: ${c}`)
    .join(", ");
  return (
    <div ref={box}>
      <svg className="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`${label}. ${described}`}>
        {ticks(max).map((t) => (
          <g key={t}>
            <line x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={y(t)} y2={y(t)} stroke="#e6e9ef" />
            <text x={MARGIN.left - 6} y={y(t) + 4} textAnchor="end">
              {t}
            </text>
          </g>
        ))}
        {counts.map((count, i) => (
          <rect
            key={i}
            x={MARGIN.left + i * band + 2}
            y={y(count)}
            width={band - 4}
            height={MARGIN.top + PLOT_H - y(count)}
            fill="#2f5fd0"
          >
            <title>{`weight ${(i / counts.length).toFixed(1)}–${((i + 1) / counts.length).toFixed(1)}: ${count}`}</title>
          </rect>
        ))}
        {[0, 0.5, 1].map((v) => (
          <text key={v} x={MARGIN.left + v * PLOT_W} y={HEIGHT - 10} textAnchor="middle">
            {v}
          </text>
        ))}
        {marker && (
          <g>
            <line
              x1={MARGIN.left + marker.at * PLOT_W}
              x2={MARGIN.left + marker.at * PLOT_W}
              y1={MARGIN.top}
              y2={MARGIN.top + PLOT_H}
              stroke="#c0392b"
              strokeDasharray="5 4"
              strokeWidth={2}
            />
            <text x={MARGIN.left + marker.at * PLOT_W + 4} y={MARGIN.top + 10} style={{ fill: "#c0392b" }}>
              {marker.label}
            </text>
          </g>
        )}
      </svg>
    </div>
  );
}
