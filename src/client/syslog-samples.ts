// Realistic random threat messages per syslog format for `threatcol send syslog --sample`, each a whole syslog
// message (header included) as the sender would write it, built from the same threats as the HTTPS samples.
import { SEVERITY_LABELS, type SeverityLabel } from '../records/criticality.js';
import { sampleFirewallRecord } from './sample-records.js';

export const SYSLOG_SAMPLE_FORMATS = ['panos', 'cef', 'fortinet', 'suricata'] as const;
export type SyslogSampleFormat = (typeof SYSLOG_SAMPLE_FORMATS)[number];

interface Threat {
  name: string;
  id: string;
  src: string;
  dst: string;
  sport: number;
  dport: number;
  proto: string;
  severity: string;
  at: Date;
}

function threat(now: number): Threat {
  const r = sampleFirewallRecord(now);
  const full = String(r.threat_name);
  const open = full.lastIndexOf('(');
  return {
    name: full.slice(0, open),
    id: full.slice(open + 1, -1),
    src: String(r.src),
    dst: String(r.dst),
    sport: Number(r.sport),
    dport: Number(r.dport),
    proto: String(r.proto),
    severity: String(r.severity),
    at: new Date(now),
  };
}

/** RFC 5424 header; the time with its offset (Z), so no sensor time zone is needed to read it. */
const header5424 = (pri: number, at: Date, host: string, app: string) =>
  `<${pri}>1 ${at.toISOString()} ${host} ${app} - - -`;

const p2 = (n: number) => String(n).padStart(2, '0');
const ymd = (d: Date, sep: string) =>
  `${d.getUTCFullYear()}${sep}${p2(d.getUTCMonth() + 1)}${sep}${p2(d.getUTCDate())}`;
const hms = (d: Date) => `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;

/** PAN-OS THREAT CSV: the columns the parser reads (docs/syslog.md, panos), the rest empty as PAN-OS leaves them. */
function panos(t: Threat): string {
  const cols: string[] = Array.from({ length: 40 }, () => '');
  const time = `${ymd(t.at, '/')} ${hms(t.at)}`;
  Object.assign(cols, {
    0: '1',
    1: time,
    2: '012801096514',
    3: 'THREAT',
    4: 'vulnerability',
    6: time,
    7: t.src,
    8: t.dst,
    24: String(t.sport),
    25: String(t.dport),
    29: t.proto,
    32: `"${t.name}(${t.id})"`,
    34: t.severity,
  });
  return `${header5424(14, t.at, 'PA-VM', '-')} ${cols.join(',')}`;
}

function cef(t: Threat): string {
  const severity = [0, 3, 5, 8, 10][SEVERITY_LABELS.indexOf(t.severity as SeverityLabel)] ?? 5;
  const name = t.name.replace(/[\\|]/g, (c) => `\\${c}`);
  return `${header5424(134, t.at, 'ngfw', '-')} CEF:0|Palo Alto Networks|PAN-OS|11.1|${t.id}|${name}|${severity}|src=${t.src} dst=${t.dst} spt=${t.sport} dpt=${t.dport} proto=${t.proto.toUpperCase()} rt=${t.at.getTime()} cat=threat`;
}

function fortinet(t: Threat): string {
  const severity = t.severity === 'informational' ? 'info' : t.severity;
  const proto = t.proto === 'udp' ? 17 : 6;
  return `<185>date=${ymd(t.at, '-')} time=${hms(t.at)} devname="FG100F" devid="FG100FTK20000000" tz="+0000" logid="0419016384" type="utm" subtype="ips" eventtype="signature" level="alert" vd="root" severity="${severity}" srcip=${t.src} dstip=${t.dst} srcport=${t.sport} dstport=${t.dport} proto=${proto} action="dropped" attack="${t.name.replace(/"/g, "'")}" attackid=${t.id}`;
}

function suricata(t: Threat): string {
  const severity = 4 - Math.min(3, SEVERITY_LABELS.indexOf(t.severity as SeverityLabel));
  const eve = {
    timestamp: t.at.toISOString().replace('Z', '+0000'),
    event_type: 'alert',
    src_ip: t.src,
    src_port: t.sport,
    dest_ip: t.dst,
    dest_port: t.dport,
    proto: t.proto.toUpperCase(),
    alert: { action: 'allowed', gid: 1, signature_id: Number(t.id), rev: 1, signature: t.name, severity },
  };
  return `${header5424(14, t.at, 'opnsense', 'suricata')} ${JSON.stringify(eve)}`;
}

const BUILD: Record<SyslogSampleFormat, (t: Threat) => string> = { panos, cef, fortinet, suricata };

/** One sample threat message of `format`, at `now` (give a time to make a stream of distinct ones). */
export function sampleSyslogMessage(format: SyslogSampleFormat, now: number = Date.now()): string {
  return BUILD[format](threat(now));
}
