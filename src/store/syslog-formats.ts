// The names a sensor's `--format` may give: a list of its own, so the CLI's definitions name them without
// loading the parsers, and the registry's shape check (sensor-syslog.ts) takes only these
// (inputs/syslog/parsers/format-parsers.ts maps each name to its parser).

export const SYSLOG_FORMATS = ['panos', 'cef', 'fortinet', 'suricata'] as const;

export type SyslogFormat = (typeof SYSLOG_FORMATS)[number];

/** Whether `name` is one of the formats, exactly (`PANOS` is not; neither is `constructor`). */
export const isSyslogFormat = (name: unknown): name is SyslogFormat =>
  (SYSLOG_FORMATS as readonly unknown[]).includes(name);
