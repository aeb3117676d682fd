// The ways a download fails, each with a message a person can act on. The kind decides
// what happens to the `.part` file (kept for a resume, or removed as garbage) and which
// JSON-RPC error the sidecar answers with.
export type DownloadErrorKind =
  /** The request itself is wrong (a bad URL, file name or sha256): nothing was touched. */
  | 'bad-input'
  /** The destination exists and overwriting was not asked for. */
  | 'exists'
  /** The same file is already being downloaded. */
  | 'busy'
  /** The server answered with an error status (404, 403, 500…). */
  | 'http'
  /** The connection failed or was cut; the `.part` is kept for a resume. */
  | 'network'
  /** The user cancelled; the `.part` is kept for a resume. */
  | 'cancelled'
  /** The whole file does not have the expected sha256; the `.part` was removed. */
  | 'checksum'
  /** What arrived is not a GGUF file; the `.part` was removed. */
  | 'not-gguf'
  /** Writing to the model folder failed. */
  | 'disk';

export class DownloadError extends Error {
  constructor(
    message: string,
    readonly kind: DownloadErrorKind,
    /** The file this concerns (the destination, or the `.part`). */
    readonly path?: string,
  ) {
    super(message);
  }
}
