// Builds the stored record (DESIGN 3) from a validated firewall or generic record.

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
import { splitThreatName, threatIdFrom } from './threat-name.js';

/**
 * Set on the records the builders below make (not on records read back from a store): only those have the
 * fields, in the order, that storedLine writes by hand; any other record is written by JSON.stringify.
 */
export const BUILT = Symbol('built');

export interface StoredRecord {
  [BUILT]?: true;
  id: string;
  received_at: string;
  sensor: string;
  endpoint: 'firewall' | 'generic';
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
  remote_addr: string;
  repaired?: true;
  original: Record<string, unknown>;
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
}

/** detected_at: a firewall's records of one second share it. */
const detectedIso = memoIsoTime();

export function buildFirewallRecord(input: FirewallRecordInput, ctx: ReceiptContext): StoredRecord {
  const { criticality, source } = deriveCriticality(input.severity, input.thr_category, ctx.rules);
  const name = splitThreatName(input.threat_name);
  // Validated already: the shape and calendar are known to be right.
  const detected = firewallTimeToUtcMs(input.time_received, ctx.timezone);
  const record: StoredRecord = {
    [BUILT]: true,
    id: ctx.id(),
    received_at: ctx.receivedAt,
    sensor: ctx.sensor,
    endpoint: 'firewall',
    criticality,
    severity: severityLabel(criticality),
    criticality_source: source,
    src_ip: input.src,
    dst_ip: input.dst,
    src_port: toInteger(input.sport),
    dst_port: toInteger(input.dport),
    protocol: input.proto,
    threat: name.name,
    threat_id: threatIdFrom(input.threatid, name.id),
    detected_at: Number.isNaN(detected) ? '' : detectedIso(detected),
    remote_addr: ctx.remoteAddr,
    original: input,
  };
  if (ctx.repaired) record.repaired = true;
  return record;
}

export function buildGenericRecord(input: GenericRecordInput, ctx: ReceiptContext): StoredRecord {
  const criticality = toInteger(input.criticality);
  return {
    [BUILT]: true,
    id: ctx.id(),
    received_at: ctx.receivedAt,
    sensor: ctx.sensor,
    endpoint: 'generic',
    criticality,
    severity: severityLabel(criticality),
    criticality_source: 'sender',
    src_ip: input.source_ip,
    dst_ip: input.destination_ip,
    dst_port: toInteger(input.destination_port),
    protocol: input.protocol,
    threat: input.threat,
    remote_addr: ctx.remoteAddr,
    original: input,
  };
}
