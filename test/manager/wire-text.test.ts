/**
 * A batch's chunk text on its way to the writer thread (wire-text.ts): encoded into a
 * transferred buffer and read back as the very same strings, whatever they hold.
 */
import { describe, expect, it } from "vitest";
import { unpackChunks, WirePool } from "../../src/manager/store/wire-text.js";

describe("chunk text handed to the writer thread", () => {
  it("comes back as the same strings: ASCII, other text, lone surrogates, past the buffer's size", () => {
    const pool = new WirePool();
    const chunks = ['{"a":1}\n', "héllo — ✓ 😀 日本語\n", "\ud800x\udc00", "", "z".repeat(70_000) + "é", "q".repeat(200_000)];
    const wire = pool.pack(chunks);
    expect(Array.from(wire.ascii)).toEqual([1, 0, 0, 1, 0, 1]);
    expect(unpackChunks(wire)).toEqual(chunks);
  });

  it("reuses a buffer given back for a later batch that fits in it", () => {
    const pool = new WirePool();
    const first = pool.pack(["x".repeat(1000)]);
    pool.give(first.bytes);
    const second = pool.pack(["y".repeat(500), "ü"]);
    expect(second.bytes).toBe(first.bytes);
    expect(unpackChunks(second)).toEqual(["y".repeat(500), "ü"]);
  });

  it("does not keep a buffer over 4 MB: one big batch stays resident no longer than it is used", () => {
    const pool = new WirePool();
    const big = pool.pack(["b".repeat(5 << 20)]);
    expect(big.bytes.byteLength).toBeGreaterThan(4 << 20);
    pool.give(big.bytes);
    const next = pool.pack(["c".repeat(1000)]);
    expect(next.bytes).not.toBe(big.bytes);
    expect(next.bytes.byteLength).toBeLessThanOrEqual(1 << 16);
  });
});
