// The self-signed server certificate, encoded in DER here and signed with node:crypto: the few fields it has do not
// need an X.509 library (one took ~170 ms of CPU to load, on every first start of a data directory).
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIPv4 } from 'node:net';

/** One DER element: tag, definite length, content. */
function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length =
    n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

const seq = (...items: Buffer[]) => der(0x30, ...items);

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [a * 40 + b];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) base128.unshift((v & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050
    ? der(0x17, Buffer.from(`${iso.slice(2)}Z`))
    : der(0x18, Buffer.from(`${iso}Z`));
}

/** CN=name, a PrintableString when its characters allow, UTF8String otherwise. */
function commonName(name: string): Buffer {
  const value = /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(name)
    ? der(0x13, Buffer.from(name))
    : der(0x0c, Buffer.from(name, 'utf8'));
  return seq(der(0x31, seq(oid('2.5.4.3'), value)));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [der(0x01, Buffer.from([0xff]))] : []), der(0x04, value));
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  // Only the loopback is named here: ::1.
  const bytes = Buffer.alloc(16);
  bytes[15] = 1;
  return bytes;
}

export interface SelfSignedCertificate {
  certPem: string;
  keyPem: string;
}

/**
 * A server certificate for `host`: CN=host, not a CA, key usage digitalSignature (and keyEncipherment for RSA),
 * extended key usage serverAuth, subject alternative names host, localhost, 127.0.0.1 and ::1.
 */
export function createSelfSigned(
  keyType: 'ecdsa' | 'rsa',
  host: string,
  notBefore: Date,
  notAfter: Date,
): SelfSignedCertificate {
  const { publicKey, privateKey } =
    keyType === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 0x10001 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const algorithm =
    keyType === 'rsa' ? seq(oid('1.2.840.113549.1.1.11'), der(0x05)) : seq(oid('1.2.840.10045.4.3.2'));
  // Sixteen random bytes, positive and with no leading zero byte.
  const serial = randomBytes(16);
  serial[0] = ((serial[0] as number) & 0x7f) | 0x10;
  const name = commonName(host);
  // KeyUsage bits: digitalSignature (0x80), keyEncipherment (0x20); the first byte counts the unused bits.
  const keyUsage = keyType === 'rsa' ? Buffer.from([0x05, 0xa0]) : Buffer.from([0x07, 0x80]);
  const altNames = seq(
    der(0x82, Buffer.from(host)),
    der(0x82, Buffer.from('localhost')),
    der(0x87, ipBytes('127.0.0.1')),
    der(0x87, ipBytes('::1')),
  );
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    algorithm,
    name,
    seq(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    der(
      0xa3,
      seq(
        extension('2.5.29.19', true, seq()),
        extension('2.5.29.15', true, der(0x03, keyUsage)),
        extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))),
        extension('2.5.29.17', false, altNames),
      ),
    ),
  );
  const signature = sign(
    'sha256',
    tbs,
    keyType === 'rsa' ? privateKey : { key: privateKey, dsaEncoding: 'der' },
  );
  const cert = seq(tbs, algorithm, der(0x03, Buffer.from([0]), signature));
  const base64 = cert
    .toString('base64')
    .match(/.{1,64}/g)
    ?.join('\n');
  return {
    certPem: `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`,
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}
