// Writes small GGUF files with real llama / qwen3 tensor layouts and pseudo-random weights, loads each on CPU
// with the real llama.cpp (node-llama-cpp's prebuilt build, debug log) at the given contexts with flash attention
// on and off, and prints one JSON line per load with the buffer sizes llama.cpp logged (bytes) and the
// parameters it resolved (n_ctx, n_ubatch, flash_attn). tests/estimate/test_llama_cpp.cpp compares them
// with preflight's prediction.
//
// usage: node check.mjs OUT_DIR [CTX,CTX...]
import fs from "node:fs";
import path from "node:path";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const GGML_F32 = 0, GGML_F16 = 1, GGML_Q8_0 = 8;
const ALIGN = 32;

// GGUF v3: magic, version, tensor count, kv count, kvs, tensor infos, padding, tensor data.
class Writer {
    constructor() { this.parts = []; this.size = 0; }
    push(buf) { this.parts.push(buf); this.size += buf.length; }
    u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
    i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.push(b); }
    u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
    f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
    str(s) { const b = Buffer.from(s, "utf8"); this.u64(b.length); this.push(b); }
}
const T_U32 = 4, T_I32 = 5, T_F32 = 6, T_STRING = 8, T_ARRAY = 9;

function tensorBytes(type, dims) {
    const n = dims.reduce((a, b) => a * b, 1);
    if (type === GGML_F32) return n * 4;
    if (type === GGML_F16) return n * 2;
    if (type === GGML_Q8_0) return n / 32 * 34;
    throw new Error("type");
}

function writeGguf(file, arch, kv, tensors, vocab) {
    const w = new Writer();
    w.u32(0x46554747); w.u32(3); w.u64(tensors.length);
    const entries = Object.entries(kv);
    w.u64(entries.length + 5);
    w.str("general.architecture"); w.u32(T_STRING); w.str(arch);
    for (const [k, [type, v]] of entries) {
        w.str(k); w.u32(type);
        if (type === T_U32) w.u32(v); else if (type === T_I32) w.i32(v); else if (type === T_F32) w.f32(v); else w.str(v);
    }
    w.str("tokenizer.ggml.model"); w.u32(T_STRING); w.str("llama");
    w.str("tokenizer.ggml.tokens"); w.u32(T_ARRAY); w.u32(T_STRING); w.u64(vocab);
    for (let i = 0; i < vocab; i++) {
        if (i === 0) w.str("<unk>"); else if (i === 1) w.str("<s>"); else if (i === 2) w.str("</s>");
        else if (i < 3 + 256) w.str("<0x" + (i - 3).toString(16).toUpperCase().padStart(2, "0") + ">");
        else w.str("tok" + i);
    }
    w.str("tokenizer.ggml.scores"); w.u32(T_ARRAY); w.u32(T_F32); w.u64(vocab);
    const scores = Buffer.alloc(vocab * 4); for (let i = 0; i < vocab; i++) scores.writeFloatLE(-i, i * 4); w.push(scores);
    w.str("tokenizer.ggml.token_type"); w.u32(T_ARRAY); w.u32(T_I32); w.u64(vocab);
    const types = Buffer.alloc(vocab * 4);
    for (let i = 0; i < vocab; i++) types.writeInt32LE(i < 3 ? 3 : i < 259 ? 6 : 1, i * 4);
    w.push(types);
    let offset = 0;
    for (const t of tensors) {
        w.str(t.name); w.u32(t.dims.length); for (const d of t.dims) w.u64(d); w.u32(t.type); w.u64(offset);
        t.offset = offset;
        offset += Math.ceil(tensorBytes(t.type, t.dims) / ALIGN) * ALIGN;
    }
    const pad = (ALIGN - (w.size % ALIGN)) % ALIGN; w.push(Buffer.alloc(pad));
    const fd = fs.openSync(file, "w");
    for (const p of w.parts) fs.writeSync(fd, p);
    let seed = 12345;
    for (const t of tensors) {
        const n = tensorBytes(t.type, t.dims);
        const b = Buffer.alloc(Math.ceil(n / ALIGN) * ALIGN);
        if (t.type === GGML_F32) for (let i = 0; i < n / 4; i++) b.writeFloatLE(1.0, i * 4);
        else if (t.type === GGML_F16) for (let i = 0; i < n / 2; i++) { seed = (seed * 1103515245 + 12345) >>> 0; b.writeUInt16LE(0x2000 | (seed >>> 20) & 0x0fff, i * 2); }
        else for (let i = 0; i < n / 34; i++) { b.writeUInt16LE(0x1c00, i * 34); for (let j = 0; j < 32; j++) { seed = (seed * 1103515245 + 12345) >>> 0; b.writeInt8(((seed >>> 24) & 0x7f) - 64, i * 34 + 2 + j); } }
        fs.writeSync(fd, b);
    }
    fs.closeSync(fd);
}

