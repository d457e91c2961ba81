"use client";
import { useLive, type LiveStatus } from "@/lib/live";

const LABELS: Record<LiveStatus, string> = {
  idle: "Live: off",
  connecting: "Live: connecting",
  live: "Live",
  reconnecting: "Live: reconnecting",
  refused: "Live: refused",
};

/** The /ws/live connection's state, announced politely to screen readers. */
export function LiveIndicator() {
  const { status, detail } = useLive();
  return (
    <span className="live" data-status={status} role="status" aria-live="polite" title={detail ?? undefined}>
      <span className="live-dot" aria-hidden="true" />
      {LABELS[status]}
    </span>
  );
}
