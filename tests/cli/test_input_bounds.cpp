// Issue 19: a device text is a name or a one-line description. Before, a 100,000-byte --device ran the name search
// (edit distances to every catalogue name) and the total's patterns over all of it (11 s on this machine) and
// printed it back whole in "unknown device '111...'"; a validation case's `device` field had no bound at all.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "../test_support.hpp"
#include "base/json_util.hpp"

TEST(InputBounds, Issue19_LongDeviceTextIsRefusedNotEchoed) {
  const std::string digits(1100, '1');
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device " + digits);
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("a device text ('" + std::string(40, '1') + "... (1100 bytes in all)'): a name or description is at most 1024 bytes"), std::string::npos)
      << r.out.substr(0, 300);
  EXPECT_LT(r.out.size(), 400u);
  // A description at the bound is still read: "NVIDIA A100-SXM4-80GB" padded with spaces to 1,024 bytes (the longest
  // device text of an evidence line, data/evidence/vllm-startup-public.jsonl, is 278 bytes).
  std::string padded = "'NVIDIA A100-SXM4-80GB";
  padded += std::string(1024 - 21, ' ') + "'";
  const auto ok = pftest::run_cli("fit Qwen/Qwen3-8B --device " + padded + " --max-model-len 4096");
  EXPECT_EQ(ok.code, 0) << ok.out.substr(0, 300);
}

TEST(InputBounds, Issue19_LongDeviceFieldOfACaseIsNamed) {
  const std::string dir = pftest::scratch_dir("input-bounds");
  std::ofstream(dir + "/cases.jsonl") << R"({"id": "long-device", "engine": "vllm", "engine_version": "0.11.0", "device": ")" << std::string(1000000, '9')
                                      << R"(", "num_devices": 1, "model": "Qwen/Qwen3-8B", "available_kv_gib": 10.0})" << "\n";
  const auto r = pftest::run_cli("validate " + dir + "/cases.jsonl --models " + pftest::shared_path("models"));
  EXPECT_NE(r.out.find("... (1000000 bytes in all)'): a name or description is at most 1024 bytes"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_LT(r.out.size(), 4000u);
}

// Issue 19: texts that std::regex's recursive executor crashed on (SIGSEGV, exit 139) with a stack overflow: one
// repeated character per frame. Each input is one a user or a hostile file can supply.
TEST(InputBounds, Issue19_LongInputsThatOverflowedStdRegexAreRead) {
  const std::string dir = pftest::scratch_dir("input-bounds-regex");
  // A log line of 63 KB: a compilation config whose capture list never closes. Read as no list, the rest of the log
  // as before (its version line).
  {
    std::ofstream log(dir + "/long.log");
    log << "INFO 10-12 12:00:00 [__init__.py:216] Automatically detected platform cuda.\n";
    log << "(APIServer pid=1) INFO 10-12 12:00:01 [api_server.py:1839] vLLM API server version 0.11.0\n";
    log << "(EngineCore_DP0 pid=2) INFO 10-12 12:00:01 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen3-8B', "
           "compilation_config={'cudagraph_capture_sizes': [";
    for (int i = 0; i < 21000; ++i) log << "1, ";
    log << "\n";
  }
  const auto logs = pftest::run_cli("logs " + dir + "/long.log --json", {.with_stderr = false});
  EXPECT_EQ(logs.code, 0) << logs.out.substr(0, 300);
  EXPECT_NE(logs.out.find("\"0.11.0\""), std::string::npos) << logs.out.substr(0, 400);
  // A case whose notes hold "v" and 200,000 digits (the notes are read for a version when none is given).
  {
    std::ofstream cases(dir + "/notes.jsonl");
    cases << R"({"id": "long-notes", "engine": "vllm", "device": "H100", "num_devices": 1, "model": "Qwen/Qwen3-8B", "available_kv_gib": 10.0, "notes": "v)"
          << std::string(200000, '1') << R"(."})" << "\n";
  }
  const auto validate = pftest::run_cli("validate " + dir + "/notes.jsonl --models " + pftest::shared_path("models"));
  EXPECT_TRUE(validate.code == 0 || validate.code == 1) << validate.code << " " << validate.out.substr(0, 300);
  EXPECT_NE(validate.out.find("long-notes"), std::string::npos) << validate.out.substr(0, 300);
  // --device-memory of 100,000 digits: a usage error, shown cut.
  const auto mem = pftest::run_cli("fit Qwen/Qwen3-8B --device-memory " + std::string(100000, '1') + "GiB");
  EXPECT_EQ(mem.code, 2) << mem.out.substr(0, 300);
  EXPECT_NE(mem.out.find("--device-memory: expected a size with its unit (24GiB, 24GB, 512MiB), found '" + std::string(64, '1') + "... (100003 bytes in all)'"),
            std::string::npos)
      << mem.out.substr(0, 300);
  EXPECT_LT(mem.out.size(), 400u);
}