function model(name, arch, {layers, embd, heads, headsKv, headDim, ff, vocab, type, qkNorm, tied}) {
    const kv = {
        [`${arch}.block_count`]: [T_U32, layers], [`${arch}.context_length`]: [T_U32, 8192],
        [`${arch}.embedding_length`]: [T_U32, embd], [`${arch}.feed_forward_length`]: [T_U32, ff],
        [`${arch}.attention.head_count`]: [T_U32, heads], [`${arch}.attention.head_count_kv`]: [T_U32, headsKv],
        [`${arch}.attention.layer_norm_rms_epsilon`]: [T_F32, 1e-6], [`${arch}.rope.freq_base`]: [T_F32, 10000],
        [`${arch}.attention.key_length`]: [T_U32, headDim], [`${arch}.attention.value_length`]: [T_U32, headDim],
        "general.name": [T_STRING, name],
    };
    const t = [{name: "token_embd.weight", dims: [embd, vocab], type}];
    for (let i = 0; i < layers; i++) {
        const p = `blk.${i}.`;
        t.push({name: p + "attn_norm.weight", dims: [embd], type: GGML_F32});
        t.push({name: p + "attn_q.weight", dims: [embd, heads * headDim], type});
        t.push({name: p + "attn_k.weight", dims: [embd, headsKv * headDim], type});
        t.push({name: p + "attn_v.weight", dims: [embd, headsKv * headDim], type});
        t.push({name: p + "attn_output.weight", dims: [heads * headDim, embd], type});
        if (qkNorm) {
            t.push({name: p + "attn_q_norm.weight", dims: [headDim], type: GGML_F32});
            t.push({name: p + "attn_k_norm.weight", dims: [headDim], type: GGML_F32});
        }
        t.push({name: p + "ffn_norm.weight", dims: [embd], type: GGML_F32});
        t.push({name: p + "ffn_gate.weight", dims: [embd, ff], type});
        t.push({name: p + "ffn_up.weight", dims: [embd, ff], type});
        t.push({name: p + "ffn_down.weight", dims: [ff, embd], type});
    }
    t.push({name: "output_norm.weight", dims: [embd], type: GGML_F32});
    if (!tied) t.push({name: "output.weight", dims: [embd, vocab], type});
    return {name, arch, kv, tensors: t, vocab};
}

const outDir = process.argv[2];
const contexts = (process.argv[3] ?? "1024,4096").split(",").map(Number);
fs.mkdirSync(outDir, {recursive: true});
const models = [
    model("tiny-llama-f16", "llama", {layers: 6, embd: 512, heads: 8, headsKv: 4, headDim: 64, ff: 1408, vocab: 32000, type: GGML_F16}),
    model("tiny-qwen3-q8_0", "qwen3", {layers: 8, embd: 512, heads: 8, headsKv: 2, headDim: 128, ff: 1536, vocab: 48000, type: GGML_Q8_0, qkNorm: true, tied: true}),
];

let log = [];
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.debug, logger: (level, message) => { log.push(message); }});
const mib = (s) => Math.round(Number(s) * 1024 * 1024);
for (const m of models) {
    const file = path.join(outDir, m.name + ".gguf");
    if (!fs.existsSync(file)) writeGguf(file, m.arch, m.kv, m.tensors, m.vocab);
    for (const ctx of contexts) {
        for (const fa of [false, true]) {
            log = [];
            const loaded = await llama.loadModel({modelPath: file, gpuLayers: 0, useMmap: true});
            const context = await loaded.createContext({contextSize: ctx, batchSize: 512, flashAttention: fa, sequences: 1});
            await new Promise((resolve) => setTimeout(resolve, 300));  // the native log reaches the JS logger asynchronously
            const text = log.join("\n");
            const grab = (re) => { const x = text.match(re); return x ? x[1] : null; };
            const all = (re) => [...text.matchAll(re)].map((x) => mib(x[1])).reduce((a, b) => a + b, 0);
            console.log(JSON.stringify({
                file, model: m.name, n_ctx: Number(grab(/n_ctx\s*=\s*(\d+)/)), n_batch: Number(grab(/n_batch\s*=\s*(\d+)/)),
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
