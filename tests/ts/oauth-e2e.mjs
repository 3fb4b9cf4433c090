// `agent-host serve --oauth-issuer` against a real authorization server
// (oidc-provider, the certified OpenID provider for Node: dynamic
// registration, PKCE, resource indicators, JWT access tokens) and the
// official TypeScript SDK client's own OAuth flow, all on 127.0.0.1. Run by
// examples/agent-host/tests/oauth_sdk.rs:
//
//   node oauth-e2e.mjs <agent-host binary> <scratch dir>
//
// The SDK meets the 401, discovers the server's RFC 9728 metadata and the
// issuer's, registers itself, and sends the user to the authorization URL
// with PKCE and the `resource`; the browser step (log-in and consent on
// oidc-provider's pages) is driven here over HTTP. With the code it gets a
// token for `capspec:read`, lists and reads; a write is a 403 naming
// `capspec:write`, on which the SDK authorizes again with that scope, and
// the same write then runs. Every check asserts; the last line printed is a
// JSON summary.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Provider from "oidc-provider";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { serve } from "./serving.mjs";
import { follow } from "./browser.mjs";

const [binary, scratch] = process.argv.slice(2);
assert.ok(binary && scratch, "usage: node oauth-e2e.mjs <agent-host> <scratch dir>");
const summary = {};

// A free loopback port (for agent-host, whose --resource names its port).
async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// --- the authorization server ----------------------------------------------
const idp = createServer();
await new Promise((resolve) => idp.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${idp.address().port}`;
const port = await freePort();
const resource = `http://127.0.0.1:${port}/mcp`;
const categories = ["capspec:read", "capspec:write", "capspec:execute", "capspec:external"];
const provider = new Provider(issuer, {
  clients: [],
  scopes: ["openid", ...categories],
  // The SDK registers with the scope of its first authorization only, and
  // oidc-provider then refuses any other: this authorization server's
  // policy is that a registered client may ask for every category scope
  // (each authorization still asks for fewer, and the user consents).
  extraClientMetadata: {
    properties: ["scope"],
    validator: (ctx, key, value, metadata) => {
      if (key === "scope") metadata.scope = [...new Set([...(value ?? "").split(" ").filter(Boolean), ...categories])].join(" ");
    },
  },
  cookies: { keys: ["capspec-tests-only"] },
  features: {
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      // Only this server, with the category scopes, as JWT access tokens.
      getResourceServerInfo: (ctx, indicator) => {
        assert.equal(indicator, resource, "the client asks for this server's token");
        return { scope: categories.join(" "), audience: indicator, accessTokenTTL: 300, accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } };
      },
    },
  },
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  extraTokenClaims: async (ctx, token) => ({ groups: token.accountId === "alice" ? ["support"] : [] }),
});
provider.on("server_error", (ctx, error) => console.error("oidc-provider:", error));
idp.on("request", provider.callback());

// --- agent-host serve as the resource server --------------------------------
const workspace = join(scratch, "workspace");
mkdirSync(workspace, { recursive: true });
const { child, url } = await serve(binary, ["--http", `127.0.0.1:${port}`, "--oauth-issuer", issuer, "--resource", resource, "--surface", "tools", "--mode", "auto", "--workspace", workspace]);

try {
  // --- the browser: log-in and consent on oidc-provider's pages ------------
  const redirectUri = "http://127.0.0.1:1/callback";
  const authorizations = [];
  // The browser: log-in and consent, then the redirect with the code.
  async function browse(start) {
    const location = await follow(start);
    assert.ok(location.href.startsWith(redirectUri), location.href);
    assert.equal(location.searchParams.get("iss"), issuer, "RFC 9207: the redirect names the issuer");
    assert.ok(location.searchParams.get("code"), `a code, not ${location.search}`);
    return location.searchParams.get("code");
  }

  // The SDK's OAuthClientProvider, as an application implements it.
  class TestProvider {
    constructor() {
      this.code = null;
    }
    get redirectUrl() {
      return redirectUri;
    }
    get clientMetadata() {
      return { client_name: "capspec oauth-e2e", redirect_uris: [redirectUri], grant_types: ["authorization_code"], response_types: ["code"], token_endpoint_auth_method: "none" };
    }
    clientInformation() {
      return this.client;
    }
    saveClientInformation(client) {
      this.client = client;
    }
    tokens() {
      return this.saved;
    }
    saveTokens(tokens) {
      this.saved = tokens;
    }
    saveCodeVerifier(verifier) {
      this.verifier = verifier;
    }
    codeVerifier() {
      return this.verifier;
    }
    async redirectToAuthorization(authorizationUrl) {
      authorizations.push(authorizationUrl);
      this.code = await browse(authorizationUrl.href);
    }
  }
  const auth = new TestProvider();

  // 1. The 401 starts the flow: discovery, registration, PKCE, the user.
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: auth });
  await assert.rejects(new Client({ name: "capspec-oauth", version: "1.0.0" }).connect(first), UnauthorizedError);
  assert.ok(auth.client?.client_id, "registered dynamically");
  const asked = authorizations[0].searchParams;
  assert.equal(asked.get("code_challenge_method"), "S256");
  assert.equal(asked.get("resource"), resource, "RFC 8707: the token is asked for this server");
  assert.equal(asked.get("scope"), "capspec:read", "the scope the 401 named");
  await first.finishAuth(auth.code);
  const claims = JSON.parse(Buffer.from(auth.saved.access_token.split(".")[1], "base64url").toString());
  assert.deepEqual([claims.iss, claims.aud, claims.sub, claims.scope], [issuer, resource, "alice", "capspec:read"]);

  // 2. With the token: the tools, a read, the principal on its receipt.
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: auth });
  const client = new Client({ name: "capspec-oauth", version: "1.0.0" });
  await client.connect(transport);
  const listed = await client.listTools();
  assert.ok(listed.tools.some((t) => t.name === "write_file"));
  const read = await client.callTool({ name: "list_files", arguments: {} });
  assert.equal(read.isError, false, JSON.stringify(read));
  assert.equal(read._meta["io.capspec/receipts"][0].principal, "alice");

  // 3. A write: 403 insufficient_scope; the SDK authorizes again with the
  // scope the server named, and the same call runs.
  const write = { name: "write_file", arguments: { path: "stepped-up.txt", content: "written after step-up\n" } };
  await assert.rejects(client.callTool(write), UnauthorizedError);
  assert.equal(authorizations.length, 2, "a second authorization, for the wider scope");
  assert.equal(authorizations[1].searchParams.get("scope"), "capspec:write");
  await transport.finishAuth(auth.code);
  const stepped = JSON.parse(Buffer.from(auth.saved.access_token.split(".")[1], "base64url").toString());
  assert.ok(stepped.scope.split(" ").includes("capspec:write"), stepped.scope);
  const written = await client.callTool(write);
  assert.equal(written.isError, false, JSON.stringify(written));
  assert.equal(readFileSync(join(workspace, "stepped-up.txt"), "utf8"), "written after step-up\n");
  assert.equal(written._meta["io.capspec/receipts"][0].principal, "alice");
  await client.close();
  summary.flow = "ok";
  summary.scopes = [claims.scope, stepped.scope];
} finally {
  child.kill();
  idp.close();
  idp.closeAllConnections?.();
}
console.log(JSON.stringify(summary));
