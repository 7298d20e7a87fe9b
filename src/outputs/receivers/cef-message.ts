// One record as an ArcSight Common Event Format (CEF:0) line, the body of a syslog message with `format: cef`.
import { isIPv4, isIPv6 } from 'node:net';
import type { StoredRecord } from '../../records/stored-record.js';

/** Criticality 0..4 on CEF's 0..10 (0-3 low, 4-6 medium, 7-8 high, 9-10 very high). */
const CEF_SEVERITY = [1, 3, 5, 8, 10];

export function cefSeverity(criticality: unknown): number {
  if (typeof criticality !== 'number') return 5;
  return CEF_SEVERITY[Math.min(4, Math.max(0, Math.trunc(criticality) || 0))] ?? 5;
}

/** A header field: `\` and `|` escaped; a line break has no escape in a CEF header, so it becomes a space. */
export function cefHeaderField(value: string): string {
  return value.replace(/[\\|]/g, '\\$&').replace(/\r\n|[\r\n]/g, ' ');
}

/** An extension value: `\` and `=` escaped, line breaks written as `\r` and `\n` (CEF's own escapes). */
export function cefExtensionValue(value: string): string {
  return value.replace(/[\\=]/g, '\\$&').replace(/\r/g, '\\r').replace(/\n/g, '\\n');
}

/** A field's text; anything else (a record the shape check would refuse, read some other way) as nothing. */
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A port, when the field holds one. */
const port = (value: unknown): number | null =>
  Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 65535 ? (value as number) : null;

/** An AS number, when the field holds one. */
const asn = (value: unknown): number | null =>
  Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 0xffffffff
    ? (value as number)
    : null;

/** CEF's custom fields the enrichment's fields go in. */
const ENRICHMENT_KEYS = [
  ['cs2', 'src_country'],
  ['cn1', 'src_asn'],
  ['cs3', 'src_as_org'],
  ['cs4', 'dst_country'],
  ['cn2', 'dst_asn'],
  ['cs5', 'dst_as_org'],
] as const;

const epochMs = (iso: unknown): string | null => {
  if (typeof iso !== 'string') return null;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? String(ms) : null;
};

/**
 * Total over any object (its fields are read as their types only): the shape check (store/record-shape.ts)
 * hands over only whole records, and a formatting error must never hold an output back.
 * `CEF:0|threatcol|threatcol|VERSION|SIGNATURE|NAME|SEVERITY|EXTENSION`. The signature is the threat id when the
 * record has one, else the threat's name. IPv4 addresses go to `src`/`dst`; IPv6 ones to `c6a2`/`c6a3`, the
 * keys CEF defines for them (`src` and `dst` take IPv4 only). The record id is `externalId`. Country and AS go in
 * cs2-cs5, cn1 and cn2, each with its label.
 */
export function cefMessage(record: StoredRecord, id: string, productVersion: string): string {
  const extension: [string, string][] = [];
  const add = (key: string, value: string | number | null | undefined) => {
    if (value !== null && value !== undefined && value !== '') extension.push([key, String(value)]);
  };
  add('rt', epochMs(record.received_at));
  add('start', epochMs(record.detected_at));
  const src = text(record.src_ip);
  const dst = text(record.dst_ip);
  if (isIPv4(src)) add('src', src);
  else if (isIPv6(src)) add('c6a2', src);
  if (isIPv4(dst)) add('dst', dst);
  else if (isIPv6(dst)) add('c6a3', dst);
  add('spt', port(record.src_port));
  add('dpt', port(record.dst_port));
  add('proto', text(record.protocol).toUpperCase());
  add('dvchost', text(record.sensor));
  add('cat', text(record.severity));
  add('externalId', text(id));
  add('cs1Label', 'endpoint');
  add('cs1', text(record.endpoint));
  // The enrichment's country and AS of each address (src/enrich/): CEF has no keys of its own for them, so they
  // go in labelled custom fields, each label named after the stored field.
  for (const [key, field] of ENRICHMENT_KEYS) {
    const value = field.endsWith('_asn') ? asn(record[field]) : text(record[field]);
    if (value === null || value === '') continue;
    add(`${key}Label`, field);
    add(key, value);
  }
  const threat = text(record.threat);
  const header = [
    'CEF:0',
    'threatcol',
    'threatcol',
    cefHeaderField(productVersion),
    cefHeaderField(typeof record.threat_id === 'string' ? record.threat_id : threat),
    cefHeaderField(threat),
    String(cefSeverity(record.criticality)),
  ].join('|');
  return `${header}|${extension.map(([key, value]) => `${key}=${cefExtensionValue(value)}`).join(' ')}`;
}
