"use client";
// The entity graph drawn in SVG: node size by records, colour by dominant tier, links
// by weight. Nodes are buttons: click, or Tab to one and press Enter.
import { useMemo, useRef, type KeyboardEvent } from "react";
import type { GraphOut, Tier } from "@/api/client";
import { TIER_COLORS } from "@/lib/colors";
import { forceLayout, type Point } from "@/lib/forceLayout";
import { entityLabel } from "@/lib/format";

const WIDTH = 800;
const HEIGHT = 560;
const LABELLED = 40;
const LINK_ONLY = "#9aa3b2";

type Node = GraphOut["nodes"][number];

function dominantTier(node: Node): Tier | null {
  const entries = Object.entries(node.tiers).sort((a, b) => b[1] - a[1]);
  return (entries[0]?.[0] as Tier | undefined) ?? null;
}

function radius(node: Node): number {
  return 5 + Math.sqrt(node.records) * 3;
}

function shorten(text: string, max = 24): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function ForceGraph({
  graph,
  selected,
  onSelect,
}: {
  graph: GraphOut;
  selected: string | null;
  onSelect: (entity: string) => void;
}) {
  const previous = useRef<Map<string, Point>>(new Map());
  const positions = useMemo(() => {
    const ids = graph.nodes.map((n) => n.entity);
    const laid = forceLayout(ids, graph.edges, WIDTH, HEIGHT, 40, previous.current);
    previous.current = laid;
    return laid;
  }, [graph]);

  const degree = new Map<string, number>();
  for (const e of graph.edges) {
    degree.set(e.source, (degree.get(e.source) ?? 0) + e.weight);
    degree.set(e.target, (degree.get(e.target) ?? 0) + e.weight);
  }
  const labelled = new Set(
    [...graph.nodes]
      .sort((a, b) => (degree.get(b.entity) ?? 0) + b.records - ((degree.get(a.entity) ?? 0) + a.records))
      .slice(0, LABELLED)
      .map((n) => n.entity),
  );
  const onKey = (entity: string) => (event: KeyboardEvent) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      onSelect(entity);
    }
  };

  return (
    <svg
      className="chart"
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      role="group"
      aria-label={`Entity graph: ${graph.nodes.length} entities, ${graph.edges.length} links`}
    >
      {graph.edges.map((e) => {
        const a = positions.get(e.source);
        const b = positions.get(e.target);
        if (!a || !b) return null;
        const near = selected === e.source || selected === e.target;
        return (
          <line
            key={`${e.source}->${e.target}`}
            x1={a.x}
            y1={a.y}
            x2={b.x}
            y2={b.y}
            stroke={near ? "#f0b400" : "#b9c0cc"}
            strokeWidth={Math.min(6, 1 + e.weight)}
          />
        );
      })}
      {graph.nodes.map((node) => {
        const p = positions.get(node.entity);
        if (!p) return null;
        const tier = dominantTier(node);
        const label = entityLabel(node.entity);
        return (
          <g
            key={node.entity}
            className="graph-node"
            transform={`translate(${p.x.toFixed(1)},${p.y.toFixed(1)})`}
            role="button"
            tabIndex={0}
            aria-pressed={selected === node.entity}
            aria-label={`${label}: ${node.records} records`}
            onClick={() => onSelect(node.entity)}
            onKeyDown={onKey(node.entity)}
          >
            <circle
              r={radius(node)}
              fill={tier ? TIER_COLORS[tier] : LINK_ONLY}
              stroke="#fff"
              strokeWidth={1.5}
            />
            {(labelled.has(node.entity) || selected === node.entity) && (
              <text x={radius(node) + 3} y={4}>
                {shorten(label)}
              </text>
            )}
          </g>
        );
      })}
    </svg>
  );
}
