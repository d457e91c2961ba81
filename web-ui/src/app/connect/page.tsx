"use client";
// How to connect an agent: curl, the Python client, and OpenAI's base_url, filled in
// with this service's address and the chosen scope; routes listed from /openapi.json.
import { useEffect, useState } from "react";
import { useSession } from "@/lib/session";

interface Operation {
  method: string;
  path: string;
  summary: string;
}

const CHAT = "/v1/chat/completions";

async function loadOperations(): Promise<Operation[]> {
  const response = await fetch("/openapi.json");
  const schema = (await response.json()) as {
    paths: Record<string, Record<string, { summary?: string; description?: string }>>;
  };
  return Object.entries(schema.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      summary: (op.description ?? op.summary ?? "").split("\n")[0] ?? "",
    })),
  );
}

export default function ConnectPage() {
  const { scope, scopes, apiKey } = useSession();
  const [origin, setOrigin] = useState("http://127.0.0.1:8000");
  const [operations, setOperations] = useState<Operation[] | null>(null);
  useEffect(() => {
    setOrigin(window.location.origin);
    loadOperations().then(setOperations, () => setOperations([]));
  }, []);

  const key = apiKey ? "$NMAFC_API_KEY" : null;
  const agent = scope.agentId ?? "my-agent";
  const conversation = scope.conversationId ?? "default";
  const agentHeader = scopes?.bound_agent ? null : agent;
  const headers = [
    key && `-H "Authorization: Bearer ${key}"`,
    agentHeader && `-H "X-Agent-ID: ${agentHeader}"`,
    `-H "X-Conversation-ID: ${conversation}"`,
  ].filter(Boolean);
  const curl = `NMAFC=${origin}
curl -s "$NMAFC/v1/memories" ${headers.join(" ")} \\
  -H "Content-Type: application/json" \\
  -d '{"messages": [{"role": "user", "speaker": "Alice", "content": "I am allergic to shellfish."}]}'
curl -s "$NMAFC/v1/memories/search" ${headers.join(" ")} \\
  -H "Content-Type: application/json" -d '{"query": "What can Alice not eat?"}'`;
  const imports = key ? "import os\n" : "";
  const python = `${imports}from nmafc.client import Client

with Client("${origin}", api_key=${key ? 'os.environ["NMAFC_API_KEY"]' : "None"},
            agent_id=${agentHeader ? `"${agentHeader}"` : "None"}, conversation_id="${conversation}") as nmafc:
    nmafc.add(["I'm allergic to shellfish."])
    print(nmafc.search("What can't I eat?").context)`;
  const hasChat = operations?.some((op) => op.path === CHAT) ?? false;
  const openai = `${imports}from openai import OpenAI

client = OpenAI(base_url="${origin}/v1", api_key=${key ? 'os.environ["NMAFC_API_KEY"]' : '"unused"'},
                default_headers={${agentHeader ? `"X-Agent-ID": "${agentHeader}", ` : ""}"X-Conversation-ID": "${conversation}"})
reply = client.chat.completions.create(model="…", messages=[{"role": "user", "content": "Hi!"}])`;

  return (
    <>
      <h1>Connect an agent</h1>
      <p>
        This service answers at <code>{origin}</code>. Each request acts for one agent (from the API key, or{" "}
        <code>X-Agent-ID</code>) and one conversation (<code>X-Conversation-ID</code>); the examples use the
        scope chosen above. Interactive API docs: <a href="/docs">/docs</a>.
      </p>
      <div className="grid">
        <section className="panel" aria-labelledby="curl-h">
          <h2 id="curl-h">curl</h2>
          <pre>{curl}</pre>
        </section>
        <section className="panel" aria-labelledby="python-h">
          <h2 id="python-h">Python</h2>
          <pre>{python}</pre>
          <p className="muted small">
            <code>AsyncClient</code> is the asyncio twin, with <code>live()</code> for the event stream.
          </p>
        </section>
        <section className="panel" aria-labelledby="openai-h">
          <h2 id="openai-h">OpenAI base_url</h2>
          {hasChat ? (
            <pre>{openai}</pre>
          ) : (
            <p>
              This build has no OpenAI-compatible <code>{CHAT}</code> route yet (it is not in{" "}
              <a href="/openapi.json">/openapi.json</a>). Until it lands, recall with{" "}
              <code>/v1/memories/search</code> and put its <code>context</code> in your system prompt, then
              remember the exchange with <code>POST /v1/memories</code>.
            </p>
          )}
        </section>
        <section className="panel" aria-labelledby="live-h">
          <h2 id="live-h">Live events</h2>
          <p>
            Open <code>{origin.replace(/^http/, "ws")}/ws/live</code>, send{" "}
            <code>{`{"type": "auth", "token": "<key>"}`}</code> then{" "}
            <code>{`{"type": "filter", "conversation_id": "${conversation}"}`}</code>; events arrive as{" "}
            <code>{`{"type": "event", "event": {...}}`}</code>.
          </p>
        </section>
      </div>
      <section className="panel" aria-labelledby="routes-h" style={{ marginTop: "var(--gap)" }}>
        <h2 id="routes-h">Routes of this service</h2>
        <div className="table-scroll">
          <table>
            <tbody>
              {(operations ?? []).map((op) => (
                <tr key={`${op.method} ${op.path}`}>
                  <td>
                    <code>{op.method}</code>
                  </td>
                  <td>
                    <code>{op.path}</code>
                  </td>
                  <td>{op.summary}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </>
  );
}
