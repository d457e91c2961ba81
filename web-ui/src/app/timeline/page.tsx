"use client";
// Event timeline: stacked counts per turn by event type, filterable, with the events
// themselves below; live events are appended as they arrive.
import { useEffect, useMemo, useState } from "react";
import { unwrap, type EventKind, type EventOut } from "@/api/client";
import { ErrorNotice } from "@/components/ErrorNotice";
import { EventList } from "@/components/EventList";
import { StackedBars, type Stack } from "@/components/charts/StackedBars";
import { EVENT_KINDS, KIND_COLORS } from "@/lib/colors";
import { formatTurn } from "@/lib/format";
import { useLiveEvents } from "@/lib/live";
import { useSession } from "@/lib/session";
import { useApiData } from "@/lib/useApiData";

const WINDOW = 1000;
const MAX_BARS = 60;
const LISTED = 100;
const rewritesLog = (event: EventOut) => event.kind === "purge" || event.kind === "rollback";

function stacks(events: readonly EventOut[], kinds: readonly EventKind[]): Stack[] {
  if (events.length === 0) return [];
  const turns = events.map((e) => Math.floor(e.turn));
  const first = Math.min(...turns);
  const size = Math.max(1, Math.ceil((Math.max(...turns) - first + 1) / MAX_BARS));
  const buckets = new Map<number, Map<EventKind, number>>();
  events.forEach((e, i) => {
    const bucket = Math.floor((turns[i]! - first) / size);
    const counts = buckets.get(bucket) ?? new Map<EventKind, number>();
    counts.set(e.kind, (counts.get(e.kind) ?? 0) + 1);
    buckets.set(bucket, counts);
  });
  const count = Math.max(...buckets.keys()) + 1;
  return Array.from({ length: count }, (_, b) => {
    const start = first + b * size;
    const counts = buckets.get(b);
    return {
      label: size === 1 ? `${start}` : `${start}–${start + size - 1}`,
      segments: kinds
        .map((kind) => ({ key: kind, count: counts?.get(kind) ?? 0, color: KIND_COLORS[kind] }))
        .filter((s) => s.count > 0),
    };
  });
}

export default function TimelinePage() {
  const { scope } = useSession();
  const [hidden, setHidden] = useState<ReadonlySet<EventKind>>(new Set());
  const [live, setLive] = useState<EventOut[]>([]);
  const base = useApiData(
    (api) => unwrap(api.GET("/v1/events", { params: { query: { limit: WINDOW } } })),
    [],
    rewritesLog,
  );
  useEffect(() => setLive([]), [base.data, scope.conversationId]);
  useLiveEvents((event) => setLive((current) => [...current, event]));

  const events = useMemo(() => {
    const byId = new Map<number, EventOut>();
    for (const e of [...(base.data?.items ?? []), ...live]) byId.set(e.id, e);
    return [...byId.values()].sort((a, b) => a.id - b.id);
  }, [base.data, live]);
  const fresh = useMemo(() => new Set(live.map((e) => e.id)), [live]);
  const present = EVENT_KINDS.filter((kind) => events.some((e) => e.kind === kind));
  const shown = present.filter((kind) => !hidden.has(kind));
  const visible = events.filter((e) => !hidden.has(e.kind));
  const toggle = (kind: EventKind) =>
    setHidden((current) => {
      const next = new Set(current);
      if (next.has(kind)) next.delete(kind);
      else next.add(kind);
      return next;
    });
  const last = events[events.length - 1];

  return (
    <>
      <h1>Event timeline</h1>
      <ErrorNotice error={base.error} />
      <section className="panel" aria-labelledby="chart-h">
        <h2 id="chart-h">Events per turn</h2>
        <fieldset>
          <legend>Event types</legend>
          <div className="row">
            {present.map((kind) => (
              <label className="check" key={kind}>
                <input type="checkbox" checked={!hidden.has(kind)} onChange={() => toggle(kind)} />
                <span className="swatch" style={{ background: KIND_COLORS[kind] }} aria-hidden="true" />
                {kind} ({events.filter((e) => e.kind === kind).length})
              </label>
            ))}
          </div>
        </fieldset>
        <StackedBars
          stacks={stacks(visible, shown)}
          label={`Events per turn by type: ${visible.length} events${last ? ` up to turn ${formatTurn(last.turn)}` : ""}`}
        />
        {base.data && base.data.items.length === WINDOW && (
          <p className="muted small">Showing the latest {WINDOW} events of the log, then live ones.</p>
        )}
      </section>
      <section className="panel" aria-labelledby="events-h" style={{ marginTop: "var(--gap)" }}>
        <h2 id="events-h">Events, newest first</h2>
        <EventList events={visible.slice(-LISTED).reverse()} fresh={fresh} />
      </section>
    </>
  );
}
