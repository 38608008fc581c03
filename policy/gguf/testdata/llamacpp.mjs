// Runs a GGUF file through llama.cpp (node-llama-cpp's CPU build, loaded
// offline) for the gguf package's test: for each case it tokenizes the text,
// detokenizes the tokens, takes the next-token probabilities at every
// position of the case's sequence and the greedy continuation of its
// prompt. Usage:
//   node llamacpp.mjs NODE_LLAMA_CPP_DIR MODEL.gguf CASES.json [exact|defaults]
// NODE_LLAMA_CPP_DIR holds node_modules/node-llama-cpp. exact (the default)
// turns flash attention off and keeps the KV cache in float32; defaults
// keeps node-llama-cpp's settings (a float16 KV cache). CASES.json is
// [{text, sequence, prompt, max_new}]; the answer, on stdout, is
// [{tokens, text, probs, greedy}] (probs: one row of vocabulary size per
// position of sequence; greedy: the tokens after prompt, at most max_new,
// ending with the first end-of-generation token if one comes).
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

const [dir, modelPath, casesPath, settings = "exact"] = process.argv.slice(2);
if (!casesPath || !["exact", "defaults"].includes(settings)) {
    console.error("usage: node llamacpp.mjs NODE_LLAMA_CPP_DIR MODEL.gguf CASES.json [exact|defaults]");
    process.exit(2);
}
const entry = path.join(dir, "node_modules", "node-llama-cpp", "dist", "index.js");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(entry).href);
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath});
const cases = JSON.parse(fs.readFileSync(casesPath, "utf8"));
const longest = Math.max(...cases.map((c) => Math.max(c.sequence.length, c.prompt.length + c.max_new)));
// One thread (llama.cpp's fastest setting for models this small on a
// shared machine); exact: no flash attention and a float32 KV cache, so
// that float32 files compute in float32 throughout.
const exact = settings === "exact" ? {
    flashAttention: false, experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
} : {};
const context = await model.createContext({contextSize: longest, sequences: 1, threads: 1, ...exact});
const sequence = context.getSequence();
const out = [];
for (const c of cases) {
    const tokens = Array.from(model.tokenize(c.text));
    const text = model.detokenize(tokens);
    await sequence.clearHistory();
    const results = await sequence.controlledEvaluate(c.sequence.map((t) =>
        [t, {generateNext: {probabilities: true, options: {temperature: 0}}}]));
    const probs = results.map((r) => {
        const row = new Array(c.vocab).fill(0);
        for (const [t, p] of r.next.probabilities) row[t] = p;
        return row;
    });
    // Greedy decoding one token at a time with llama.cpp's sampler at
    // temperature 0, keeping the end-of-generation token that ends it.
    await sequence.clearHistory();
    const greedy = [];
    let input = c.prompt;
    while (greedy.length < c.max_new) {
        const last = input.length - 1;
        const res = await sequence.controlledEvaluate(input.map((t, i) =>
            i < last ? t : [t, {generateNext: {token: true, options: {temperature: 0}}}]));
        const t = res[last].next.token;
        greedy.push(t);
        if (model.isEogToken(t)) break;
        input = [t];
    }
    out.push({tokens, text, probs, greedy});
}
process.stdout.write(JSON.stringify(out));
await context.dispose();
await model.dispose();
await llama.dispose();
