// The shipped databases' form: address ranges in sorted typed arrays, each with an entry (AS number and name; a
// country database's entries hold the country code as the name), looked up by binary search. Made by the build
// from @ip-location-db/asn's CSV (IPv4 from the numeric file, IPv6 from the text one) and from the country MMDB.
import { readFileSync } from 'node:fs';
import { readAddress, WORDS } from './address-words.js';

export interface AsnEntry {
  asn: number;
  org: string;
}

export interface AsnTable {
  /** The entry for the address last read by readAddress (family 4 or 6); undefined when no range holds it. */
  find(family: 4 | 6): AsnEntry | undefined;
  /** Ranges held (IPv4 and IPv6). */
  readonly ranges: number;
  /** When its data was made (epoch ms), as the table file says; 0 for a table not read from one. */
  readonly builtAt: number;
}

/** Reads the two CSV files into a table; throws when either is unreadable or holds a line that is not a range. */
export function readAsnCsv(ipv4NumCsv: string, ipv6Csv: string): AsnTable {
  const orgs = new Interner();
  const v4 = readV4(readFileSync(ipv4NumCsv, 'latin1'), orgs);
  const v6 = readV6(readFileSync(ipv6Csv, 'latin1'), orgs);
  return tableOf(v4, v6, orgs.entries);
}

/** A range of a table being made: IPv4 as numbers, IPv6 as four words each; rows sorted, not overlapping. */
export interface TableRow<A> {
  start: A;
  end: A;
  asn: number;
  org: string;
}

/** A table of sorted, non-overlapping rows (the build's conversion of an MMDB file: packaging/generate/). */
export function tableFromRows(v4Rows: TableRow<number>[], v6Rows: TableRow<Uint32Array>[]): AsnTable {
  const orgs = new Interner(false);
  const v4: V4Ranges = {
    count: v4Rows.length,
    starts: Uint32Array.from(v4Rows, (r) => r.start),
    ends: Uint32Array.from(v4Rows, (r) => r.end),
    at: Uint32Array.from(v4Rows, (r) => orgs.add(r.asn, r.org)),
  };
  const v6: V6Ranges = {
    count: v6Rows.length,
    starts: new Uint32Array(v6Rows.length * 4),
    ends: new Uint32Array(v6Rows.length * 4),
    at: Uint32Array.from(v6Rows, (r) => orgs.add(r.asn, r.org)),
  };
  v6Rows.forEach((r, i) => {
    v6.starts.set(r.start, i * 4);
    v6.ends.set(r.end, i * 4);
  });
  return tableOf(v4, v6, orgs.entries);
}

function tableOf(v4: V4Ranges, v6: V6Ranges, entries: readonly AsnEntry[]) {
  return table(
    v4,
    v6,
    Uint32Array.from(entries, (e) => e.asn),
    entries.map((e) => e.org),
  );
}

/**
 * The entries as an array of numbers and one of names (no object per entry: a loaded table's 80,000 AS entries
 * would be as many objects for every full garbage collection to mark). find() answers in one reused object.
 */
function table(
  v4: V4Ranges,
  v6: V6Ranges,
  asns: Uint32Array,
  names: readonly string[],
  builtAt = 0,
): AsnTable & { v4: V4Ranges; v6: V6Ranges; asns: Uint32Array; names: readonly string[] } {
  const found: AsnEntry = { asn: 0, org: '' };
  return {
    v4,
    v6,
    asns,
    names,
    ranges: v4.count + v6.count,
    builtAt,
    find(family) {
      const at = family === 4 ? findV4(v4) : findV6(v6);
      // An index past the entries (a damaged file) finds nothing.
      if (at === -1 || at >= names.length) return undefined;
      found.asn = asns[at] as number;
      found.org = names[at] as string;
      return found;
    },
  };
}

/** What starts a table file (the version of its layout in the last digit). */
const MAGIC = 'TCASN02\n';

