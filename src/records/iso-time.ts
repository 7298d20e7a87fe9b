// Record times as ISO 8601 text, each formatter remembering the last instant it formatted: received_at repeats
// for the requests of one millisecond, detected_at for a firewall's records of one second.

/** A `new Date(ms).toISOString()` with a one-entry memo of its own (one per kind of time, so they never evict each other). */
export function memoIsoTime(): (ms: number) => string {
  let lastMs = Number.NaN;
  let last = '';
  return (ms) => {
    if (ms !== lastMs) {
      lastMs = ms;
      last = new Date(ms).toISOString();
    }
    return last;
  };
}
