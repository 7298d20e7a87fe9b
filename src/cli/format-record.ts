// One human line per stored record for `threats tail` and `threats search`: time, criticality, sensor, flow (with
// each address's country and AS where the record has them), threat; colour optional.
import type { StoredRecord } from '../records/stored-record.js';
import { clean } from './terminal-text.js';

const LABELS = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const;
/** ANSI SGR per criticality 0..4: dim, cyan, yellow, red, bold red. */
const COLOURS = ['2', '36', '33', '31', '1;31'] as const;

/** NO_COLOR (https://no-color.org) set to anything non-empty, or a non-terminal, means plain text. */
export function useColour(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

export function formatRecordLine(record: StoredRecord, colour: boolean): string {
  const criticality = Number.isInteger(record.criticality) ? record.criticality : 2;
  const label = (LABELS[criticality] ?? 'MEDIUM').padEnd(8);
  const time = `${clean(record.received_at).slice(0, 19).replace('T', ' ')}Z`;
  const src = endpoint(record.src_ip, record.src_port) + network(record.src_country, record.src_asn);
  const dst = endpoint(record.dst_ip, record.dst_port) + network(record.dst_country, record.dst_asn);
  const line = `${time}  ${label}  ${clean(record.sensor)}  ${src} → ${dst} ${clean(record.protocol)}  ${clean(record.threat)}`;
  if (!colour) return line;
  return `\x1b[${COLOURS[criticality] ?? COLOURS[2]}m${line}\x1b[0m`;
}

/** ` (US AS15169)` after an address the enrichment placed (either part alone where only it is known); else ''. */
function network(country: unknown, asn: unknown): string {
  const parts: string[] = [];
  if (country !== undefined && country !== null) parts.push(clean(country));
  if (asn !== undefined && asn !== null) parts.push(`AS${clean(asn)}`);
  return parts.length === 0 ? '' : ` (${parts.join(' ')})`;
}

function endpoint(ip: unknown, port: unknown): string {
  const address = clean(ip);
  if (port === undefined || port === null) return address;
  return address.includes(':') ? `[${address}]:${clean(port)}` : `${address}:${clean(port)}`;
}
