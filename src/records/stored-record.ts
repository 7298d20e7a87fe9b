// Builds the stored record (DESIGN 3) from a validated firewall or generic record, or a parsed syslog threat.

import { toInteger } from '../schemas/common.js';
import type { FirewallRecordInput } from '../schemas/firewall-record.js';
import type { GenericRecordInput } from '../schemas/generic-record.js';
import {
  type CriticalityRules,
  type CriticalitySource,
  deriveCriticality,
  severityLabel,
} from './criticality.js';
import { firewallTimeToUtcMs } from './firewall-time.js';
import { memoIsoTime } from './iso-time.js';
import { quoteJson } from './json-quote.js';
import { splitThreatName, threatIdFrom } from './threat-name.js';

/**
 * Where a record came in: the two HTTPS routes and the syslog input; `collector` marks the collector's own
 * records (a sensor gone silent, or back: src/sensors/), which are no threats and never counted as such.
 */
export const RECORD_ENDPOINTS = ['firewall', 'generic', 'syslog', 'collector'] as const;
export type RecordEndpoint = (typeof RECORD_ENDPOINTS)[number];

/** Whether a stored record is a threat: the collector's own records (a sensor silent or back) are not counted. */
export const isThreatRecord = (record: Pick<StoredRecord, 'endpoint'>): boolean =>
  record.endpoint !== 'collector';

/** Whether a query parameter names an endpoint (filters ignore anything else). */
export const isRecordEndpoint = (text: string | null | undefined): text is RecordEndpoint =>
  (RECORD_ENDPOINTS as readonly unknown[]).includes(text);

export interface StoredRecord {
  id: string;
  received_at: string;
  sensor: string;
  endpoint: RecordEndpoint;
  /** Syslog only: the sensor's message format (panos, cef, fortinet, suricata). */
  format?: string;
  criticality: number;
  severity: string;
  criticality_source: CriticalitySource;
  src_ip: string;
  dst_ip: string;
  src_port?: number;
  dst_port: number;
  protocol: string;
  threat: string;
  threat_id?: string;
  detected_at?: string;
  /** The source's country (ISO 3166-1 alpha-2), AS number and AS name, when it is public and known (src/enrich/). */
  src_country?: string;
  src_asn?: number;
  src_as_org?: string;
  /** The same for the destination. */
  dst_country?: string;
  dst_asn?: number;
  dst_as_org?: string;
  remote_addr: string;
  repaired?: true;
  /** Syslog only: the message was longer than syslog.maxMessageBytes; `original` is its beginning. */
  truncated?: true;
  /** Syslog only, with syslog.keepOther: the message is not a threat (a traffic log, a system message). */
  other?: true;
  /** The record as received: the JSON object, or a syslog message's text. */
  original: Record<string, unknown> | string;
  /** Files backend: the key that recognises a retried delivery of this record (DESIGN 10), last in the line. */
  dedupe_key?: string;
}

/** What the server knows about a request, the same for every record in it. */
export interface ReceiptContext {
  /** A new record id (called without arguments). */
  id: () => string;
  receivedAt: string;
  sensor: string;
  remoteAddr: string;
  timezone: string;
  repaired: boolean;
  rules: CriticalityRules;
  /**
   * Every string the request's records are built from is ASCII (the body, with no escapes, and the sensor's
   * name; the server's own fields always are), so their lines may be encoded as latin1 (see encodeLines).
   */
  ascii: boolean;
  /**
   * No string the records are built from needs JSON escaping (the body had no escape; see ParsedBody.escapes):
   * their lines may quote them as they are. The sensor's name is not one of them.
   */
  plainStrings: boolean;
}

/** detected_at: a firewall's records of one second share it. */
const detectedIso = memoIsoTime();

/**
 * A record the builders below made (not one read back from a store). A class so every built record has one
 * hidden class: its fields exist from the start, in the stored line's order (those a record lacks hold
 * undefined, which JSON.stringify leaves out, as it would an absent field). The object literal this replaced
 * began with a computed (symbol) key and had two more symbols added after it, so V8 built each record property
 * by property into a dictionary-mode object: 1.4 µs a record to build, and slower to read back field by field
 * (storedLine). The sender's own text of the record is kept in private fields, which JSON never sees.
 */
