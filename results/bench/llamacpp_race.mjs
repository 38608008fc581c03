// Measures llama.cpp's sampling throughput on a GGUF file through
// node-llama-cpp's CPU build (loaded offline), for llamacpp_race.sh: the W1
// and W2 workloads of the engine benchmarks (policy's BenchmarkW1 and
// BenchmarkW2): BATCH sequences, each a 16-token prompt of random tokens
// 4..63 run through the model and then NEW tokens sampled at temperature 1
// from the whole distribution (no top-k, top-p or min-p), the sequences of
// a batch decoded together (one llama.cpp batch per step: node-llama-cpp
// batches the pending evaluations of a context's sequences). Each
// iteration times prefill and decoding and counts the sampled tokens, as
// the Go benchmarks do; one warm-up iteration is not counted. Usage:
//   node llamacpp_race.mjs NODE_LLAMA_CPP_DIR MODEL.gguf BATCH NEW THREADS ITERATIONS
// NODE_LLAMA_CPP_DIR holds node_modules/node-llama-cpp. The context keeps
// node-llama-cpp's defaults otherwise (flash attention "auto", a float16
// KV cache: its fastest settings). Prints one JSON line:
// {"batch", "new", "threads", "tok_s": [one figure per iteration]}.
import path from "node:path";
import {pathToFileURL} from "node:url";

const [dir, modelPath, batchArg, newArg, threadsArg, itersArg] = process.argv.slice(2);
if (!itersArg) {
    console.error("usage: node llamacpp_race.mjs NODE_LLAMA_CPP_DIR MODEL.gguf BATCH NEW THREADS ITERATIONS");
    process.exit(2);
}
const [batch, newTokens, threads, iterations] = [batchArg, newArg, threadsArg, itersArg].map(Number);
const promptLen = 16;

const entry = path.join(dir, "node_modules", "node-llama-cpp", "dist", "index.js");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(entry).href);
// maxThreads 0: the context's threads option is the number of threads used.
const llama = await getLlama({gpu: false, build: "never", maxThreads: 0, logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({
    contextSize: promptLen + newTokens, sequences: batch, threads,
    batchSize: Math.max(512, batch * promptLen),
});
const sequences = Array.from({length: batch}, () => context.getSequence());

// A fixed pseudo-random prompt per sequence (xorshift32).
let x = 2463534242;
const rand = () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x;
};
const prompts = sequences.map(() => Array.from({length: promptLen}, () => 4 + (rand() % 60)));

// run samples newTokens tokens after every prompt, all sequences at once.
async function run(iteration) {
    await Promise.all(sequences.map((s) => s.clearHistory()));
    await Promise.all(sequences.map(async (s, i) => {
        let n = 0;
        const options = {temperature: 1, topK: 0, topP: 1, minP: 0, seed: 1 + iteration * batch + i, yieldEogToken: true};
        for await (const _ of s.evaluate(prompts[i], options)) {
            if (++n === newTokens) break;
        }
    }));
}

await run(0);
const rates = [];
for (let it = 1; it <= iterations; it++) {
    const t0 = process.hrtime.bigint();
    await run(it);
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    rates.push(batch * newTokens / s);
}
console.log(JSON.stringify({batch, new: newTokens, threads, tok_s: rates.map((r) => Math.round(r))}));
await context.dispose();
await model.dispose();
await llama.dispose();
