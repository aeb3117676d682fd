// Extra context from other files: chunks of lines around where the user worked in other
// open documents, kept in a small ring that changes slowly. The prompt starts with the
// ring's chunks in ring order, so as long as the ring does not change the whole front of
// the prompt is the same as in the previous request and its KV cache is reused. New chunks
// wait in a pending queue and enter the ring one at a time, at most once per interval
// (the idea of llama.vscode's ring buffer).
import type { ExtraChunk } from './fim-template';

export interface RingOptions {
  /** Chunks kept in the ring. */
  maxChunks: number;
  /** Lines per chunk; chunks start at multiples of it so the same region maps to one id. */
  chunkLines: number;
  /** Least time between two ring changes. */
  minRotateMs: number;
  /** Pending chunks kept waiting; older ones are dropped. */
  maxPending: number;
}

export const defaultRingOptions: RingOptions = {
  maxChunks: 8,
  chunkLines: 64,
  minRotateMs: 1000,
  maxPending: 16,
};

interface Chunk extends ExtraChunk {
  id: string; // uri#startLine
  uri: string;
  tokens: number;
}

export class ExtraContextRing {
  private ring: Chunk[] = [];
  private pending: Omit<Chunk, 'tokens'>[] = [];
  private lastRotate = -Infinity;

  constructor(
    private readonly opts: RingOptions = defaultRingOptions,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Queues the chunk of `uri` around `line` (the user opened, edited or completed there). */
  noteActivity(uri: string, path: string, lines: readonly string[], line: number): void {
    const n = this.opts.chunkLines;
    const startLine = Math.max(0, Math.floor(line / n) * n);
    const text = lines.slice(startLine, startLine + n).join('\n');
    if (!text.trim()) return;
    const id = `${uri}#${startLine}`;
    this.pending = this.pending.filter((c) => c.id !== id);
    this.pending.push({ id, uri, path, text });
    if (this.pending.length > this.opts.maxPending) this.pending.shift();
  }

  /** Drops everything taken from a closed document. */
  forget(uri: string): void {
    this.ring = this.ring.filter((c) => c.uri !== uri);
    this.pending = this.pending.filter((c) => c.uri !== uri);
  }

  /**
   * Moves at most one pending chunk into the ring (not one from `currentUri`: the current
   * file is in the prompt already), if the last change is old enough.
   */
  rotate(currentUri: string, countTokens: (text: string) => number): void {
    if (this.now() - this.lastRotate < this.opts.minRotateMs) return;
    const i = this.pending.findIndex((c) => c.uri !== currentUri);
    if (i < 0) return;
    const [next] = this.pending.splice(i, 1);
    const same = this.ring.findIndex((c) => c.id === next.id);
    if (same >= 0 && this.ring[same].text === next.text) return; // nothing new: keep the KV
    if (same >= 0) this.ring.splice(same, 1);
    this.ring.push({ ...next, tokens: countTokens(next.text) + 4 });
    if (this.ring.length > this.opts.maxChunks) this.ring.shift();
    this.lastRotate = this.now();
  }

  /** The ring's chunks (oldest first) that fit `maxTokens`, excluding the current file. */
  chunksFor(currentUri: string, maxTokens: number): ExtraChunk[] {
    const out: ExtraChunk[] = [];
    let used = 0;
    for (const c of this.ring) {
      if (c.uri === currentUri) continue;
      if (used + c.tokens > maxTokens) break;
      used += c.tokens;
      out.push({ path: c.path, text: c.text });
    }
    return out;
  }

  get size(): number {
    return this.ring.length;
  }
}