export class BuiltRecord implements StoredRecord {
  id = '';
  received_at = '';
  sensor = '';
  endpoint: RecordEndpoint = 'firewall';
  format: string | undefined = undefined;
  criticality = 0;
  severity = '';
  criticality_source: CriticalitySource = 'sender';
  src_ip = '';
  dst_ip = '';
  src_port: number | undefined = undefined;
  dst_port = 0;
  protocol = '';
  threat = '';
  threat_id: string | undefined = undefined;
  detected_at: string | undefined = undefined;
  src_country: string | undefined = undefined;
  src_asn: number | undefined = undefined;
  src_as_org: string | undefined = undefined;
  dst_country: string | undefined = undefined;
  dst_asn: number | undefined = undefined;
  dst_as_org: string | undefined = undefined;
  remote_addr = '';
  original: Record<string, unknown> | string = NO_ORIGINAL;
  repaired: true | undefined = undefined;
  truncated: true | undefined = undefined;
  other: true | undefined = undefined;
  dedupe_key: string | undefined = undefined;
  /** The record's JSON text as the sender wrote it (one line), when the parser kept it. */
  #sentText: string | undefined = undefined;
  /** JSON.stringify(original), made at most once. */
  #canonicalText: string | undefined = undefined;
  /** Built from ASCII strings only (ReceiptContext.ascii): its line is ASCII (an AS name may change that). */
  #ascii: boolean;
  /** Built from strings that need no JSON escaping (ReceiptContext.plainStrings). */
  readonly #plainStrings: boolean;
  /** The AS names setEnrichment was told need no JSON escaping (plainOrg), each while its field still holds it. */
  #plainSrcOrg: string | undefined = undefined;
  #plainDstOrg: string | undefined = undefined;

  constructor(ctx: Pick<ReceiptContext, 'ascii' | 'plainStrings'>) {
    this.#ascii = ctx.ascii;
    this.#plainStrings = ctx.plainStrings;
  }

