// Splits PAN-OS threat names of the form `Name(12345)` into the name and the numeric threat id.

const SUFFIX = /^(.*?)\s*\((\d{1,20})\)\s*$/s;

export interface ThreatName {
  name: string;
  id: string | null;
}

export function splitThreatName(text: string): ThreatName {
  const m = SUFFIX.exec(text);
  if (m && (m[1] as string).length > 0) return { name: m[1] as string, id: m[2] as string };
  return { name: text, id: null };
}

/** The numeric id from `threatid` (`86708` or `EICAR Test File(86708)`), else from the name, else the raw value. */
export function threatIdFrom(threatid: string, fromName: string | null): string {
  if (/^\d{1,20}$/.test(threatid)) return threatid;
  const split = splitThreatName(threatid);
  if (split.id !== null) return split.id;
  return fromName ?? threatid;
}
