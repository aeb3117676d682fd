// `leapfrog generate`: continue a prompt with the native engine, optionally speculating.
import { readFileSync, writeFileSync } from 'node:fs';
import { loadAddon } from '../native/load-addon';
import type { GenerateParams, NativeModel, SpecMode } from '../native/addon';
import {
  CliError,
  ParsedArgs,
  UsageError,
  choiceOption,
  floatOption,
  intOption,
  parseArgs,
  stringOption,
} from './args';
import {
  checkBackend,
  draftPathFrom,
  loadModel,
  modelOptionSpec,
  modelPathFrom,
  threadsFrom,
} from './model-options';

const spec = {
  ...modelOptionSpec,
  draft: { kind: 'string' as const },
  spec: { kind: 'string' as const },
  budget: { kind: 'string' as const },
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
  json: { kind: 'flag' as const },
  // For differential tests: exact prompt ids, and the last prompt position's logits.
  'prompt-tokens': { kind: 'string' as const, hidden: true },
  'fixed-budget': { kind: 'flag' as const, hidden: true },
  tree: { kind: 'flag' as const },
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

function generateParams(args: ParsedArgs): GenerateParams {
  return {
    maxTokens: intOption(args, 'max-tokens', 128, 0),
    temperature: floatOption(args, 'temperature', 0),
    topK: intOption(args, 'top-k', 40, 0),
    topP: floatOption(args, 'top-p', 0.95),
    minP: floatOption(args, 'min-p', 0.05),
    repeatPenalty: floatOption(args, 'repeat-penalty', 1),
    repeatLastN: 64,
    seed: intOption(args, 'seed', 0, 0),
    stopAtEog: true,
    spec: choiceOption<SpecMode>(args, 'spec', ['auto', 'off', 'ngram', 'draft'], 'auto'),
    budget: intOption(args, 'budget', 16, 0),
    adaptiveBudget: args['fixed-budget'] !== true,
    tree: args.tree === true,
  };
}

export async function generateCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv, spec);
  checkBackend(args);
  const params = generateParams(args);
  if (params.budget > 63) throw new UsageError('--budget must be at most 63');
  const addon = loadAddon();
  const threads = threadsFrom(args, addon);
  const modelPath = modelPathFrom(args);
  const draftPath =
    params.spec === 'off' || params.spec === 'ngram'
      ? undefined
      : await draftPathFrom(args, modelPath);
  if (params.spec === 'draft' && !draftPath) {
    throw new UsageError('--spec draft needs --draft (a smaller model with the same vocabulary)');
  }
  const model = await loadModel(modelPath, threads);
  const draft = draftPath ? await loadModel(draftPath, threads) : undefined;
  const prompt = promptIds(args, model);
  const info = model.info();
  const nCtx = intOption(args, 'ctx', Math.min(info.nCtxTrain, 4096), 16);
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
        reused_tokens: stats.reusedTokens,
        tokens_per_second: decodeSeconds > 0 ? stats.generated / decodeSeconds : 0,
      },
    }) + '\n',
  );
}
