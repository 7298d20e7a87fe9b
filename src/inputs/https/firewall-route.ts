// POST /firewall: PAN-OS threat-log records; criticality derived, time read in the sensor's zone, quoting repaired.
import { buildFirewallRecord } from '../../records/stored-record.js';
import type { FirewallRecordInput } from '../../schemas/firewall-record.js';
import type { RouteSpec } from './ingest.js';

export const firewallRoute: RouteSpec = {
  endpoint: 'firewall',
  allowRepair: true,
  build: (input, ctx) => buildFirewallRecord(input as FirewallRecordInput, ctx),
};
