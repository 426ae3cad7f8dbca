// A small GGUF v3 writer for the real-engine tests: real llama.cpp tensor layouts (llama, qwen3) with
// pseudo-random weights, so llama.cpp loads and runs them. Used by check.mjs (buffer sizes) and speed.mjs
// (decode tokens/s).
import fs from "node:fs";

export const GGML_F32 = 0, GGML_F16 = 1, GGML_Q8_0 = 8;
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

export function writeGguf(file, arch, kv, tensors, vocab) {
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

// moe: {experts, used, ffExp} gives qwen3moe's routed experts (ffn_gate_inp + 3-D ffn_*_exps) instead of
// a dense FFN; swa: window gives gemma3's sliding window (llama.cpp: 5 of every 6 layers slide) and its
// extra norms (post_attention_norm, post_ffw_norm).
export function model(name, arch, {layers, embd, heads, headsKv, headDim, ff, vocab, type, qkNorm, tied, moe, swa}) {
    const kv = {
        [`${arch}.block_count`]: [T_U32, layers], [`${arch}.context_length`]: [T_U32, 8192],
        [`${arch}.embedding_length`]: [T_U32, embd], [`${arch}.feed_forward_length`]: [T_U32, ff],
        [`${arch}.attention.head_count`]: [T_U32, heads], [`${arch}.attention.head_count_kv`]: [T_U32, headsKv],
        [`${arch}.attention.layer_norm_rms_epsilon`]: [T_F32, 1e-6], [`${arch}.rope.freq_base`]: [T_F32, 10000],
        [`${arch}.attention.key_length`]: [T_U32, headDim], [`${arch}.attention.value_length`]: [T_U32, headDim],
        "general.name": [T_STRING, name],
    };
    if (moe) {
        kv[`${arch}.expert_count`] = [T_U32, moe.experts];
        kv[`${arch}.expert_used_count`] = [T_U32, moe.used];
        kv[`${arch}.expert_feed_forward_length`] = [T_U32, moe.ffExp];
    }
    if (swa) kv[`${arch}.attention.sliding_window`] = [T_U32, swa];
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
        if (swa) t.push({name: p + "post_attention_norm.weight", dims: [embd], type: GGML_F32});
        t.push({name: p + "ffn_norm.weight", dims: [embd], type: GGML_F32});
        if (moe) {
            t.push({name: p + "ffn_gate_inp.weight", dims: [embd, moe.experts], type: GGML_F32});
            t.push({name: p + "ffn_gate_exps.weight", dims: [embd, moe.ffExp, moe.experts], type});
            t.push({name: p + "ffn_up_exps.weight", dims: [embd, moe.ffExp, moe.experts], type});
            t.push({name: p + "ffn_down_exps.weight", dims: [moe.ffExp, embd, moe.experts], type});
        } else {
            t.push({name: p + "ffn_gate.weight", dims: [embd, ff], type});
            t.push({name: p + "ffn_up.weight", dims: [embd, ff], type});
            t.push({name: p + "ffn_down.weight", dims: [ff, embd], type});
        }
        if (swa) t.push({name: p + "post_ffw_norm.weight", dims: [embd], type: GGML_F32});
    }
    t.push({name: "output_norm.weight", dims: [embd], type: GGML_F32});
    if (!tied) t.push({name: "output.weight", dims: [embd, vocab], type});
    return {name, arch, kv, tensors: t, vocab};
}

// The models the tests load: a llama (F16, untied output) and a qwen3 (Q8_0, q/k norms, tied embeddings).
export const testModels = [
    model("tiny-llama-f16", "llama", {layers: 6, embd: 512, heads: 8, headsKv: 4, headDim: 64, ff: 1408, vocab: 32000, type: GGML_F16}),
    model("tiny-qwen3-q8_0", "qwen3", {layers: 8, embd: 512, heads: 8, headsKv: 2, headDim: 128, ff: 1536, vocab: 48000, type: GGML_Q8_0, qkNorm: true, tied: true}),
    model("tiny-qwen3moe-q8_0", "qwen3moe", {layers: 4, embd: 512, heads: 8, headsKv: 2, headDim: 64, ff: 0, vocab: 32000, type: GGML_Q8_0, qkNorm: true,
        moe: {experts: 16, used: 4, ffExp: 256}}),
    model("tiny-gemma3-f16", "gemma3", {layers: 12, embd: 512, heads: 4, headsKv: 1, headDim: 128, ff: 1536, vocab: 32000, type: GGML_F16, qkNorm: true, tied: true,
        swa: 256}),
];

// Writes the model's file under dir unless it is there already; returns its path.
export function ensureGguf(dir, m) {
    const file = dir + "/" + m.name + ".gguf";
    if (!fs.existsSync(file)) writeGguf(file, m.arch, m.kv, m.tensors, m.vocab);
    return file;
}

// Decode-speed models: weights per token (139 MB F16, 120 MB Q8_0) well above what stays cached between
// tokens on the test host, so decode streams them from memory as it does for real models.
export const speedModels = [
    model("speed-llama-f16", "llama", {layers: 18, embd: 512, heads: 8, headsKv: 4, headDim: 64, ff: 1408, vocab: 32000, type: GGML_F16}),
    model("speed-qwen3-q8_0", "qwen3", {layers: 24, embd: 512, heads: 8, headsKv: 2, headDim: 128, ff: 1536, vocab: 48000, type: GGML_Q8_0, qkNorm: true, tied: true}),
];
