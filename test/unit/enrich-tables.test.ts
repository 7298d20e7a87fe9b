// The shipped enrichment tables (dist/enrich/, written by the build) against their source data: every range's
// first and last address, and the addresses just before and after it, both families, answer as the range tables
// read from @ip-location-db's files (a start and an end a range, searched as serve searched them before the tables
// were packed). And the packed files stay small: they ship in the package and the container image.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { serialize } from 'node:v8';
import { deflateSync, inflateSync } from 'node:zlib';
import { mmdbRanges } from '../../packaging/generate/mmdb-ranges.js';
import { readAddress, WORDS } from '../../src/enrich/address-words.js';
import {
  type AsnTable,
  type RangeTable,
  readAsnCsv,
  readAsnTable,
  TABLE_MAGIC,
} from '../../src/enrich/asn-table.js';
import { SHIPPED_ASN, SHIPPED_COUNTRY } from '../../src/enrich/databases.js';
import { isAsciiText } from '../../src/records/stored-line.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COUNTRY = join(ROOT, 'node_modules/@ip-location-db/geo-whois-asn-country-mmdb');
const ASN = join(ROOT, 'node_modules/@ip-location-db/asn');
const built = existsSync(SHIPPED_COUNTRY) && existsSync(SHIPPED_ASN);

/** Both tables together on disk at most (the source data's ranges as start and end arrays took 23 MB). */
const MAX_BYTES = 10_000_000;

test('the shipped tables together take at most 10 MB', (t) => {
  if (!built) return t.skip('dist/ not built (npm run build)');
  const bytes = statSync(SHIPPED_COUNTRY).size + statSync(SHIPPED_ASN).size;
  t.diagnostic(`country.table + asn.table: ${bytes} bytes`);
  assert.ok(bytes <= MAX_BYTES, `${bytes} bytes`);
});

/** Counts of addresses compared, and the first differences (a few are enough to see what went wrong). */
function compareAtBoundaries(reference: RangeTable, packed: AsnTable) {
  const wrong: string[] = [];
  let compared = 0;
  const same = (family: 4 | 6) => {
    compared++;
    // Both answer in an object they reuse: compared before the next look-up.
    const a = reference.find(family);
    const want = a === undefined ? '' : `${a.asn} ${a.org}`;
    const b = packed.find(family);
    const got = b === undefined ? '' : `${b.asn} ${b.org}`;
    if (want !== got && wrong.length < 5)
      wrong.push(
        `${Array.from(WORDS.subarray(0, family === 4 ? 1 : 4), (w) => w.toString(16))}: ${want} != ${got}`,
      );
  };
  const { v4, v6 } = reference;
  // Every /16's first, middle and last address: most /16s are answered from the index alone (no range starts
  // inside them), where no range boundary lies.
  for (let p = 0; p < 65_536; p++) {
    for (const low of [0, 0x8000, 0xffff]) {
      WORDS[0] = p * 65_536 + low;
      same(4);
    }
  }
  for (let i = 0; i < v4.count; i++) {
    for (const a of [v4.starts[i] as number, v4.ends[i] as number]) {
      for (const d of [-1, 0, 1]) {
        if (a + d < 0 || a + d > 0xffffffff) continue;
        WORDS[0] = a + d;
        same(4);
      }
    }
  }
  for (let i = 0; i < v6.count; i++) {
    for (const words of [v6.starts, v6.ends]) {
      for (const d of [-1, 0, 1] as const) {
        WORDS.set(words.subarray(i * 4, i * 4 + 4));
        if (d !== 0 && !step(d)) continue;
        same(6);
      }
    }
  }
  return { wrong, compared };
}

/** WORDS (128 bits) plus or minus one; false where it would wrap around. */
function step(d: 1 | -1): boolean {
  for (let k = 3; k >= 0; k--) {
    const w = WORDS[k] as number;
    if (d === 1 ? w !== 0xffffffff : w !== 0) {
      WORDS[k] = w + d;
      return true;
    }
    WORDS[k] = d === 1 ? 0 : 0xffffffff;
  }
  // Wrapped: put it back.
  for (let k = 3; k >= 0; k--) WORDS[k] = (WORDS[k] as number) - d;
  return false;
}

test('property: the country table answers as its MMDB at every range boundary, and one address either side', (t) => {
  if (!built) return t.skip('dist/ not built (npm run build)');
  const reference = mmdbRanges(join(COUNTRY, 'geo-whois-asn-country.mmdb'), (r) =>
    typeof r.country_code === 'string' ? r.country_code : undefined,
  );
  const { wrong, compared } = compareAtBoundaries(reference, readAsnTable(SHIPPED_COUNTRY));
  t.diagnostic(`${compared} addresses compared (${reference.ranges} ranges)`);
  assert.deepEqual(wrong, []);
  assert.ok(compared > 1_000_000, `${compared}`);
});

