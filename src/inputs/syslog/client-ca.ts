// A syslog sensor identified by `--client-ca FILE --client-cn NAME`: the client certificate chains to that CA
// and names NAME (its subject CN or a SAN DNS name), checked on the chain the TLS client presented.
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

/** The certificates of a PEM bundle, in order; [] when it holds none or one does not parse. */
export function certificatesOf(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return [];
  }
}

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
 * Whether the verified chain passes through one of `cas` (a certificate of the chain signed by it), so a
 * certificate another sensor's CA issued is not taken for this sensor's, though both CAs are trusted for the
 * handshake.
 */
export function issuedBy(client: ClientCertificate, cas: readonly X509Certificate[]): boolean {
  if (!client.authorized) return false;
  return client.chain.some((cert) => cas.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey)));
}

/**
 * Whether `cert` names `name`: its subject CN or one of its SAN DNS names, compared without case and without
 * wildcards (the name is an identity, not a host to reach).
 */
export function namesSender(cert: X509Certificate, name: string): boolean {
  const wanted = name.toLowerCase();
  const cns = cert.subject
    .split('\n')
    .filter((line) => line.startsWith('CN='))
    .map((line) => line.slice(3));
  const dns = (cert.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4));
  return [...cns, ...dns].some((n) => n.toLowerCase() === wanted);
}
