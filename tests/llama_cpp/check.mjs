// Writes small GGUF files with real llama / qwen3 tensor layouts and pseudo-random weights, loads each on CPU
// with the real llama.cpp (node-llama-cpp's prebuilt build, debug log) at the given contexts with flash attention
// on and off, and prints one JSON line per load with the buffer sizes llama.cpp logged (bytes) and the
// parameters it resolved (n_ctx, n_ubatch, flash_attn), and writes llama.cpp's whole log of each load to
// OUT_DIR/<model>-c<ctx>-fa-<on|off>.log. tests/estimate/test_llama_cpp.cpp compares the sizes with
// preflight's prediction and reads the logs back with `preflight logs`.
//
// usage: node check.mjs OUT_DIR [CTX,CTX...] [SEQUENCES] [FLASH: off,on]
// node-llama-cpp's contextSize is per sequence: llama.cpp's n_ctx is CTX x SEQUENCES (its log prints n_ctx and
// n_ctx_seq), as llama-server's -c with -np SEQUENCES.
import fs from "node:fs";
import path from "node:path";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
import {testModels, ensureGguf} from "./gguf_writer.mjs";

const outDir = process.argv[2];
const contexts = (process.argv[3] ?? "1024,4096").split(",").map(Number);
const sequences = Number(process.argv[4] ?? "1");
const flashModes = (process.argv[5] ?? "off,on").split(",").map((x) => x === "on");
fs.mkdirSync(outDir, {recursive: true});
const models = testModels;

let log = [];
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.debug, logger: (level, message) => { log.push(message); }});
const mib = (s) => Math.round(Number(s) * 1024 * 1024);
for (const m of models) {
    const file = ensureGguf(outDir, m);
    for (const ctx of contexts) {
        for (const fa of flashModes) {
            log = [];
            const loaded = await llama.loadModel({modelPath: file, gpuLayers: 0, useMmap: true});
            const context = await loaded.createContext({contextSize: ctx, batchSize: 512, flashAttention: fa, sequences});
            await new Promise((resolve) => setTimeout(resolve, 300));  // the native log reaches the JS logger asynchronously
            const text = log.join("\n");
            const logFile = path.join(outDir, `${m.name}-c${ctx}-s${sequences}-fa-${fa ? "on" : "off"}.log`);
            fs.writeFileSync(logFile, text + "\n");
            const grab = (re) => { const x = text.match(re); return x ? x[1] : null; };
            const all = (re) => [...text.matchAll(re)].map((x) => mib(x[1])).reduce((a, b) => a + b, 0);
            console.log(JSON.stringify({
                file, log: logFile, model: m.name, n_ctx: Number(grab(/n_ctx\s*=\s*(\d+)/)), n_batch: Number(grab(/n_batch\s*=\s*(\d+)/)),
                n_ubatch: Number(grab(/n_ubatch\s*=\s*(\d+)/)), flash_attn: grab(/flash_attn\s*=\s*(\S+)/), n_seq_max: Number(grab(/n_seq_max\s*=\s*(\d+)/)),
                model_buffer_bytes: all(/model buffer size\s*=\s*([\d.]+) MiB/g), kv_buffer_bytes: all(/KV buffer size\s*=\s*([\d.]+) MiB/g),
                compute_buffer_bytes: all(/compute buffer size\s*=\s*([\d.]+) MiB/g), output_buffer_bytes: all(/output buffer size\s*=\s*([\d.]+) MiB/g),
                lines: text.split("\n").filter((l) => /buffer size|n_ctx|kv_cache|flash/.test(l)),
            }));
            await context.dispose();
            await loaded.dispose();
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
    }
}
await llama.dispose();
