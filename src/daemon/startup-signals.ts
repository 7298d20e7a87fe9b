// Holds the signals that reach `serve` before its own handlers are in place (Node's default action for SIGHUP,
// SIGTERM and SIGINT ends the process), so a `systemctl reload` during start-up is honoured once the daemon is
// up and a stop then is a clean one (exit 0), never a kill mid-start.
const received = new Set<NodeJS.Signals>();
const holders = new Map<NodeJS.Signals, () => void>();

/** Called from the first line of `bin/threatcol serve`: from now on these signals are recorded, not fatal. */
export function holdStartupSignals(signals: readonly NodeJS.Signals[]): void {
  for (const signal of signals) {
    if (holders.has(signal)) continue;
    const holder = () => {
      received.add(signal);
    };
    holders.set(signal, holder);
    process.on(signal, holder);
  }
}

/**
 * Stops holding and returns the signals received meanwhile (each once, however often it came). Call it after
 * the real handlers are installed, so that no signal falls between the two.
 */
export function releaseStartupSignals(): NodeJS.Signals[] {
  for (const [signal, holder] of holders) process.off(signal, holder);
  holders.clear();
  const held = [...received];
  received.clear();
  return held;
}
