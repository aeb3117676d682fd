// Proposes a draft model for each target: a supported model with the same tokenizer
// fingerprint (the engine needs the same vocabulary) and markedly fewer parameters. Among
// those, the largest with at most 1/8 of the target's parameters (the best acceptance at a
// cost that still pays), else the smallest with at most 1/4; equal sizes go to the smaller
// file (the faster draft).
import type { DiscoveredModel, ModelPair } from '../../protocol';

const MOST_DRAFT_SHARE = 1 / 4;
const PREFERRED_DRAFT_SHARE = 1 / 8;

/** Sets `draft` and `draftFor` on the models and returns the pairs, targets in list order. */
export function pairDrafts(models: DiscoveredModel[]): ModelPair[] {
  const pairs: ModelPair[] = [];
  for (const target of models) {
    const draft = bestDraft(target, models);
    if (!draft) continue;
    target.draft = draft.path;
    (draft.draftFor ??= []).push(target.path);
    pairs.push({ target: target.path, draft: draft.path });
  }
  return pairs;
}

function bestDraft(target: DiscoveredModel, models: DiscoveredModel[]): DiscoveredModel | null {
  const size = target.parameters;
  if (!target.supported || !target.fingerprint || !size) return null;
  const fits = models.filter(
    (m) =>
      m !== target &&
      m.supported &&
      m.fingerprint === target.fingerprint &&
      m.parameters !== null &&
      m.parameters > 0 &&
      m.parameters <= size * MOST_DRAFT_SHARE,
  );
  const preferred = fits.filter((m) => m.parameters! <= size * PREFERRED_DRAFT_SHARE);
  const pool = preferred.length > 0 ? preferred : fits;
  // Preferred: largest first; fallback: smallest first. Then fewer bytes, then the name.
  const sign = preferred.length > 0 ? -1 : 1;
  pool.sort(
    (a, b) =>
      sign * (a.parameters! - b.parameters!) || a.bytes - b.bytes || a.name.localeCompare(b.name),
  );
  return pool[0] ?? null;
}