// Issue 19 item 12: a validation case's own text (its id, its quantization) reaches the report without its escape
// sequences and cut, not echoed whole; an error quoting a 100,000-byte flag value is cut at 8,192 bytes.
TEST(InputBounds, Issue19_CaseTextIsCutAndStrippedInReports) {
  const std::string dir = pftest::scratch_dir("input-bounds-case-text");
  const std::string base = R"("source": "s", "engine": "vllm", "engine_version": "0.10.0", "device": "H100", "num_devices": 1, "model": "Qwen/Qwen3-8B", "kv_cache_tokens": 100000)";
  std::ofstream(dir + "/cases.jsonl") << "{\"id\": \"esc\\u001b]0;title\\u0007-case\", \"quantization\": \"\\u001b[31mred\", " << base << "}\n"
                                      << "{\"id\": \"long\", \"quantization\": \"" << std::string(100000, 'A') << "\", " << base << "}\n"
                                      << "{\"id\": \"plain\", " << base << "}\n";
  const auto r = pftest::run_cli("validate " + dir + "/cases.jsonl --models " + pftest::shared_path("models"));
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 400);  // two unreadable quantizations: bad input, after the report
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.out.find('\x07'), std::string::npos);
  EXPECT_NE(r.out.find("esc-case: unreadable"), std::string::npos) << r.out.substr(0, 600);  // the OSC sequence goes whole, the text stays
  EXPECT_NE(r.out.find("... (100000 bytes in all)"), std::string::npos) << r.out.substr(0, 600);
  EXPECT_LT(r.out.size(), 8000u);
  EXPECT_NE(r.out.find("plain"), std::string::npos);  // the readable case is evaluated

  const auto flag = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --kv-cache-dtype " + std::string(100000, 'f'));
  EXPECT_EQ(flag.code, 2);
  EXPECT_LT(flag.out.size(), 8400u);
  EXPECT_NE(flag.out.find("bytes in all)"), std::string::npos) << flag.out.substr(0, 300);
}

// Issue 19 item 12: a config.json's strings that preflight prints (architectures, model_type, auto_map, quant_method)
// reach the terminal without their escape sequences: inspect, fit and plan printed "Qwen3<ESC>[31mForCausalLM" and
// "fp8<ESC>[2j" raw.
TEST(InputBounds, Issue19_ConfigStringsArePrintedWithoutEscapes) {
  const std::string dir = pftest::scratch_dir("input-bounds-config-escapes");
  std::string text = pftest::read_all(pftest::shared_path("models/Qwen__Qwen3-8B/config.json"));
  const size_t brace = text.rfind('}');
  ASSERT_NE(brace, std::string::npos);
  text.replace(brace, 1, R"(, "quantization_config": {"quant_method": "fp8\u001b[2J", "weight_block_size": [128, 128]}, "auto_map": {"AutoConfig": "x\u001b]0;t\u0007.Cfg"}})");
  const size_t arch = text.find("\"Qwen3ForCausalLM\"");
  ASSERT_NE(arch, std::string::npos);
  text.replace(arch, 18, "\"Qwen3\\u001b[31mForCausalLM\"");
  std::ofstream(dir + "/config.json") << text;
  for (const std::string& c : {"inspect " + dir, "fit " + dir + " --device H100", "fit " + dir + " --device 910B3 --engine vllm-ascend@0.23",
                               "plan " + dir + " --devices H100"}) {
    const auto r = pftest::run_cli(c);
    EXPECT_TRUE(r.code == 0 || r.code == 1) << c << "\n" << r.out.substr(0, 400);
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << c;
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << c;
  }
  EXPECT_NE(pftest::run_cli("inspect " + dir).out.find("Qwen3ForCausalLM"), std::string::npos);
}

