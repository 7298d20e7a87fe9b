// POST /generic: records from custom sensors, which send their own criticality.
import { buildGenericRecord } from '../../records/stored-record.js';
import type { GenericRecordInput } from '../../schemas/generic-record.js';
import type { RouteSpec } from './ingest.js';

export const genericRoute: RouteSpec = {
  endpoint: 'generic',
  allowRepair: false,
  build: (input, ctx) => buildGenericRecord(input as GenericRecordInput, ctx),
};
