"use client";
import { MARGIN, ticks, useFrame } from "./axis";

export interface Stack {
  label: string;
  segments: readonly { key: string; count: number; color: string }[];
}

/** One bar per stack, its segments piled bottom-up; x labels thinned to fit. */
export function StackedBars({ stacks, label }: { stacks: readonly Stack[]; label: string }) {
  const [box, { WIDTH, HEIGHT, PLOT_W, PLOT_H }] = useFrame();
  const totals = stacks.map((s) => s.segments.reduce((sum, seg) => sum + seg.count, 0));
  const max = Math.max(1, ...totals);
  const band = PLOT_W / Math.max(1, stacks.length);
  const y = (v: number) => MARGIN.top + PLOT_H - (v / max) * PLOT_H;
  // Room for a label about every 44 px.
  const every = Math.ceil(stacks.length / Math.max(2, Math.floor(PLOT_W / 44)));
  return (
    <div ref={box}>
      <svg className="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label}>
        {ticks(max).map((t) => (
          <g key={t}>
            <line x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={y(t)} y2={y(t)} stroke="#e6e9ef" />
            <text x={MARGIN.left - 6} y={y(t) + 4} textAnchor="end">
              {t}
            </text>
          </g>
        ))}
        {stacks.map((stack, i) => {
          let base = 0;
          const x = MARGIN.left + i * band + Math.min(2, band * 0.1);
          const width = Math.max(1, band - Math.min(4, band * 0.2));
          return (
            <g key={stack.label}>
              {stack.segments.map((seg) => {
                const top = y(base + seg.count);
                const height = y(base) - top;
                base += seg.count;
                return (
                  <rect key={seg.key} x={x} y={top} width={width} height={height} fill={seg.color}>
                    <title>{`${stack.label}: ${seg.count} ${seg.key}`}</title>
                  </rect>
                );
              })}
              {i % every === 0 && (
                <text x={x + width / 2} y={HEIGHT - 10} textAnchor="middle">
                  {stack.label}
                </text>
              )}
            </g>
          );
        })}
      </svg>
    </div>
  );
}
