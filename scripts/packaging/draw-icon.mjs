// Draws media/icon.png, the 128×128 Marketplace icon, from a few shapes (no image tools
// needed: the PNG is written with Node's zlib). A frog mid-leap, as media/leapfrog.svg, in
// white on a green rounded square; the dotted arc behind it is the leap.
//   node scripts/packaging/draw-icon.mjs [--out media/icon.png]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const outAt = process.argv.indexOf('--out');
const out = outAt >= 0 ? process.argv[outAt + 1] : join(root, 'media', 'icon.png');

const SIZE = 128;
const SUPER = 4; // samples per pixel side: smooth edges without a rasterizer
const GREEN = [46, 158, 91];
const WHITE = [255, 255, 255];
const DARK = [22, 78, 45];

const inRoundedSquare = (x, y) => {
  const r = 24;
  const cx = Math.min(Math.max(x, r), SIZE - r);
  const cy = Math.min(Math.max(y, r), SIZE - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
};
const inEllipse = (x, y, cx, cy, rx, ry, angle) => {
  const c = Math.cos(angle);
  const s = Math.sin(angle);
  const dx = x - cx;
  const dy = y - cy;
  const u = (dx * c + dy * s) / rx;
  const v = (-dx * s + dy * c) / ry;
  return u * u + v * v <= 1;
};
const inCircle = (x, y, cx, cy, r) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
// The leap: dots along an arc from the lower left up to the frog.
const leapDots = Array.from({ length: 4 }, (_, i) => {
  const t = Math.PI * (0.95 - i * 0.13);
  return [64 + 46 * Math.cos(t), 100 - 46 * Math.sin(t), 3 + i * 0.6];
});

/** The colour at one sample point, painted back to front. */
function colour(x, y) {
  if (!inRoundedSquare(x, y)) return null;
  let c = GREEN;
  if (leapDots.some(([cx, cy, r]) => inCircle(x, y, cx, cy, r))) c = WHITE;
  const body = inEllipse(x, y, 72, 66, 30, 19, -0.45);
  const head = inCircle(x, y, 92, 48, 14);
  const backLeg = inEllipse(x, y, 50, 86, 22, 6, 0.75);
  const frontLeg = inEllipse(x, y, 86, 90, 16, 5, -1.1);
  if (body || head || backLeg || frontLeg) c = WHITE;
  if (inCircle(x, y, 95, 44, 4.5)) c = DARK; // the eye
  return c;
}

const raw = Buffer.alloc(SIZE * (SIZE * 4 + 1));
for (let py = 0; py < SIZE; py++) {
  raw[py * (SIZE * 4 + 1)] = 0; // filter: none
  for (let px = 0; px < SIZE; px++) {
    const sum = [0, 0, 0, 0];
    for (let sy = 0; sy < SUPER; sy++)
      for (let sx = 0; sx < SUPER; sx++) {
        const c = colour(px + (sx + 0.5) / SUPER, py + (sy + 0.5) / SUPER);
        if (!c) continue;
        sum[0] += c[0];
        sum[1] += c[1];
        sum[2] += c[2];
        sum[3] += 255;
      }
    const n = SUPER * SUPER;
    const covered = sum[3] / 255;
    const at = py * (SIZE * 4 + 1) + 1 + px * 4;
    // Colour averaged over the covered samples (straight alpha), coverage as alpha.
    for (let k = 0; k < 3; k++) raw[at + k] = covered ? Math.round(sum[k] / covered) : 0;
    raw[at + 3] = Math.round(sum[3] / n);
  }
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(SIZE, 0);
ihdr.writeUInt32BE(SIZE, 4);
ihdr[8] = 8; // bit depth
ihdr[9] = 6; // RGBA
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', ihdr),
  chunk('IDAT', deflateSync(raw, { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
]);
writeFileSync(out, png);
console.log(`wrote ${out} (${SIZE}×${SIZE}, ${png.length} bytes)`);
