// The names a sensor's `--format` may give: a list of its own, so the CLI's definitions name them without
// loading the parsers (format-parsers.ts maps each name to its parser).

export const SYSLOG_FORMATS = ['panos', 'cef', 'fortinet', 'suricata'] as const;

export type SyslogFormat = (typeof SYSLOG_FORMATS)[number];
