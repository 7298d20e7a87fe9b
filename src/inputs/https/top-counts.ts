// Cuts a tally to its largest entries for one log line: journald splits lines past 48 KB into broken JSON.

/** Keys are cut to this many characters: the line's size holds whatever names reach a tally. */
const MAX_KEY_CHARS = 100;

export interface TopCounts {
  /** The `limit` largest entries, largest first (ties: the first counted first). */
  top: Record<string, number>;
  /** Entries left out, and the sum of their counts; both 0 when nothing was left out. */
  omitted: { entries: number; count: number };
}

export function topCounts(tally: ReadonlyMap<string, number>, limit: number): TopCounts {
  const entries = [...tally];
  if (entries.length > limit) entries.sort((a, b) => b[1] - a[1]);
  const kept = new Map<string, number>();
  let omittedCount = 0;
  entries.forEach(([key, n], i) => {
    if (i >= limit) omittedCount += n;
    else {
      const cut = key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key;
      kept.set(cut, (kept.get(cut) ?? 0) + n);
    }
  });
  return {
    // fromEntries defines each key as an own property: a name like `__proto__` stays a plain key.
    top: Object.fromEntries(kept),
    omitted: { entries: Math.max(0, entries.length - limit), count: omittedCount },
  };
}
