// A tour of the reference host: one action touching every module.
//
//   cargo run -p agent-host -- run examples/agent-host/actions/tour.js
//
// In the default mode, reads run and everything else asks: answer y / n / a
// on the terminal (or pass --mode auto). Without a terminal the asks are
// denied, and the tour shows each denial as data instead of failing.
import workspace from "@capspec/host/workspace";
import notes from "@capspec/host/notes";
import memory from "@capspec/host/memory";
import shell from "@capspec/host/shell";
import web from "@capspec/host/web";
import plan from "@capspec/host/plan";

// Run one step; a refused or failed call becomes its error code.
async function attempt(step) {
  try {
    return await step();
  } catch (e) {
    console.log(`${e.capability}: ${e.code}`);
    return { refused: e.code };
  }
}

export default async function tour() {
  console.log("mounted:", capabilities().length, "capabilities");
  const wrote = await attempt(() => workspace.write_file({ path: "hello.txt", content: "hello from a guest action\n" }));
  // Calls started together run together.
  const [listing, found] = await Promise.all([
    workspace.list_files({ recursive: true }),
    workspace.search_files({ query: "hello" }),
  ]);
  const note = await attempt(() => notes.create_note({ title: "Tour", body: "written by tour.js", tags: ["tour"] }));
  // tag_note is declared in Rust (#[derive(Capability)]); guests call it like any other.
  const tagged = note.id ? await attempt(() => notes.tag_note({ note_id: note.id, tags: ["guest"] })) : note;
  const remembered = await attempt(() => memory.remember({ key: "tour.visited", value: "yes" }));
  const echo = await attempt(() => shell.run_command({ program: "echo", args: ["shell works"] }));
  const planned = await attempt(() =>
    plan.create_plan({
      goal: "copy the greeting",
      steps: [{ title: "copy", action: { capability: "write_file", args: { path: "copy.txt", content: "copied" } } }],
    }),
  );
  const fetched = await attempt(() => web.fetch_url({ url: "http://127.0.0.1:9/" })); // nothing listens on port 9
  return {
    wrote,
    files: listing.entries.map((e) => e.path),
    matches: found.matches.length,
    note,
    tagged,
    remembered,
    shell: echo.stdout ? echo.stdout.trim() : echo,
    plan: planned,
    web: fetched,
  };
}
