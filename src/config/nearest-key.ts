// "did you mean server.port?": the closest known name to a mistyped configuration key or variable.

/** Edit distance (insert, delete, substitute), case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[y.length] ?? 0;
}

/**
 * The candidate closest to `name`, when close enough to be a typo (at most a third of its length, at least 2
 * edits allowed), or when `name` matches a candidate's last segment (`port` -> `server.port`).
 */
export function nearestKey(name: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = distance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best !== null && bestDistance <= Math.max(2, Math.floor(name.length / 3))) return best;
  const bySegment = candidates.find((c) => c.split('.').at(-1)?.toLowerCase() === name.toLowerCase());
  return bySegment ?? null;
}

export function didYouMean(name: string, candidates: readonly string[]): string {
  const near = nearestKey(name, candidates);
  return near === null ? '' : ` (did you mean ${near}?)`;
}
