// A remote MCP server behind OAuth 2.1, for `cargo capspec auth login` and
// the OAuth upstream (cli/tests/upstream_oauth.rs), all on 127.0.0.1:
//
//   node oauth-upstream.mjs
//
// - the authorization server: oidc-provider (the certified OpenID provider
//   for Node) with dynamic registration (and one client registered
//   beforehand, `capspec-preregistered`), PKCE, resource indicators, JWT
//   access tokens living CAPSPEC_FIXTURE_TTL seconds (default 4), so a
//   session outlives several and refresh is exercised, and refresh tokens;
// - the MCP server: the official TypeScript SDK's, stateless, whose every
//   request needs an access token for it (checked with jose against the
//   issuer's keys: `iss`, `aud` = its URL, expiry); without one, a 401
//   naming its RFC 9728 metadata. One tool, `shout`;
// - a control endpoint for the test: `POST /control/browse` with
//   `{url, iss?}` plays the browser (log-in and consent on oidc-provider's
//   pages, then the redirect to the loopback, its `iss` replaced when
//   given) and answers what the loopback answered; `POST /control/refuse`
//   makes the server refuse every token from then on; `POST
//   /control/idp-down` stops the authorization server; `POST
//   /control/revoke-grants` makes the server refuse every token of every
//   grant it has seen so far (each access token names its grant: refreshing
//   does not help, a new authorization does); `GET /control/stats` counts the
//   access tokens it accepted, the refresh grants, the refresh tokens
//   revoked (RFC 7009, which the authorization server offers) and the
//   clients registered (RFC 7591), and the `sub` of each token it accepted
//   (`subs`, in order); `POST /control/walk` with `{url, login, reroute}`
//   plays a person's browser from `url` through every
//   redirect (log-in as `login` and consent wherever asked) and answers the
//   page it ends on: `{status, page}`;
// - a team's issuer, as a gateway's callers sign in (`serve --oauth-issuer`):
//   a second oidc-provider, signing with tests/fixtures/oauth/rsa.pem (kid
//   `rsa-1`), with one client registered beforehand, `capspec-gateway`
//   (public, code + PKCE, its redirect the loopback
//   `/oauth/upstream/callback` on any port), and dynamic registration.
//
// Prints one JSON line on stdout: {issuer, mcp, control, team}.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import Provider from "oidc-provider";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { follow, walk } from "./browser.mjs";

const ttl = Number(process.env.CAPSPEC_FIXTURE_TTL ?? "4");
const scope = "remote:read";

async function listen(server) {
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server.address().port;
}

// --- the MCP server's address first: the authorization server names it ----
const mcpHttp = createServer();
const mcpPort = await listen(mcpHttp);
const base = `http://127.0.0.1:${mcpPort}`;
const resource = `${base}/mcp`;
const metadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`;

// --- the authorization server ---------------------------------------------
const idp = createServer();
const issuer = `http://127.0.0.1:${await listen(idp)}`;
const stats = { accepted: new Set(), refreshes: 0, refusedTokens: 0, revocations: 0, registrations: 0, subs: [] };
const seenGrants = new Set();
const revokedGrants = new Set();
const provider = new Provider(issuer, {
  // One client registered beforehand (`client_id` in capspec.toml), for
  // `auth login` and a gateway's per-user sign-ins; a native client's
  // loopback redirect may use any port (RFC 8252 §7.3).
  clients: [{ client_id: "capspec-preregistered", application_type: "native", token_endpoint_auth_method: "none", redirect_uris: ["http://127.0.0.1/callback", "http://127.0.0.1/oauth/upstream/callback"], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], scope }],
  scopes: [scope],
  // A client's registered `scope` is kept as it registered it (nothing is
  // filled in), and limits what it may be granted.
  extraClientMetadata: { properties: ["scope"] },
  cookies: { keys: ["capspec-tests-only"] },
  // Each access token names its grant, which refreshing keeps.
  extraTokenClaims: async (ctx, token) => ({ grant: token.grantId }),
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed("refresh_token"),
  features: {
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        assert.equal(indicator, resource, "the client asks for this server's token");
        return { scope, audience: resource, accessTokenTTL: ttl, accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } };
      },
    },
  },
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
});
provider.on("server_error", (ctx, error) => console.error("oidc-provider:", error));
provider.on("grant.success", (ctx) => {
  if (ctx.oidc.params?.grant_type === "refresh_token") stats.refreshes += 1;
});
provider.on("grant.revoked", () => {
  stats.revocations += 1;
});
provider.on("registration_create.success", () => {
  stats.registrations += 1;
});
// `POST /control/registration-off`: the server stops taking registrations
// (404 at its registration endpoint), as one that offers none.
let registrationOff = false;
const callback = provider.callback();
idp.on("request", (req, res) => {
  if (registrationOff && req.method === "POST" && req.url.startsWith("/reg")) {
    res.writeHead(404, { "content-type": "application/json" });
    return res.end(JSON.stringify({ error: "not_found" }));
  }
  return callback(req, res);
});

