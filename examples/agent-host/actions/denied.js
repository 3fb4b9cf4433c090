// Shows a denial being caught. In `default` mode with no terminal to ask,
// writing is denied: the facade throws an Error whose .code says why.
// Run it with:  cargo run -p agent-host -- run examples/agent-host/actions/denied.js < /dev/null
import workspace from "@capspec/host/workspace";

export default async function () {
  const before = await workspace.list_files({});
  try {
    await workspace.write_file({ path: "blocked.txt", content: "should not exist" });
    return { wrote: true };
  } catch (e) {
    console.log("caught:", e.code, "-", e.message);
    return { wrote: false, code: e.code, entries: before.entries.length };
  }
}
