// The shipped databases' form: where each address range starts, in sorted typed arrays, each start with an entry
// (AS number and name; a country database's entries hold the country code as the name), looked up by binary
// search. The build reads @ip-location-db/asn's CSV (IPv4 from the numeric file, IPv6 from the text one) and the
// country MMDB into range tables (a start and an end each), and writes each as the packed file serve loads.
import { readFileSync } from 'node:fs';
import { deflateSync, inflateSync } from 'node:zlib';
import { isAsciiText } from '../records/stored-line.js';
import { readAddress, WORDS } from './address-words.js';

export interface AsnEntry {
  asn: number;
  org: string;
  /** True when `org` is ASCII that JSON does not escape: a stored line quotes it as it is (the packed table says). */
  plain?: boolean;
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
export function readAsnCsv(ipv4NumCsv: string, ipv6Csv: string): RangeTable {
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
export function tableFromRows(v4Rows: TableRow<number>[], v6Rows: TableRow<Uint32Array>[]): RangeTable {
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

/** The build's form of a table: each range's start and end, its entry's AS number and name (asnTableFile packs it). */
export type RangeTable = AsnTable & {
  v4: V4Ranges;
  v6: V6Ranges;
  asns: Uint32Array;
  names: readonly string[];
};

/**
 * The entries as an array of numbers and one of names (no object per entry: a loaded table's 80,000 AS entries
 * would be as many objects for every full garbage collection to mark). find() answers in one reused object.
 */
function table(v4: V4Ranges, v6: V6Ranges, asns: Uint32Array, names: readonly string[]): RangeTable {
  const found: AsnEntry = { asn: 0, org: '' };
  return {
    v4,
    v6,
    asns,
    names,
    ranges: v4.count + v6.count,
    builtAt: 0,
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

/**
 * What starts a table file (the version of its layout in the last digit). The build's cache of converted tables
 * is named by it (packaging/generate/enrich-data.ts): a new layout, or a new packing of one, takes a new number
 * (07 was this layout packed with zstd, in two commits before deflate).
 */
export const TABLE_MAGIC = 'TCASN08\n';

/**
 * The table as one file, which readAsnTable loads in a few tens of milliseconds where the CSV takes seconds: the
 * arrays a look-up reads, as it reads them, so that loading is unpacking and nothing more (every serve start
 * loads both tables). Only where each range starts is kept: a gap between ranges is a start with no entry,
 * adjacent ranges of one entry are one. IPv6 is kept by its first 64 bits (the prefix a network is routed by),
 * except in the few /64 networks the data splits further: those are marked and their starts kept whole in a
 * second, short list. After TABLE_MAGIC, three 32-bit words (the numbers' length, unpacked and packed, and the
 * names' length), then two zlib (deflate) streams. The numbers, little-endian words: seven counts (IPv4 starts, IPv6
 * starts, whole IPv6 starts, entries, names, name bytes, the data's date in epoch seconds), the index of the
 * /16s (indexBy16), the IPv4 starts with their entries side by side, the IPv6 starts (two words each), their
 * entries, the whole starts (four words each), their entries, the entries' AS numbers and name numbers side by
 * side, and each name's kind (NAME_PLAIN, NAME_ESCAPED, NAME_UTF8). The names: the distinct ones, UTF-8, one a
 * line. An entry number past the entries means no entry (NONE = entries), or, for an IPv6 start, "look in the
 * whole list" (SPLIT = entries + 1).
 */
export function asnTableFile(t: RangeTable, builtAtMs: number): Buffer {
  const { v4, v6, asns, names } = t;
  const none = asns.length;
  const starts4 = startsV4(v4, none);
  const { main, whole } = startsV6(v6, none);
  const distinct = new Map<string, number>();
  for (const n of names) if (!distinct.has(n)) distinct.set(n, distinct.size);
  const text = Buffer.from([...distinct.keys()].join('\n'), 'utf8');
  const words: number[] = [
    starts4.length,
    main.length,
    whole.length,
    asns.length,
    distinct.size,
    text.length,
    Math.floor(builtAtMs / 1000),
  ];
  const push = (array: ArrayLike<number>) => {
    for (let i = 0; i < array.length; i++) words.push(array[i] as number);
  };
  const at4 = Uint32Array.from(starts4, (s) => s.at);
  const s4 = Uint32Array.from(starts4, (s) => s.start);
  push(indexBy16(s4, at4, none));
  push(interleave(s4, at4));
  for (const s of main) words.push(Number(s.start >> 32n), Number(s.start & 0xffffffffn));
  for (const s of main) words.push(s.at);
  for (const s of whole)
    for (let k = 96n; k >= 0n; k -= 32n) words.push(Number((s.start >> k) & 0xffffffffn));
  for (const s of whole) words.push(s.at);
  push(
    interleave(
      asns,
      Uint32Array.from(names, (n) => distinct.get(n) as number),
    ),
  );
  for (const n of distinct.keys())
    words.push(PLAIN.test(n) ? NAME_PLAIN : isAsciiText(n) ? NAME_ESCAPED : NAME_UTF8);
  const numbers = Buffer.from(Uint32Array.from(words).buffer);
  const packed = pack(numbers);
  return Buffer.concat([
    Buffer.from(TABLE_MAGIC, 'latin1'),
    Buffer.from(Uint32Array.of(numbers.length, packed.length, text.length).buffer),
    packed,
    pack(text),
  ]);
}

/** A name's kind in a table file: ASCII that JSON does not escape, other ASCII, or UTF-8 beyond ASCII. */
const NAME_PLAIN = 1;
const NAME_ESCAPED = 0;
const NAME_UTF8 = 2;

function pack(data: Buffer): Buffer {
  // zlib's deflate, with its checksum: unpacked at every start about twice as fast as brotli (18 against 44 ms for
  // the AS table's numbers), and in every Node.js (zstd would be as fast, but `check` must run on any Node.js to
  // say that one is past its end of life, and Node 20's zlib has none).
  return deflateSync(data, { level: 9 });
}

/** `packed` unpacked into one buffer of `size` bytes (zlib would otherwise gather 64 KiB chunks and copy them). */
function unpack(packed: Buffer, size: number): Buffer {
  try {
    const out = inflateSync(packed, { chunkSize: Math.max(size, 64), maxOutputLength: size });
    if (out.length === size) return out;
  } catch {}
  throw new Error('AS table file damaged');
}

interface Start<A> {
  start: A;
  at: number;
}

/** Where each IPv4 range starts, and where each gap does (entry `none`); a start of the entry before is left out. */
function startsV4(r: V4Ranges, none: number): Start<number>[] {
  const out: Start<number>[] = [];
  let next = 0;
  const add = (start: number, at: number) => {
    if (at !== (out.length === 0 ? none : out[out.length - 1]?.at)) out.push({ start, at });
  };
  for (let i = 0; i < r.count; i++) {
    if ((r.starts[i] as number) > next) add(next, none);
    add(r.starts[i] as number, r.at[i] as number);
    next = (r.ends[i] as number) + 1;
  }
  if (next <= 0xffffffff) add(next, none);
  return out;
}

const LOW64 = (1n << 64n) - 1n;

/**
 * Where each IPv6 range and gap starts, as 128-bit numbers; then split in two: `main` by the first 64 bits, where
 * a /64 holding a start inside it has the entry SPLIT (none + 1), and `whole`, the starts of those /64s in full,
 * each /64's list opening with the entry in force at its first address.
 */
function startsV6(r: V6Ranges, none: number): { main: Start<bigint>[]; whole: Start<bigint>[] } {
  const all: Start<bigint>[] = [];
  const add = (list: Start<bigint>[], start: bigint, at: number) => {
    if (at !== (list.length === 0 ? none : list[list.length - 1]?.at)) list.push({ start, at });
  };
  const big = (w: Uint32Array, i: number) =>
    (BigInt(w[i] as number) << 96n) |
    (BigInt(w[i + 1] as number) << 64n) |
    (BigInt(w[i + 2] as number) << 32n) |
    BigInt(w[i + 3] as number);
  let next = 0n;
  for (let i = 0; i < r.count; i++) {
    const start = big(r.starts, i * 4);
    if (start > next) add(all, next, none);
    add(all, start, r.at[i] as number);
    next = big(r.ends, i * 4) + 1n;
  }
  if (next <= (1n << 128n) - 1n) add(all, next, none);
  const split = new Set<bigint>();
  for (const s of all) if ((s.start & LOW64) !== 0n) split.add(s.start >> 64n);
  const main: Start<bigint>[] = [];
  const whole: Start<bigint>[] = [];
  const SPLIT = none + 1;
  let inForce = none;
  let open: bigint | null = null; // the split /64 last entered
  const close = (upTo: bigint | null) => {
    // The /64 after a split one starts with the entry in force at its end, unless a start of its own says.
    if (open !== null && open + 1n !== upTo && open < LOW64) add(main, open + 1n, inForce);
    open = null;
  };
  for (const s of all) {
    const prefix = s.start >> 64n;
    if (open !== null && prefix !== open) close(prefix);
    if (!split.has(prefix)) add(main, prefix, s.at);
    else {
      if (open === null) {
        open = prefix;
        // Kept even when the /64 before was split too: its whole list must open at this /64's first address.
        main.push({ start: prefix, at: SPLIT });
        whole.push({ start: prefix << 64n, at: inForce });
      }
      add(whole, s.start, s.at);
    }
    inForce = s.at;
  }
  close(null);
  return { main, whole };
}

/**
 * The names of a table file's text, one a line, by their kinds (asnTableFile). Each is its own string, decoded as
 * UTF-8 only when it is not ASCII: V8 decodes a text with any non-ASCII character into a two-byte string, and
 * every name split from it stayed two-byte, so a stored line holding one (src_as_org) was built, flattened and
 * encoded two bytes a character, the whole batch's text with it (about 8 % of a keep-alive request's CPU with
 * enrichment on).
 */
function namesOf(text: Buffer, kinds: Uint32Array): { names: string[]; plain: Uint8Array } {
  const names = text.toString('latin1').split('\n');
  if (names.length !== kinds.length) throw new Error('AS table file damaged');
  const plain = new Uint8Array(names.length);
  for (let i = 0; i < names.length; i++) {
    const kind = kinds[i] as number;
    if (kind === NAME_PLAIN) plain[i] = 1;
    else if (kind === NAME_UTF8) names[i] = Buffer.from(names[i] as string, 'latin1').toString('utf8');
    else if (kind !== NAME_ESCAPED) throw new Error('AS table file damaged');
  }
  return { names, plain };
}

/** ASCII that JSON.stringify leaves as it is (no control character, quote or backslash): quoted as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7f]*$/;

/** Loads a table file (asnTableFile); throws when it is none, or damaged. */
export function readAsnTable(path: string): AsnTable {
  const file = readFileSync(path);
  const head = TABLE_MAGIC.length;
  if (file.length < head + 12 || file.toString('latin1', 0, head) !== TABLE_MAGIC)
    throw new Error('not an AS table file');
  const size = file.readUInt32LE(head);
  const packedSize = file.readUInt32LE(head + 4);
  const numbers = unpack(file.subarray(head + 12, head + 12 + packedSize), size);
  const text = unpack(file.subarray(head + 12 + packedSize), file.readUInt32LE(head + 8));
  // The arrays are views of the unpacked numbers, which hold nothing else, on a 4-byte boundary (else a copy
  // that is).
  const count = Math.floor(numbers.length / 4);
  let words: Uint32Array;
  if (numbers.byteOffset % 4 === 0) words = new Uint32Array(numbers.buffer, numbers.byteOffset, count);
  else {
    words = new Uint32Array(count);
    Buffer.from(words.buffer).set(numbers.subarray(0, words.byteLength));
  }
  const [n4, n6, nx, ne, nn, nameBytes, builtAt] = words as unknown as number[] as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  let p = 7;
  const take = (n: number) => {
    const view = words.subarray(p, p + n);
    if (view.length !== n) throw new Error('AS table file cut short');
    p += n;
    return view;
  };
  const by16 = take(65_537 * 2);
  const v4 = take(n4 * 2);
  const starts6 = take(n6 * 2);
  const at6 = take(n6);
  const whole = take(nx * 4);
  const atWhole = take(nx);
  const entries = take(ne * 2);
  const kinds = take(nn);
  if (p !== count || text.length !== nameBytes) throw new Error('AS table file damaged');
  // What a look-up reads as an index is checked once here: a damaged file finds nothing, never past an array.
  for (let i = 0; i < 65_536; i++) {
    const first = by16[i * 2] as number;
    const next = by16[i * 2 + 2] as number;
    const entry = (by16[i * 2 + 1] as number) % WHOLE16;
    if (first > next || next > n4 || entry > ne) throw new Error('AS table file damaged');
  }
  for (let i = 1; i < ne * 2; i += 2)
    if ((entries[i] as number) >= nn) throw new Error('AS table file damaged');
  const { names, plain } = namesOf(text, kinds);
  return packedTable({ by16, v4, starts6, at6, whole, atWhole, entries, names, plain }, builtAt * 1000);
}

/**
 * The loaded table's look-up. A function of its own: a closure made in readAsnTable would keep all of that
 * function's variables that any closure there uses (the names' text with them).
 *
 * Laid out for the few memory reads a look-up makes, each a cache miss when requests come between (a table's
 * arrays are megabytes): an IPv4 address reads its /16's two words (where its starts begin, and the entry in
 * force at its first address, marked when no range starts inside that /16: 86 % of the /16s for the country table,
 * 72 % for the AS table, answered there); else its starts and their entries, side by side, a few words near each
 * other; then its entry's AS number and name number, side by side.
 */
function packedTable(
  t: {
    by16: Uint32Array;
    v4: Uint32Array;
    starts6: Uint32Array;
    at6: Uint32Array;
    whole: Uint32Array;
    atWhole: Uint32Array;
    entries: Uint32Array;
    names: readonly string[];
    plain: Uint8Array;
  },
  builtAt: number,
): AsnTable {
  const { by16, v4, starts6, at6, whole, atWhole, entries, names, plain } = t;
  const ne = entries.length / 2;
  const found: AsnEntry = { asn: 0, org: '', plain: false };
  return {
    ranges: v4.length / 2 + at6.length + atWhole.length,
    builtAt,
    find(family) {
      let at: number;
      if (family === 4) {
        const a = WORDS[0] as number;
        const p = (a >>> 16) * 2;
        const first = by16[p + 1] as number;
        if (first >= WHOLE16) at = first - WHOLE16;
        else at = upTo1(v4, a, first, by16[p] as number, (by16[p + 2] as number) - 1);
      } else {
        at = upTo2(starts6, at6, ne);
        if (at === ne + 1) at = upTo4(whole, atWhole, ne);
      }
      // NONE, or an entry past the entries (a damaged file): nothing.
      if (at >= ne) return undefined;
      const name = entries[at * 2 + 1] as number;
      found.asn = entries[at * 2] as number;
      found.org = names[name] as string;
      found.plain = plain[name] === 1;
      return found;
    },
  };
}

/** `a` and `b` (of one length) as one array, a[0], b[0], a[1], b[1]...: each pair read together. */
function interleave(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length * 2);
  for (let i = 0; i < a.length; i++) {
    out[i * 2] = a[i] as number;
    out[i * 2 + 1] = b[i] as number;
  }
  return out;
}

/** By16's mark of a /16 no range starts inside: its second word is WHOLE16 + the entry (entries are < 2^31). */
const WHOLE16 = 0x80000000;

/**
 * For each /16 of IPv4, two words: the index of its first start (the first at or after its first address), and
 * the entry in force at its first address, plus WHOLE16 when no start lies inside the /16 (its every address
 * has that entry); 65,537 pairs (512 KB). A look-up searches only the starts within its /16, a few words near
 * each other, instead of halving all 500,000 (about 19 reads from all over 2 MB, each a cache miss).
 */
function indexBy16(starts: Uint32Array, at: Uint32Array, none: number): Uint32Array {
  const index = new Uint32Array(65_537 * 2);
  let i = 0;
  for (let p = 0; p < 65_536; p++) {
    const from = p * 65_536;
    while (i < starts.length && (starts[i] as number) < from) i++;
    let next = i;
    // The entry in force at the /16's first address: a start there, else the last start before it.
    let first = none;
    if (i < starts.length && starts[i] === from) first = at[next++] as number;
    else if (i > 0) first = at[i - 1] as number;
    // An entry past the entries (a damaged file) is none, as find() would answer.
    if (first > none) first = none;
    const inside = next < starts.length && (starts[next] as number) < from + 65_536;
    index[p * 2] = i;
    index[p * 2 + 1] = inside ? first : WHOLE16 + first;
  }
  index[65_536 * 2] = starts.length;
  return index;
}

/**
 * The entry of the last start at or before `a` among the starts lo..hi of `v4` (start and entry side by side),
 * or `before` (the entry in force before start lo) when none is.
 */
function upTo1(v4: Uint32Array, a: number, before: number, lo: number, hi: number): number {
  const first = lo;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if ((v4[mid * 2] as number) <= a) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= first ? (v4[hi * 2 + 1] as number) : before;
}

/** The same for WORDS' first 64 bits, in `starts` of two words each. */
function upTo2(starts: Uint32Array, at: Uint32Array, none: number): number {
  const a0 = WORDS[0] as number;
  const a1 = WORDS[1] as number;
  let lo = 0;
  let hi = at.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const s0 = starts[mid * 2] as number;
    if (s0 < a0 || (s0 === a0 && (starts[mid * 2 + 1] as number) <= a1)) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 ? (at[hi] as number) : none;
}

/** The same for all of WORDS, in `starts` of four words each. */
function upTo4(starts: Uint32Array, at: Uint32Array, none: number): number {
  let lo = 0;
  let hi = at.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(starts, mid * 4, WORDS, 0) <= 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 ? (at[hi] as number) : none;
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
