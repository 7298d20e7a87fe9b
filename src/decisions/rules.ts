// A configured rule made ready to match records: its filters as tests and its windows in milliseconds.
import { type BlocklistConfig, type BlockRule, parseBlockDuration } from '../config/blocklist-schema.js';
import { isThreatRecord, type StoredRecord } from '../records/stored-record.js';

/** What a rule tests of a record: the threat's name is read only by a rule that filters on it. */
export interface RuleInput extends Pick<StoredRecord, 'criticality' | 'sensor' | 'endpoint'> {
  threat(): string;
}

export interface CompiledRule {
  name: string;
  minCriticality: number;
  minRecords: number;
  minSensors: number;
  withinMs: number;
  durationMs: number;
  address: 'source' | 'destination';
  /** Whether a record counts for this rule (criticality, sensors, endpoints, threat). */
  matches(record: RuleInput): boolean;
  /** What a block made by this rule says it is for. */
  reason: string;
}

export function compileRules(config: BlocklistConfig): CompiledRule[] {
  return Object.entries(config.rules).map(([name, rule]) => compileRule(name, rule));
}

function compileRule(name: string, rule: BlockRule): CompiledRule {
  const sensors = rule.sensors ? new Set(rule.sensors) : null;
  const endpoints = rule.endpoints ? new Set<string>(rule.endpoints) : null;
  const threat = rule.threat?.toLowerCase() ?? null;
  const parts = [`criticality >= ${rule.minCriticality}`];
  if (rule.minRecords > 1) parts.push(`${rule.minRecords} records`);
  if (rule.minSensors > 1) parts.push(`${rule.minSensors} sensors`);
  if (rule.minRecords > 1 || rule.minSensors > 1) parts.push(`within ${rule.within}`);
  if (threat) parts.push(`threat ~ "${rule.threat}"`);
  return {
    name,
    minCriticality: rule.minCriticality,
    minRecords: rule.minRecords,
    minSensors: rule.minSensors,
    // Checked at load (blocklistChecks): both parse.
    withinMs: parseBlockDuration(rule.within) as number,
    durationMs: parseBlockDuration(rule.duration) as number,
    address: rule.address,
    reason: `rule ${name}: ${parts.join(', ')}`,
    // The collector's own records (a sensor silent or back) are no threat, whatever the rule's endpoints.
    matches: (record) =>
      isThreatRecord(record) &&
      record.criticality >= rule.minCriticality &&
      (sensors === null || sensors.has(record.sensor)) &&
      (endpoints === null || endpoints.has(record.endpoint)) &&
      (threat === null || record.threat().toLowerCase().includes(threat)),
  };
}
