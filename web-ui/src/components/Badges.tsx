import type { EventKind, Tier } from "@/api/client";
import { KIND_COLORS, TIER_COLORS } from "@/lib/colors";

export function TierBadge({ tier }: { tier: Tier }) {
  return (
    <span className="badge" style={{ background: TIER_COLORS[tier] }}>
      {tier}
    </span>
  );
}

export function KindBadge({ kind }: { kind: EventKind }) {
  return (
    <span className="badge" style={{ background: KIND_COLORS[kind] }}>
      {kind}
    </span>
  );
}

export function Swatch({ color }: { color: string }) {
  return <span className="swatch" style={{ background: color }} aria-hidden="true" />;
}
