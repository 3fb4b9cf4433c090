// The browser step of an OAuth log-in, played over HTTP: follow the
// authorization URL, submit oidc-provider's log-in form as `login` (alice
// unless said) and its consent form as shown. `follow` stops where the
// authorization server redirects to a loopback `/callback` and gives that
// redirect's URL; `walk` goes on through every redirect, to whatever site,
// and gives the first page that is not a form: its status, text and URL.
// Cookies are kept per origin (scheme, host and port), so two servers on
// 127.0.0.1 do not read each other's. `walk`'s `reroute` ({from, to,
// skip}) sends the redirects to `from`'s /oauth/upstream/callback after the
// first `skip` of them to `to` instead, as a load balancer without
// affinity may. Used by oauth-e2e.mjs and oauth-upstream.mjs.
import assert from "node:assert/strict";

export async function follow(start, login = "alice") {
  const end = await browse(start, login, (location) => location.hostname === "127.0.0.1" && location.pathname === "/callback");
  assert.ok(end.redirect, `no redirect to a loopback /callback from ${start}: ${end.status} ${end.page}`);
  return end.redirect;
}

export async function walk(start, login = "alice", reroute = null) {
  const { status, page, url } = await browse(start, login, () => false, reroute);
  return { status, page, url };
}

async function browse(start, login, stop, reroute = null) {
  let callbacks = 0;
  const jars = new Map();
  let next = start;
  let form = null;
  for (let step = 0; step < 30; step += 1) {
    const origin = new URL(next).origin;
    if (!jars.has(origin)) jars.set(origin, new Map());
    const jar = jars.get(origin);
    const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") };
    if (form) headers["content-type"] = "application/x-www-form-urlencoded";
    const response = await fetch(next, { method: form ? "POST" : "GET", body: form ?? undefined, headers, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(";")[0];
      jar.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
    }
    if (response.status >= 300 && response.status < 400) {
      const location = new URL(response.headers.get("location"), next);
      if (stop(location)) return { redirect: location };
      if (reroute && location.origin === reroute.from && location.pathname === "/oauth/upstream/callback") {
        callbacks += 1;
        if (callbacks > reroute.skip) {
          const moved = new URL(location.pathname + location.search, reroute.to);
          next = moved.href;
          form = null;
          continue;
        }
      }
      next = location.href;
      form = null;
      continue;
    }
    const page = await response.text();
    const action = response.status === 200 ? page.match(/action="([^"]+)"/) : null;
    if (!action) return { status: response.status, page, url: next };
    next = new URL(action[1], next).href;
    // The form's inputs as the page sets them (hidden `prompt`, …), the
    // log-in's filled in.
    const fields = new URLSearchParams();
    for (const input of page.matchAll(/<input\b[^>]*>/g)) {
      const name = input[0].match(/name="([^"]*)"/)?.[1];
      if (name) fields.set(name, input[0].match(/value="([^"]*)"/)?.[1] ?? "");
    }
    if (fields.has("login")) fields.set("login", login);
    if (fields.has("password")) fields.set("password", "any");
    form = fields.toString();
  }
  throw new Error(`no page after 30 steps from ${start}`);
}
