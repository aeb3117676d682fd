// Greedy continuations of token-id prompts with llama.cpp (node-llama-cpp), for evaluating the
// shipped GGUFs exactly as llama.cpp runs them.  Usage:
//   node models/train/llamacpp_greedy.mjs MODEL.gguf IN.json OUT.json
// IN.json: {"prompts": [[ids...], ...], "max_new": 40, "stop_at_newline": true}
// OUT.json: {"outputs": [[ids...], ...], "seconds": s}
import fs from "node:fs";
import path from "node:path";

const [modelPath, inPath, outPath] = process.argv.slice(2);
const here = path.dirname(new URL(import.meta.url).pathname);
const lib = path.resolve(here, "../../node_modules/node-llama-cpp/dist/index.js");
const {getLlama, LlamaLogLevel} = await import(lib);
const job = JSON.parse(fs.readFileSync(inPath, "utf8"));
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath});
const ctx = await model.createContext({contextSize: 2048, threads: Number(process.env.THREADS || 2)});
const seq = ctx.getSequence();
const t0 = Date.now();
const outputs = [];
for (const p of job.prompts) {
  await seq.clearHistory();
  const out = [];
  for await (const t of seq.evaluate(p, {temperature: 0})) {
    out.push(t);
    if (model.isEogToken(t) || out.length >= job.max_new) break;
    if (job.stop_at_newline && model.detokenize([t]).includes("\n")) break;
  }
  outputs.push(out);
}
fs.writeFileSync(outPath, JSON.stringify({outputs, seconds: (Date.now() - t0) / 1000}));
await ctx.dispose();
await model.dispose();
