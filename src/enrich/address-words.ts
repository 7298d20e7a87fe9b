// An address's text read into numbers (IPv4 one 32-bit word, IPv6 four), and whether it is a public address:
// what the enrichment looks up and what it leaves alone (private, reserved, documentation, link-local...).

/** The address last read by readAddress: IPv4 in [0], IPv6 in [0..3] (most significant first). */
export const WORDS = new Uint32Array(4);

/**
 * Reads `text` into WORDS: 4 for IPv4 (an IPv4-mapped IPv6 address, ::ffff:a.b.c.d, counts as its IPv4
 * address), 6 for IPv6 (a zone id, %eth0, is ignored), 0 for anything else. Never throws.
 */
export function readAddress(text: string): 0 | 4 | 6 {
  if (typeof text !== 'string' || text.length > 64) return 0;
  if (text.indexOf(':') === -1) {
    const v4 = dotted(text, 0, text.length);
    if (v4 < 0) return 0;
    WORDS[0] = v4;
    return 4;
  }
  const zone = text.indexOf('%');
  const end = zone === -1 ? text.length : zone;
  if (!readIpv6(text, end)) return 0;
  if (WORDS[0] === 0 && WORDS[1] === 0 && WORDS[2] === 0xffff) {
    WORDS[0] = WORDS[3] as number;
    return 4;
  }
  return 6;
}

/** A dotted quad's value (0-255 parts, 1-3 digits), or -1. */
function dotted(s: string, start: number, end: number): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let parts = 0;
  for (let i = start; i <= end; i++) {
    const c = i === end ? 0x2e : s.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || part > 255) return -1;
      value = value * 256 + part;
      parts++;
      part = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (++digits > 3) return -1;
      part = part * 10 + (c - 0x30);
    } else {
      return -1;
    }
  }
  return parts === 4 ? value : -1;
}

const GROUPS = new Uint16Array(8);

/** IPv6 text (hex groups, one `::` at most, an IPv4 tail) up to `end` into WORDS; false if it is none. */
function readIpv6(s: string, end: number): boolean {
  let n = 0;
  let gap = -1;
  let i = 0;
  if (s.charCodeAt(0) === 0x3a) {
    if (s.charCodeAt(1) !== 0x3a) return false;
    gap = 0;
    i = 2;
  }
  while (i < end) {
    if (n === 8) return false;
    let j = i;
    let value = 0;
    while (j < end && j - i < 5) {
      const h = hex(s.charCodeAt(j));
      if (h < 0) break;
      value = value * 16 + h;
      j++;
    }
    if (j < end && s.charCodeAt(j) === 0x2e) {
      // An IPv4 tail: the last 32 bits.
      if (n > 6) return false;
      const v4 = dotted(s, i, end);
      if (v4 < 0) return false;
      GROUPS[n++] = v4 >>> 16;
      GROUPS[n++] = v4 & 0xffff;
      i = end;
      break;
    }
    if (j === i || j - i > 4) return false;
    GROUPS[n++] = value;
    i = j;
    if (i === end) break;
    if (s.charCodeAt(i) !== 0x3a) return false;
    i++;
    if (s.charCodeAt(i) === 0x3a) {
      if (gap !== -1) return false;
      gap = n;
      i++;
    } else if (i === end) {
      return false;
    }
  }
  if (gap === -1 ? n !== 8 : n > 7) return false;
  const missing = 8 - n;
  for (let k = 0, g = 0; k < 8; k++) {
    let v = 0;
    if (gap !== -1 && k >= gap && k < gap + missing) v = 0;
    else v = GROUPS[g++] as number;
    if (k % 2 === 0) WORDS[k >> 1] = v * 65536;
    else WORDS[k >> 1] = (WORDS[k >> 1] as number) + v;
  }
  return true;
}

function hex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/** IPv4 networks that are not public (RFC 6890 and its updates): [first address, prefix length]. */
const NOT_PUBLIC_V4: readonly (readonly [number, number])[] = [
  [0x00000000, 8], // this network
  [0x0a000000, 8], // private
  [0x64400000, 10], // shared address space (carrier-grade NAT)
  [0x7f000000, 8], // loopback
  [0xa9fe0000, 16], // link-local
  [0xac100000, 12], // private
  [0xc0000000, 24], // IETF protocol assignments
  [0xc0000200, 24], // documentation (TEST-NET-1)
  [0xc0586300, 24], // 6to4 relay anycast
  [0xc0a80000, 16], // private
  [0xc6120000, 15], // benchmarking
  [0xc6336400, 24], // documentation (TEST-NET-2)
  [0xcb007100, 24], // documentation (TEST-NET-3)
  [0xe0000000, 4], // multicast
  [0xf0000000, 4], // reserved, and the limited broadcast
];

/** By first octet: 0 every address public, 1 none, 2 look in NOT_PUBLIC_V4 (most addresses end at the first). */
const BY_OCTET = new Uint8Array(256);
for (const [first, bits] of NOT_PUBLIC_V4) {
  const octet = first >>> 24;
  if (bits <= 8) BY_OCTET.fill(1, octet, octet + 2 ** (8 - bits));
  else if (BY_OCTET[octet] === 0) BY_OCTET[octet] = 2;
}

/**
 * NOT_PUBLIC_V4's networks longer than /8 as first address and mask, side by side, searched by index: a
 * for...of with destructuring over the pairs was ~1.5 µs of a keep-alive request whose destination is in 198/8
 * (profile; 192.168/16 destinations, common behind a firewall, go the same way).
 */
const LONGER_V4 = Uint32Array.from(
  NOT_PUBLIC_V4.filter(([, bits]) => bits > 8).flatMap(([first, bits]) => [
    first,
    (0xffffffff << (32 - bits)) >>> 0,
  ]),
);

/** Whether the address last read is public: IPv4 outside NOT_PUBLIC_V4, IPv6 global unicast but its special parts. */
export function isPublic(family: 4 | 6): boolean {
  const w = WORDS[0] as number;
  if (family === 4) {
    const octet = BY_OCTET[w >>> 24];
    if (octet !== 2) return octet === 0;
    for (let i = 0; i < LONGER_V4.length; i += 2)
      if ((w & (LONGER_V4[i + 1] as number)) >>> 0 === LONGER_V4[i]) return false;
    return true;
  }
  // Only 2000::/3 is global unicast (loopback, unique local, link-local, multicast, NAT64 all lie outside it).
  if (w >>> 29 !== 1) return false;
  if (w >>> 9 === 0x2001 << 7) return false; // 2001::/23, IETF protocol assignments (Teredo included)
  if (w === 0x20010db8) return false; // 2001:db8::/32, documentation
  if (w >>> 16 === 0x2002) return false; // 2002::/16, 6to4
  if (w >>> 12 === 0x3fff0) return false; // 3fff::/20, documentation
  return true;
}
