// Validates Kubernetes manifests (multi-document YAML files) the way the API server would check
// their shape, and prints one line per document: "ok KIND NAME" or "invalid KIND NAME: errors".
// Exit 1 when any document is invalid or of a kind it cannot check. --json-out FILE also writes the
// documents as read (a JSON array), so a test can compare them with the records they came from.
//   Deployment, Service: kubernetes-models (npm), generated from the Kubernetes OpenAPI spec; the
//     Deployment's pod template also against the PodTemplateSpec schema below, strictly.
//   LeaderWorkerSet: the openAPIV3Schema of the LWS CRD (schemas/leaderworkerset-v1.schema.json,
//     source in its $comment), checked with ajv. Strict like `kubectl apply --validate=strict`: an
//     object schema with properties and no x-kubernetes-preserve-unknown-fields rejects unknown
//     fields (the API server's structural-schema rule).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Ajv from "ajv";
import yaml from "js-yaml";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Service } from "kubernetes-models/v1/Service";

const here = path.dirname(fileURLToPath(import.meta.url));
const lwsSchema = JSON.parse(fs.readFileSync(path.join(here, "schemas/leaderworkerset-v1.schema.json"), "utf8"));

const keywords = new Set(), formats = new Set();
const strict = (node) => {
  if (Array.isArray(node)) return node.map(strict);
  if (!node || typeof node !== "object") return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith("x-kubernetes-")) keywords.add(k);
    if (k === "format") formats.add(v);
    out[k] = k === "properties" ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, strict(s)])) : strict(v);
  }
  if (out.properties && out.additionalProperties === undefined && !out["x-kubernetes-preserve-unknown-fields"]) out.additionalProperties = false;
  return out;
};
const { $comment, ...body } = lwsSchema;
const strictLws = strict(body);
// strictTypes off: the CRD puts "pattern" on int-or-string quantities, which JSON Schema applies to strings only.
const ajv = new Ajv({ allErrors: true, strictTypes: false });
for (const k of keywords) ajv.addKeyword(k);
for (const f of formats) ajv.addFormat(f, true);
const checkLws = ajv.compile(strictLws);
const checkPodTemplate = ajv.compile(strictLws.properties.spec.properties.leaderWorkerTemplate.properties.workerTemplate);

const ajvErrors = (errors) => errors.map((e) => `${e.instancePath || "/"} ${e.message}${e.params?.additionalProperty ? ` (${e.params.additionalProperty})` : ""}`).join("; ");

function check(doc) {
  if (doc.kind === "LeaderWorkerSet" && doc.apiVersion === "leaderworkerset.x-k8s.io/v1") {
    return checkLws(doc) ? "" : ajvErrors(checkLws.errors);
  }
  const models = { "apps/v1/Deployment": Deployment, "v1/Service": Service };
  const Model = models[`${doc.apiVersion}/${doc.kind}`];
  if (!Model) return `no schema for ${doc.apiVersion} ${doc.kind}`;
  try {
    new Model(doc).validate();
  } catch (e) {
    return e.message;
  }
  if (doc.kind === "Deployment" && !checkPodTemplate(doc.spec.template)) return "spec.template: " + ajvErrors(checkPodTemplate.errors);
  return "";
}

let failed = 0, count = 0;
const args = process.argv.slice(2);
const jsonOut = args.indexOf("--json-out") >= 0 ? args.splice(args.indexOf("--json-out"), 2)[1] : "";
const read = [];
for (const file of args) {
  for (const doc of yaml.loadAll(fs.readFileSync(file, "utf8"))) {
    if (doc === null || doc === undefined) continue;
    ++count;
    read.push(doc);
    const error = check(doc);
    const what = `${doc.kind} ${doc.metadata?.name ?? "?"}`;
    if (error) {
      ++failed;
      console.log(`invalid ${what}: ${error}`);
    } else {
      console.log(`ok ${what}`);
    }
  }
}
if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(read));
if (count === 0) {
  console.log("no documents");
  process.exit(1);
}
process.exit(failed ? 1 : 0);
