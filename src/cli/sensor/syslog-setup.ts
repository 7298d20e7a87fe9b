// The sender configuration a syslog sensor's admin pastes: PAN-OS, FortiGate, rsyslog and syslog-ng, with the
// collector's address, port and certificate fingerprint (`sensor show NAME --syslog`, docs/firewall-setup.md).

export interface SyslogTarget {
  sensor: string;
  format: string;
  /** The collector's name or address as the sender reaches it. */
  host: string;
  port: number;
  transport: 'tls' | 'tcp';
  /** The port of syslog.relpListen (RELP over TLS); null: not listening. */
  relpPort: number | null;
  /** The collector's certificate, colon-separated hex (null: unknown, e.g. not created yet). */
  sha256: string | null;
  sha1: string | null;
  /** The sensor is known by a pinned client certificate: the sender must present it. */
  clientCert: boolean;
}

export interface SyslogSetup {
  panos: string | null;
  fortigate: string | null;
  rsyslog: string;
  /** rsyslog's omrelp, when syslog.relpListen is set. */
  rsyslog_relp: string | null;
  syslog_ng: string;
}

const CLIENT_PEM = 'threatcol-client.pem';
const CLIENT_KEY = 'threatcol-client.key';

export function syslogSetup(t: SyslogTarget): SyslogSetup {
  return {
    panos: t.format === 'panos' ? panos(t) : null,
    fortigate: t.format === 'fortinet' || t.format === 'cef' ? fortigate(t) : null,
    rsyslog: rsyslog(t),
    rsyslog_relp: t.relpPort === null ? null : rsyslogRelp(t, t.relpPort),
    syslog_ng: syslogNg(t),
  };
}

function panos(t: SyslogTarget): string {
  const tls = t.transport === 'tls';
  return [
    'Device > Server Profiles > Syslog > Add (name: threatcol), Servers:',
    `  Syslog Server ${t.host}, Transport ${tls ? 'SSL' : 'TCP'}, Port ${t.port}, Format IETF (BSD also works), Facility LOG_USER`,
    'Objects > Log Forwarding > Add: Log Type threat, Filter All Logs, Syslog: threatcol;',
    '  select this profile in the security rules whose threats are to be sent, then Commit.',
    ...(tls
      ? [
          `Device > Certificate Management > Certificates > Import the collector's certificate (SHA-256 ${t.sha256 ?? '<see threatcol check>'})`,
          '  and mark it Trusted Root CA: PAN-OS checks the syslog server it connects to.',
        ]
      : []),
    ...(t.clientCert
      ? [
          'Device > Certificate Management > Certificates: import the pinned client certificate with its key and',
          '  check "Certificate for Secure Syslog".',
        ]
      : []),
  ].join('\n');
}

function fortigate(t: SyslogTarget): string {
  const tls = t.transport === 'tls';
  return [
    'config log syslogd setting',
    '    set status enable',
    `    set server "${t.host}"`,
    '    set mode reliable',
    `    set port ${t.port}`,
    `    set enc-algorithm ${tls ? 'high' : 'disable'}`,
    ...(tls ? ['    set ssl-min-proto-version TLSv1-2'] : []),
    `    set format ${t.format === 'cef' ? 'cef' : 'default'}`,
    ...(t.clientCert ? ['    set certificate "threatcol-client"'] : []),
    'end',
    ...(t.clientCert
      ? ['(import the pinned client certificate and its key as local certificate "threatcol-client" first)']
      : []),
  ].join('\n');
}

/**
 * rsyslog's omfwd (Debian: rsyslog-gnutls), octet-counted, retrying forever with an in-memory queue. The
 * collector is pinned by its SHA-256 (x509/fingerprint), so its self-signed certificate needs no CA file.
 */
function rsyslog(t: SyslogTarget): string {
  const tls = t.transport === 'tls';
  const lines = [
    `# /etc/rsyslog.d/60-threatcol.conf: forward to threatcol (sensor ${t.sensor}, format ${t.format})`,
    // omfwd has no answers: what is in flight when the collector stops is lost (docs/syslog.md, restarts).
    t.relpPort === null
      ? '# omfwd can lose what it sends in the instant threatcol stops; RELP (syslog.relpListen) loses nothing'
      : '# omfwd can lose what it sends in the instant threatcol stops; the omrelp action below loses nothing',
    `action(type="omfwd" target="${t.host}" port="${t.port}" protocol="tcp"`,
  ];
  if (tls) {
    lines.push(
      '       StreamDriver="gtls" StreamDriverMode="1"',
      `       StreamDriverAuthMode="x509/fingerprint" StreamDriverPermittedPeers="SHA256:${t.sha256 ?? '<collector SHA-256>'}"`,
    );
    if (t.clientCert) {
      lines.push(
        `       StreamDriver.CertFile="/etc/rsyslog.d/${CLIENT_PEM}" StreamDriver.KeyFile="/etc/rsyslog.d/${CLIENT_KEY}"`,
      );
    }
  }
  lines.push(
    '       TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format"',
    // Retried every 5 s, not rsyslog's 30 s: a collector restart (an upgrade) delays messages by seconds.
    '       queue.type="LinkedList" action.resumeRetryCount="-1" action.resumeInterval="5")',
  );
  return lines.join('\n');
}

