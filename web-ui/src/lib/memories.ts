// Reading many memories: GET /v1/memories pages, followed by cursor up to a cap.
import { unwrap, type Api, type Memory, type Tier } from "@/api/client";

export type Validity = "valid" | "all" | "invalid";

export interface MemoryFilters {
  tier?: Tier | null;
  entity?: string | null;
  validity?: Validity;
}

/** Up to `wanted` memories matching the filters (oldest first), and whether more exist. */
export async function loadMemories(
  api: Api,
  filters: MemoryFilters,
  wanted: number,
): Promise<{ items: Memory[]; more: boolean }> {
  const validity = filters.validity ?? "valid";
  const items: Memory[] = [];
  let cursor: string | undefined;
  let more = true;
  while (items.length < wanted && more) {
    const page = await unwrap(
      api.GET("/v1/memories", {
        params: {
          query: {
            limit: Math.min(500, wanted - items.length),
            cursor,
            tier: filters.tier ?? undefined,
            entity: filters.entity ?? undefined,
            include_invalidated: validity !== "valid",
          },
        },
      }),
    );
    items.push(...page.items.filter((m) => validity !== "invalid" || !m.valid));
    cursor = page.next_cursor ?? undefined;
    more = page.next_cursor !== null;
  }
  return { items, more };
}
