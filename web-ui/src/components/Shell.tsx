"use client";
// The frame of every page: header (navigation, live indicator), scope picker, and the
// page itself once a key is accepted and a conversation is chosen.
import Link from "next/link";
import type { ReactNode } from "react";
import { LiveProvider } from "@/lib/live";
import { SessionProvider, useSession } from "@/lib/session";
import { KeyPrompt } from "./KeyPrompt";
import { LiveIndicator } from "./LiveIndicator";
import { Nav } from "./Nav";
import { ScopePicker } from "./ScopePicker";

export function Shell({ children }: { children: ReactNode }) {
  return (
    <SessionProvider>
      <LiveProvider>
        <a className="skip-link" href="#content">
          Skip to content
        </a>
        <header className="header">
          <Link className="brand" href="/">
            NMAFC
          </Link>
          <Nav />
          <LiveIndicator />
        </header>
        <ScopePicker />
        <main id="content" tabIndex={-1}>
          <Gate>{children}</Gate>
        </main>
      </LiveProvider>
    </SessionProvider>
  );
}

/** The page, or what stands in its way: a key to enter, no service, no data yet. */
function Gate({ children }: { children: ReactNode }) {
  const { auth, scope } = useSession();
  if (auth === "checking") return <p className="muted">Connecting to the service…</p>;
  if (auth === "needs-key" || auth === "key-refused") return <KeyPrompt refused={auth === "key-refused"} />;
  if (auth === "unreachable") {
    return (
      <div className="notice error" role="alert">
        The service does not answer. Is <code>nmafc serve</code> running? This page retries
        when reloaded.
      </div>
    );
  }
  if (scope.conversationId === null) {
    return (
      <>
        <div className="notice info" role="status">
          No memory yet{scope.agentId ? ` for agent ${scope.agentId}` : ""}. Load a sample
          conversation with <code>nmafc demo</code>, or add memories through the API (see{" "}
          <Link href="/connect/">Connect</Link>); this page notices within seconds.
        </div>
        {children}
      </>
    );
  }
  return <>{children}</>;
}
