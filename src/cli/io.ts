import type { Terminal } from "./terminal.js";

/**
 * What a CLI subcommand is given. Subcommands never touch `process` directly, so tests can
 * run them in-process with captured output.
 */
export interface CliIO {
  /** Standard input (for `-` file arguments). */
  stdin: NodeJS.ReadableStream;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Present only when stdout is a terminal (see terminal.ts). */
  terminal?: Terminal;
}

/** A subcommand: takes the arguments after its own name, returns the exit status. */
export type Subcommand = (argv: string[], io: CliIO) => Promise<number>;
