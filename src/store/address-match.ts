// An address or CIDR to match record addresses against, compared on bytes (node:net BlockList), IPv4 and IPv6.
import { BlockList, isIP, SocketAddress } from 'node:net';

/** The IPv4-mapped IPv6 addresses (::ffff:a.b.c.d). */
const MAPPED = new BlockList();
MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

/** Matches one address against the parsed pattern; false for a value that is not an address. */
export type AddressTest = (address: string) => boolean;

/**
 * `192.0.2.10`, `2001:db8::1`, `198.51.100.0/24` or `2001:db8::/32` to a test; null when the text is neither
 * an address nor a CIDR. An IPv4 pattern also matches the IPv4-mapped IPv6 form (`::ffff:192.0.2.10`), as a
 * sensor behind a dual-stack socket may report it.
 */
export function parseAddressMatch(text: string): AddressTest | null {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const address = slash === -1 ? trimmed : trimmed.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return null;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const max = family === 4 ? 32 : 128;
  let prefix = max;
  if (slash !== -1) {
    const bits = trimmed.slice(slash + 1);
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
    prefix = Number(bits);
  }
  const list = new BlockList();
  list.addSubnet(address, prefix, type);
  // BlockList compares across families itself, taking an IPv4 value for ::ffff:a.b.c.d: so ::/0, or any IPv6
  // network shorter than /96 around ::, would hold every IPv4 address. An IPv6 pattern holds IPv4 values only
  // inside the IPv4-mapped space (::ffff:0:0/96 or a part of it).
  const holdsIpv4 = family === 4 || (prefix >= 96 && MAPPED.check(address, 'ipv6'));
  return (value) => {
    const valueFamily = isIP(value);
    if (valueFamily === 0 || (valueFamily === 4 && !holdsIpv4)) return false;
    return list.check(value, valueFamily === 4 ? 'ipv4' : 'ipv6');
  };
}

/**
 * One spelling of each address, to count distinct ones: IPv6 as RFC 5952 writes it (lower case, the longest run of
 * zeros compressed, no zone id), an IPv4-mapped one (::ffff:a.b.c.d) as its IPv4 address; IPv4 (node:net takes one
 * spelling only) and text that is no address as they are.
 */
export function canonicalAddress(text: string): string {
  if (isIP(text) !== 6) return text;
  let written: string;
  try {
    written = new SocketAddress({ address: text, family: 'ipv6' }).address;
  } catch {
    return text;
  }
  const colon = written.lastIndexOf(':');
  const tail = written.slice(colon + 1);
  if (isIP(tail) !== 4) return written;
  // inet_ntop writes the last 32 bits as IPv4 after 96 bits of zeros (::0.1.0.2) or the mapped prefix: the
  // mapped ones are their IPv4 address, the others hex as RFC 5952 has them (::1:2).
  if (written === `::ffff:${tail}`) return tail;
  const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
  return `${written.slice(0, colon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}