// Issue 19: text that is not UTF-8 aborted the process (uncaught type_error 316, exit 134) wherever it reached a JSON
// output: a log line in GBK (hosts with a Chinese locale write paths and messages in their code page), a script's
// comment in doctor's findings, and validate's own cut of a case's text, which split a character at 120 bytes (the
// text was valid UTF-8). Each bad byte sequence is now written as U+FFFD and the command exits as it would otherwise.
TEST(InputBounds, Issue19_TextThatIsNotUtf8ReachesJsonAsReplacement) {
  const std::string dir = pftest::scratch_dir("input-bounds-utf8");
  const std::string replacement = "\xEF\xBF\xBD";
  std::ofstream(dir + "/gbk.log") << "INFO 01-01 00:00:00 [gpu_worker.py:1] Model loading took 14.99 GiB and 3.2 seconds\n"
                                  << "vllm serve /models/\xd6\xd0\xce\xc4-qwen --max-model-len 32768\n";
  const auto logs = pftest::run_cli("logs " + dir + "/gbk.log --json", {.with_stderr = false});
  EXPECT_EQ(logs.code, 0) << logs.out.substr(0, 300);
  EXPECT_NO_THROW((void)preflight::Json::parse(logs.out)) << logs.out.substr(0, 300);  // nlohmann's parser refuses invalid UTF-8
  EXPECT_NE(logs.out.find("/models/" + replacement), std::string::npos) << logs.out.substr(0, 600);

  std::ofstream(dir + "/clean.sh") << "#!/bin/bash\nfind / -name \"*lock*\" -delete  # \xff\xfe\n";
  const auto doctor = pftest::run_cli("doctor --script " + dir + "/clean.sh --json", {.with_stderr = false});
  EXPECT_EQ(doctor.code, 1) << doctor.out.substr(0, 300);  // the lock glob is a finding
  EXPECT_NO_THROW((void)preflight::Json::parse(doctor.out)) << doctor.out.substr(0, 300);

  // "a" then 100 x "中" (3 bytes each): 120 bytes end inside the 40th character, which the cut now leaves out whole.
  std::string han;
  for (int i = 0; i < 100; ++i) han += "\xe4\xb8\xad";
  std::ofstream(dir + "/cases.jsonl") << R"({"id": "han", "source": "s", "engine": "vllm", "engine_version": "0.10.0", "device": "H100", "num_devices": 1, )"
                                      << R"("model": "Qwen/Qwen3-8B", "kv_cache_tokens": 100000, "quantization": "a)" << han << "\"}\n";
  const auto validate = pftest::run_cli("validate " + dir + "/cases.jsonl --models " + pftest::shared_path("models") + " --json", {.with_stderr = false});
  EXPECT_EQ(validate.code, 2) << validate.out.substr(0, 300);  // an unreadable quantization: bad input, after the report
  EXPECT_NO_THROW((void)preflight::Json::parse(validate.out)) << validate.out.substr(0, 300);
  std::string shown = "a";
  for (int i = 0; i < 39; ++i) shown += "\xe4\xb8\xad";
  EXPECT_NE(validate.out.find(shown + "... (301 bytes in all)"), std::string::npos) << validate.out.substr(0, 900);
}

// Issue 15: a --max-model-len above the model's own length is vLLM's ValueError at config time (vLLM-Ascend inherits
// it). Qwen3-8B's config states max_position_embeddings 40960 and no rope scaling, so 131072 is refused with the
// engine's words, exit 2; 40960 itself is taken; with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vLLM warns and takes 131072, and
// fit sizes it with the warning among its assumptions (131,072 x 147,456 B = 18 GiB of KV beside 15.3 GiB of weights
// fits an 80 GB H100).
TEST(InputBounds, Issue15_MaxModelLenAboveTheModelsOwnIsTheEnginesValueError) {
  const auto refused = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --max-model-len 131072", {.env = "env -u VLLM_ALLOW_LONG_MAX_MODEL_LEN"});
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len (max_position_embeddings=40960 or "
                             "model_max_length=None in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1."),
            std::string::npos)
      << refused.out;
  EXPECT_EQ(pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --max-model-len 40960", {.env = "env -u VLLM_ALLOW_LONG_MAX_MODEL_LEN"}).code, 0);
  const auto allowed = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --max-model-len 131072", {.env = "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"});
  EXPECT_EQ(allowed.code, 0) << allowed.out;
  EXPECT_NE(allowed.out.find("VLLM_ALLOW_LONG_MAX_MODEL_LEN is set, so vLLM warns and takes it"), std::string::npos) << allowed.out;
  EXPECT_NE(allowed.out.find("max_model_len 131,072"), std::string::npos) << allowed.out;
}

