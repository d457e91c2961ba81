"use client";
import { useState, type FormEvent } from "react";
import { useSession } from "@/lib/session";

/** Asks for an API key when the service has auth on; the key stays in this tab only. */
export function KeyPrompt({ refused }: { refused: boolean }) {
  const { setApiKey } = useSession();
  const [key, setKey] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (key.trim()) setApiKey(key.trim());
  };
  return (
    <form className="panel" onSubmit={submit} style={{ maxWidth: "32rem" }}>
      <h1>API key</h1>
      <p className="muted">
        This service has auth on. Enter a key from <code>NMAFC_API_KEYS</code> or{" "}
        <code>nmafc keys create</code>; it is kept in this browser tab only (sessionStorage).
      </p>
      {refused && (
        <p className="notice error" role="alert">
          That key was refused. Check it and try again.
        </p>
      )}
      <div className="row">
        <label className="field grow">
          API key
          <input
            type="password"
            autoComplete="off"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            autoFocus
          />
        </label>
        <button type="submit">Connect</button>
      </div>
    </form>
  );
}
