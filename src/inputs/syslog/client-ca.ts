// A syslog sensor identified by `--client-ca FILE --client-cn NAME`: the client certificate chains to that
// bundle's most specific CA and names NAME (its subject CN or a SAN DNS name), checked on the chain the TLS
// client presented.
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

/** What a TLS client presented: its certificate first, then the issuers it sent; verified against the CAs. */
export interface ClientCertificate {
  fingerprint: string;
  chain: X509Certificate[];
  /** OpenSSL verified the chain (signatures, validity dates) up to one of the configured CAs. */
  authorized: boolean;
}

/** The client certificate `socket` presented, with its chain; null when it presented none. */
export function clientCertificateOf(socket: TLSSocket): ClientCertificate | null {
  const leaf = socket.getPeerX509Certificate();
  if (leaf === undefined) return null;
  const chain = [leaf];
  // getPeerCertificate(true) links each certificate to its issuer; a self-signed one links to itself.
  let detailed = socket.getPeerCertificate(true);
  for (
    let depth = 0;
    depth < 8 && detailed.issuerCertificate && detailed.issuerCertificate !== detailed;
    depth++
  ) {
    detailed = detailed.issuerCertificate;
    chain.push(new X509Certificate(detailed.raw));
  }
  return { fingerprint: leaf.fingerprint256, chain, authorized: socket.authorized };
}

/**
 * The CAs of a bundle that issue the sensor's certificates: those that issued no other certificate of the
 * bundle (its intermediate, when it holds a root and an intermediate; the root when it holds only that).
 */
export function issuingCas(bundle: readonly X509Certificate[]): X509Certificate[] {
  return bundle.filter(
    (ca) => !bundle.some((other) => other.fingerprint256 !== ca.fingerprint256 && signedBy(other, ca)),
  );
}

/**
 * Whether the verified chain reaches one of `issuers` (the bundle's most specific CAs, see issuingCas()):
 * walking up from the certificate, each one signed by the next, until one is signed by an issuer. So a
 * certificate from a sibling intermediate under the same root is not taken for this sensor's, though the root
 * and both intermediates are trusted for the handshake.
 */
export function issuedBy(client: ClientCertificate, issuers: readonly X509Certificate[]): boolean {
  if (!client.authorized) return false;
  for (const [i, cert] of client.chain.entries()) {
    if (issuers.some((ca) => signedBy(cert, ca))) return true;
    const next = client.chain[i + 1];
    if (next === undefined || !signedBy(cert, next)) return false;
  }
  return false;
}

function signedBy(cert: X509Certificate, ca: X509Certificate): boolean {
  return cert.checkIssued(ca) && cert.verify(ca.publicKey);
}

/**
 * Whether `cert` names `name`: its subject CN or one of its SAN DNS names, the same but for the case of ASCII
 * letters (never Unicode case folding: U+212A KELVIN SIGN is not "k"), and without wildcards (the name is an
 * identity, not a host to reach).
 */
export function namesSender(cert: X509Certificate, name: string): boolean {
  const wanted = asciiLower(name);
  const cns = cert.subject
    .split('\n')
    .filter((line) => line.startsWith('CN='))
    .map((line) => line.slice(3));
  const dns = (cert.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4));
  return [...cns, ...dns].some((n) => asciiLower(n) === wanted);
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}
