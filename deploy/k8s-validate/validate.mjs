// Validates Kubernetes manifests against the API's own schemas, without a cluster: kubectl's
// validation asks the API server for them, and this project's machines have none.
//
//   node validate.mjs FILE.yaml...      (or YAML on stdin: the output of `kubectl kustomize`)
//
// kubernetes-models ships validators generated from the Kubernetes OpenAPI document (types,
// required fields, enums, formats). They accept fields the API does not know, which is where a
// typo hides (`replica: 3` would be dropped by the API server without a word), so every object
// is also walked against the property lists of the same package's type declarations, as
// `kubectl --validate=strict` would. Prints one line per problem; exits 1 if there is any.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, "node_modules");

// Interface name (as the declarations export it, e.g. IIoK8sApiAppsV1DeploymentSpec) ->
// {property: type text}. Each .d.ts declares one interface under a short name and exports it
// under the long one that other files use.
function readDeclarations() {
  const types = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".d.ts")) parseDeclaration(readFileSync(path, "utf8"), types);
    }
  };
  walk(join(modules, "kubernetes-models"));
  walk(join(modules, "@kubernetes-models", "apimachinery"));
  for (const group of Object.values(OPERATORS)) walk(join(modules, group.split("/").slice(0, 2).join("/")));
  return types;
}

function parseDeclaration(text, types) {
  const local = new Map();
  let current = null;
  for (const line of text.split("\n")) {
    const open = line.match(/^export interface (\w+)(?: extends ([\w, ]+))? \{/);
    if (open) {
      current = {};
      // TypeMeta: apiVersion and kind, which every top-level object carries.
      if (open[2] && open[2].includes("TypeMeta")) {
        Object.assign(current, { apiVersion: "", kind: "" });
      }
      local.set(open[1], current);
      continue;
    }
    if (current && /^}/.test(line)) {
      current = null;
      continue;
    }
    const prop = current && line.match(/^ {4}"([^"]+)"\??: (.*?);?$/);
    if (prop) current[prop[1]] = prop[2];
  }
  for (const m of text.matchAll(/export (?:type )?\{ ([^}]*) \}/g)) {
    for (const part of m[1].split(",")) {
      const alias = part.trim().match(/^(\w+) as (\w+)$/);
      if (alias && local.has(alias[1])) types.set(alias[2], local.get(alias[1]));
    }
  }
}

// Reports every field the declarations do not list, recursing through the ones they type.
function strictWalk(value, type, path, types, problems) {
  if (value === null || typeof value !== "object") return;
  const array = type.match(/^Array<(\w+)>$/);
  if (array) {
    if (!Array.isArray(value)) return;
    value.forEach((v, i) => strictWalk(v, array[1], `${path}/${i}`, types, problems));
    return;
  }
  const props = types.get(type.replace(/ \| null$/, ""));
  if (!props || Array.isArray(value)) return;
  for (const [key, v] of Object.entries(value)) {
    if (!(key in props)) problems.push(`${path}/${key}: unknown field`);
    else strictWalk(v, props[key], `${path}/${key}`, types, problems);
  }
}

// Operators' resources, by API version: the package of models generated from the operator's
// published CRD schemas (versions pinned in package-lock.json).
const OPERATORS = {
  "postgresql.cnpg.io/v1": "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1",
};

// apps/v1 -> kubernetes-models/apps/v1; v1 (the core group) -> kubernetes-models/v1; an
// operator's group -> its package.
async function modelClass(apiVersion, kind) {
  try {
    const group = await import(OPERATORS[apiVersion] ?? `kubernetes-models/${apiVersion}`);
    return group[kind];
  } catch {
    return undefined;
  }
}

async function main() {
  const files = process.argv.slice(2);
  const sources = files.length
    ? files.map((f) => [f, readFileSync(f, "utf8")])
    : [["stdin", readFileSync(0, "utf8")]];
  const types = readDeclarations();
  const problems = [];
  let objects = 0;
  for (const [file, text] of sources) {
    for (const doc of YAML.parseAllDocuments(text)) {
      if (doc.errors.length) {
        problems.push(`${file}: ${doc.errors[0].message}`);
        continue;
      }
      const obj = doc.toJS();
      if (!obj) continue;
      objects++;
      const where = `${file}: ${obj.kind ?? "?"} ${obj.metadata?.name ?? "?"}`;
      const Model = await modelClass(obj.apiVersion, obj.kind);
      if (!Model) {
        problems.push(`${where}: no schema for apiVersion ${obj.apiVersion} kind ${obj.kind}`);
        continue;
      }
      try {
        new Model(obj).validate();
      } catch (e) {
        problems.push(`${where}: ${e.message.replace(/\s+/g, " ")}`);
      }
      const before = problems.length;
      strictWalk(obj, topLevelType(obj, types), "", types, problems);
      for (let i = before; i < problems.length; i++) problems[i] = `${where}: ${problems[i]}`;
    }
  }
  for (const p of problems) console.log(p);
  if (problems.length) process.exit(1);
  console.log(`kubernetes schemas: ok (${objects} objects)`);
}

// The declaration of a top-level object: the exported interface whose apiVersion and kind
// literals match it (IIoK8sApiAppsV1Deployment has "apiVersion": "apps/v1", "kind": "Deployment").
function topLevelType(obj, types) {
  for (const [name, props] of types) {
    if (props.apiVersion === `"${obj.apiVersion}"` && props.kind === `"${obj.kind}"`) return name;
  }
  return "";
}

main();
