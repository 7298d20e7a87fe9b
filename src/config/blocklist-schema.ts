// The `blocklist` section (DESIGN 15): rules that turn records into blocks, the allow list, and the values its
// keys take (durations, networks), checked at load so a bad one exits 78 naming its key.
import { isIP } from 'node:net';
import type { ErrorDetail } from '../errors.js';

export interface BlockRule {
  minCriticality: number;
  minRecords: number;
  minSensors: number;
  within: string;
  duration: string;
  sensors: string[] | null;
  endpoints: ('firewall' | 'generic' | 'syslog')[] | null;
  threat: string | null;
  address: 'source' | 'destination';
}

export interface BlocklistConfig {
  rules: Record<string, BlockRule>;
  repeatFactor: number;
  maxDuration: string;
  ipv4Prefix: number;
  ipv6Prefix: number;
  allow: string[];
  blockPrivate: boolean;
  maxTracked: number;
  maxBlocks: number;
  bucket: string;
}

/** Defaults of a rule's keys (`duration` has none: required). */
export const RULE_DEFAULTS = {
  minCriticality: 0,
  minRecords: 1,
  minSensors: 1,
  within: '1h',
  sensors: null,
  endpoints: null,
  threat: null,
  address: 'source',
} as const;

const DURATION = '^(?:[0-9]{1,9}(?:ms|s|m|h|d|w))+$';

const RULE_KEYS = {
  minCriticality: {
    type: 'integer',
    minimum: 0,
    maximum: 4,
    description: 'records of at least this criticality count (default 0)',
  },
  minRecords: {
    type: 'integer',
    minimum: 1,
    maximum: 1_000_000,
    description: 'records about the address within `within` (default 1)',
  },
  minSensors: {
    type: 'integer',
    minimum: 1,
    maximum: 1000,
    description: 'distinct sensors that reported it within `within` (default 1)',
  },
  within: { type: 'string', pattern: DURATION, description: 'the window, e.g. "1h" (default)' },
  duration: {
    type: 'string',
    pattern: DURATION,
    description: 'how long a block lasts after the last record (required)',
  },
  sensors: {
    type: ['array', 'null'],
    items: { type: 'string', minLength: 1 },
    minItems: 1,
    description: 'only records of these sensors (default: all)',
  },
  endpoints: {
    type: ['array', 'null'],
    items: { enum: ['firewall', 'generic', 'syslog'] },
    minItems: 1,
    description: 'only records that came in here (default: all)',
  },
  threat: {
    type: ['string', 'null'],
    minLength: 1,
    description: 'only records whose threat name contains this, ignoring case',
  },
  address: {
    enum: ['source', 'destination'],
    description: 'which address of a record is blocked (default source)',
  },
} as const;

export const RULE_KEY_NAMES = Object.keys(RULE_KEYS);

export const blocklistSchema = {
  type: 'object',
  description: 'blocklists: rules that block addresses, served to firewalls as feeds (docs/blocklists.md)',
  additionalProperties: false,
  default: {},
  properties: {
    rules: {
      type: 'object',
      default: {},
      description:
        'by rule name: {minCriticality, minRecords, minSensors, within, duration (required), sensors, endpoints, threat, address}; docs/blocklists.md',
      propertyNames: { pattern: '^[A-Za-z0-9_-]{1,64}$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['duration'],
        properties: RULE_KEYS,
      },
    },
    repeatFactor: {
      type: 'number',
      minimum: 1,
      maximum: 100,
      default: 2,
      description: 'a new block of an address blocked within the last 30 days lasts this many times longer',
    },
    maxDuration: {
      type: 'string',
      pattern: DURATION,
      default: '30d',
      description: 'longest block a rule (with repeatFactor) makes',
    },
    ipv4Prefix: {
      type: 'integer',
      minimum: 8,
      maximum: 32,
      default: 32,
      description: 'an IPv4 block covers this prefix of the address',
    },
    ipv6Prefix: {
      type: 'integer',
      minimum: 16,
      maximum: 128,
      default: 64,
      description: "an IPv6 block covers this prefix of the address (a /64 is one host's usual share)",
    },
    allow: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'addresses or CIDRs never blocked (besides `threatcol allow add`)',
    },
    blockPrivate: {
      type: 'boolean',
      default: false,
      description:
        'block private, loopback, link-local, unique-local, shared, multicast and unspecified addresses too',
    },
    maxTracked: {
      type: 'integer',
      minimum: 1000,
      maximum: 100_000_000,
      default: 1_000_000,
      description:
        'addresses the engine keeps counts for; the least recently seen are dropped first (counted)',
    },
    maxBlocks: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000_000,
      default: 250_000,
      description:
        'blocks held at most: past it, rules make no new block (counted and logged) until some end; manual blocks are always made',
    },
    bucket: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      default: 'threatcol_decisions',
      description:
        'JetStream key-value bucket holding blocks, allow entries and feeds (store.backend "nats")',
    },
  },
} as const;

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const WHOLE = new RegExp(DURATION);
const PART = /([0-9]{1,9})(ms|s|m|h|d|w)/g;
/** Ten years: longer than any block anyone means, a valid Date whatever is added to now. */
export const MAX_BLOCK_MS = 3650 * 86_400_000;

/** `24h`, `90m`, `1h30m`, `7d`, `2w` to milliseconds; null when not a duration, zero, or over ten years. */
export function parseBlockDuration(text: string): number | null {
  if (!WHOLE.test(text)) return null;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART))
    total += Number(amount) * (UNIT_MS[unit as string] as number);
  return total > 0 && total <= MAX_BLOCK_MS ? total : null;
}

