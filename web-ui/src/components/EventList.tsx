import type { EventOut } from "@/api/client";
import { formatTime, formatTurn } from "@/lib/format";
import { KindBadge } from "./Badges";

/** What an event did, in a line: the records it touched, or its detail. */
export function eventSummary(event: EventOut): string {
  const contents = event.records.map((r) => r.content);
  if (contents.length > 0) {
    const more = contents.length > 1 ? ` (+${contents.length - 1} more)` : "";
    return `${contents[0]}${more}`;
  }
  const detail = event.detail as Record<string, unknown>;
  const closed = event.closed ?? [];
  if (closed.length > 0) return `${closed.length} closed (${String(detail.reason ?? event.kind)})`;
  if (event.kind === "turn") return `${String(detail.facts ?? 0)} facts from the new turns`;
  return Object.entries(detail)
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
    .join(", ");
}

/** Events newest first; `fresh` ids (arrived live) are highlighted briefly. */
export function EventList({ events, fresh }: { events: readonly EventOut[]; fresh?: ReadonlySet<number> }) {
  if (events.length === 0) return <p className="muted">No events yet.</p>;
  return (
    <ol className="list" reversed>
      {events.map((event) => (
        <li key={event.id} className={fresh?.has(event.id) ? "fresh" : undefined}>
          <div className="meta">
            <KindBadge kind={event.kind} />
            <span>turn {formatTurn(event.turn)}</span>
            <span>{formatTime(event.created_at)}</span>
          </div>
          <div>{eventSummary(event)}</div>
        </li>
      ))}
    </ol>
  );
}
