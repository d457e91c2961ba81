// The typed API client: openapi-fetch over the types generated from openapi/openapi.json
// (`npm run generate-api`). The dashboard is served by the API, so URLs are relative.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema";

type Schemas = components["schemas"];
export type Memory = Schemas["Memory"];
export type EventOut = Schemas["EventOut"];
export type EventKind = EventOut["kind"];
export type HitOut = Schemas["HitOut"];
export type SearchResult = Schemas["SearchResult"];
export type StatsOut = Schemas["StatsOut"];
export type DecayOut = Schemas["DecayOut"];
export type GraphOut = Schemas["GraphOut"];
export type MemoryHistory = Schemas["MemoryHistory"];
export type ScopesOut = Schemas["ScopesOut"];
export type Tier = Memory["tier"];
export type Problem = Schemas["Problem"];
export type Api = Client<paths>;

export const TIERS: readonly Tier[] = ["CoreAnchor", "ActiveContext", "EphemeralState"];

/** A failed call: the problem+json body when the server sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | null,
  ) {
    super(problem ? `${problem.title}: ${problem.detail}` : `HTTP ${status}`);
  }
}

export interface Credentials {
  apiKey: string | null;
  agentId: string | null;
  conversationId: string | null;
}

/** A client sending the key and the scope headers; `onUnauthorized` hears every 401. */
export function apiClient(credentials: Credentials, onUnauthorized: () => void): Api {
  const headers: Record<string, string> = {};
  if (credentials.apiKey) headers.Authorization = `Bearer ${credentials.apiKey}`;
  if (credentials.agentId) headers["X-Agent-ID"] = credentials.agentId;
  if (credentials.conversationId) headers["X-Conversation-ID"] = credentials.conversationId;
  const client = createClient<paths>({ baseUrl: "", headers });
  client.use({
    onResponse({ response }) {
      if (response.status === 401) onUnauthorized();
      return undefined;
    },
  });
  return client;
}

function isProblem(value: unknown): value is Problem {
  return typeof value === "object" && value !== null && "code" in value && "detail" in value;
}

/** The data of an openapi-fetch result, or an ApiError carrying the problem. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (data === undefined) throw new ApiError(response.status, isProblem(error) ? error : null);
  return data;
}
