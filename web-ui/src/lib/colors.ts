// One colour per tier and per event kind, used by every chart and badge.
import type { EventKind, Tier } from "@/api/client";

export const TIER_COLORS: Record<Tier, string> = {
  CoreAnchor: "#2f5fd0",
  ActiveContext: "#2e8b57",
  EphemeralState: "#d9822b",
};

export const KIND_COLORS: Record<EventKind, string> = {
  turn: "#8a94a6",
  add: "#2e8b57",
  update: "#2f5fd0",
  invalidate: "#c0392b",
  reinforce: "#8e44ad",
  prune: "#b7950b",
  elevate: "#16a085",
  merge: "#d35400",
  relink: "#5d6d7e",
  delete: "#7b241c",
  rollback: "#1f618d",
  purge: "#000000",
  import: "#117864",
};

export const EVENT_KINDS = Object.keys(KIND_COLORS) as EventKind[];