/**
 * The table as one file (the build writes it, readAsnTable loads it in milliseconds where the CSV takes
 * seconds): MAGIC, four counts (IPv4 ranges, IPv6 ranges, entries, name bytes) and the data's date (epoch
 * seconds), then the arrays as they lie in memory (little-endian), the entries' AS numbers, and their names,
 * UTF-8, one a line.
 */
export function asnTableFile(t: AsnTable, builtAtMs: number): Buffer {
  const { v4, v6, asns, names: orgs } = t as ReturnType<typeof table>;
  const names = Buffer.from(orgs.join('\n'), 'utf8');
  const words = new Uint32Array([
    v4.count,
    v6.count,
    asns.length,
    names.length,
    Math.floor(builtAtMs / 1000),
  ]);
  const parts = [
    Buffer.from(MAGIC, 'latin1'),
    words,
    v4.starts.subarray(0, v4.count),
    v4.ends.subarray(0, v4.count),
    v4.at.subarray(0, v4.count),
    v6.starts.subarray(0, v6.count * 4),
    v6.ends.subarray(0, v6.count * 4),
    v6.at.subarray(0, v6.count),
    asns,
  ].map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength));
  return Buffer.concat([...parts, names]);
}

/** Loads a table file (asnTableFile); throws when it is none or is cut short. */
export function readAsnTable(path: string): AsnTable {
  const file = readFileSync(path);
  if (file.toString('latin1', 0, MAGIC.length) !== MAGIC) throw new Error('not an AS table file');
  // Views of the file's own memory where it lies on a 4-byte boundary (a large file's buffer is its own, at 0);
  // else a copy that does.
  const count = Math.floor((file.length - MAGIC.length) / 4);
  const offset = file.byteOffset + MAGIC.length;
  let words: Uint32Array;
  if (offset % 4 === 0) words = new Uint32Array(file.buffer, offset, count);
  else {
    words = new Uint32Array(count);
    Buffer.from(words.buffer).set(file.subarray(MAGIC.length, MAGIC.length + words.byteLength));
  }
  const [n4, n6, ne, nameBytes, builtAt] = words as unknown as [number, number, number, number, number];
  let p = 5;
  const take = (n: number) => {
    const view = words.subarray(p, p + n);
    if (view.length !== n) throw new Error('AS table file cut short');
    p += n;
    return view;
  };
  const v4: V4Ranges = { count: n4, starts: take(n4), ends: take(n4), at: take(n4) };
  const v6: V6Ranges = { count: n6, starts: take(n6 * 4), ends: take(n6 * 4), at: take(n6) };
  const asns = take(ne);
  const nameStart = MAGIC.length + p * 4;
  if (nameStart + nameBytes !== file.length) throw new Error('AS table file cut short');
  const names = file.toString('utf8', nameStart).split('\n');
  if (names.length !== ne) throw new Error('AS table file damaged');
  return table(v4, v6, asns, names, builtAt * 1000);
}

/** One entry per distinct (AS number, name): ranges of one AS share it. */
class Interner {
  readonly entries: AsnEntry[] = [];
  readonly #index = new Map<string, number>();
  /** `latin1`: names come from text read as latin1 (fast), and are UTF-8. */
  constructor(readonly latin1 = true) {}
  add(asn: number, org: string): number {
    const key = `${asn} ${org}`;
    let at = this.#index.get(key);
    if (at === undefined) {
      at = this.entries.length;
      this.entries.push({ asn, org: this.latin1 ? Buffer.from(org, 'latin1').toString('utf8') : org });
      this.#index.set(key, at);
    }
    return at;
  }
}

interface Columns {
  start: number;
  end: number;
  asn: number;
  org: string;
  next: number;
}

