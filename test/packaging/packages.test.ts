// Each platform .vsix that scripts/package.mjs makes, checked as the Marketplace and a user's
// VS Code would see it: the manifest's target, the addon's architecture (ELF e_machine), the
// bundled models byte-for-byte the repository's size, the icon and README images present,
// and nothing outside the allowed list.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, skipBecause } from '../support/paths';
import { TARGETS, cannotPackage, packageFor } from './packages';
import { elfMachine, readVsix, type VsixEntry } from './vsix';

const MODELS = ['models/leapfrog-coder.gguf', 'models/leapfrog-coder-draft.gguf'];

/** Every file a package may hold (vsce's own files, then the extension's). */
function allowed(target: string): RegExp[] {
  return [
    /^\[Content_Types\]\.xml$/,
    /^extension\.vsixmanifest$/,
    /^extension\/(package\.json|readme\.md|changelog\.md|LICENSE\.txt)$/,
    /^extension\/dist\/(extension|cli)\.js$/,
    new RegExp(`^extension/dist/native/${target}/leapfrog_native\\.node$`),
    /^extension\/models\/(leapfrog-coder\.gguf|leapfrog-coder-draft\.gguf|MODEL_CARD\.md)$/,
    /^extension\/media\/(leapfrog\.svg|icon\.png|chat[\w-]*\.(js|css))$/,
    /^extension\/media\/screenshots\/[\w-]+\.png$/,
    /^extension\/syntaxes\/leapfrog-log\.tmLanguage\.json$/,
  ];
}

/** Local images the README shows (Markdown and <img>), as paths relative to the repository. */
function readmeImages(): string[] {
  const md = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const found = [
    ...[...md.matchAll(/!\[[^\]]*\]\(([^)\s]+)/g)].map((m) => m[1]),
    ...[...md.matchAll(/<img[^>]+src="([^"]+)"/g)].map((m) => m[1]),
  ];
  return found.filter((p) => !/^https?:/.test(p)).map((p) => p.replace(/^\.\//, ''));
}

for (const target of TARGETS) {
  describe(`packaging: ${target.name} .vsix`, function () {
    this.timeout(600_000);
    let entries: Map<string, VsixEntry>;
    let vsix: string;

    before(function () {
      const why = cannotPackage(target);
      if (why) skipBecause(this, `${target.name} package: ${why}`);
      vsix = packageFor(target);
      entries = readVsix(vsix);
      console.log(
        `      ${target.name}: ${(statSync(vsix).size / 2 ** 20).toFixed(1)} MiB, ${entries.size} files`,
      );
    });

    it('declares its target platform in the manifest', () => {
      const manifest = entries.get('extension.vsixmanifest')?.read().toString('utf8') ?? '';
      assert.match(manifest, new RegExp(`TargetPlatform="${target.name}"`));
    });

    it(`holds its own addon only, built for e_machine ${target.elfMachine}`, () => {
      const addons = [...entries.keys()].filter((n) => n.endsWith('.node'));
      const own = `extension/dist/native/${target.name}/leapfrog_native.node`;
      assert.deepEqual(addons, [own]);
      assert.equal(elfMachine(entries.get(own)!.read()), target.elfMachine);
    });

    it('carries the bundled models at their full size', () => {
      for (const m of MODELS) {
        const entry = entries.get(`extension/${m}`);
        assert.ok(entry, `${m} is missing from the package`);
        assert.equal(entry.size, statSync(join(repoRoot, m)).size, m);
      }
    });

    it('holds nothing outside the allowed list', () => {
      const patterns = allowed(target.name);
      const extra = [...entries.keys()].filter(
        (n) => !n.endsWith('/') && !patterns.some((p) => p.test(n)),
      );
      assert.deepEqual(extra, []);
    });

    it('has a 128×128 PNG icon, the LICENSE and CHANGELOG, and the README images', () => {
      const pkg = JSON.parse(entries.get('extension/package.json')!.read().toString('utf8')) as {
        icon?: string;
      };
      assert.ok(pkg.icon, 'package.json has no icon');
      const icon = entries.get(`extension/${pkg.icon}`)?.read();
      assert.ok(icon, `${pkg.icon} is missing from the package`);
      assert.equal(icon.toString('latin1', 1, 4), 'PNG');
      assert.deepEqual([icon.readUInt32BE(16), icon.readUInt32BE(20)], [128, 128]);
      assert.ok(entries.has('extension/LICENSE.txt'), 'no LICENSE');
      assert.ok(entries.has('extension/changelog.md'), 'no CHANGELOG');
      const images = readmeImages();
      assert.ok(images.length > 0, 'the README shows no images (the check would be empty)');
      for (const img of images)
        assert.ok(entries.has(`extension/${img}`), `README image ${img} is not in the package`);
    });
  });
}