  /**
   * Sets one address's enrichment (src/enrich/); an AS name outside ASCII makes the line UTF-8. `plainOrg`: the
   * caller knows `org` is ASCII that JSON does not escape (the shipped table does), so it is neither
   * tested here nor escaped in the line.
   */
  setEnrichment(side: 'src' | 'dst', country?: string, asn?: number, org?: string, plainOrg = false): void {
    const plain = plainOrg ? org : undefined;
    if (side === 'src') {
      this.src_country = country;
      this.src_asn = asn;
      this.src_as_org = org;
      this.#plainSrcOrg = plain;
    } else {
      this.dst_country = country;
      this.dst_asn = asn;
      this.dst_as_org = org;
      this.#plainDstOrg = plain;
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: all of ASCII
    if (org !== undefined && !plainOrg && this.#ascii && !/^[\x00-\x7f]*$/.test(org)) this.#ascii = false;
  }

  /** Whether `org` is the side's AS name as setEnrichment was told it needs no escaping. */
  isPlainOrg(side: 'src' | 'dst', org: string): boolean {
    return org === (side === 'src' ? this.#plainSrcOrg : this.#plainDstOrg);
  }

  /** Whether the record's line is certainly ASCII (its strings came from a ReceiptContext that said so). */
  isAscii(): boolean {
    return this.#ascii;
  }

  /**
   * Whether the strings taken from the sender (addresses, protocol, threat, threat id) certainly need no JSON
   * escaping, so a line may quote them as they are.
   */
  hasPlainStrings(): boolean {
    return this.#plainStrings;
  }

  /**
   * Keeps the record's JSON text exactly as the sender wrote it (one line, checked by the parser): the stored
   * line takes it as `original` instead of serializing the parsed record again (the same value to any JSON
   * reader; DESIGN 3's "the record exactly as received"). Retry-dedupe keys still hash canonicalText(), so
   * whitespace never makes a retried record look new; when the parser found the text `canonical`
   * (JSON.stringify's own spelling of it), it is canonicalText() too, and is not serialized again.
   */
  keepSentText(text: string, canonical: boolean): void {
    this.#sentText = text;
    if (canonical) this.#canonicalText = text;
  }

  /** The sender's own text of the record, when it was kept. */
  sentText(): string | undefined {
    return this.#sentText;
  }

  /** JSON.stringify(original), computed once. */
  canonicalText(): string {
    if (this.#canonicalText === undefined)
      this.#canonicalText =
        typeof this.original === 'string' ? quoteJson(this.original) : JSON.stringify(this.original);
    return this.#canonicalText;
  }
}

const NO_ORIGINAL: Record<string, unknown> = Object.freeze({});

export function buildFirewallRecord(input: FirewallRecordInput, ctx: ReceiptContext): BuiltRecord {
  const { criticality, source } = deriveCriticality(input.severity, input.thr_category, ctx.rules);
  const name = splitThreatName(input.threat_name);
  // Validated already: the shape and calendar are known to be right.
  const detected = firewallTimeToUtcMs(input.time_received, ctx.timezone);
  const r = startRecord(ctx, 'firewall', criticality, source, input);
  r.src_ip = input.src;
  r.dst_ip = input.dst;
  r.src_port = toInteger(input.sport);
  r.dst_port = toInteger(input.dport);
  r.protocol = input.proto;
  r.threat = name.name;
  r.threat_id = threatIdFrom(input.threatid, name.id);
  r.detected_at = Number.isNaN(detected) ? '' : detectedIso(detected);
  if (ctx.repaired) r.repaired = true;
  return r;
}

export function buildGenericRecord(input: GenericRecordInput, ctx: ReceiptContext): BuiltRecord {
  const r = startRecord(ctx, 'generic', toInteger(input.criticality), 'sender', input);
  r.src_ip = input.source_ip;
  r.dst_ip = input.destination_ip;
  r.dst_port = toInteger(input.destination_port);
  r.protocol = input.protocol;
  r.threat = input.threat;
  return r;
}

/** What a syslog format parser read from a threat message (src/inputs/syslog/parsers/). */
export interface SyslogThreat {
  criticality: number;
  criticality_source: CriticalitySource;
  src_ip: string;
  dst_ip: string;
  src_port?: number;
  dst_port: number;
  protocol: string;
  threat: string;
  threat_id?: string;
  /** UTC ISO, when the message said when. */
  detected_at?: string;
}

/** A syslog threat message's stored record: the parsed fields, the format, and the message text as `original`. */
export function buildSyslogRecord(
  threat: SyslogThreat,
  format: string,
  message: string,
  truncated: boolean,
  ctx: ReceiptContext,
): BuiltRecord {
  const r = startRecord(ctx, 'syslog', threat.criticality, threat.criticality_source, message);
  r.format = format;
  r.src_ip = threat.src_ip;
  r.dst_ip = threat.dst_ip;
  r.src_port = threat.src_port;
  r.dst_port = threat.dst_port;
  r.protocol = threat.protocol;
  r.threat = threat.threat;
  r.threat_id = threat.threat_id;
  r.detected_at = threat.detected_at;
  if (truncated) r.truncated = true;
  return r;
}

/** A new record with what every endpoint fills the same way: ids, times, sensor, criticality, the original. */
function startRecord(
  ctx: ReceiptContext,
  endpoint: StoredRecord['endpoint'],
  criticality: number,
  source: CriticalitySource,
  original: Record<string, unknown> | string,
): BuiltRecord {
  const r = new BuiltRecord(ctx);
  r.id = ctx.id();
  r.received_at = ctx.receivedAt;
  r.sensor = ctx.sensor;
  r.endpoint = endpoint;
  r.criticality = criticality;
  r.severity = severityLabel(criticality);
  r.criticality_source = source;
  r.remote_addr = ctx.remoteAddr;
  r.original = original;
  return r;
}
