// Adds country and AS of a record's public addresses (src_*, dst_*) before it is stored, from databases read
// again when their files are replaced. A database that cannot be read leaves its fields out: never a refusal.
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { BuiltRecord, StoredRecord } from '../records/stored-record.js';
import type { RecordLog } from '../store/store.js';
import { watchFiles } from '../watch-files.js';
import { isPublic, readAddress } from './address-words.js';
import type { AsnEntry } from './asn-table.js';
import {
  answersItsKind,
  type DatabaseKind,
  noAnswerWords,
  type OpenDatabase,
  openDatabase,
  SHIPPED_ASN,
  SHIPPED_COUNTRY,
} from './databases.js';

export interface Enrichment {
  country?: string;
  asn?: number;
  as_org?: string;
}

export interface Enricher {
  /** Country and AS of `address`; null for a non-public address, or one no database knows. Never throws. */
  lookUp(address: string): Enrichment | null;
  /** Sets the record's src_* and dst_* fields. */
  enrich(record: BuiltRecord): void;
  /** The databases as opened now (null where one could not be read). */
  databases(): Record<DatabaseKind, OpenDatabase | null>;
  stop(): void;
}

export type EnrichConfig = Config['enrich'];

/** The files the configuration names (the shipped ones where it names none). */
export function databasePaths(config: EnrichConfig): Record<DatabaseKind, string> {
  return { country: config.countryDb || SHIPPED_COUNTRY, asn: config.asnDb || SHIPPED_ASN };
}

/** Opens a database, or says why not (`check` and the log name it). */
export function tryOpen(kind: DatabaseKind, path: string): OpenDatabase | Error {
  try {
    return openDatabase(kind, path);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

export interface EnricherOptions {
  logger: Logger;
  /** How often to look at the files when inotify says nothing (ms). */
  pollIntervalMs?: number;
}

export function startEnricher(config: EnrichConfig, options: EnricherOptions): Enricher {
  const { logger } = options;
  const paths = databasePaths(config);
  const open = (kind: DatabaseKind): OpenDatabase | null => {
    const db = tryOpen(kind, paths[kind]);
    if (db instanceof Error) {
      logger.warn(
        { database: kind, path: paths[kind], err: db.message },
        'enrichment database unreadable: records are stored without its fields',
      );
      return null;
    }
    logger.info(
      {
        database: kind,
        path: paths[kind],
        type: db.type,
        built: db.builtAt === null ? 'unknown' : new Date(db.builtAt).toISOString(),
      },
      'enrichment database loaded',
    );
    if (!answersItsKind(db))
      logger.warn(
        { database: kind, path: paths[kind], type: db.type },
        `enrichment database ${noAnswerWords(kind)}: is it the right kind of database?`,
      );
    return db;
  };
  const dbs: Record<DatabaseKind, OpenDatabase | null> = { country: open('country'), asn: open('asn') };
  const watches = (['country', 'asn'] as const).map((kind) =>
    watchFiles({
      paths: [paths[kind]],
      pollIntervalMs: options.pollIntervalMs ?? 5000,
      // A copy written in place is read once it has been quiet this long.
      debounceMs: 200,
      onChange: () => {
        // From a timer: whatever a new file holds must never end the process (open() answers null for any
        // file it cannot read; this guards what it logs too).
        try {
          dbs[kind] = open(kind);
        } catch (error) {
          dbs[kind] = null;
          logger.warn(
            { database: kind, path: paths[kind], err: (error as Error).message },
            'enrichment database unreadable: records are stored without its fields',
          );
        }
      },
    }),
  );

  // No cache of recent addresses: a look-up in both tables (~1 µs each) costs less than a Map's hashing of each
  // new address string did.
  /** The answers of the last `answer` (the AS database's is an object it reuses: read before the next one). */
  let country: string | undefined;
  let as: AsnEntry | undefined;
  /** Looks `address` up in both databases; false when it is no address or not a public one (none looked up). */
  const answer = (address: string): boolean => {
    const family = readAddress(address);
    if (family === 0 || !isPublic(family)) return false;
    country = dbs.country?.country(address, family);
    as = dbs.asn?.asn(address, family);
    return true;
  };

  const lookUp = (address: string): Enrichment | null => {
    if (!answer(address) || (country === undefined && as === undefined)) return null;
    const found: Enrichment = {};
    if (country !== undefined) found.country = country;
    if (as !== undefined) {
      found.asn = as.asn;
      if (as.org !== '') found.as_org = as.org;
    }
    return found;
  };

  // The answers straight into the record: no object a record for the garbage collector.
  const enrichSide = (r: BuiltRecord, side: 'src' | 'dst', address: string): void => {
    if (!answer(address)) return;
    if (as !== undefined)
      r.setEnrichment(side, country, as.asn, as.org === '' ? undefined : as.org, as.plain === true);
    else if (country !== undefined) r.setEnrichment(side, country, undefined, undefined);
  };

  return {
    lookUp,
    enrich(r) {
      enrichSide(r, 'src', r.src_ip);
      enrichSide(r, 'dst', r.dst_ip);
    },
    databases: () => ({ ...dbs }),
    stop() {
      for (const w of watches) w.stop();
    },
  };
}

/** `log` whose appends enrich each record built by this process first (records copied from a store stay as they are). */
export function enrichingRecordLog(log: RecordLog, enricher: Enricher): RecordLog {
  return {
    append(records: StoredRecord[], options) {
      // Indexed: for...of was an array iterator's calls on every request (perf: ~0.6 µs).
      for (let i = 0; i < records.length; i++) {
        const r = records[i] as StoredRecord;
        if (isBuilt(r)) enricher.enrich(r);
      }
      return log.append(records, options);
    },
    get queuedRecords() {
      return log.queuedRecords;
    },
    close: () => log.close(),
  };
}

function isBuilt(r: StoredRecord): r is BuiltRecord {
  return typeof (r as BuiltRecord).setEnrichment === 'function';
}