// Issue 19: two more writers of JSON that threw type_error 316 on bytes that are not UTF-8 (uncaught, exit 134): a
// dotted compilation-config flag whose value is not JSON (-cc.KEY=VALUE keeps it as text), and MindIE's config.json
// from --weight-path / --model-name. The first is now read as text with U+FFFD and refused as the field's value; the
// second is refused by name, as config.json holds UTF-8 only and a replaced byte would name another directory.
TEST(InputBounds, Issue19_FlagTextThatIsNotUtf8InAJsonFlagOrMindieConfigIsRefused) {
  for (const std::string& flag : {"-cc.cudagraph_mode='\xd6\xd0\xff'", "--compilation-config.cudagraph_mode '\xd6\xd0\xff'", "-O.cudagraph_mode='\xd6\xd0'"}) {
    const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 " + flag);
    EXPECT_EQ(r.code, 2) << flag << "\n" << r.out.substr(0, 300);
    EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << flag;
  }
  const auto mode = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 -cc.cudagraph_mode='\xd6\xd0\xff'");
  EXPECT_NE(mode.out.find("cudagraph_mode: KeyError: '\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD'"), std::string::npos) << mode.out.substr(0, 300);

  for (const std::string& flag : {"--weight-path '/models/\xd6\xd0\xce\xc4'", "--model-name '\xff'"}) {
    for (const std::string& json : {"", " --json"}) {
      const auto r = pftest::run_cli("plan Qwen/Qwen3-8B --device 910B3 --engine mindie " + flag + json);
      EXPECT_EQ(r.code, 2) << flag << json << "\n" << r.out.substr(0, 300);
      EXPECT_NE(r.out.find("is not UTF-8 text, and MindIE's config.json (JSON) holds UTF-8 only"), std::string::npos) << r.out.substr(0, 300);
    }
  }
  const auto utf8 = pftest::run_cli("plan Qwen/Qwen3-8B --device 910B3 --engine mindie --weight-path '/models/\xe4\xb8\xad'", {.with_stderr = false});
  EXPECT_EQ(utf8.code, 0) << utf8.out.substr(0, 300);
  EXPECT_NE(utf8.out.find("\"modelWeightPath\": \"/models/\xe4\xb8\xad\""), std::string::npos) << utf8.out.substr(0, 300);
}

// Issue 19 item 4, one more reader: bw --runtime-lib (and PREFLIGHT_CUDART_LIB) naming a FIFO made dlopen wait for a
// writer for good. A path that is not a regular file is refused at once with its type, as a library that cannot be
// loaded is (the measurement fails: exit 1).
TEST(InputBounds, Issue19_RuntimeLibraryThatIsAFifoIsRefused) {
  const std::string dir = pftest::scratch_dir("input-bounds-runtime-lib");
  const std::string fifo = dir + "/libcudart.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = pftest::run_cli("bw --target cuda --runtime-lib " + fifo, {.env = "timeout 20"});
  EXPECT_EQ(r.code, 1) << r.out.substr(0, 300);
  EXPECT_NE(r.out.find(fifo + ": expected a regular file, found a FIFO"), std::string::npos) << r.out.substr(0, 300);
  const auto env = pftest::run_cli("bw --target cuda", {.env = "PREFLIGHT_CUDART_LIB=" + dir + " timeout 20"});
  EXPECT_EQ(env.code, 1) << env.out.substr(0, 300);
  EXPECT_NE(env.out.find(dir + ": expected a regular file, found a directory"), std::string::npos) << env.out.substr(0, 300);
}

