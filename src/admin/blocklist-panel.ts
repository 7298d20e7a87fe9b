// The dashboard's Blocklist panel (GET /api/blocklist): the active blocks, newest first and bounded, the allow
// entries, each feed's last fetch, and which of the page's addresses are blocked. Read from the process's one
// watched copy of the decisions (the feeds' and the engine's: decisions/watched-decisions.ts), from the first
// visitor on: never one read of the store per request, and no copy of the blocks of its own.
import type { Logger } from 'pino';
import type { BlocklistConfig } from '../config/blocklist-schema.js';
import {
  formatNetwork,
  maskBytes,
  type Network,
  overlaps,
  parseNetwork,
} from '../config/blocklist-schema.js';
import type { AllowEntry, Block, DecisionsState, DecisionsStore } from '../store/decisions.js';
import { emptyDecisions } from '../store/decisions.js';
import { decisionsOfSource } from '../store/source-summary.js';

/** Blocks, allow entries and feeds listed at most (the newest first); the totals say how many there are. */
export const PANEL_ROWS = 100;
/** Addresses one request may ask about (`check`): the page's feed, top sources and look-up. */
export const MAX_CHECKED = 500;

export interface PanelBlock extends Block {
  /** The allow entry that keeps it out of every feed, or null. */
  allowedBy: string | null;
}

export interface PanelAllow extends Omit<AllowEntry, 'since'> {
  /** ISO 8601, or null for the configuration's (in force since the configuration was read). */
  since: string | null;
  /** `configuration` (blocklist.allow) or `command` (threatcol allow add). */
  source: 'configuration' | 'command';
}

export interface BlocklistPanel {
  blocks: PanelBlock[];
  /** Blocks in force now (those kept out by an allow entry included). */
  total: number;
  /** blocklist.maxBlocks: at it, the rules make no new block. */
  maxBlocks: number;
  keptOut: number;
  allow: PanelAllow[];
  allowTotal: number;
  feeds: Array<{
    name: string;
    format: string;
    lastFetch: { at: string; address: string; status: number } | null;
  }>;
  feedTotal: number;
  /** Whether the listener has read the decisions yet (false: an empty panel may be incomplete). */
  complete: boolean;
}

export interface BlockMark {
  address: string;
  rule: string;
  until: string;
}

export interface BlocklistView {
  /** Starts watching the decisions (the first visitor; idempotent). */
  start(): void;
  stop(): void;
  panel(now: number): BlocklistPanel;
  /** The block each address lies in, for the addresses that are blocked (kept-out blocks do not count). */
  check(addresses: readonly string[], now: number): Record<string, BlockMark>;
  /** What `source show` says of an address or CIDR (store/source-summary.ts), from the watched copy. */
  source(address: string, now: number): ReturnType<typeof decisionsOfSource>;
}

/** What one state of the decisions costs to answer from, made once per change (and per second for expiry). */
interface Prepared {
  version: number;
  at: number;
  /** Milliseconds it took to prepare. */
  costMs: number;
  /** A block or allow entry in it expires then: prepared again after. */
  validUntil: number;
  configured: readonly string[];
  panel: Omit<BlocklistPanel, 'maxBlocks'>;
  /** The allow entries in force, parsed. */
  allows: Array<{ text: string; network: Network }>;
  /** The prefixes of the blocks in the feeds (a block is looked up by its network's text, its key). */
  prefixes: Array<{ family: 4 | 6; prefix: number }>;
}

