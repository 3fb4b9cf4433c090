// The verdicts of tests/fixtures/import/shapes/shapes.json, checked by ajv
// (OpenAPI's `nullable` on, unknown formats ignored): the labels the import
// round-trip test holds capspec to are JSON Schema's, not capspec's own.
// Used by tests/tests/import.rs; exits 1 listing every disagreement.
import fs from "node:fs";
import Ajv from "ajv";

const doc = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const ajv = new Ajv({ nullable: true, unknownFormats: "ignore", allErrors: true });
const wrong = [];
let checked = 0;
for (const shape of doc.shapes) {
  const { $schema, ...schema } = shape.schema;
  const validate = ajv.compile(schema);
  for (const c of shape.cases) {
    checked += 1;
    if (validate(c.data) !== c.valid) {
      wrong.push(`${shape.emitter}: ${JSON.stringify(c.data)} is labelled ${c.valid ? "valid" : "invalid"}, ajv says otherwise`);
    }
  }
}
if (wrong.length > 0) {
  console.error(wrong.join("\n"));
  process.exit(1);
}
console.log(`ajv agrees with all ${checked} verdicts`);
