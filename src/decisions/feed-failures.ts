// Failed feed logins per client address (IPv6 by /64), so credentials cannot be guessed at line rate: each
// group may fail `burst` times, then once per `refillMs`; beyond, its requests are answered 429 before any
// credential is looked at. Bounded: the least recently failing groups are forgotten first.
import { addressGroup } from '../address-group.js';

const MAX_GROUPS = 10_000;
/** Failed logins an address may make at once (docs/blocklists.md), then one per REFILL_MS. */
const BURST = 20;
const REFILL_MS = 3000;

export class FeedFailures {
  /** By group: tokens left and when they were counted (insertion order is recency). */
  private readonly groups = new Map<string, { tokens: number; at: number }>();
  /** Requests answered 429 since start. */
  limited = 0;

  constructor(
    private readonly burst = BURST,
    private readonly refillMs = REFILL_MS,
  ) {}

  /**
   * One of `processes` that serve feeds, each counting the failed logins it sees (`serve --workers`: a client's
   * connections go to any of them): its share of the allowance, so that all of them together allow about BURST
   * at once and one every REFILL_MS.
   */
  static shareOf(processes: number): FeedFailures {
    const n = Math.max(1, Math.floor(processes));
    return new FeedFailures(Math.max(1, Math.floor(BURST / n)), REFILL_MS * n);
  }

  /** Whether the address may try now (false: answer 429). */
  allowed(address: string, now: number): boolean {
    const entry = this.groups.get(addressGroup(address));
    if (entry === undefined) return true;
    if (this.tokens(entry, now) >= 1) return true;
    this.limited++;
    return false;
  }

  /** Counts one failed login; returns the seconds until the next try is allowed once none are left. */
  failed(address: string, now: number): void {
    const group = addressGroup(address);
    const entry = this.groups.get(group) ?? { tokens: this.burst, at: now };
    const tokens = this.tokens(entry, now);
    this.groups.delete(group);
    this.groups.set(group, { tokens: Math.max(0, tokens - 1), at: now });
    if (this.groups.size > MAX_GROUPS) this.groups.delete(this.groups.keys().next().value as string);
  }

  /** Seconds until one more try is allowed. */
  retryAfter(address: string, now: number): number {
    const entry = this.groups.get(addressGroup(address));
    if (!entry) return 0;
    return Math.max(1, Math.ceil(((1 - this.tokens(entry, now)) * this.refillMs) / 1000));
  }

  private tokens(entry: { tokens: number; at: number }, now: number): number {
    return Math.min(this.burst, entry.tokens + (now - entry.at) / this.refillMs);
  }
}
