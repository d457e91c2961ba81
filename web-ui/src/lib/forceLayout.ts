// A small force-directed layout (Fruchterman–Reingold with cooling), run to rest in one
// go: the graph is bounded (max_nodes), so O(n²) repulsion per step is cheap enough.

export interface Point {
  x: number;
  y: number;
}

interface Link {
  source: string;
  target: string;
}

const ITERATIONS = 300;
const GRAVITY = 0.03;

/** Positions inside [margin, width − margin] × [margin, height − margin]. Nodes that were
 * laid out before start where they were, so a refresh does not reshuffle the picture. */
export function forceLayout(
  ids: readonly string[],
  links: readonly Link[],
  width: number,
  height: number,
  margin: number,
  previous: ReadonlyMap<string, Point>,
): Map<string, Point> {
  const n = ids.length;
  if (n === 0) return new Map();
  const index = new Map(ids.map((id, i) => [id, i]));
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  ids.forEach((id, i) => {
    const seen = previous.get(id);
    const angle = i * 2.399963; // the golden angle spreads new nodes evenly
    const radius = 10 * Math.sqrt(i + 1);
    xs[i] = seen ? seen.x : width / 2 + radius * Math.cos(angle);
    ys[i] = seen ? seen.y : height / 2 + radius * Math.sin(angle);
  });
  const pairs = links
    .map((l) => [index.get(l.source), index.get(l.target)] as const)
    .filter((p): p is readonly [number, number] => p[0] !== undefined && p[1] !== undefined);
  // Hubs push harder (as in ForceAtlas2), so the facts around a busy entity fan out
  // instead of piling onto it.
  const mass = new Float64Array(n).fill(1);
  for (const [a, b] of pairs) {
    mass[a]! += 1;
    mass[b]! += 1;
  }
  const k = Math.sqrt((width * height) / Math.max(1, n)) * 0.6;
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  for (let step = 0; step < ITERATIONS; step++) {
    const temperature = (width / 10) * (1 - step / ITERATIONS) + 0.5;
    dx.fill(0);
    dy.fill(0);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        let ex = xs[i]! - xs[j]!;
        let ey = ys[i]! - ys[j]!;
        let d2 = ex * ex + ey * ey;
        if (d2 < 0.01) {
          ex = (i - j) * 0.1;
          ey = 0.1;
          d2 = ex * ex + ey * ey;
        }
        const push = (k * k * mass[i]! * mass[j]!) / d2;
        dx[i]! += ex * push;
        dy[i]! += ey * push;
        dx[j]! -= ex * push;
        dy[j]! -= ey * push;
      }
    }
    for (const [a, b] of pairs) {
      const ex = xs[a]! - xs[b]!;
      const ey = ys[a]! - ys[b]!;
      const d = Math.sqrt(ex * ex + ey * ey) || 0.01;
      const pull = d / k;
      dx[a]! -= ex * pull;
      dy[a]! -= ey * pull;
      dx[b]! += ex * pull;
      dy[b]! += ey * pull;
    }
    for (let i = 0; i < n; i++) {
      // A gentle pull to the centre keeps unlinked nodes from drifting off.
      dx[i]! += (width / 2 - xs[i]!) * GRAVITY * mass[i]!;
      dy[i]! += (height / 2 - ys[i]!) * GRAVITY * mass[i]!;
      const d = Math.sqrt(dx[i]! * dx[i]! + dy[i]! * dy[i]!) || 1;
      const move = Math.min(d, temperature);
      xs[i]! += (dx[i]! / d) * move;
      ys[i]! += (dy[i]! / d) * move;
    }
  }
  return fit(ids, xs, ys, width, height, margin);
}

/** Stretch the layout to fill the box: a long chain would otherwise leave it mostly empty
 * and squeeze a busy hub's neighbours together. */
function fit(
  ids: readonly string[],
  xs: Float64Array,
  ys: Float64Array,
  width: number,
  height: number,
  margin: number,
): Map<string, Point> {
  const minX = Math.min(...xs);
  const maxX = Math.max(...xs);
  const minY = Math.min(...ys);
  const maxY = Math.max(...ys);
  const spanX = maxX - minX;
  const spanY = maxY - minY;
  const place = (v: number, min: number, span: number, size: number) =>
    span < 1 ? size / 2 : margin + ((v - min) / span) * (size - 2 * margin);
  return new Map(
    ids.map((id, i) => [
      id,
      { x: place(xs[i]!, minX, spanX, width), y: place(ys[i]!, minY, spanY, height) },
    ]),
  );
}
