// A tour of the reference host: one action touching every module.
// Run it with:  cargo run -p agent-host -- run examples/agent-host/actions/tour.js --mode auto --workspace /tmp/tour
import workspace from "@capspec/host/workspace";
import notes from "@capspec/host/notes";
import memory from "@capspec/host/memory";
import shell from "@capspec/host/shell";
import web from "@capspec/host/web";
import plan from "@capspec/host/plan";

export default async function tour() {
  console.log("mounted:", capabilities().length, "capabilities");
  await workspace.write_file({ path: "hello.txt", content: "hello from a guest action\n" });
  // Calls started together run together.
  const [file, listing] = await Promise.all([
    workspace.read_file({ path: "hello.txt" }),
    workspace.list_files({}),
  ]);
  const { id } = await notes.create_note({ title: "Tour", body: file.content, tags: ["tour"] });
  await memory.remember({ key: "tour.note", value: id });
  const echo = await shell.run_command({ program: "echo", args: ["shell works"] });
  const { plan_id } = await plan.create_plan({
    goal: "copy the greeting",
    steps: [{ title: "copy", action: { capability: "write_file", args: { path: "copy.txt", content: "copied" } } }],
  });
  const ran = await plan.run_plan({ plan_id });
  let web_status;
  try {
    await web.fetch_url({ url: "http://127.0.0.1:9/" });
  } catch (e) {
    web_status = e.code; // nothing listens on port 9: the failure comes back as an Error with .code
  }
  return {
    files: listing.entries.map((e) => e.path),
    note: id,
    remembered: (await memory.recall({ key: "tour.note" })).facts,
    shell: echo.stdout.trim(),
    plan: ran,
    web: web_status,
  };
}