// Issue 19: fit dropped a speed overlay that does not load (PREFLIGHT_SPEED_OVERRIDES, the file calibrate --save
// writes) in silence: the table lost its speed section and the exit was 0, so a user never learnt the file was
// broken. It is bad input naming the file (exit 2), as plan and the device overlay already treat theirs.
TEST(InputBounds, Issue19_SpeedOverlayThatDoesNotLoadIsAnError) {
  const std::string dir = pftest::scratch_dir("input-bounds-speed-overlay");
  std::ofstream(dir + "/gbk.json") << "\xd6\xd0";
  std::ofstream(dir + "/profiles.json") << R"({"schema_version": 1, "profiles": 5})";
  std::ofstream(dir + "/engine.json") << R"({"schema_version": 1, "profiles": [{"engine": "vlm", "platform": "cuda", "bandwidth_efficiency": 0.8, "evidence": "x"}]})";
  for (const std::string& file : {dir + "/gbk.json", dir + "/profiles.json", dir + "/engine.json"}) {
    for (const std::string& json : {"", " --json"}) {
      const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.11.0" + json, {.env = "PREFLIGHT_SPEED_OVERRIDES=" + file});
      EXPECT_EQ(r.code, 2) << file << json << "\n" << r.out.substr(0, 300);
      EXPECT_NE(r.out.find(file), std::string::npos) << r.out.substr(0, 300);
    }
  }
  // A platform without a speed profile still leaves the speed out and fits as before.
  std::ofstream(dir + "/ok.json") << R"({"schema_version": 1, "profiles": []})";
  const auto ok = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.11.0", {.env = "PREFLIGHT_SPEED_OVERRIDES=" + dir + "/ok.json"});
  EXPECT_EQ(ok.code, 0) << ok.out.substr(0, 300);
}

// Issue 19: fit --attention-backend took any name and only recorded it. vLLM looks the value up, upper-cased, in its
// attention-backend enum and refuses a name that is no member (vllm/v1/attention/backends/registry.py: "Unknown attention
// backend: 'X'. Valid options are: ..."): fit refuses it with those words, exit 2. The names the evidence records
// (FLASH_ATTN, FLASHINFER in lower case as its logs print it, TRITON_ATTN, XFORMERS and TRITON_ATTN_VLLM_V1 of older
// versions) and auto are still taken.
TEST(InputBounds, Issue19_AttentionBackendThatVllmLacksIsRefused) {
  for (const std::string& engine : {"vllm@0.23.0", "vllm-ascend@0.23.0"}) {
    const std::string device = engine.rfind("vllm-ascend", 0) == 0 ? "910B3" : "H100";
    const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device " + device + " --engine " + engine + " --max-model-len 4096 --attention-backend flash_atten");
    EXPECT_EQ(r.code, 2) << engine << ": " << r.out.substr(0, 400);
    EXPECT_NE(r.out.find("--attention-backend: ValueError: Unknown attention backend: 'FLASH_ATTEN'. Valid options are: FLASH_ATTN, FLASH_ATTN_DIFFKV, TRITON_ATTN,"),
              std::string::npos)
        << r.out.substr(0, 400);
  }
  // plan takes the flag for every candidate: the same refusal before any is sized.
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --device H100 --attention-backend flash_atten");
  EXPECT_EQ(plan.code, 2) << plan.out.substr(0, 400);
  EXPECT_NE(plan.out.find("--attention-backend: ValueError: Unknown attention backend: 'FLASH_ATTEN'."), std::string::npos) << plan.out.substr(0, 400);
  EXPECT_EQ(pftest::run_cli("plan Qwen/Qwen3-8B --device H100 --attention-backend FLASHINFER").code, 0);
  const std::pair<const char*, const char*> taken[] = {{"vllm@0.27.1", "FLASH_ATTN"}, {"vllm@0.23.0", "flashinfer"}, {"vllm@0.23.0", "TRITON_ATTN"},
                                                       {"vllm@0.23.0", "auto"},        {"vllm@0.7.1", "XFORMERS"},   {"vllm@0.10.1", "TRITON_ATTN_VLLM_V1"}};
  for (const auto& [engine, name] : taken) {
    // arch31: vLLM 0.7.1 has no Qwen3 (data/engines/model_support.json), so that row sizes Llama-3.1-8B.
    const std::string model = std::string(engine) == "vllm@0.7.1" ? "meta-llama/Meta-Llama-3.1-8B" : "Qwen/Qwen3-8B";
    const auto r = pftest::run_cli("fit " + model + " --device H100 --max-model-len 4096 --engine " + engine + " --attention-backend " + name);
    EXPECT_EQ(r.code, 0) << engine << " " << name << ": " << r.out.substr(0, 400);
  }
}

