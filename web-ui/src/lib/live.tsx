"use client";
// One /ws/live connection for the chosen scope: auth, then filter, then events.
// Pages subscribe to the events; the header shows the connection's state.
import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from "react";
import type { EventKind, EventOut } from "@/api/client";
import { useSession } from "./session";

export type LiveStatus = "idle" | "connecting" | "live" | "reconnecting" | "refused";

type Listener = (event: EventOut) => void;

interface LiveValue {
  status: LiveStatus;
  detail: string | null;
  /** Events received per kind since this scope's connection opened. */
  counts: Partial<Record<EventKind, number>>;
  subscribe: (listener: Listener) => () => void;
}

type ServerMessage =
  | { type: "auth_success"; agent_id: string }
  | { type: "backfilled"; count: number }
  | { type: "event"; event: EventOut }
  | { type: "error"; code: string; detail: string; fix: string };

const LiveContext = createContext<LiveValue | null>(null);
const REFUSED = new Set([4400, 4401, 4404]);
const MAX_BACKOFF_MS = 10_000;

export function useLive(): LiveValue {
  const value = useContext(LiveContext);
  if (!value) throw new Error("useLive outside <LiveProvider>");
  return value;
}

/** Calls `listener` for each live event of the chosen scope while mounted. */
export function useLiveEvents(listener: Listener): void {
  const { subscribe } = useLive();
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => subscribe((event) => latest.current(event)), [subscribe]);
}

function liveUrl(): string {
  const protocol = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${protocol}//${window.location.host}/ws/live`;
}

export function LiveProvider({ children }: { children: ReactNode }) {
  const { auth, apiKey, scope, scopes, refreshScopes } = useSession();
  const [status, setStatus] = useState<LiveStatus>("idle");
  const [detail, setDetail] = useState<string | null>(null);
  const [counts, setCounts] = useState<LiveValue["counts"]>({});
  const listeners = useRef(new Set<Listener>());
  const known = useRef(new Set<string>());

  useEffect(() => {
    known.current = new Set(
      scopes?.agents.flatMap((a) => a.conversations.map((c) => c.conversation_id)) ?? [],
    );
  }, [scopes]);

  const subscribe = useCallback((listener: Listener) => {
    listeners.current.add(listener);
    return () => {
      listeners.current.delete(listener);
    };
  }, []);

  useEffect(() => {
    if (auth !== "ready" || !scope.agentId) {
      setStatus("idle");
      return;
    }
    const { agentId, conversationId } = scope;
    let socket: WebSocket | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let attempts = 0;
    let stopped = false;
    setCounts({});

    const connect = () => {
      setStatus(attempts === 0 ? "connecting" : "reconnecting");
      const ws = new WebSocket(liveUrl());
      socket = ws;
      ws.onopen = () => {
        ws.send(JSON.stringify({ type: "auth", token: apiKey ?? undefined, agent_id: agentId }));
      };
      ws.onmessage = (message: MessageEvent<string>) => {
        const data = JSON.parse(message.data) as ServerMessage;
        if (data.type === "auth_success") {
          // Agent-wide, so a new conversation shows up in the picker as it starts.
          ws.send(JSON.stringify({ type: "filter", backfill: 0 }));
        } else if (data.type === "backfilled") {
          attempts = 0;
          setStatus("live");
          setDetail(null);
        } else if (data.type === "event") {
          const event = data.event;
          const where = event.conversation_id;
          if (where && where !== "*" && !known.current.has(where)) {
            known.current.add(where);
            refreshScopes();
          }
          if (where !== conversationId && where !== "*") return;
          setCounts((c) => ({ ...c, [event.kind]: (c[event.kind] ?? 0) + 1 }));
          listeners.current.forEach((listener) => listener(event));
        } else {
          setDetail(`${data.detail} ${data.fix}`);
        }
      };
      ws.onclose = (close) => {
        if (stopped) return;
        if (REFUSED.has(close.code)) {
          setStatus("refused");
          return;
        }
        attempts += 1;
        setStatus("reconnecting");
        timer = setTimeout(connect, Math.min(MAX_BACKOFF_MS, 500 * 2 ** attempts));
      };
    };
    connect();
    return () => {
      stopped = true;
      clearTimeout(timer);
      socket?.close(1000);
    };
  }, [auth, apiKey, scope.agentId, scope.conversationId, refreshScopes]);

  const value = useMemo(
    () => ({ status, detail, counts, subscribe }),
    [status, detail, counts, subscribe],
  );
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}
