"use client";
// Who the dashboard calls as (an API key, kept in sessionStorage) and for which scope
// (agent → conversation, from GET /v1/scopes). Every page reads both from here.
import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
  type ReactNode,
} from "react";
import { ApiError, apiClient, unwrap, type Api, type ScopesOut } from "@/api/client";

const KEY_STORAGE = "nmafc.apiKey";
const SCOPE_STORAGE = "nmafc.scope";
const EMPTY_POLL_MS = 5000;

export type AuthState = "checking" | "needs-key" | "key-refused" | "ready" | "unreachable";

export interface Scope {
  agentId: string | null;
  conversationId: string | null;
}

interface SessionValue {
  auth: AuthState;
  apiKey: string | null;
  scopes: ScopesOut | null;
  scope: Scope;
  /** The client for the chosen scope (key and X-Agent-ID / X-Conversation-ID headers). */
  api: Api;
  setApiKey: (key: string | null) => void;
  selectAgent: (agentId: string) => void;
  selectConversation: (conversationId: string) => void;
  refreshScopes: () => void;
}

const SessionContext = createContext<SessionValue | null>(null);

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error("useSession outside <SessionProvider>");
  return value;
}

function readStored<T>(storage: Storage, key: string, parse: (raw: string) => T): T | null {
  const raw = storage.getItem(key);
  if (raw === null) return null;
  try {
    return parse(raw);
  } catch {
    return null;
  }
}

/** The stored choice if it still exists, else the key's agent (or the first one) and its
 * most advanced conversation. */
function chooseScope(listing: ScopesOut, wanted: Scope | null): Scope {
  const agents = listing.agents;
  const agent =
    agents.find((a) => a.agent_id === wanted?.agentId) ??
    agents.find((a) => a.agent_id === listing.bound_agent) ??
    agents[0];
  if (!agent) return { agentId: listing.bound_agent, conversationId: null };
  const kept = agent.conversations.find((c) => c.conversation_id === wanted?.conversationId);
  const busiest = [...agent.conversations].sort((a, b) => b.turn - a.turn)[0];
  return {
    agentId: agent.agent_id,
    conversationId: (kept ?? busiest)?.conversation_id ?? null,
  };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [apiKey, setKeyState] = useState<string | null>(null);
  const [auth, setAuth] = useState<AuthState>("checking");
  const [scopes, setScopes] = useState<ScopesOut | null>(null);
  const [scope, setScope] = useState<Scope>({ agentId: null, conversationId: null });
  const [generation, setGeneration] = useState(0);
  const [loaded, setLoaded] = useState(false);

  useEffect(() => {
    setKeyState(readStored(sessionStorage, KEY_STORAGE, (raw) => raw));
    setLoaded(true);
  }, []);

  const onUnauthorized = useCallback(() => {
    setAuth(apiKey ? "key-refused" : "needs-key");
  }, [apiKey]);

  useEffect(() => {
    if (!loaded) return;
    let cancelled = false;
    const directory = apiClient({ apiKey, agentId: null, conversationId: null }, () => {});
    unwrap(directory.GET("/v1/scopes"))
      .then((listing) => {
        if (cancelled) return;
        const stored = readStored(sessionStorage, SCOPE_STORAGE, (raw) => JSON.parse(raw) as Scope);
        setScopes(listing);
        setScope((current) => {
          const next = chooseScope(listing, current.agentId ? current : stored);
          const same =
            next.agentId === current.agentId && next.conversationId === current.conversationId;
          return same ? current : next;
        });
        setAuth("ready");
      })
      .catch((error: unknown) => {
        if (cancelled) return;
        if (error instanceof ApiError && error.status === 401) {
          setAuth(apiKey ? "key-refused" : "needs-key");
        } else {
          setAuth("unreachable");
        }
      });
    return () => {
      cancelled = true;
    };
  }, [apiKey, generation, loaded]);

  // With nothing to show yet, look again now and then (a first `nmafc demo` shows up).
  useEffect(() => {
    if (auth !== "ready" || scope.conversationId !== null) return;
    const timer = setInterval(() => setGeneration((g) => g + 1), EMPTY_POLL_MS);
    return () => clearInterval(timer);
  }, [auth, scope.conversationId]);

  useEffect(() => {
    if (scope.agentId) sessionStorage.setItem(SCOPE_STORAGE, JSON.stringify(scope));
  }, [scope]);

  const setApiKey = useCallback((key: string | null) => {
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
    setAuth("checking");
    setKeyState(key);
  }, []);

  const selectAgent = useCallback(
    (agentId: string) => {
      if (scopes) setScope(chooseScope(scopes, { agentId, conversationId: null }));
    },
    [scopes],
  );

  const selectConversation = useCallback((conversationId: string) => {
    setScope((current) => ({ ...current, conversationId }));
  }, []);

  const refreshScopes = useCallback(() => setGeneration((g) => g + 1), []);

  const api = useMemo(
    () => apiClient({ apiKey, ...scope }, onUnauthorized),
    [apiKey, scope, onUnauthorized],
  );

  const value = useMemo<SessionValue>(
    () => ({
      auth,
      apiKey,
      scopes,
      scope,
      api,
      setApiKey,
      selectAgent,
      selectConversation,
      refreshScopes,
    }),
    [auth, apiKey, scopes, scope, api, setApiKey, selectAgent, selectConversation, refreshScopes],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