test('property: the AS table answers as its CSV files at every range boundary, and one address either side', (t) => {
  if (!built) return t.skip('dist/ not built (npm run build)');
  const reference = readAsnCsv(join(ASN, 'asn-ipv4-num.csv'), join(ASN, 'asn-ipv6.csv'));
  const { wrong, compared } = compareAtBoundaries(reference, readAsnTable(SHIPPED_ASN));
  t.diagnostic(`${compared} addresses compared (${reference.ranges} ranges)`);
  assert.deepEqual(wrong, []);
  assert.ok(compared > 1_000_000, `${compared}`);
});

test('the AS table names an AS in a one-byte string when its name is ASCII, and decodes the others as UTF-8', (t) => {
  if (!built) return t.skip('dist/ not built (npm run build)');
  // A two-byte name makes the stored line holding it two-byte, and the batch's text with it: built, flattened
  // and encoded two bytes a character. v8.serialize tags a one-byte string '"', a two-byte one 'c'.
  const oneByte = (s: string) => serialize(s)[2] === 0x22;
  const table = readAsnTable(SHIPPED_ASN);
  const orgAt = (address: string) => {
    const family = readAddress(address);
    return family === 0 ? undefined : table.find(family)?.org;
  };
  const twoByte: string[] = [];
  const wrongPlain: string[] = [];
  let ascii = 0;
  for (let i = 0; i < 20_000; i++) {
    const x = Math.imul(i + 1, 2_654_435_761) >>> 0;
    const address = `${1 + (x % 222)}.${(x >>> 8) & 255}.${(x >>> 16) & 255}.${(i & 253) + 1}`;
    const org = orgAt(address);
    // Plain (quoted as it is in a stored line) exactly when JSON.stringify would not escape it and it is ASCII.
    const entry = org === undefined ? undefined : table.find(readAddress(address) as 4);
    if (entry && entry.plain !== (isAsciiText(entry.org) && JSON.stringify(entry.org) === `"${entry.org}"`))
      wrongPlain.push(entry.org);
    if (org === undefined || !isAsciiText(org)) continue;
    if (oneByte(org)) ascii++;
    else twoByte.push(org);
  }
  assert.deepEqual(twoByte.slice(0, 5), []);
  assert.deepEqual(wrongPlain.slice(0, 5), []);
  assert.ok(ascii > 10_000, `${ascii}`);
  // The names that are not ASCII, as the CSV spells them (UTF-8).
  const wrong: string[] = [];
  let other = 0;
  for (const line of readFileSync(join(ASN, 'asn-ipv4-num.csv'), 'utf8').split('\n')) {
    if (isAsciiText(line)) continue;
    // start,end,asn,name (the name quoted when it holds a comma).
    const [start] = line.split(',', 1) as [string];
    const name = line.split(',').slice(3).join(',');
    const n = Number(start);
    const org = orgAt(`${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`);
    other++;
    if (org !== name.replace(/^"(.*)"$/, '$1').replaceAll('""', '"'))
      wrong.push(`${start}: ${org} / ${name}`);
  }
  t.diagnostic(`${ascii} ASCII names one-byte; ${other} names not ASCII`);
  assert.deepEqual(wrong.slice(0, 5), []);
  assert.ok(other > 0);
});

test('a damaged table file is refused when loaded, never read past its arrays: a flipped byte, a cut, an index out of range', (t) => {
  if (!built) return t.skip('dist/ not built (npm run build)');
  const file = readFileSync(SHIPPED_COUNTRY);
  const dir = mkdtempSync(join(tmpdir(), 'threatcol-table-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const load = (bytes: Buffer) => {
    const path = join(dir, 'damaged.table');
    writeFileSync(path, bytes);
    return () => readAsnTable(path);
  };
  const head = TABLE_MAGIC.length;
  const flipped = Buffer.from(file);
  flipped[head + 12 + 1000] = (flipped[head + 12 + 1000] as number) ^ 0x40;
  assert.throws(load(flipped), /damaged/);
  assert.throws(load(file.subarray(0, file.length - 100)), /damaged|cut short/);
  assert.throws(load(file.subarray(0, head + 4)), /not an AS table file/);
  // Packed well, but its /16 index points past the IPv4 starts: refused, not searched.
  const size = file.readUInt32LE(head);
  const packed = file.readUInt32LE(head + 4);
  const numbers = inflateSync(file.subarray(head + 12, head + 12 + packed));
  assert.equal(numbers.length, size);
  numbers.writeUInt32LE(0xfffffff0, (7 + 2 * 1000) * 4);
  const repacked = deflateSync(numbers);
  const header = Buffer.from(file.subarray(0, head + 12));
  header.writeUInt32LE(repacked.length, head + 4);
  assert.throws(load(Buffer.concat([header, repacked, file.subarray(head + 12 + packed)])), /damaged/);
  // The same file put back together unchanged loads.
  const same = deflateSync(inflateSync(file.subarray(head + 12, head + 12 + packed)));
  header.writeUInt32LE(same.length, head + 4);
  assert.equal(load(Buffer.concat([header, same, file.subarray(head + 12 + packed)]))().ranges > 0, true);
});