// --- the team's issuer --------------------------------------------------------
const teamHttp = createServer();
const team = `http://127.0.0.1:${await listen(teamHttp)}`;
const signing = { ...createPrivateKey(readFileSync(new URL("../fixtures/oauth/rsa.pem", import.meta.url))).export({ format: "jwk" }), kid: "rsa-1", alg: "RS256", use: "sig" };
const teamProvider = new Provider(team, {
  clients: [{ client_id: "capspec-gateway", application_type: "native", token_endpoint_auth_method: "none", redirect_uris: ["http://127.0.0.1/oauth/upstream/callback"], grant_types: ["authorization_code"], response_types: ["code"] }],
  jwks: { keys: [signing] },
  cookies: { keys: ["capspec-tests-only-team"] },
  features: { registration: { enabled: true } },
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
});
teamProvider.on("server_error", (ctx, error) => console.error("team oidc-provider:", error));
teamHttp.on("request", teamProvider.callback());
const keys = createRemoteJWKSet(new URL(`${issuer}/jwks`));

// --- the MCP server ---------------------------------------------------------
let refuseAll = false;
function mcp() {
  const server = new McpServer({ name: "remote", version: "1.0.0" });
  server.registerTool(
    "shout",
    { description: "Say it louder.", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true, openWorldHint: false } },
    async ({ text }) => ({ content: [{ type: "text", text: text.toUpperCase() }] }),
  );
  return server;
}

// A token this server accepts: from the issuer, for this resource, current.
async function accepted(req) {
  const token = (req.headers.authorization ?? "").match(/^Bearer (.+)$/)?.[1];
  if (!token || refuseAll) return false;
  try {
    const { payload } = await jwtVerify(token, keys, { issuer, audience: resource });
    if (revokedGrants.has(payload.grant)) {
      stats.refusedTokens += 1;
      return false;
    }
    seenGrants.add(payload.grant);
    stats.accepted.add(token);
    stats.subs.push(payload.sub);
    return true;
  } catch {
    stats.refusedTokens += 1;
    return false;
  }
}

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
}

function json(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
}

// The browser: log-in and consent, then the redirect to the loopback
// (its `iss` replaced when given), and what the loopback answered.
async function browse(start, iss) {
  const location = await follow(start);
  const redirect = { iss: location.searchParams.get("iss"), code: Boolean(location.searchParams.get("code")) };
  if (iss !== undefined) location.searchParams.set("iss", iss);
  const loopback = await fetch(location.href);
  return { redirect, status: loopback.status, page: await loopback.text() };
}

mcpHttp.on("request", async (req, res) => {
  try {
    const path = new URL(req.url, base).pathname;
    if (path === "/.well-known/oauth-protected-resource/mcp" || path === "/.well-known/oauth-protected-resource") {
      return json(res, 200, { resource, authorization_servers: [issuer], scopes_supported: [scope], bearer_methods_supported: ["header"] });
    }
    if (path === "/control/browse") {
      const { url, iss } = await body(req);
      return json(res, 200, await browse(url, iss));
    }
    if (path === "/control/walk") {
      const { url, login, reroute } = await body(req);
      const { status, page } = await walk(url, login, reroute);
      return json(res, 200, { status, page });
    }
    if (path === "/control/registration-off") {
      registrationOff = true;
      return json(res, 200, { registration: "off" });
    }
    if (path === "/control/refuse") {
      refuseAll = true;
      return json(res, 200, { refusing: true });
    }
    if (path === "/control/revoke-grants") {
      for (const grant of seenGrants) revokedGrants.add(grant);
      return json(res, 200, { revoked: [...revokedGrants] });
    }
    if (path === "/control/idp-down") {
      idp.close();
      idp.closeAllConnections?.();
      return json(res, 200, { idp: "down" });
    }
    if (path === "/control/stats") {
      return json(res, 200, { accepted: stats.accepted.size, refreshes: stats.refreshes, refused: stats.refusedTokens, revocations: stats.revocations, registrations: stats.registrations, subs: stats.subs });
    }
    if (path !== "/mcp") return json(res, 404, { error: "not found" });
    if (!(await accepted(req))) {
      res.writeHead(401, { "www-authenticate": `Bearer error="invalid_token", resource_metadata="${metadataUrl}", scope="${scope}"` }).end();
      return;
    }
    const parsed = await body(req);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = mcp();
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
  } catch (error) {
    console.error("oauth-upstream:", error);
    if (!res.headersSent) json(res, 500, { error: String(error) });
  }
});

console.log(JSON.stringify({ issuer, mcp: resource, control: `${base}/control`, team }));
