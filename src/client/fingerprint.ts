// SHA-256 certificate fingerprints as operators paste them: colon-separated or plain hex, any case.

/** `AB:CD:...` or `abcd...`, any case -> 64 lower-case hex digits; null when it is not a SHA-256 fingerprint. */
export function normalizeFingerprint(text: string): string | null {
  const hex = text
    .trim()
    .replace(/^sha256[:=]/i, '')
    .replaceAll(':', '')
    .toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : null;
}
