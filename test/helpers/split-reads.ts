// Cuts a byte stream into reads at chosen points, for the framers' "any split gives the same frames" properties.

/** Splits `bytes` at the given cut points (any numbers, taken modulo the length). */
export function splitReads(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % (bytes.length + 1))))].sort(
    (x, y) => x - y,
  );
  const reads: Buffer[] = [];
  let from = 0;
  for (const cut of at) {
    reads.push(bytes.subarray(from, cut));
    from = cut;
  }
  reads.push(bytes.subarray(from));
  return reads;
}