// Issue 19: number flags read with strtod took hex ("--hccl-buffsize 0x10" was 16 MB), "inf" and "nan". A number flag
// takes decimal digits only (sign, point, exponent), one rule in the shared flag parser for every real flag.
TEST(InputBounds, Issue19_NumberFlagsTakeDecimalDigitsOnly) {
  const std::pair<std::string, std::string> refused[] = {
      {"fit Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend@0.23.0 --hccl-buffsize 0x10", "--hccl-buffsize: expected a decimal number, got '0x10'"},
      {"plan Qwen/Qwen3-8B --device H100 --bandwidth 0x10", "--bandwidth: expected a decimal number, got '0x10'"},
      {"fit Qwen/Qwen3-8B --device H100 --gpu-memory-utilization 0x1p-1", "--gpu-memory-utilization: expected a decimal number, got '0x1p-1'"},
      {"fit Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend@0.23.0 --hccl-buffsize inf", "--hccl-buffsize: expected a decimal number, got 'inf'"},
      {"fit Qwen/Qwen3-8B --device H100 --gpu-memory-utilization ' 0.9'", "--gpu-memory-utilization: expected a decimal number, got ' 0.9'"},
      {"fit Qwen/Qwen3-8B --device H100 --gpu-memory-utilization 1e", "--gpu-memory-utilization: expected a decimal number, got '1e'"},
  };
  for (const auto& [args, message] : refused) {
    const auto r = pftest::run_cli(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out.substr(0, 300);
    EXPECT_NE(r.out.find(message), std::string::npos) << args << ": " << r.out.substr(0, 300);
  }
  for (const std::string& args : {"fit Qwen/Qwen3-8B --device H100 --max-model-len 4096 --gpu-memory-utilization .9",
                                  "fit Qwen/Qwen3-8B --device H100 --max-model-len 4096 --gpu-memory-utilization 9e-1",
                                  "fit Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend@0.23.0 --max-model-len 4096 --hccl-buffsize 1e3"}) {
    const auto r = pftest::run_cli(args);
    EXPECT_EQ(r.code, 0) << args << ": " << r.out.substr(0, 300);
  }
}

// Issue 19: --models DIR that does not exist, is a file or a symbolic-link loop was skipped in silence when the model
// is in the catalogue (a typo went unnoticed). It is bad input naming the flag and the path, for every command that
// takes it.
TEST(InputBounds, Issue19_ModelsDirThatIsNotADirectoryIsAnError) {
  const std::string dir = pftest::scratch_dir("input-bounds-models-dir");
  std::ofstream(dir + "/file") << "x";
  ::unlink((dir + "/loop-a").c_str());
  ::unlink((dir + "/loop-b").c_str());
  ASSERT_EQ(::symlink((dir + "/loop-b").c_str(), (dir + "/loop-a").c_str()), 0);
  ASSERT_EQ(::symlink((dir + "/loop-a").c_str(), (dir + "/loop-b").c_str()), 0);
  const std::pair<std::string, std::string> paths[] = {{dir + "/missing", "no such directory"},
                                                       {dir + "/file", "expected a directory, found a regular file"},
                                                       {dir + "/loop-a", "Too many levels of symbolic links"}};
  for (const auto& [path, why] : paths) {
    for (const std::string& command : {std::string("fit Qwen/Qwen3-8B --device H100"), std::string("inspect Qwen/Qwen3-8B"), "validate " + dir + "/none.jsonl", "logs " + dir + "/none.log"}) {
      const auto r = pftest::run_cli(command + " --models " + path);
      EXPECT_EQ(r.code, 2) << command << " " << path << ": " << r.out.substr(0, 300);
      EXPECT_NE(r.out.find("--models: '" + path + "': " + why), std::string::npos) << command << ": " << r.out.substr(0, 300);
    }
  }
  EXPECT_EQ(pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --max-model-len 4096 --models " + pftest::shared_path("models")).code, 0);
}
