// JSON schema of one generic sensor record (spec 2.2): the 6 fields and bounded extras.
import { extraFields, ip, LONG_TEXT_MAX, nonEmptyText, port } from './common.js';

export const genericRecordSchema = {
  type: 'object',
  required: ['source_ip', 'destination_ip', 'destination_port', 'protocol', 'threat', 'criticality'],
  properties: {
    source_ip: ip,
    destination_ip: ip,
    destination_port: port,
    protocol: nonEmptyText,
    threat: { type: 'string', minLength: 1, maxLength: LONG_TEXT_MAX },
    criticality: {
      type: ['integer', 'string'],
      minimum: 0,
      maximum: 4,
      pattern: '^[0-4]$',
    },
  },
  ...extraFields(6),
} as const;

export interface GenericRecordInput {
  source_ip: string;
  destination_ip: string;
  destination_port: number | string;
  protocol: string;
  threat: string;
  criticality: number | string;
  [extra: string]: unknown;
}
