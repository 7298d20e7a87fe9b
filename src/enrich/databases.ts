// The two databases the enrichment reads: country and AS, each the shipped one or any MMDB file configured
// (GeoLite2, DB-IP, IPinfo Lite, ip-location-db), opened, dated and looked up the same way.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Reader } from 'mmdb-lib';
import { readAddress, WORDS } from './address-words.js';
import { type AsnEntry, readAsnTable } from './asn-table.js';

/**
 * Where the build puts the shipped databases (packaging/generate/enrich-data.ts): dist/enrich/, found the same
 * from dist/enrich/*.js and from src/enrich/*.ts (both two levels under the checkout or the package).
 */
export const SHIPPED_DIR = fileURLToPath(new URL('../../dist/enrich/', import.meta.url));
export const SHIPPED_COUNTRY = `${SHIPPED_DIR}country.table`;
export const SHIPPED_ASN = `${SHIPPED_DIR}asn.table`;

export type DatabaseKind = 'country' | 'asn';

/** A database as opened: its look-up and what `threatcol check` says of it. */
export interface OpenDatabase {
  kind: DatabaseKind;
  path: string;
  /** What the database says it is (MMDB database_type, or the shipped table's name). */
  type: string;
  /**
   * When it was built (MMDB build_epoch; the shipped table's data date), epoch ms; null when the file does not say
   * (a build_epoch missing, or past any date): its age is unknown, which `check` warns of.
   */
  builtAt: number | null;
  /** The country (ISO 3166-1 alpha-2) of the address last read (WORDS), for a country database. */
  country(text: string, family: 4 | 6): string | undefined;
  /** The AS of the address last read, for an AS database. */
  asn(text: string, family: 4 | 6): AsnEntry | undefined;
}

/** Public addresses any database of the whole Internet knows (Google's, Cloudflare's and Quad9's resolvers). */
export const PROBE_ADDRESSES = ['8.8.8.8', '1.1.1.1', '9.9.9.9', '2001:4860:4860::8888'] as const;

/**
 * Whether `db` gives its kind of answer (a country, an AS) for one of PROBE_ADDRESSES at least: one that gives
 * none is the other kind (enrich.countryDb and enrich.asnDb swapped, a City file's lookalike) or knows little.
 */
export function answersItsKind(db: OpenDatabase): boolean {
  return PROBE_ADDRESSES.some((text) => {
    const family = readAddress(text);
    if (family === 0) return false;
    return db.kind === 'country'
      ? db.country(text, family) !== undefined
      : db.asn(text, family) !== undefined;
  });
}

/** "gives no country for 8.8.8.8, ... or 2001:4860:4860::8888": what `check` and the log say of such a database. */
export function noAnswerWords(kind: DatabaseKind): string {
  const list = `${PROBE_ADDRESSES.slice(0, -1).join(', ')} or ${PROBE_ADDRESSES.at(-1)}`;
  return `gives no ${kind === 'asn' ? 'AS' : 'country'} for ${list}`;
}

/** Opens the database at `path` (MMDB, or the shipped AS table by its name); throws when it is unreadable. */
export function openDatabase(kind: DatabaseKind, path: string): OpenDatabase {
  // The shipped databases: range tables the build made (asn-table.ts); a country table names each range by its code.
  if (path.endsWith('.table')) {
    const table = readAsnTable(path);
    return {
      kind,
      path,
      type: `threatcol ${kind === 'country' ? 'country' : 'AS'} table (ip-location-db ${kind === 'country' ? 'geo-whois-asn-country' : 'asn'})`,
      builtAt: table.builtAt,
      country: (_text, family) => (kind === 'country' ? table.find(family)?.org : undefined),
      asn: (_text, family) => (kind === 'asn' ? table.find(family) : undefined),
    };
  }
  const reader = new Reader<Record<string, unknown>>(readFileSync(path), { cache: decodedRecords() });
  const { metadata } = reader;
  const get = (text: string, family: 4 | 6): Record<string, unknown> | null => {
    try {
      // An IPv4-mapped address (or one with a zone id) is looked up as what readAddress read it as.
      if (family === 4) return reader.get(text.indexOf(':') === -1 ? text : v4Text());
      return reader.get(text.indexOf('%') === -1 ? text : (text.split('%')[0] as string));
    } catch {
      return null;
    }
  };
  return {
    kind,
    path,
    type: metadata.databaseType,
    builtAt: knownTime(metadata.buildEpoch),
    country: (text, family) => countryOf(get(text, family)),
    asn: (text, family) => asnOf(get(text, family)),
  };
}

/**
 * The reader's decoded records by offset: a country database has a few hundred distinct ones, and decoding one
 * (a map, its strings) was most of a look-up. Bounded: emptied whole when full (an AS database has ~80,000).
 */
function decodedRecords(max = 16_384) {
  let map = new Map<string | number, unknown>();
  return {
    get: (key: string | number) => map.get(key),
    set(key: string | number, value: unknown) {
      if (map.size >= max) map = new Map();
      map.set(key, value);
    },
  };
}

function v4Text(): string {
  const w = WORDS[0] as number;
  return `${w >>> 24}.${(w >>> 16) & 255}.${(w >>> 8) & 255}.${w & 255}`;
}

const ALPHA2 = /^[A-Z]{2}$/;

/** GeoLite2 and DB-IP: country.iso_code (else registered_country); ip-location-db and IPinfo: country_code. */
function countryOf(data: Record<string, unknown> | null): string | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  // GeoLite2 and DB-IP: country.iso_code (registered_country where the country is unknown); ip-location-db:
  // country_code; IPinfo's country.mmdb and country_asn.mmdb: country as the code itself.
  const code =
    isoCode(data.country) ??
    isoCode(data.registered_country) ??
    (data.country_code as unknown) ??
    (typeof data.country === 'string' ? data.country : undefined);
  return typeof code === 'string' && ALPHA2.test(code) ? code : undefined;
}

function isoCode(v: unknown): unknown {
  return typeof v === 'object' && v !== null ? (v as { iso_code?: unknown }).iso_code : undefined;
}

/** GeoLite2-ASN, DB-IP and ip-location-db: autonomous_system_number/_organization; IPinfo: asn "AS15169", as_name. */
function asnOf(data: Record<string, unknown> | null): AsnEntry | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  let asn: unknown = data.autonomous_system_number ?? data.asn;
  // "AS15169" or "15169"; an empty or other text is no AS (Number('') and Number('AS'.slice(2)) would be AS0).
  if (typeof asn === 'string') asn = /^(AS)?\d+$/i.test(asn) ? Number(asn.replace(/^AS/i, '')) : undefined;
  if (!Number.isInteger(asn) || (asn as number) < 0 || (asn as number) > 0xffffffff) return undefined;
  const org = data.autonomous_system_organization ?? data.as_name;
  return { asn: asn as number, org: typeof org === 'string' ? org : '' };
}

/** A build date's epoch ms, or null when it is no date (mmdb-lib makes an Invalid Date of a missing build_epoch). */
function knownTime(date: unknown): number | null {
  const ms = date instanceof Date ? date.getTime() : Number.NaN;
  return Number.isFinite(ms) ? ms : null;
}
