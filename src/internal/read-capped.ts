/**
 * One bounded read of a body stream, for every body agent-pep reads whole from someone else: a PDP's answer
 * on the `fetch` transport, a JWKS, an MCP request a guarded handler decides.
 * @internal
 */

/**
 * Reads `body` whole, at most `max` bytes: once more has arrived the stream is cancelled (not awaited) and
 * nothing more is read.
 * @param body - the stream (`null`: an empty body)
 * @param max - the most bytes read, in bytes
 * @param onReader - given the reader before the first read, so that an abort can cancel it too
 * @returns the bytes, or `undefined` when the body is larger than `max`
 * @throws what the stream's reads throw
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  max: number,
  onReader?: (reader: ReadableStreamDefaultReader<Uint8Array>) => void,
): Promise<Uint8Array | undefined> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  onReader?.(reader);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
