// The browser step of an OAuth log-in, played over HTTP: follow the
// authorization URL, submit oidc-provider's log-in form as alice and its
// consent form as shown, until the authorization server redirects to a
// loopback `/callback`; that redirect's URL. Used by oauth-e2e.mjs and
// oauth-upstream.mjs.
import assert from "node:assert/strict";

export async function follow(start) {
  const jar = new Map();
  let next = start;
  let form = null;
  for (let step = 0; step < 20; step += 1) {
    const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") };
    if (form) headers["content-type"] = "application/x-www-form-urlencoded";
    const response = await fetch(next, { method: form ? "POST" : "GET", body: form ?? undefined, headers, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(";")[0];
      jar.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
    }
    if (response.status >= 300 && response.status < 400) {
      const location = new URL(response.headers.get("location"), next);
      if (location.hostname === "127.0.0.1" && location.pathname === "/callback") return location;
      next = location.href;
      form = null;
      continue;
    }
    const page = await response.text();
    assert.equal(response.status, 200, page);
    const action = page.match(/action="([^"]+)"/);
    assert.ok(action, `a form on ${next}: ${page}`);
    next = new URL(action[1], next).href;
    // The form's inputs as the page sets them (hidden `prompt`, …), the
    // log-in's filled in.
    const fields = new URLSearchParams();
    for (const input of page.matchAll(/<input\b[^>]*>/g)) {
      const name = input[0].match(/name="([^"]*)"/)?.[1];
      if (name) fields.set(name, input[0].match(/value="([^"]*)"/)?.[1] ?? "");
    }
    if (fields.has("login")) fields.set("login", "alice");
    if (fields.has("password")) fields.set("password", "any");
    form = fields.toString();
  }
  throw new Error(`no redirect to a loopback /callback after 20 steps from ${start}`);
}
