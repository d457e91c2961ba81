import { ApiError } from "@/api/client";

/** A failed call, with the server's `fix` when it sent a problem+json body. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const problem = error instanceof ApiError ? error.problem : null;
  const text = error instanceof Error ? error.message : String(error);
  return (
    <div className="notice error" role="alert">
      <strong>{problem ? problem.title : "Request failed"}</strong>: {problem ? problem.detail : text}
      {problem?.fix && <div className="small">Fix: {problem.fix}</div>}
    </div>
  );
}