/** The line starting at `p`: its first two fields as text, then AS number and name; null at the end of the text. */
function line(text: string, p: number, fields: [string, string]): Columns | null {
  if (p >= text.length) return null;
  let eol = text.indexOf('\n', p);
  if (eol === -1) eol = text.length;
  const c1 = text.indexOf(',', p);
  const c2 = text.indexOf(',', c1 + 1);
  const c3 = text.indexOf(',', c2 + 1);
  if (c1 === -1 || c3 === -1 || c3 > eol) throw new Error(`not a range line at byte ${p}`);
  fields[0] = text.slice(p, c1);
  fields[1] = text.slice(c1 + 1, c2);
  const asn = Number(text.slice(c2 + 1, c3));
  let org = text.slice(c3 + 1, text.charCodeAt(eol - 1) === 0x0d ? eol - 1 : eol);
  if (org.charCodeAt(0) === 0x22) org = org.slice(1, -1).replaceAll('""', '"');
  if (!Number.isInteger(asn) || asn < 0) throw new Error(`not an AS number at byte ${p}`);
  return { start: 0, end: 0, asn, org, next: eol + 1 };
}

/** Ranges in address order: IPv4 one word an address, IPv6 four (most significant first); `at` their entries. */
interface Ranges {
  count: number;
  starts: Uint32Array;
  ends: Uint32Array;
  at: Uint32Array;
}
type V4Ranges = Ranges;
type V6Ranges = Ranges;

/** Room for `max` ranges of `words` words an address. */
function emptyRanges(max: number, words: 1 | 4): Ranges {
  return {
    count: 0,
    starts: new Uint32Array(max * words),
    ends: new Uint32Array(max * words),
    at: new Uint32Array(max),
  };
}

function readV4(text: string, orgs: Interner): V4Ranges {
  const r = emptyRanges(countLines(text), 1);
  const fields: [string, string] = ['', ''];
  let last = -1;
  for (let c = line(text, 0, fields); c !== null; c = line(text, c.next, fields)) {
    let start = Number(fields[0]);
    const end = Number(fields[1]);
    if (!(start >= 0 && end >= start && end <= 0xffffffff))
      throw new Error(`not an IPv4 range: ${fields[0]}`);
    // Sorted by start; a range overlapping the one before (the data has a few) keeps only what is new of it.
    if (end <= last) continue;
    if (start <= last) start = last + 1;
    last = end;
    r.starts[r.count] = start;
    r.ends[r.count] = end;
    r.at[r.count++] = orgs.add(c.asn, c.org);
  }
  return r;
}

function readV6(text: string, orgs: Interner): V6Ranges {
  const r = emptyRanges(countLines(text), 4);
  const fields: [string, string] = ['', ''];
  for (let c = line(text, 0, fields); c !== null; c = line(text, c.next, fields)) {
    if (readAddress(fields[0]) !== 6) continue; // an IPv4-mapped range: IPv4 is the other file's
    r.starts.set(WORDS, r.count * 4);
    if (readAddress(fields[1]) !== 6) throw new Error(`not an IPv6 range: ${fields[0]}`);
    r.ends.set(WORDS, r.count * 4);
    // Sorted by start; a range overlapping the one before (the data has a few) is left out.
    if (r.count > 0 && compare(r.starts, r.count * 4, r.ends, (r.count - 1) * 4) <= 0) continue;
    r.at[r.count++] = orgs.add(c.asn, c.org);
  }
  return r;
}

function countLines(text: string): number {
  let n = 1;
  for (let p = text.indexOf('\n'); p !== -1; p = text.indexOf('\n', p + 1)) n++;
  return n;
}

/** The entry index of the range holding WORDS[0], or -1. */
function findV4(r: V4Ranges): number {
  const a = WORDS[0] as number;
  let lo = 0;
  let hi = r.count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if ((r.starts[mid] as number) <= a) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 && a <= (r.ends[hi] as number) ? (r.at[hi] as number) : -1;
}

/** The entry index of the range holding WORDS (IPv6), or -1. */
function findV6(r: V6Ranges): number {
  let lo = 0;
  let hi = r.count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(r.starts, mid * 4, WORDS, 0) <= 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 && compare(WORDS, 0, r.ends, hi * 4) <= 0 ? (r.at[hi] as number) : -1;
}

/** Compares the four words of `a` at `i` with those of `b` at `j`. */
function compare(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  for (let k = 0; k < 4; k++) {
    const d = (a[i + k] as number) - (b[j + k] as number);
    if (d !== 0) return d;
  }
  return 0;
}
