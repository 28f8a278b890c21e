/** Issue 37: the HTTP listener's `[daemon]` keys, checked with their TOML paths. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkConfigFile } from "../../src/server/config.js";

describe("[daemon] http settings", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "jobtap-http-config-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const check = (daemon: string) => {
    const path = join(dir, "c.toml");
    writeFileSync(path, `[daemon]\n${daemon}`);
    return checkConfigFile(path, {});
  };
  const messages = (daemon: string) => check(daemon).errors.map((e) => e.message);

  it("is off by default, and reads address, TLS files and limits when set", () => {
    expect(check("").config?.settings.http).toBeUndefined();
    writeFileSync(join(dir, "cert.pem"), "-----BEGIN CERTIFICATE-----\n");
    writeFileSync(join(dir, "key.pem"), "-----BEGIN PRIVATE KEY-----\n");
    const r = check(
      `http = "[::1]:9311"\ntls-cert = "${dir}/cert.pem"\ntls-key = "${dir}/key.pem"\nmetrics-public = true\nhttp-rate-limit = 2.5\nhttp-connections = 10\nhttp-headers-timeout = "2s"\n`,
    );
    expect(r.errors).toEqual([]);
    expect(r.config?.settings.http).toMatchObject({ host: "::1", port: 9311, metricsPublic: true, rateLimit: 2.5, maxConnections: 10, headersTimeoutMs: 2000, tls: { certPath: `${dir}/cert.pem` } });
  });

  it("names every bad key by its TOML path", () => {
    expect(messages('http = "localhost"\n')).toEqual([expect.stringMatching(/^\[daemon\]\.http: must be "HOST:PORT"/)]);
    expect(messages('http = "127.0.0.1:70000"\n')).toEqual([expect.stringMatching(/^\[daemon\]\.http: /)]);
    expect(messages(`http = "127.0.0.1:0"\ntls-cert = "${dir}/none.pem"\n`)).toEqual(
      expect.arrayContaining(["[daemon].tls-key: tls-cert and tls-key go together", expect.stringMatching(/^\[daemon\]\.tls-cert: cannot read .*none\.pem: ENOENT/)]),
    );
    expect(messages('tls-cert = "x"\ntls-key = "y"\n')).toEqual(expect.arrayContaining([expect.stringMatching(/^\[daemon\]\.tls-cert: needs \[daemon\]\.http/)]));
    expect(messages('http = "127.0.0.1:0"\nhttp-rate-limit = 0\nhttp-connections = -1\nhttp-headers-timeout = "soon"\nmetrics-public = "yes"\n')).toEqual([
      expect.stringMatching(/^\[daemon\]\.metrics-public: must be true or false/),
      expect.stringMatching(/^\[daemon\]\.http-rate-limit: must be a positive number/),
      expect.stringMatching(/^\[daemon\]\.http-connections: must be a positive integer/),
      expect.stringMatching(/^\[daemon\]\.http-headers-timeout: /),
    ]);
    expect(messages('htp = "127.0.0.1:0"\n')).toEqual([expect.stringContaining('[daemon].htp: unknown key; did you mean "http"?')]);
  });
});
