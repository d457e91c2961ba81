"use client";
import { useSession } from "@/lib/session";
import { formatTurn } from "@/lib/format";

/** Agent → conversation. An agent-bound key shows its agent without a choice. */
export function ScopePicker() {
  const { auth, scopes, scope, apiKey, selectAgent, selectConversation, setApiKey } = useSession();
  if (auth !== "ready" || !scopes) return null;
  const agent = scopes.agents.find((a) => a.agent_id === scope.agentId);
  return (
    <section className="scopebar" aria-label="Scope">
      {scopes.bound_agent ? (
        <div className="field">
          Agent (from your key)
          <strong style={{ color: "var(--ink)" }}>{scopes.bound_agent}</strong>
        </div>
      ) : (
        <label className="field">
          Agent
          <select value={scope.agentId ?? ""} onChange={(e) => selectAgent(e.target.value)}>
            {scopes.agents.length === 0 && <option value="">none yet</option>}
            {scopes.agents.map((a) => (
              <option key={a.agent_id} value={a.agent_id}>
                {a.agent_id}
              </option>
            ))}
          </select>
        </label>
      )}
      <label className="field">
        Conversation
        <select
          value={scope.conversationId ?? ""}
          onChange={(e) => selectConversation(e.target.value)}
          disabled={!agent}
        >
          {!agent && <option value="">none yet</option>}
          {agent?.conversations.map((c) => (
            <option key={c.conversation_id} value={c.conversation_id}>
              {c.conversation_id} (turn {formatTurn(c.turn)})
            </option>
          ))}
        </select>
      </label>
      {scopes.truncated && <span className="muted small">Showing the first conversations only.</span>}
      {apiKey && (
        <button type="button" className="secondary" onClick={() => setApiKey(null)}>
          Forget key
        </button>
      )}
    </section>
  );
}
