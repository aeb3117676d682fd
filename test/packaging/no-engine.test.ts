// Where no engine build exists: the extension's check before it starts the sidecar
// (extension/engine-availability.ts), and the real sidecar with its addon lookup pointed at a
// missing file and at a file that is no addon (LEAPFROG_ADDON): it stays up, its status says
// what is missing and why, and with --endpoint it serves from a team's server without ever
// loading the addon.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEngineFailure, missingEngine } from '../../extension/engine-availability';
import { FakeServer } from '../support/endpoint-servers';
import { skipBecause } from '../support/paths';
import {
  completeIn,
  delay,
  root,
  startSidecar,
  status,
  testEnv,
  type Sidecar,
} from '../protocol/sidecar';
import type { StatusResult } from '../../engine/protocol';

const target = `${process.platform}-${process.arch}`;

describe('packaging: where no engine build exists', function () {
  this.timeout(120_000);
  let dir: string;
  const savedAddon = process.env.LEAPFROG_ADDON;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'leapfrog-no-engine-'));
    delete process.env.LEAPFROG_ADDON;
  });
  after(() => {
    if (savedAddon !== undefined) process.env.LEAPFROG_ADDON = savedAddon;
    rmSync(dir, { recursive: true, force: true });
  });

  describe('the extension, before it starts the sidecar', () => {
    it('says macOS has no engine build, for which targets there are, and offers the endpoint', () => {
      const why = missingEngine(dir, 'darwin', 'arm64');
      assert.ok(why);
      assert.match(why, /^no engine build for macOS arm64 \(darwin-arm64\)/);
      assert.match(why, /built for linux-x64 and linux-arm64 only/);
      assert.match(why, /leapfrog\.endpoint/);
    });

    it("finds a platform package's addon, and says when its file is missing", () => {
      const ext = join(dir, 'ext');
      const why = missingEngine(ext, 'linux', 'arm64');
      assert.match(why ?? '', /linux-arm64.*missing from this installation/);
      mkdirSync(join(ext, 'dist', 'native', 'linux-arm64'), { recursive: true });
      writeFileSync(join(ext, 'dist', 'native', 'linux-arm64', 'leapfrog_native.node'), '');
      assert.equal(missingEngine(ext, 'linux', 'arm64'), undefined);
      // Another platform's addon does not count.
      assert.ok(missingEngine(ext, 'linux', 'x64'));
    });
  });

  describe('the sidecar (LEAPFROG_ADDON)', () => {
    let sidecar: Sidecar | undefined;
    let server: FakeServer | undefined;

    before(function () {
      if (!existsSync(join(root, 'dist', 'cli.js')))
        skipBecause(this, 'dist/cli.js missing (run `node scripts/bundle.mjs`)');
    });
    afterEach(async () => {
      await sidecar?.stop();
      sidecar = undefined;
      await server?.close();
      server = undefined;
      delete (testEnv as Record<string, string | undefined>).LEAPFROG_ADDON;
    });

    /** The sidecar with its addon lookup pointed at `addon` (startSidecar spawns with testEnv). */
    async function startWith(addon: string, args: string[]): Promise<Sidecar> {
      (testEnv as Record<string, string | undefined>).LEAPFROG_ADDON = addon;
      sidecar = await startSidecar(args);
      return sidecar;
    }

    async function settled(s: Sidecar): Promise<StatusResult> {
      for (let i = 0; i < 200; i++) {
        const st = await status(s);
        if (st.state !== 'loading') return st;
        await delay(50);
      }
      throw new Error('still loading after 10 s');
    }

    it('a missing addon: status says so and why, and the sidecar keeps answering', async () => {
      const missing = join(dir, 'nowhere', 'leapfrog_native.node');
      const s = await startWith(missing, []);
      const st = await settled(s);
      assert.equal(st.state, 'error');
      assert.match(
        st.message ?? '',
        new RegExp(`^native addon not found: no engine build for ${target}`),
      );
      assert.ok(st.message?.includes(missing), 'the message names where it looked');
      assert.ok(isEngineFailure(st.message), 'the extension recognises it');
      // A completion is a clear error answer, not a crash; the process stays up.
      await assert.rejects(
        completeIn(s, 'file:///work/a.py', 'def f():\n    ', { line: 1, character: 4 }),
        /no model loaded: native addon not found/,
      );
      assert.equal(s.child.exitCode, null);
    });

    it("an addon that does not load: status carries dlopen's reason", async () => {
      const junk = join(dir, 'junk.node');
      writeFileSync(junk, 'not an ELF file\n');
      const s = await startWith(junk, []);
      const st = await settled(s);
      assert.equal(st.state, 'error');
      assert.match(
        st.message ?? '',
        new RegExp(`^native addon failed to load on ${target}: .*(ELF|header|short)`, 'i'),
      );
      assert.ok(isEngineFailure(st.message));
      assert.equal(s.child.exitCode, null);
    });

    it('with --endpoint and no addon, it serves from the team server', async () => {
      server = await FakeServer.start('llama.cpp');
      // The typed indentation moves into the expected output (as for the local model).
      server.completion = () => '    return 42\n';
      const s = await startWith(join(dir, 'nowhere', 'leapfrog_native.node'), [
        '--endpoint',
        server.url,
      ]);
      let st = await status(s);
      for (let i = 0; i < 200 && st.endpoint?.state !== 'ok'; i++) {
        await delay(50);
        st = await status(s);
      }
      assert.equal(st.state, 'ready', JSON.stringify(st));
      assert.equal(st.backend, 'remote');
      const text = await completeIn(s, 'file:///work/b.py', 'def f():\n    ', {
        line: 1,
        character: 4,
      });
      assert.equal(text, 'return 42');
      assert.ok(
        server.requests.some((r) => r.path === '/infill'),
        'the server was asked',
      );
      assert.doesNotMatch(s.stderr(), /native addon/, 'the addon was never looked for');
    });
  });
});
