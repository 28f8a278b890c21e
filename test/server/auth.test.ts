/**
 * The uid proof (src/server/auth.ts): what a forged proof looks like, and that each is refused.
 */
import { linkSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { createAuthenticator, proofText, writeProof, type Authenticator } from "../../src/server/auth.js";
import { clientNonce } from "../../src/server/proof.js";

const UID = process.getuid?.() ?? 0;

describe("auth: proving a uid by creating a file", () => {
  let dir: string;
  let socket: string;
  let auth: Authenticator;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-auth-"));
    socket = join(dir, "jobtap.sock");
    writeFileSync(socket, ""); // stands in for the socket: writeProof checks its owner
    auth = createAuthenticator(socket, UID, false);
  });
  afterEach(() => {
    auth.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a proper proof gives a token standing for the file's owner; the nonce is single-use", () => {
    const { nonce, dir: authDir } = auth.challenge();
    writeProof(socket, nonce, authDir);
    const { token, userid } = auth.prove(nonce);
    expect(userid).toBe(UID);
    expect(auth.caller(token)).toEqual({ userid: UID, owner: true });
    expect(auth.caller("forged")).toBeUndefined();
    expect(() => auth.prove(nonce)).toThrow("unknown or expired nonce");
  });

  it("refuses a hard link, a symlink, and a file holding another challenge", () => {
    const victim = join(dir, "victims-file");
    const c1 = auth.challenge();
    writeFileSync(victim, proofText(c1.nonce, statSync(c1.dir)));
    linkSync(victim, join(c1.dir, c1.nonce));
    expect(() => auth.prove(c1.nonce)).toThrow("not a plain file of one link");

    const c2 = auth.challenge();
    symlinkSync(victim, join(c2.dir, c2.nonce));
    expect(() => auth.prove(c2.nonce)).toThrowError(expect.objectContaining({ code: ErrorCode.PERMISSION_DENIED }));

    // A proof written for another directory (a lured client, the file then moved here).
    const c3 = auth.challenge();
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(c3.dir, c3.nonce), proofText(c3.nonce, statSync(elsewhere)));
    expect(() => auth.prove(c3.nonce)).toThrow("does not hold this challenge");

    expect(() => auth.prove("not-a-nonce")).toThrow("nonce must be a nonce from auth.challenge");
  });

  it("the client refuses an auth directory the socket's owner does not own, or that is a symlink", () => {
    const { nonce, dir: authDir } = auth.challenge();
    const link = join(dir, "link.auth");
    symlinkSync(authDir, link);
    expect(() => writeProof(socket, nonce, link)).toThrow("refusing to authenticate");
  });

  it("a proof under a nonce the client picked (authorization: Proof) proves its owner once, and not when old", () => {
    auth.close();
    let now = Date.now();
    auth = createAuthenticator(socket, UID, false, undefined, () => now);
    const nonce = clientNonce();
    expect(nonce).toMatch(/^[0-9a-f]{36}$/);
    expect(clientNonce()).not.toBe(nonce);
    writeProof(socket, nonce);
    const { token, userid } = auth.proveOwn(nonce);
    expect(userid).toBe(UID);
    expect(auth.caller(token)).toEqual({ userid: UID, owner: true });
    // The file is consumed: the same nonce again proves nothing.
    expect(() => auth.proveOwn(nonce)).toThrow("no proof file");

    // A proof file written more than a minute ago is refused (its inode change time).
    const old = clientNonce();
    writeProof(socket, old);
    now += 61_000;
    expect(() => auth.proveOwn(old)).toThrow("the proof file is too old");

    // The same forgeries as for a challenge's nonce.
    const authDir = `${socket}.auth`;
    const victim = join(dir, "victims-file");
    const linked = clientNonce();
    writeFileSync(victim, proofText(linked, statSync(authDir)));
    linkSync(victim, join(authDir, linked));
    expect(() => auth.proveOwn(linked)).toThrow("not a plain file of one link");
    const moved = clientNonce();
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(authDir, moved), proofText(moved, statSync(elsewhere)));
    expect(() => auth.proveOwn(moved)).toThrowError(expect.objectContaining({ code: ErrorCode.PERMISSION_DENIED }));
    expect(() => auth.proveOwn("../../etc/passwd")).toThrow("needs a nonce of 36 hex digits");
  });
});
