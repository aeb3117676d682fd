// Fixtures for the model-discovery tests: tiny GGUFs (a real header and real, zero-filled
// tensor data, written with test/fixtures/gguf-writer.ts; too small to load, which discovery
// never does) and a snapshot of a folder tree, to show that discovery changed nothing.
import { createHash } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import {
  GGMLType,
  GGUFValueType,
  arr,
  encodeGGUF,
  str,
  tensorByteSize,
  u32,
  type GGUFTensorSpec,
  type GGUFValue,
} from '../fixtures/gguf-writer';

/** A vocabulary with Qwen's FIM tokens. */
export const CODER_TOKENS = [
  '<|endoftext|>',
  '<|im_start|>',
  '<|im_end|>',
  '<|fim_prefix|>',
  '<|fim_middle|>',
  '<|fim_suffix|>',
  'def',
  'Ġfib',
  '(',
  ')',
  ':',
  'Ġreturn',
];
/** The same without FIM tokens (another vocabulary, so another fingerprint). */
export const PLAIN_TOKENS = ['<unk>', '<s>', '</s>', '▁Once', '▁upon', '▁a', '▁time'];

export interface TinyModel {
  arch?: string;
  tokens?: string[];
  tokenizer?: string;
  hidden?: number;
  layers?: number;
  /** The matrices' type (norms stay F32). */
  type?: GGMLType;
  /** general.file_type; absent: not written. */
  fileType?: number;
  context?: number;
  chatTemplate?: string;
  /** More metadata (split.count, leapfrog.prompt.fim…). */
  meta?: [string, GGUFValue][];
  /** More 1-D F32 tensors of `hidden` values, by name. */
  extraTensors?: string[];
}

/** The file's bytes and the parameter count its tensor shapes add up to. */
export function tinyGguf(o: TinyModel = {}): { bytes: Buffer; parameters: number } {
  const arch = o.arch ?? 'qwen2';
  const tokens = o.tokens ?? CODER_TOKENS;
  const hidden = o.hidden ?? 64;
  const type = o.type ?? GGMLType.F32;
  const metadata: [string, GGUFValue][] = [
    ['general.architecture', str(arch)],
    ['general.name', str(`tiny-${arch}`)],
    [`${arch}.context_length`, u32(o.context ?? 4096)],
    [`${arch}.embedding_length`, u32(hidden)],
    ['tokenizer.ggml.model', str(o.tokenizer ?? 'gpt2')],
    ['tokenizer.ggml.pre', str('qwen2')],
    ['tokenizer.ggml.tokens', arr(GGUFValueType.STRING, tokens)],
    [
      'tokenizer.ggml.token_type',
      arr(
        GGUFValueType.INT32,
        tokens.map(() => 1),
      ),
    ],
  ];
  if (o.fileType !== undefined) metadata.push(['general.file_type', u32(o.fileType)]);
  if (o.chatTemplate) metadata.push(['tokenizer.chat_template', str(o.chatTemplate)]);
  metadata.push(...(o.meta ?? []));
  const tensor = (name: string, dims: number[], t: GGMLType): GGUFTensorSpec => ({
    name,
    type: t,
    dims,
    data: new Uint8Array(tensorByteSize(t, dims)),
  });
  const tensors = [tensor('token_embd.weight', [hidden, tokens.length * 32], type)];
  for (let l = 0; l < (o.layers ?? 2); l++) {
    tensors.push(
      tensor(`blk.${l}.attn_norm.weight`, [hidden], GGMLType.F32),
      tensor(`blk.${l}.attn_q.weight`, [hidden, hidden], type),
      tensor(`blk.${l}.ffn_up.weight`, [hidden, 2 * hidden], type),
    );
  }
  tensors.push(tensor('output_norm.weight', [hidden], GGMLType.F32));
  for (const name of o.extraTensors ?? []) tensors.push(tensor(name, [hidden], GGMLType.F32));
  const parameters = tensors.reduce((n, t) => n + t.dims.reduce((a, b) => a * b, 1), 0);
  return { bytes: encodeGGUF({ metadata, tensors }), parameters };
}

export function writeFile(path: string, bytes: Buffer | string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  return path;
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Every entry under `root` (links not followed): its kind, size, modification time, and
 * content hash or link target. Equal snapshots: nothing was written, moved or touched.
 */
export function snapshotTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = lstatSync(path);
      const stamp = `${st.mode}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      if (st.isSymbolicLink()) out[path] = `link ${readlinkSync(path)} ${stamp}`;
      else if (st.isDirectory()) {
        out[path] = `dir ${st.mode}:${st.mtimeMs}:${st.ctimeMs}`;
        walk(path);
      } else if (st.isFile()) out[path] = `file ${sha256(readFileSync(path))} ${stamp}`;
      else out[path] = `other ${stamp}`;
    }
  };
  walk(root);
  return out;
}

/**
 * An Ollama model as `ollama pull` leaves it: the GGUF as blobs/sha256-<hex>, and a manifest
 * at manifests/<registry>/<namespace>/<model>/<tag> whose model layer names it (beside a
 * config and a template layer, as real manifests have). Returns the blob's path.
 */
export function writeOllamaModel(
  modelsDir: string,
  [registry, namespace, model, tag]: [string, string, string, string],
  gguf: Buffer,
): string {
  const hex = sha256(gguf);
  const blob = join(modelsDir, 'blobs', `sha256-${hex}`);
  writeFile(blob, gguf);
  const template = Buffer.from('{{ .Prompt }}');
  writeFile(join(modelsDir, 'blobs', `sha256-${sha256(template)}`), template);
  const manifest = {
    schemaVersion: 2,
    mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
    config: {
      mediaType: 'application/vnd.docker.container.image.v1+json',
      digest: `sha256:${'0'.repeat(64)}`,
      size: 2,
    },
    layers: [
      {
        mediaType: 'application/vnd.ollama.image.model',
        digest: `sha256:${hex}`,
        size: gguf.length,
      },
      {
        mediaType: 'application/vnd.ollama.image.template',
        digest: `sha256:${sha256(template)}`,
        size: template.length,
      },
    ],
  };
  writeFile(
    join(modelsDir, 'manifests', registry, namespace, model, tag),
    JSON.stringify(manifest),
  );
  return blob;
}

/**
 * A file in the Hugging Face cache as huggingface_hub writes it: the bytes in
 * models--<org>--<name>/blobs/<sha256>, and a relative link to it from
 * snapshots/<revision>/<file>. Returns the snapshot path.
 */
export function writeHfFile(
  hub: string,
  repo: string,
  revision: string,
  file: string,
  bytes: Buffer,
): string {
  const repoDir = join(hub, `models--${repo.split('/').join('--')}`);
  const hex = sha256(bytes);
  writeFile(join(repoDir, 'blobs', hex), bytes);
  writeFile(join(repoDir, 'refs', 'main'), revision);
  const link = join(repoDir, 'snapshots', revision, file);
  mkdirSync(dirname(link), { recursive: true });
  const depth = file.split('/').length + 1; // up to models--x, then into blobs/
  symlinkSync(`${'../'.repeat(depth)}blobs/${hex}`, link);
  return link;
}
