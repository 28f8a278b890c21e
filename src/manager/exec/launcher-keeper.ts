/**
 * The launcher's keeper: the root process the daemon starts (with the channel's pipes as its
 * stdin and stdout) before it drops its rights. It never reads the channel: it starts the
 * launcher (launcher-main.ts) on the same pipes, and when the launcher dies it says so on
 * the channel and starts another, so a dead launcher loses no job (the daemon waits, then
 * resynchronises). It ends when a launcher ends because the daemon closed the channel.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("./launcher-main.js", import.meta.url));
const args = process.argv.slice(2);
/** Restart delay after a death, doubled while launchers die young (a crash loop). */
let delayMs = 100;

function say(m: object): void {
  process.stdout.write(`${JSON.stringify(m)}\n`);
}

function startLauncher(): void {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: [0, 1, 2] });
  const born = Date.now();
  if (child.pid !== undefined) say({ op: "launcher", pid: child.pid });
  child.on("exit", (code, signal) => {
    // Status 0: the daemon closed the channel; there is nobody left to launch for.
    if (code === 0) process.exit(0);
    const why = signal ? `killed by ${signal}` : `exited with status ${code}`;
    say({ op: "died", pid: child.pid ?? 0, why });
    delayMs = Date.now() - born > 60_000 ? 100 : Math.min(delayMs * 2, 5000);
    setTimeout(startLauncher, delayMs);
  });
  child.on("error", (e) => {
    process.stderr.write(`jobtap launcher keeper: cannot start the launcher: ${e.message}\n`);
    process.exit(1);
  });
}

for (const s of ["SIGINT", "SIGHUP"] as const) process.on(s, () => undefined);
process.stdout.on("error", () => process.exit(0));
startLauncher();
