// JSON schema of one firewall threat record (spec 2.1, DESIGN 2): the 11 fields, an optional severity, bounded extras.
import { extraFields, ip, nonEmptyText, port, text } from './common.js';

export const firewallRecordSchema = {
  type: 'object',
  required: [
    'threat_name',
    'threatid',
    'src',
    'dst',
    'proto',
    'subcategory_of_app',
    'thr_category',
    'app',
    'time_received',
    'sport',
    'dport',
  ],
  properties: {
    threat_name: nonEmptyText,
    threatid: nonEmptyText,
    src: ip,
    dst: ip,
    proto: text,
    subcategory_of_app: text,
    thr_category: text,
    app: text,
    time_received: { type: 'string', format: 'firewall-time' },
    sport: port,
    dport: port,
    severity: { type: 'string', maxLength: 64 },
  },
  ...extraFields(12),
} as const;

export interface FirewallRecordInput {
  threat_name: string;
  threatid: string;
  src: string;
  dst: string;
  proto: string;
  subcategory_of_app: string;
  thr_category: string;
  app: string;
  time_received: string;
  sport: number | string;
  dport: number | string;
  severity?: string;
  [extra: string]: unknown;
}
