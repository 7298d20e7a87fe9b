// A real SMTP server (the `smtp-server` package) on loopback, with STARTTLS or implicit TLS on a fresh
// self-signed certificate, AUTH, and answers the test scripts (4xx, 5xx for a recipient or for the message).
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { Config } from '../../src/config/schema.js';
import { loadTlsMaterial } from '../../src/tls/tls-material.js';
import { makeTempDir } from './temp-dir.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The session was TLS (after STARTTLS, or from the start). */
  secure: boolean;
  user: string | undefined;
  headers: Map<string, string>;
  /** The text body, quoted-printable decoded. */
  text: string;
}

export interface SmtpReceiver {
  port: number;
  ca: string;
  mails: ReceivedMail[];
  /** SMTP answers (code, text) to give to the next DATA commands instead of 250. */
  failData: { code: number; text: string }[];
  /** Connections are greeted 421 (service not available), as a server in maintenance does. */
  down: boolean;
  /** Each DATA answer waits this long (a slow relay). */
  delayMs: number;
  /** Mails whose raw text contains this are refused 554 after DATA (a content filter); null: none. */
  refuseText: string | null;
  /** The mails refused for their content. */
  refused: ReceivedMail[];
  close(): Promise<void>;
}

/** Quoted-printable (RFC 2045) back to text: soft line breaks removed, `=XX` to bytes, read as UTF-8. */
function decodeQuotedPrintable(body: string): string {
  const text = body.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '=' && /^[0-9A-F]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(text[i] as string, 'latin1'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function parseMail(raw: string): { headers: Map<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  const body = raw.slice(split + 4);
  const encoding = headers.get('content-transfer-encoding');
  const text =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return { headers, text: text.replace(/\r\n/g, '\n') };
}

export async function startSmtpReceiver(
  t: { after(fn: () => unknown): void },
  options: { implicitTls: boolean; user: string; password: string; refuseRecipient?: string },
): Promise<SmtpReceiver> {
  const tls = await loadTlsMaterial(
    { cert: null, key: null, selfSignedKeyType: 'ecdsa' } as Config['tls'],
    makeTempDir(t),
    null,
  );
  const mails: ReceivedMail[] = [];
  const state = {
    failData: [] as SmtpReceiver['failData'],
    down: false,
    delayMs: 0,
    refuseText: null as string | null,
    refused: [] as ReceivedMail[],
  };
  const server = new SMTPServer({
    secure: options.implicitTls,
    key: tls.key,
    cert: tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onConnect(_session, callback) {
      if (state.down)
        return callback(Object.assign(new Error('Service not available'), { responseCode: 421 }));
      callback();
    },
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.password)
        return callback(null, { user: auth.username });
      callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (address.address === options.refuseRecipient)
        return callback(Object.assign(new Error('No such user here'), { responseCode: 550 }));
      callback();
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        raw += chunk;
      });
      stream.on('end', () => {
        const mail = {
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          secure: session.secure,
          user: session.user as string | undefined,
          ...parseMail(raw),
        };
        const filtered = state.refuseText !== null && mail.text.includes(state.refuseText);
        const failure = filtered
          ? { code: 554, text: '5.7.1 Message refused by the content filter' }
          : state.failData.shift();
        setTimeout(() => {
          if (filtered) state.refused.push(mail);
          if (failure !== undefined)
            return callback(Object.assign(new Error(failure.text), { responseCode: failure.code }));
          mails.push(mail);
          callback();
        }, state.delayMs);
      });
    },
  });
  // A client that gives up mid-handshake (an untrusted certificate) is an error event here, not a crash.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  t.after(close);
  return Object.assign(state, { port, ca: tls.cert, mails, close });
}