export function createBlocklistView(deps: {
  /** Read only: the process's one watched copy of the decisions, which it shares (its state is never changed). */
  decisions: Pick<DecisionsStore, 'watch'>;
  /** blocklist as configured now (a reload may change it): its allow list, its maxBlocks. */
  blocklist: () => Pick<BlocklistConfig, 'allow' | 'maxBlocks'>;
  logger: Logger;
}): BlocklistView {
  let state: DecisionsState = emptyDecisions();
  let version = 0;
  let read = false;
  let watch: { stop(): void } | null = null;
  let prepared: Prepared | null = null;

  function prepare(now: number): Prepared {
    const configured = deps.blocklist().allow;
    // Once per change of the decisions (or expiry), and at most once a second, nor more often than 20 times
    // its own cost: the panel takes at most 5% of the process whatever the blocks and the tabs open (a
    // million blocks changing all the time: the panel follows every few seconds).
    if (
      prepared &&
      ((prepared.configured === configured && prepared.version === version && now < prepared.validUntil) ||
        now - prepared.at < Math.max(1000, 20 * prepared.costMs))
    )
      return prepared;
    const started = performance.now();
    let validUntil = Number.POSITIVE_INFINITY;
    const allows: Array<{ text: string; network: Network }> = [];
    const allow: PanelAllow[] = [];
    for (const text of configured) {
      const network = parseNetwork(text);
      if (network) allows.push({ text, network });
      allow.push({
        network: text,
        reason: 'blocklist.allow',
        since: null,
        until: null,
        who: null,
        source: 'configuration',
      });
    }
    for (const entry of state.allow.values()) {
      if (entry.until !== null && Date.parse(entry.until) <= now) continue;
      if (entry.until !== null) validUntil = Math.min(validUntil, Date.parse(entry.until));
      const network = parseNetwork(entry.network);
      if (network) allows.push({ text: entry.network, network });
      allow.push({ ...entry, source: 'command' });
    }
    const prefixes = new Map<number, { family: 4 | 6; prefix: number }>();
    /** The newest PANEL_ROWS, oldest first (a bounded insertion: one pass over the blocks). */
    const newest: PanelBlock[] = [];
    let total = 0;
    let keptOut = 0;
    for (const block of state.blocks.values()) {
      const ends = Date.parse(block.until);
      if (!(ends > now)) continue;
      validUntil = Math.min(validUntil, ends);
      total++;
      const network = parseNetwork(block.address);
      let allowedBy: string | null = null;
      if (network !== null)
        for (const a of allows)
          if (overlaps(a.network, network)) {
            allowedBy = a.text;
            break;
          }
      if (allowedBy !== null) keptOut++;
      else if (network !== null) {
        const kind = network.family * 256 + network.prefix;
        if (!prefixes.has(kind)) prefixes.set(kind, { family: network.family, prefix: network.prefix });
      }
      if (newest.length === PANEL_ROWS && block.since <= (newest[0] as PanelBlock).since) continue;
      let at = newest.length;
      while (at > 0 && (newest[at - 1] as PanelBlock).since > block.since) at--;
      newest.splice(at, 0, { ...block, allowedBy });
      if (newest.length > PANEL_ROWS) newest.shift();
    }
    const feeds = [...state.feeds.values()]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .slice(0, PANEL_ROWS)
      .map((feed) => {
        const fetch = state.fetches.get(feed.name);
        return {
          name: feed.name,
          format: feed.format,
          lastFetch: fetch ? { at: fetch.at, address: fetch.address, status: fetch.status } : null,
        };
      });
    allow.sort((a, b) =>
      (a.since ?? '') < (b.since ?? '') ? 1 : (a.since ?? '') > (b.since ?? '') ? -1 : 0,
    );
    prepared = {
      version,
      at: now,
      costMs: 0,
      validUntil,
      configured,
      allows,
      prefixes: [...prefixes.values()],
      panel: {
        blocks: newest.reverse(),
        total,
        keptOut,
        allow: allow.slice(0, PANEL_ROWS),
        allowTotal: allow.length,
        feeds,
        feedTotal: state.feeds.size,
        complete: read,
      },
    };
    prepared.costMs = performance.now() - started;
    return prepared;
  }

  return {
    start() {
      if (watch) return;
      watch = deps.decisions.watch(
        (next) => {
          state = next;
          version++;
          read = true;
        },
        (error) =>
          deps.logger.warn(
            { err: error.message },
            'dashboard: cannot read the decisions; showing the last ones',
          ),
      );
    },
    stop() {
      watch?.stop();
      watch = null;
    },
    panel(now) {
      return { ...prepare(now).panel, maxBlocks: deps.blocklist().maxBlocks };
    },
    check(addresses, now) {
      const { allows, prefixes } = prepare(now);
      const marks: Record<string, BlockMark> = {};
      for (const text of addresses) {
        // An IPv4-mapped IPv6 address counts as its IPv4 address, as the engine counts it.
        const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(text);
        const network = text.includes('/') ? null : parseNetwork(mapped ? (mapped[1] as string) : text);
        if (network === null) continue;
        for (const { family, prefix } of prefixes) {
          if (family !== network.family) continue;
          const unit: Network = { family, prefix, bytes: maskBytes(network.bytes, prefix) };
          // The engine and `block add` key a block by its network's canonical text.
          const block = state.blocks.get(formatNetwork(unit));
          if (!block || !(Date.parse(block.until) > now) || allows.some((a) => overlaps(a.network, unit)))
            continue;
          marks[text] = { address: block.address, rule: block.rule, until: block.until };
          break;
        }
      }
      return marks;
    },
    source(address, now) {
      return decisionsOfSource(address, state, deps.blocklist().allow, now);
    },
  };
}
