// Whether a string is an IP address as node's isIP says, the common shapes read by hand (records' addresses).
import { isIP } from 'node:net';

/**
 * isIP(s) !== 0, with the common shapes read by hand instead of by node's regexes (the IPv6 one was 3% of a
 * batched profile): dotted-quad IPv4, and IPv6 of hex groups with at most one `::`. Anything else (an IPv4
 * tail, a zone id, or not an address) goes to isIP, behind a one-entry memo.
 */
export function isIpAddress(s: string): boolean {
  const v4 = dottedQuad(s);
  if (v4 !== -1) return v4 === 1;
  if (hexGroups(s)) return true;
  if (s !== lastOther) {
    lastOther = s;
    lastOtherValid = isIP(s) !== 0;
  }
  return lastOtherValid;
}

let lastOther = '';
let lastOtherValid = false;

/** True only for IPv6 written as 1-4 hex digit groups with at most one `::` (8 groups, or at most 7 with it). */
export function hexGroups(s: string): boolean {
  const n = s.length;
  if (n < 2 || n > 39) return false;
  let groups = 0;
  let digits = 0;
  let compressed = false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3a) {
      if (digits > 0) {
        groups++;
        digits = 0;
      } else if (i > 0) {
        return false; // an empty group: ":::" or a third colon
      }
      if (i + 1 < n && s.charCodeAt(i + 1) === 0x3a) {
        if (compressed) return false;
        compressed = true;
        i++;
      } else if (i === 0 || i === n - 1) {
        return false; // a single colon may neither begin nor end the address
      }
    } else if ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)) {
      if (++digits > 4) return false;
    } else {
      return false;
    }
  }
  if (digits > 0) groups++;
  return compressed ? groups <= 7 : groups === 8;
}

/** 1: a dotted quad (0-255, no leading zeros); -1: not one, ask isIP. */
function dottedQuad(s: string): number {
  const n = s.length;
  if (n < 7 || n > 15) return -1;
  let i = 0;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (s.charCodeAt(i) !== 0x2e) return -1;
      i++;
    }
    const start = i;
    let value = 0;
    while (i < n && i - start < 4) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      value = value * 10 + c;
      i++;
    }
    const digits = i - start;
    if (digits === 0 || digits > 3 || value > 255 || (digits > 1 && s.charCodeAt(start) === 0x30)) return -1;
  }
  return i === n ? 1 : -1;
}
