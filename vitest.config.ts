import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import TypeScript sources directly; "jobtap/plugin" is how builtin and fixture
// plugins name the public plugin API, so point it at the source, not at dist/.
export default defineConfig({
  resolve: {
    alias: {
      "jobtap/plugin": fileURLToPath(new URL("./src/plugin.ts", import.meta.url)),
    },
  },
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
