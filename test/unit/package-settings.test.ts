// package.json's `leapfrog.*` engine settings describe the same configuration as
// engine/protocol.ts: every enum, default and bound agrees with the one table, so the
// Settings UI cannot offer what the engine refuses (a budget of 64) or hide what it takes.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BACKENDS,
  GENERATION_DEFAULTS,
  MAX_DRAFT_BUDGET,
  MIN_DRAFT_BUDGET,
  SPECULATION_MODES,
} from '../../engine/protocol';

interface SettingSchema {
  type: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, SettingSchema> } };
};
const settings = manifest.contributes.configuration.properties;

/** What each engine setting must say, from engine/protocol.ts. */
const expected: Record<string, SettingSchema> = {
  'leapfrog.speculation.mode': {
    type: 'string',
    default: GENERATION_DEFAULTS.speculation.mode,
    enum: [...SPECULATION_MODES],
  },
  'leapfrog.speculation.budget': {
    type: 'integer',
    default: GENERATION_DEFAULTS.speculation.budget,
    minimum: MIN_DRAFT_BUDGET,
    maximum: MAX_DRAFT_BUDGET,
  },
  'leapfrog.backend': { type: 'string', default: GENERATION_DEFAULTS.backend, enum: [...BACKENDS] },
  'leapfrog.threads': { type: 'integer', default: GENERATION_DEFAULTS.threads, minimum: 0 },
};

describe('package.json settings agree with engine/protocol.ts', () => {
  for (const [key, want] of Object.entries(expected)) {
    it(key, () => {
      const got = settings[key];
      assert.ok(got, `${key} is missing from package.json`);
      for (const field of ['type', 'default', 'enum', 'minimum', 'maximum'] as const) {
        assert.deepEqual(got[field], want[field], `${key}: ${field}`);
      }
    });
  }

  it('covers every leapfrog.speculation.* setting', () => {
    const inManifest = Object.keys(settings).filter((k) => k.startsWith('leapfrog.speculation.'));
    assert.deepEqual(
      inManifest.sort(),
      Object.keys(expected)
        .filter((k) => k.startsWith('leapfrog.speculation.'))
        .sort(),
    );
  });
});
