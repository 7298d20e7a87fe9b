// The criticality scale (spec 2.3) and how a firewall record's criticality is derived (DESIGN 2).

export const SEVERITY_LABELS = ['informational', 'low', 'medium', 'high', 'critical'] as const;
export type SeverityLabel = (typeof SEVERITY_LABELS)[number];
/** `collector`: the collector's own records (src/sensors/), whose criticality is fixed. */
export type CriticalitySource = 'severity' | 'category' | 'default' | 'sender' | 'collector';

const BY_LABEL = new Map<string, number>(SEVERITY_LABELS.map((label, level) => [label, level]));

export function severityLabel(criticality: number): SeverityLabel {
  return SEVERITY_LABELS[criticality] ?? 'medium';
}

export interface CriticalityRules {
  defaultCriticality: number;
  criticalityByCategory: Record<string, number>;
}

/** From the PAN-OS `severity` (any case), else the category map, else the configured default. */
export function deriveCriticality(
  severity: unknown,
  category: string,
  rules: CriticalityRules,
): { criticality: number; source: CriticalitySource } {
  if (typeof severity === 'string') {
    const level = BY_LABEL.get(severity.trim().toLowerCase());
    if (level !== undefined) return { criticality: level, source: 'severity' };
  }
  const key = category.trim().toLowerCase();
  if (key !== '' && Object.hasOwn(rules.criticalityByCategory, key)) {
    return { criticality: rules.criticalityByCategory[key] as number, source: 'category' };
  }
  return { criticality: rules.defaultCriticality, source: 'default' };
}
