// The decay model of the service (SPEC §3), with the constants /v1/stats reports:
// w(t) = weight0 · exp(−λ_tier · e^(−η·k) · (t − anchor)); pruned once w ≤ w_prune.
import type { DecayOut, Memory } from "@/api/client";

type Decaying = Pick<Memory, "tier" | "k" | "weight0" | "anchor_turn" | "invalid_at">;

export function effectiveLambda(decay: DecayOut, record: Decaying): number {
  return (decay.lambdas[record.tier] ?? 0) * Math.exp(-decay.eta * record.k);
}

/** The weight at clock `now`; an invalidated record keeps the weight it had then. */
export function weightAt(decay: DecayOut, record: Decaying, now: number): number {
  const at = record.invalid_at === null ? now : Math.min(now, record.invalid_at);
  const elapsed = Math.max(0, at - record.anchor_turn);
  return record.weight0 * Math.exp(-effectiveLambda(decay, record) * elapsed);
}

/** The clock "now" of a scope: its turn, or wall-clock hours when decay runs on hours. */
export function clockNow(decay: DecayOut, turn: number): number {
  return decay.clock === "hours" ? Date.now() / 3_600_000 : turn;
}
