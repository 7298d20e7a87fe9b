// Addresses as the engine and the feeds see them: the unit a block covers (IPv4 /32, IPv6 /64 by default),
// the ranges never blocked unless blocklist.blockPrivate, overlap with allow entries, and printing.
import {
  formatAddress,
  formatNetwork,
  maskBytes,
  type Network,
  overlaps,
  parseNetwork,
} from '../config/blocklist-schema.js';

export type { Network } from '../config/blocklist-schema.js';
export { formatAddress, formatNetwork, overlaps, parseNetwork } from '../config/blocklist-schema.js';

/**
 * The unit an address falls in, as a Network (host bits cleared); IPv4-mapped IPv6 (`::ffff:192.0.2.1`) is
 * its IPv4 address, NAT64's (`64:ff9b::192.0.2.1`) the same prefix of the IPv4 address inside 64:ff9b::/96.
 * null for text that is not an address.
 */
export function unitOf(address: string, ipv4Prefix: number, ipv6Prefix: number): Network | null {
  // parseNetwork reads an IPv4-mapped address as its IPv4 one.
  const parsed = parseNetwork(address);
  if (parsed === null || address.includes('/')) return null;
  const prefix =
    parsed.family === 4
      ? ipv4Prefix
      : isNat64(parsed.bytes)
        ? Math.max(ipv6Prefix, 96 + ipv4Prefix)
        : ipv6Prefix;
  return { family: parsed.family, prefix, bytes: maskBytes(parsed.bytes, prefix) };
}

/**
 * Whether an IPv6 address is in NAT64's well-known prefix 64:ff9b::/96 (RFC 6052), whose last 32 bits are an
 * IPv4 address: its unit is that address's (a /64 there would be every IPv4 address behind the translator).
 */
function isNat64(b: Uint8Array): boolean {
  if (b[0] !== 0 || b[1] !== 0x64 || b[2] !== 0xff || b[3] !== 0x9b) return false;
  for (let i = 4; i < 12; i++) if (b[i] !== 0) return false;
  return true;
}

/** Private, loopback, link-local, unique-local, shared, multicast, unspecified, broadcast (DESIGN 15). */
const NEVER_BY_DEFAULT_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '224.0.0.0/4',
  '255.255.255.255/32',
].map((text) => parseNetwork(text) as Network);

/** The NAT64 address (64:ff9b::/96) of each IPv4 network: a translator's name for the same hosts. */
const NAT64_PREFIX = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];
const nat64Of = (n: Network): Network => ({
  family: 6,
  prefix: 96 + n.prefix,
  bytes: Uint8Array.from([...NAT64_PREFIX, ...n.bytes]),
});

const NEVER_BY_DEFAULT = [
  ...NEVER_BY_DEFAULT_V4,
  ...['::/128', '::1/128', 'fc00::/7', 'fe80::/10', 'ff00::/8'].map((text) => parseNetwork(text) as Network),
  // RFC 6052 forbids a non-global IPv4 address in the well-known prefix; a record naming one is as private.
  ...NEVER_BY_DEFAULT_V4.map(nat64Of),
];

/** Whether a network lies in (or covers) a range never blocked unless blocklist.blockPrivate. */
export function isPrivate(n: Network): boolean {
  // The engine asks this of every record: a single address (the common case) is checked on its first bytes.
  if (n.family === 4 && n.prefix >= 16) return privateIpv4(n.bytes);
  // From /32 on, the first 32 bits say whether a network may hold NAT64's names (64:ff9b::/96) of such ranges.
  if (n.family === 6 && n.prefix >= 32 && !isNat64(n.bytes)) return privateIpv6(n.bytes, n.prefix);
  if (n.family === 6 && n.prefix >= 112) return privateIpv4(n.bytes.subarray(12));
  return NEVER_BY_DEFAULT.some((range) => overlaps(range, n));
}

function privateIpv4(b: Uint8Array): boolean {
  // Read by index: a destructuring would walk the array's iterator, for every record.
  const x = b[0] as number;
  const y = b[1] as number;
  const z = b[2] as number;
  const w = b[3] as number;
  return (
    x === 0 ||
    x === 10 ||
    x === 127 ||
    x >= 224 ||
    (x === 100 && y >= 64 && y < 128) ||
    (x === 169 && y === 254) ||
    (x === 172 && y >= 16 && y < 32) ||
    (x === 192 && y === 168) ||
    (x === 255 && y === 255 && z === 255 && w === 255)
  );
}

function privateIpv6(b: Uint8Array, prefix: number): boolean {
  const x = b[0] as number;
  const y = b[1] as number;
  if ((x & 0xfe) === 0xfc || x === 0xff || (x === 0xfe && (y & 0xc0) === 0x80)) return true;
  // :: and ::1 (a /64 or wider unit holding them is the whole ::/64).
  for (let i = 0; i < 15; i++) if (b[i] !== 0) return false;
  return prefix < 128 || b[15] === 0 || b[15] === 1;
}

/** The 32-bit number of the four bytes at `at` (an IPv4 address's, or a word of an IPv6 one), big-endian. */
export const wordAt = (b: Uint8Array, at = 0): number =>
  (((b[at] as number) << 24) |
    ((b[at + 1] as number) << 16) |
    ((b[at + 2] as number) << 8) |
    (b[at + 3] as number)) >>>
  0;

/** One address (/32, /128) as the address alone, a wider network as a CIDR: what firewalls' lists take. */
export function listEntry(n: Network): string {
  return n.prefix === (n.family === 4 ? 32 : 128) ? formatAddress(n) : formatNetwork(n);
}

/**
 * Networks in address order: IPv4 before IPv6, then by their bytes, the wider first where two start alike. Compared
 * off the bytes (no text per comparison): feeds list their blocks in this order (feed-items.ts).
 */
export function compareNetworks(a: Network, b: Network): number {
  if (a.family !== b.family) return a.family - b.family;
  for (let i = 0; i < a.bytes.length; i++) {
    const d = (a.bytes[i] as number) - (b.bytes[i] as number);
    if (d !== 0) return d;
  }
  return a.prefix - b.prefix;
}