/** An address or CIDR, parsed: its family, its 16 bytes (IPv4 in the last 4) and its prefix length. */
export interface Network {
  family: 4 | 6;
  prefix: number;
  /** The network's first address (host bits cleared), IPv4 as 4 bytes, IPv6 as 16. */
  bytes: Uint8Array;
}

/**
 * `192.0.2.10`, `198.51.100.0/24`, `2001:db8::/32` (host bits are cleared; IPv4-mapped IPv6 as IPv4); null
 * when neither.
 */
export function parseNetwork(text: string): Network | null {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const family = isIP(address);
  if (family === 0 || address.includes('%')) return null;
  const max = family === 4 ? 32 : 128;
  let prefix = max;
  if (slash !== -1) {
    const bits = text.slice(slash + 1);
    if (!/^[0-9]{1,3}$/.test(bits) || Number(bits) > max) return null;
    prefix = Number(bits);
  }
  if (family === 4) return { family: 4, prefix, bytes: maskBytes(ipv4Bytes(address), prefix) };
  const bytes = ipv6Bytes(address);
  // An IPv4-mapped address or network (`::ffff:203.0.113.9`, `::ffff:0:0/96` and narrower) is the IPv4 one: a
  // packet's IPv4 source, the engine's unit, an allow entry and a private range compare as one.
  if (prefix >= 96 && isMapped(bytes))
    return { family: 4, prefix: prefix - 96, bytes: maskBytes(bytes.slice(12), prefix - 96) };
  return { family: 6, prefix, bytes: maskBytes(bytes, prefix) };
}

function isMapped(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/** `198.51.100.7/32`, `2001:db8:1:2::/64`: the canonical text of a network (the key of its block). */
export function formatNetwork(n: Network): string {
  return `${formatAddress(n)}/${n.prefix}`;
}

/** The network's first address: dotted IPv4, or IPv6 in its shortest form (RFC 5952). */
export function formatAddress(n: Network): string {
  if (n.family === 4) return `${n.bytes[0]}.${n.bytes[1]}.${n.bytes[2]}.${n.bytes[3]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((n.bytes[i] as number) << 8) | (n.bytes[i + 1] as number));
  // The longest run of two or more zero groups becomes `::` (the first such run when two are as long).
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  if (best === -1) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLength))}`;
}

/** Clears the bits after `prefix` (a copy, or the bytes themselves when no bit is cleared). */
export function maskBytes(bytes: Uint8Array, prefix: number): Uint8Array {
  if (prefix >= bytes.length * 8) return bytes;
  const out = Uint8Array.from(bytes);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    out[i] = (out[i] as number) & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

/**
 * Whether one of the two networks contains the other (CIDRs are nested or apart, never partly overlapping): their
 * bytes compared up to the shorter prefix, with no copy made (the engine asks it of records' addresses).
 */
export function overlaps(a: Network, b: Network): boolean {
  if (a.family !== b.family) return false;
  const shorter = Math.min(a.prefix, b.prefix);
  const whole = shorter >> 3;
  for (let i = 0; i < whole; i++) if (a.bytes[i] !== b.bytes[i]) return false;
  const bits = shorter & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return ((a.bytes[whole] as number) & mask) === ((b.bytes[whole] as number) & mask);
}

/** A dotted quad (already checked by isIP) to its 4 bytes, without splitting: the engine runs this per record. */
function ipv4Bytes(address: string): Uint8Array {
  const out = new Uint8Array(4);
  let part = 0;
  let value = 0;
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c === 0x2e) {
      out[part++] = value;
      value = 0;
    } else {
      value = value * 10 + (c - 0x30);
    }
  }
  out[part] = value;
  return out;
}

function ipv6Bytes(address: string): Uint8Array {
  let text = address.toLowerCase();
  const out = new Uint8Array(16);
  // An embedded IPv4 tail (`::ffff:192.0.2.1`) as two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const b = ipv4Bytes(v4[1] as string);
    text = `${text.slice(0, -(v4[1] as string).length)}${((b[0] as number) * 256 + (b[1] as number)).toString(16)}:${((b[2] as number) * 256 + (b[3] as number)).toString(16)}`;
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  all.forEach((group, i) => {
    const n = Number.parseInt(group, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  return out;
}

/** Problems of a loaded `blocklist` section, each naming its key (the schema checked the types). */
export function blocklistChecks(blocklist: BlocklistConfig): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const duration = (path: string, value: string) => {
    if (parseBlockDuration(value) === null)
      problems.push({
        path,
        message: `"${value}" is not a duration between 1ms and 10 years (e.g. 30m, 24h, 7d)`,
      });
  };
  duration('blocklist.maxDuration', blocklist.maxDuration);
  for (const [name, rule] of Object.entries(blocklist.rules)) {
    duration(`blocklist.rules.${name}.duration`, rule.duration);
    if (rule.within !== undefined) duration(`blocklist.rules.${name}.within`, rule.within);
    if (rule.sensors && rule.minSensors > new Set(rule.sensors).size)
      problems.push({
        path: `blocklist.rules.${name}.minSensors`,
        message: `${rule.minSensors} distinct sensors, but the rule's sensors list names ${new Set(rule.sensors).size}: it could never block`,
      });
  }
  blocklist.allow.forEach((network, i) => {
    if (parseNetwork(network) === null)
      problems.push({ path: `blocklist.allow[${i}]`, message: `"${network}" is not an address or CIDR` });
  });
  return problems;
}

/** A rule with its defaults. */
export function ruleWithDefaults(rule: Partial<BlockRule> & { duration: string }): BlockRule {
  return { ...RULE_DEFAULTS, ...rule } as BlockRule;
}
