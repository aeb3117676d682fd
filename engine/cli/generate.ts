// `leapfrog generate`: continue a prompt with the native engine, optionally speculating. The
// flags are the settings and overrides layers of engine/generation/generation-config.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { loadAddon } from '../native/load-addon';
import type { NativeModel } from '../native/addon';
import { GENERATION_DEFAULTS, type SamplingConfig } from '../protocol';
import {
  buildGenerateParams,
  sessionContextSize,
  type GenerationOverrides,
} from '../generation/generation-config';
import {
  CliError,
  ParsedArgs,
  UsageError,
  floatOption,
  intOption,
  parseArgs,
  stringOption,
} from './args';
import {
  backendFrom,
  generationOptionSpec,
  loadForCli,
  modelPathsFrom,
  settingsFrom,
  threadsFrom,
} from './model-options';

const spec = {
  ...generationOptionSpec,
  prompt: { kind: 'string' as const },
  'prompt-file': { kind: 'string' as const },
  'max-tokens': { kind: 'string' as const },
  temperature: { kind: 'string' as const },
  'top-k': { kind: 'string' as const },
  'top-p': { kind: 'string' as const },
  'min-p': { kind: 'string' as const },
  'repeat-penalty': { kind: 'string' as const },
  seed: { kind: 'string' as const },
  ctx: { kind: 'string' as const },
  // Text the lookup drafter may copy from, as the other open files are for completions.
  'corpus-file': { kind: 'string' as const },
  json: { kind: 'flag' as const },
  // For differential tests: exact prompt ids, and the last prompt position's logits.
  'prompt-tokens': { kind: 'string' as const, hidden: true },
  'logits-out': { kind: 'string' as const, hidden: true },
};

function promptText(args: ParsedArgs): string | undefined {
  const text = stringOption(args, 'prompt');
  const file = stringOption(args, 'prompt-file');
  if (text !== undefined && file !== undefined) {
    throw new UsageError('give either --prompt or --prompt-file, not both');
  }
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      throw new CliError(`${file}: cannot read prompt file (${(e as Error).message})`);
    }
  }
  return text;
}

function promptIds(args: ParsedArgs, model: NativeModel): number[] {
  const raw = stringOption(args, 'prompt-tokens');
  if (raw !== undefined) {
    const ids = raw.split(',').map((s) => Number(s.trim()));
    const nVocab = model.info().nVocab;
    if (ids.some((id) => !Number.isInteger(id) || id < 0 || id >= nVocab)) {
      throw new UsageError(`--prompt-tokens must be comma-separated ids below ${nVocab}`);
    }
    return ids;
  }
  const text = promptText(args);
  if (text === undefined) throw new UsageError('generate needs --prompt or --prompt-file');
  // Special-token text in the prompt is parsed, as llama.cpp's own CLI does, so a FIM or chat
  // prompt can be written by hand.
  return model.tokenize(text, true, true);
}

/** The sampling flags; what is not given comes from the table of defaults. */
function overridesFrom(args: ParsedArgs): GenerationOverrides {
  const d: SamplingConfig = GENERATION_DEFAULTS.sampling;
  return {
    maxTokens: intOption(args, 'max-tokens', GENERATION_DEFAULTS.maxTokens, 0),
    sampling: {
      temperature: floatOption(args, 'temperature', d.temperature),
      topK: intOption(args, 'top-k', d.topK, 0),
      topP: floatOption(args, 'top-p', d.topP),
      minP: floatOption(args, 'min-p', d.minP),
      repeatPenalty: floatOption(args, 'repeat-penalty', d.repeatPenalty),
      seed: intOption(args, 'seed', d.seed, 0),
    },
  };
}

function corpusIds(args: ParsedArgs, model: NativeModel): number[] | undefined {
  const file = stringOption(args, 'corpus-file');
  if (file === undefined) return undefined;
  try {
    return model.tokenize(readFileSync(file, 'utf8'), false, false);
  } catch (e) {
    throw new CliError(`${file}: cannot read corpus file (${(e as Error).message})`);
  }
}

export async function generateCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv, spec);
  const settings = settingsFrom(args);
  const overrides = overridesFrom(args);
  const requestedCtx = args.ctx === undefined ? undefined : intOption(args, 'ctx', 0, 16);
  const paths = modelPathsFrom(args, settings.speculation);
  const addon = loadAddon();
  const threads = threadsFrom(args, addon);
  const backend = backendFrom(args);
  const { target: model, draft } = await loadForCli(addon, paths, { threads, backend });
  const prompt = promptIds(args, model);
  const params = buildGenerateParams(GENERATION_DEFAULTS, settings, {
    ...overrides,
    corpus: corpusIds(args, model),
  });
  const nCtx = sessionContextSize(model.info().nCtxTrain, requestedCtx);
  if (prompt.length + params.maxTokens > nCtx) {
    throw new CliError(
      `prompt (${prompt.length} tokens) plus --max-tokens ${params.maxTokens} exceeds the context of ${nCtx} tokens`,
    );
  }
  const session = addon.createSession(model, { nCtx, threads, draft });
  const logitsOut = stringOption(args, 'logits-out');
  if (logitsOut) {
    const logits = await session.lastLogits(prompt);
    writeFileSync(logitsOut, Buffer.from(logits.buffer, logits.byteOffset, logits.byteLength));
  }
  const json = args.json === true;
  const tokens: number[] = [];
  let text = '';
  const handle = session.generate(prompt, params, (id, piece) => {
    if (id >= 0) tokens.push(id);
    text += piece;
    if (!json) process.stdout.write(piece);
  });
  const onSigint = () => handle.abort();
  process.once('SIGINT', onSigint);
  const stats = await handle.done;
  process.off('SIGINT', onSigint);
  session.free();
  draft?.free();
  model.free();
  if (!json) {
    process.stdout.write('\n');
    return;
  }
  const decodeSeconds = stats.decodeMs / 1000;
  process.stdout.write(
    JSON.stringify({
      text,
      tokens,
      prompt_tokens: prompt,
      stats: {
        prompt_ms: stats.promptMs,
        decode_ms: stats.decodeMs,
        generated: stats.generated,
        target_passes: stats.targetPasses,
        drafted: stats.drafted,
        accepted: stats.accepted,
        accepted_per_pass: stats.targetPasses ? stats.generated / stats.targetPasses : 0,
        draft_ms: stats.draftMs,
        verify_ms: stats.verifyMs,
        max_pass_tokens: stats.maxPassTokens,
        reused_tokens: stats.reusedTokens,
        tokens_per_second: decodeSeconds > 0 ? stats.generated / decodeSeconds : 0,
      },
    }) + '\n',
  );
}
