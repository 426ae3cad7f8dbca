// Pairs for the llama.cpp CPU stream factors (src/estimate/llama_cpp.cpp k_cpu_stream_factors): ROUNDS times,
// runs speed.mjs (the real llama.cpp's decode rate) and then `BIN fit --engine llama.cpp --device cpu` on each
// speed model (preflight's bandwidth measured right after), for every BIN given. Prints one JSON line per
// round, model and binary with both sides, then per binary and model the median ratios and, for a model
// with one weight type, the factor that would have made each pair exact:
//   factor = type bytes / (bandwidth x (seconds per token - 0.3 ms - other types' bytes / bandwidth))
// on the llama.cpp side's cpu-time rate (tokens_per_cpu_s; the same as tokens_per_s on an idle host).
//
// usage: node speed_pairs.mjs OUT_DIR ROUNDS BIN [BIN...]
import {execFileSync} from "node:child_process";
import path from "node:path";
import {fileURLToPath} from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [outDir, roundsArg, ...bins] = process.argv.slice(2);
const rounds = Number(roundsArg);
const overheadS = 0.0003;
const median = (v) => {
    const s = [...v].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const rows = [];
for (let round = 0; round < rounds; ++round) {
    const text = execFileSync("node", [path.join(here, "speed.mjs"), outDir, "1", "32"], {encoding: "utf8", stdio: ["ignore", "pipe", "ignore"]});
    for (const line of text.split("\n").filter((l) => l.startsWith("{"))) {
        const real = JSON.parse(line);
        for (const bin of bins) {
            const fit = JSON.parse(execFileSync(bin, ["fit", real.file, "--engine", "llama.cpp", "--device", "cpu", "--threads", "1", "--ctx-size", "1024",
                "--flash-attn", "on", "--json"], {encoding: "utf8", stdio: ["ignore", "pipe", "ignore"]}));
            const d = fit.llama_cpp.decode;
            const row = {round, bin, model: real.model, predicted: d.tokens_per_s_empty_context, bandwidth_gb_per_s: d.bandwidth_bytes_per_s / 1e9,
                         llama_tokens_per_s: real.tokens_per_s, llama_tokens_per_cpu_s: real.tokens_per_cpu_s,
                         ratio_wall: d.tokens_per_s_empty_context / real.tokens_per_s, ratio_cpu: d.tokens_per_s_empty_context / real.tokens_per_cpu_s,
                         load: Number(execFileSync("cat", ["/proc/loadavg"], {encoding: "utf8"}).split(" ")[0])};
            const types = Object.entries(d.weight_bytes_per_token_by_type).sort((a, b) => b[1] - a[1]);
            const otherBytes = types.slice(1).reduce((s, [, b]) => s + b, 0);
            const weightS = 1 / real.tokens_per_cpu_s - overheadS - otherBytes / d.bandwidth_bytes_per_s;
            row.type = types[0][0];
            row.factor = types[0][1] / (d.bandwidth_bytes_per_s * weightS);
            rows.push(row);
            console.log(JSON.stringify(row));
        }
    }
}
for (const bin of bins) {
    for (const model of [...new Set(rows.map((r) => r.model))]) {
        const r = rows.filter((x) => x.bin === bin && x.model === model);
        console.log(JSON.stringify({summary: true, bin, model, pairs: r.length, type: r[0].type, median_ratio_wall: median(r.map((x) => x.ratio_wall)),
                                    median_ratio_cpu: median(r.map((x) => x.ratio_cpu)), median_factor: median(r.map((x) => x.factor)),
                                    factor_min: Math.min(...r.map((x) => x.factor)), factor_max: Math.max(...r.map((x) => x.factor))}));
    }
}
