// Small formatting helpers shared by the pages.

export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString("en", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

export function formatTurn(turn: number): string {
  return Number.isInteger(turn) ? String(turn) : turn.toFixed(1);
}

export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString("en-GB", {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  });
}

/** `maya_lives_in` → `maya lives in`. */
export function entityLabel(entity: string): string {
  return entity.replaceAll("_", " ");
}
