"use client";
// Load data for the chosen scope, and load it again when a live event says it changed.
import { useCallback, useEffect, useRef, useState } from "react";
import type { Api, EventOut } from "@/api/client";
import { useLiveEvents } from "./live";
import { useSession } from "./session";

const SETTLE_MS = 300;

export interface ApiData<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * `load(api)` runs on mount, when the scope or `deps` change, and (debounced) after each
 * live event for which `refreshOn` returns true. It is skipped while no conversation is
 * chosen.
 */
export function useApiData<T>(
  load: (api: Api) => Promise<T>,
  deps: readonly unknown[],
  refreshOn: (event: EventOut) => boolean = () => true,
): ApiData<T> {
  const { api, scope } = useSession();
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const ready = scope.conversationId !== null;

  useEffect(() => {
    if (!ready) return;
    let cancelled = false;
    setLoading(true);
    load(api)
      .then((value) => {
        if (cancelled) return;
        setData(value);
        setError(null);
      })
      .catch((reason: unknown) => {
        if (!cancelled) setError(reason);
      })
      .finally(() => {
        if (!cancelled) setLoading(false);
      });
    return () => {
      cancelled = true;
    };
    // `load` is a fresh closure each render; `deps` name what it reads.
  }, [api, ready, generation, ...deps]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);

  useLiveEvents((event) => {
    if (!refreshOn(event)) return;
    clearTimeout(timer.current);
    timer.current = setTimeout(reload, SETTLE_MS);
  });
  useEffect(() => () => clearTimeout(timer.current), []);

  return { data, error, loading, reload };
}
