// Resolve the conformance suite's `fs` to fs-glob.mjs (see register.mjs).
export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL && context.parentURL.includes("/@modelcontextprotocol/conformance/")) {
    return { url: new URL("./fs-glob.mjs", import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
