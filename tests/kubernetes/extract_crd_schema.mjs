// Extracts the JSON schema of one version of a CustomResourceDefinition (its openAPIV3Schema),
// without the "description" texts, as schemas/*.schema.json keeps it:
//   node extract_crd_schema.mjs CRD.yaml VERSION SOURCE_URL > schemas/NAME.schema.json
import fs from "node:fs";
import yaml from "js-yaml";

const [file, version, source] = process.argv.slice(2);
const crd = yaml.load(fs.readFileSync(file, "utf8"));
const v = crd.spec.versions.find((x) => x.name === version);
if (!v) throw new Error(`${file}: no version ${version}`);
const strip = (node) => {
  if (Array.isArray(node)) return node.map(strip);
  if (node && typeof node === "object") {
    const out = {};
    for (const [k, val] of Object.entries(node)) if (k !== "description") out[k] = strip(val);
    return out;
  }
  return node;
};
const schema = { $comment: `openAPIV3Schema of ${crd.spec.names.kind} ${crd.spec.group}/${version}, descriptions removed; from ${source}`, ...strip(v.schema.openAPIV3Schema) };
process.stdout.write(JSON.stringify(schema) + "\n");