/**
 * rsyslog's omrelp (Debian: rsyslog-relp): each message is kept until threatcol answers that it is stored. The
 * collector is pinned by its SHA-256; librelp needs a certificate of its own for TLS, so one is always named.
 */
function rsyslogRelp(t: SyslogTarget, port: number): string {
  return [
    `# /etc/rsyslog.d/60-threatcol.conf: forward to threatcol by RELP (sensor ${t.sensor}, format ${t.format})`,
    ...(t.clientCert
      ? []
      : [
          '# librelp needs a certificate of its own; the sensor is known by its address, so any will do:',
          `#   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 -subj /CN=${t.sensor} \\`,
          `#     -keyout /etc/rsyslog.d/${CLIENT_KEY} -out /etc/rsyslog.d/${CLIENT_PEM}`,
        ]),
    'module(load="omrelp")',
    `action(type="omrelp" target="${t.host}" port="${port}" tls="on"`,
    `       tls.authMode="fingerprint" tls.permittedPeer=["SHA256:${t.sha256 ?? '<collector SHA-256>'}"]`,
    `       tls.myCert="/etc/rsyslog.d/${CLIENT_PEM}" tls.myPrivKey="/etc/rsyslog.d/${CLIENT_KEY}"`,
    // A memory queue alone discards what does not fit while the collector is away (queue.size 1000, after
    // queue.timeoutEnqueue): disk-assisted, it spills to the work directory and keeps them across restarts.
    `       queue.type="LinkedList" queue.filename="threatcol-${t.sensor}" queue.maxDiskSpace="1g"`,
    '       queue.saveOnShutdown="on" action.resumeRetryCount="-1" action.resumeInterval="5")',
  ].join('\n');
}

/** syslog-ng's syslog() driver (RFC 5425 framing: octet counting), not network() (newline framing). */
function syslogNg(t: SyslogTarget): string {
  const tls = t.transport === 'tls';
  const tlsBlock = tls
    ? [
        '    tls(',
        '      peer-verify(required-untrusted)',
        `      trusted-keys("SHA1:${t.sha1 ?? '<collector SHA-1>'}")`,
        ...(t.clientCert
          ? [
              `      cert-file("/etc/syslog-ng/${CLIENT_PEM}")`,
              `      key-file("/etc/syslog-ng/${CLIENT_KEY}")`,
            ]
          : []),
        '    )',
      ]
    : [];
  return [
    `# /etc/syslog-ng/conf.d/threatcol.conf: forward to threatcol (sensor ${t.sensor}, format ${t.format})`,
    'destination d_threatcol {',
    `  syslog("${t.host}" port(${t.port}) transport("${tls ? 'tls' : 'tcp'}")`,
    ...tlsBlock,
    '  );',
    '};',
    'log { source(s_src); destination(d_threatcol); };',
  ].join('\n');
}

/** The setup as text, sections in the order a reader looks for their sender. */
export function syslogSetupText(t: SyslogTarget, setup: SyslogSetup): string {
  const sections: string[] = [
    `Syslog sender setup for sensor ${t.sensor} (format ${t.format}): ${t.transport === 'tls' ? 'TLS' : 'plain TCP'} to ${t.host} port ${t.port}`,
    t.sha256 === null
      ? "The collector's certificate is not created yet (start serve once)."
      : `Collector certificate SHA-256: ${t.sha256}`,
  ];
  if (t.clientCert)
    sections.push(`The sender presents the client certificate pinned for ${t.sensor} (${CLIENT_PEM} below).`);
  if (setup.panos) sections.push('', 'PAN-OS:', setup.panos);
  if (setup.fortigate) sections.push('', 'FortiGate (CLI):', setup.fortigate);
  sections.push('', 'rsyslog (a relay, or Suricata via imfile):', setup.rsyslog);
  if (setup.rsyslog_relp) {
    sections.push(
      '',
      `rsyslog by RELP to port ${t.relpPort} (acknowledged once stored; Debian: rsyslog-relp):`,
      setup.rsyslog_relp,
    );
  }
  sections.push('', 'syslog-ng:', setup.syslog_ng);
  return sections.join('\n');
}
