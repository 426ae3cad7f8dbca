// Decode speed of the real llama.cpp (node-llama-cpp's prebuilt CPU build) on the speed models of
// gguf_writer.mjs: loads each on CPU (mmap, flash attention on, n_ctx 1024, THREADS threads), evaluates a
// 4-token prompt, then times TOKENS greedy decode steps after the first generated token. Prints one JSON
// line per model: {file, model, threads, tokens, tokens_per_s, ms_per_token}. tests/estimate/test_llama_cpp.cpp
// compares them with `preflight fit --engine llama.cpp --device cpu --threads THREADS`.
//
// usage: node speed.mjs OUT_DIR [THREADS] [TOKENS]
import fs from "node:fs";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
import {speedModels, ensureGguf} from "./gguf_writer.mjs";

const outDir = process.argv[2];
const threads = Number(process.argv[3] ?? 1);
const tokens = Number(process.argv[4] ?? 32);
fs.mkdirSync(outDir, {recursive: true});

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
for (const m of speedModels) {
    const file = ensureGguf(outDir, m);
    const model = await llama.loadModel({modelPath: file, gpuLayers: 0, useMmap: true});
    const context = await model.createContext({contextSize: 1024, batchSize: 512, flashAttention: true, sequences: 1, threads});
    const sequence = context.getSequence();
    let count = 0, first = 0, cpuFirst = null;
    for await (const token of sequence.evaluate([1, 300, 301, 302], {temperature: 0})) {
        if (++count === 1) {
            first = performance.now();
            cpuFirst = process.cpuUsage();
        }
        if (count > tokens) break;
    }
    const ms = (performance.now() - first) / tokens;
    const cpu = process.cpuUsage(cpuFirst);
    // CPU time of the whole process (all threads) over the same steps, per llama.cpp thread: the time its
    // threads were on a core (ggml's threads spin between ops, so each burns CPU for the whole step).
    const cpuMs = (cpu.user + cpu.system) / 1000 / threads / tokens;
    console.log(JSON.stringify({file, model: m.name, threads, tokens, tokens_per_s: 1000 / ms, ms_per_token: ms,
                                tokens_per_cpu_s: 1000 / cpuMs, cpu_ms_per_token: cpuMs}));
    await context.dispose();
    await model.dispose();
}
await llama.dispose();
