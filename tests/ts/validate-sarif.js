// Validates a SARIF log read from stdin against the SARIF 2.1.0 schema.
// Used by tests/tests/formats.rs; exits 1 with ajv's errors when invalid.
"use strict";
const fs = require("fs");
const Ajv = require("ajv");
const ajv = new Ajv({ schemaId: "id", allErrors: true });
ajv.addMetaSchema(require("ajv/lib/refs/json-schema-draft-04.json"));
const schema = require("@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");
const log = JSON.parse(fs.readFileSync(0, "utf8"));
if (!ajv.validate(schema, log)) {
  console.error(JSON.stringify(ajv.errors, null, 2));
  process.exit(1);
}
console.log("valid SARIF 2.1.0");
