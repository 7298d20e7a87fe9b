// Splits PAN-OS threat names of the form `Name(12345)` into the name and the numeric threat id.

export interface ThreatName {
  name: string;
  id: string | null;
}

const DIGITS = /^\d{1,20}$/;

/**
 * Linear in the length of the text: the suffix is found from the last `(`, never by a regex that
 * backtracks over the name (a long run of spaces made the earlier pattern quadratic).
 */
export function splitThreatName(text: string): ThreatName {
  const end = text.trimEnd();
  if (!end.endsWith(')')) return { name: text, id: null };
  const open = end.lastIndexOf('(');
  if (open === -1) return { name: text, id: null };
  const digits = end.slice(open + 1, -1);
  const name = end.slice(0, open).trimEnd();
  if (!DIGITS.test(digits) || name.length === 0) return { name: text, id: null };
  return { name, id: digits };
}

/** The numeric id from `threatid` (`86708` or `EICAR Test File(86708)`), else from the name, else the raw value. */
export function threatIdFrom(threatid: string, fromName: string | null): string {
  if (DIGITS.test(threatid)) return threatid;
  const split = splitThreatName(threatid);
  if (split.id !== null) return split.id;
  return fromName ?? threatid;
}
