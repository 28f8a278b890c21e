/**
 * A daemon as its own process for the benches that measure it from the outside (a module
 * under bench/lib/, so bench/run.mjs does not offer it as a bench of its own).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectDaemon } from "../../src/server/client.js";

/** The jobtap command of this build. */
export const BIN = fileURLToPath(new URL("../../../bin/jobtap", import.meta.url));

/**
 * Starts `jobtap daemon` on `statedir` with a large simulated pool (the point is the manager
 * and the socket path, not this machine's core count); resolves once it answers a ping.
 * `JOBTAP_BENCH_DAEMON_ARGS` adds node options for the daemon only (`--cpu-prof`, which
 * NODE_OPTIONS refuses).
 */
export async function startDaemon(statedir: string, env: NodeJS.ProcessEnv, daemonToml = ""): Promise<ChildProcess> {
  const config = join(statedir, "bench.toml");
  writeFileSync(config, `${daemonToml === "" ? "" : `[daemon]\n${daemonToml}`}[resources]\ncores = 100000\n`);
  const nodeArgs = (process.env.JOBTAP_BENCH_DAEMON_ARGS ?? "").split(" ").filter((a) => a !== "");
  const child = spawn(process.execPath, [...nodeArgs, BIN, "daemon", "--statedir", statedir, "--config", config], {
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const socket = join(statedir, "jobtap.sock");
  const client = connectDaemon(socket);
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (existsSync(socket) && (await client.call("ping", {}).then(() => true, () => false))) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("bench: the daemon did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  client.close();
  return child;
}

/** SIGTERM, then waits for the daemon to exit. */
export async function stopDaemon(daemon: ChildProcess): Promise<void> {
  if (daemon.exitCode !== null) return;
  const exited = new Promise((r) => daemon.once("exit", r));
  daemon.kill("SIGTERM");
  await exited;
}
