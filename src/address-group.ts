// Groups client addresses for per-address limits (sensors' port, admin listener, rejection log): IPv4 by
// address, IPv6 by its /64 (one host's usual share).
import { isIPv6 } from 'node:net';

/** `::ffff:1.2.3.4` -> `1.2.3.4`; `2001:db8:1:2:a::1` -> `2001:db8:1:2::/64`; anything else as it is. */
export function addressGroup(address: string): string {
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!isIPv6(address)) return address;
  return `${expandIpv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros. */
function expandIpv6(address: string): string[] {
  const plain = address.split('%')[0] as string;
  const [head = '', tail] = plain.split('::') as [string, string | undefined];
  const parts = (text: string) => (text === '' ? [] : text.split(':'));
  const left = parts(head);
  const right = tail === undefined ? [] : parts(tail);
  const fill = tail === undefined ? [] : Array(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...fill, ...right].map((g) => (g.includes('.') ? g : Number.parseInt(g, 16).toString(16)));
}
