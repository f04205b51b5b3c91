// Every object of the given Kubernetes manifests, checked offline against the
// API's own schemas, as `kubectl apply --validate=strict` would on a cluster:
//   node kubernetes_schema.mjs FILE.yaml...
// prints one JSON array: {file, kind, name, errors, object} per document, where
// errors lists what the schema rejects (types, enums, required fields, formats)
// and every field the schema does not know (a misspelt `seccompProfle` would be
// dropped by a lenient apply and never take effect).
//
// The schemas are kubernetes-models' (npm; generated from the Kubernetes
// OpenAPI documents) and come as compiled validators that ignore unknown
// fields. So the object is handed to them behind a Proxy that records every
// property a validator reads: a validator reads each property its schema
// declares, present or not, and enumerates the keys of a free-form map
// (labels, annotations). An own key that was never read, in an object whose
// keys were never enumerated, is a field the schema does not have.
// Exit status: 0 when every document is valid, 1 when one is not, 2 on usage
// or a kind the models do not know.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

function watched(value, path, seen) {
  if (value === null || typeof value !== "object") {
    return value;
  }
  const entry = { read: new Set(), listed: false, value, path };
  seen.push(entry);
  const children = Array.isArray(value) ? [] : {};
  for (const key of Object.keys(value)) {
    children[key] = watched(value[key], path + "/" + key, seen);
  }
  return new Proxy(value, {
    get(target, key) {
      if (typeof key === "string") {
        entry.read.add(key);
      }
      return Object.hasOwn(children, key) ? children[key] : target[key];
    },
    has(target, key) {
      if (typeof key === "string") {
        entry.read.add(key);
      }
      return key in target;
    },
    ownKeys(target) {
      entry.listed = true;
      return Reflect.ownKeys(target);
    },
  });
}

async function model(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : [null, apiVersion];
  const module = await import(group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`);
  if (!module[kind]) {
    throw new Error(`no model for ${apiVersion} ${kind}`);
  }
  return module[kind];
}

async function check(object) {
  const Model = await model(object.apiVersion, object.kind);
  const seen = [];
  const errors = [];
  try {
    Model.prototype.validate.call(watched(object, "", seen));
  } catch (e) {
    errors.push(...String(e.message).split("\n").filter(Boolean));
  }
  for (const { read, listed, value, path } of seen) {
    if (Array.isArray(value) || listed) {
      continue;
    }
    for (const key of Object.keys(value)) {
      if (!read.has(key)) {
        errors.push(`${path || "/"}: unknown field "${key}"`);
      }
    }
  }
  return errors;
}

const files = process.argv.slice(2);
if (!files.length) {
  console.error("usage: node kubernetes_schema.mjs FILE.yaml...");
  process.exit(2);
}
const results = [];
let bad = false;
try {
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
      if (doc.errors.length) {
        results.push({ file, kind: null, name: null, errors: doc.errors.map(String), object: null });
        bad = true;
        continue;
      }
      const object = doc.toJS();
      if (object === null) {
        continue; // an empty document (a trailing ---)
      }
      const errors = await check(object);
      bad ||= errors.length > 0;
      results.push({ file, kind: object.kind, name: object.metadata?.name ?? null, errors, object });
    }
  }
} catch (e) {
  console.error(String(e.message || e));
  process.exit(2);
}
console.log(JSON.stringify(results, null, 1));
process.exit(bad ? 1 : 0);
